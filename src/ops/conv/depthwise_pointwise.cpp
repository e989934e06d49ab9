// etwebgpu.depthwise_pointwise (depthwise_pointwise.h): its builder and the load rewrite that
// makes it.
#include <algorithm>
#include <limits>

#include "graph/epilogue_fusion.h"
#include "graph/fusion.h"
#include "graph/rewrite_pipeline.h"
#include "ops/conv/conv_call.h"
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_prologue.h"
#include "ops/conv/conv_shuffle.h"
#include "ops/conv/depthwise_pointwise.h"
#include "ops/epilogue.h"
#include "ops/memory/channel_shuffle.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

// The arguments before the prologue: the depthwise conv's 6 and its clamp's 2, the pointwise
// conv's weight, bias and clamp, the passthrough.
constexpr size_t kOwnArgs = 13;
// Storage bindings besides the prologue's and epilogue's inputs: X, DW, DB, Wt, BIAS, O.
constexpr size_t kFixedBindings = 6;
constexpr size_t kMaxBindings = 8;  // the default maxStorageBuffersPerShaderStage
// Output tiles (64 x 64) below which the pointwise conv takes the small or direct routes on its
// own (conv.cpp's kDirectMaxTiles), and the channel count up to which the pair is fused: each
// 32 channels are a round of the kernel's loop.
constexpr uint64_t kMaxTiles = 64;
constexpr int64_t kMaxChannels = 512;

void build_depthwise_pointwise(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() < kOwnArgs + 1)
    oc.fail(ErrorKind::Format, "expects at least " + std::to_string(kOwnArgs + 1) + " arguments, got " + std::to_string(oc.nargs()));
  const int32_t x = oc.arg(0), dww = oc.arg(1), dwb = oc.arg(2), pww = oc.arg(8), pwb = oc.arg(9), pass = oc.arg(12);
  for (auto [id, what] : {std::pair{x, "input"}, std::pair{dww, "depthwise weight"}, std::pair{pww, "pointwise weight"}})
    require_dtype(oc, id, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, what);
  const auto& xd = g.tensor(x).dims;
  if (xd.size() != 4) oc.fail(ErrorKind::Unsupported, "input " + shape_str(xd) + " must be [N, C, H, W]");
  const int64_t C = xd[1];
  const auto& dwd = g.tensor(dww).dims;
  if (dwd.size() != 4 || dwd[0] != C || dwd[1] != 1)
    oc.fail(ErrorKind::InvalidArgument, "depthwise weight " + shape_str(dwd) + " must be [" + std::to_string(C) + ", 1, KH, KW]");
  const auto& pwd = g.tensor(pww).dims;
  if (pwd.size() != 4 || pwd[1] != C || pwd[2] != 1 || pwd[3] != 1)
    oc.fail(ErrorKind::InvalidArgument, "pointwise weight " + shape_str(pwd) + " must be [OC, " + std::to_string(C) + ", 1, 1]");
  const int64_t OC = pwd[0], KH = dwd[2], KW = dwd[3];
  if (C < 1 || OC < 1 || KH < 1 || KW < 1) oc.fail(ErrorKind::InvalidArgument, "empty channels or kernel");
  for (auto [b, n] : {std::pair{dwb, C}, std::pair{pwb, OC}})
    if (!g.is_null(b)) {
      require_dtype(oc, b, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "bias");
      if (g.tensor(b).dims != std::vector<int64_t>{n})
        oc.fail(ErrorKind::InvalidArgument, "bias " + shape_str(g.tensor(b).dims) + " must be [" + std::to_string(n) + "]");
    }
  // Plain variables, not structured bindings: the prepare lambda captures them.
  const auto stride = conv_pair(oc, oc.arg(3), false, "stride"), padding = conv_pair(oc, oc.arg(4), false, "padding"),
             dilation = conv_pair(oc, oc.arg(5), false, "dilation");
  const int64_t sh = stride.first, sw = stride.second, ph = padding.first, pw = padding.second, dh = dilation.first,
                dw = dilation.second;
  if (sh < 1 || sw < 1) oc.fail(ErrorKind::InvalidArgument, "stride must be positive");
  if (dh < 1 || dw < 1) oc.fail(ErrorKind::InvalidArgument, "dilation must be positive");
  if (ph < 0 || pw < 0) oc.fail(ErrorKind::InvalidArgument, "padding must be non-negative");
  const std::optional<float> dw_min = conv_clamp_bound(oc, oc.arg(6)), dw_max = conv_clamp_bound(oc, oc.arg(7)),
                             pw_min = conv_clamp_bound(oc, oc.arg(10)), pw_max = conv_clamp_bound(oc, oc.arg(11));
  // The depthwise bounds reach the shader as bits: an override constant cannot hold an infinity.
  auto bits = [](std::optional<float> v) { return double(v ? f32_bits(*v) : 0u); };

  std::optional<ShufflePieces> pieces;
  int32_t out = oc.out(), passthrough = -1;
  if (!g.is_null(pass)) {
    pieces = ShufflePieces::read(oc, oc.out(), "a shuffling convolution");
    pieces->check_channels(oc, OC, "the conv's " + std::to_string(OC) + " output channels");
    out = pieces->first();
    passthrough = pass;
    require_dtype(oc, passthrough, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "passthrough");
  } else {
    require_dtype(oc, out, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "output");
  }
  const ConvPrologue pro = ConvPrologue::read(oc, kOwnArgs, C);
  // The node's label with terms: both convs and the terms between them, then the epilogue's.
  const std::string label = "convolution+" + (pro.empty() ? "" : pro.label() + "+") + "convolution";
  Epilogue ep = Epilogue::read(oc, kOwnArgs + pro.args(), label, passthrough);
  if (ep.empty() && !pro.empty()) oc.node.op = "fused[" + label + "]";
  const size_t bindings = kFixedBindings + pro.inputs() + ep.inputs() + (pieces ? 2 : 0);
  if (bindings > kMaxBindings)
    oc.fail(ErrorKind::Limit, std::to_string(bindings) + " storage buffers (prologue " + std::to_string(pro.inputs()) +
                                  ", epilogue " + std::to_string(ep.inputs()) + " inputs); at most " + std::to_string(kMaxBindings));

  auto run = std::make_shared<ConvParams>();
  auto od = std::make_shared<std::vector<int64_t>>();
  oc.prepare([run, od, x, C, OC, KH, KW, sh, sw, ph, pw, dh, dw, pw_min, pw_max, passthrough, pieces](const kernel::Live& l) {
    const auto& d = l.dims(x);
    if (d.size() != 4 || d[1] != C)
      throw Error(ErrorKind::InvalidArgument, "input " + shape_str(d) + " must have " + std::to_string(C) + " channels");
    const int64_t OH = conv_extent(d[2], ph, dh, KH, sh), OW = conv_extent(d[3], pw, dw, KW, sw);
    if (OH < 1 || OW < 1)
      throw Error(ErrorKind::InvalidArgument, "input " + shape_str(d) + " is too small for the depthwise kernel");
    *od = {d[0], OC, OH, OW};
    if (pieces) check_shuffle_store(*pieces, l, passthrough, *od);
    ConvParams& p = *run;
    p = ConvParams{};
    p.B = kernel::u32(d[0], "batch");
    p.IC = p.icg = p.K = static_cast<uint32_t>(C);
    p.OC = p.ocg = static_cast<uint32_t>(OC);
    p.H = p.OH = kernel::u32(OH, "OH");
    p.W = p.OW = kernel::u32(OW, "OW");
    p.KH = p.KW = p.sh = p.sw = p.dh = p.dw = p.groups = 1;
    p.N = kernel::u32(d[0] * OH * OW, "N*OH*OW");
    p.total = kernel::u32(numel(*od), "output numel");
    kernel::u32(numel(d), "input numel");
    p.xh = static_cast<uint32_t>(d[2]);
    p.xw = static_cast<uint32_t>(d[3]);
    p.out_min = pw_min.value_or(-std::numeric_limits<float>::infinity());
    p.out_max = pw_max.value_or(std::numeric_limits<float>::infinity());
  });
  if (pieces) pieces->declare(oc);
  else oc.output(out, [od](const kernel::Live&) { return *od; });

  kernel::Kernel k("depthwise_pointwise", "depthwise_pointwise");
  k.constant("HAS_BIAS", g.is_null(pwb) ? 0.0 : 1.0)
      .constant("HAS_CLAMP", pw_min || pw_max ? 1.0 : 0.0)
      .constant("HAS_DW_BIAS", g.is_null(dwb) ? 0.0 : 1.0)
      .constant("HAS_DW_MIN", dw_min ? 1.0 : 0.0)
      .constant("HAS_DW_MAX", dw_max ? 1.0 : 0.0)
      .constant("DW_MIN_BITS", bits(dw_min))
      .constant("DW_MAX_BITS", bits(dw_max))
      .constant("DKH", double(KH))
      .constant("DKW", double(KW))
      .constant("DSH", double(sh))
      .constant("DSW", double(sw))
      .constant("DPH", double(ph))
      .constant("DPW", double(pw))
      .constant("DDH", double(dh))
      .constant("DDW", double(dw))
      .input("X", x)
      .input("DW", dww)
      .input("DB", g.is_null(dwb) ? -1 : dwb)
      .input("Wt", pww)
      .input("BIAS", g.is_null(pwb) ? -1 : pwb);
  if (pieces) bind_shuffle_store(k, *pieces, passthrough);
  else k.output("O", out);
  pro.attach(k, ep.empty());
  ep.apply<ConvParams>(k, [run](const kernel::Live&) { return *run; });
  oc.add(k.groups([run](const kernel::Live&) {
              return kernel::Groups::grid(kernel::ceil_div(run->N, 16), kernel::ceil_div(run->OC, 64));
            })
             .variant("depthwise_pointwise"));
}

ETW_REGISTER_OP(kDepthwisePointwise, build_depthwise_pointwise);

// Tensor t holds one value, or one per channel of a [N, C, H, W] tensor it broadcasts to.
bool per_channel(const graph::UseDef& ix, int32_t t, int64_t C) {
  if (!ix.tensor(t)) return false;
  const auto& d = ix.dims(t);
  if (d.size() > 4 || (numel(d) != 1 && numel(d) != C)) return false;
  for (size_t j = 0; j < d.size(); ++j)
    if (d[j] != 1 && !(4 - d.size() + j == 1 && d[j] == C)) return false;
  return true;
}

bool ints_all(const format::VkGraphIR& ir, int32_t id, int64_t want) {
  const auto& v = ir.values[id];
  if (v.kind != VkValueKind::IntList || v.ints.empty()) return false;
  for (int64_t i : v.ints)
    if (i != want) return false;
  return true;
}

// depthwise_pointwise: a depthwise conv (groups = channels, one channel a group; its epilogue, if
// any, over one value per channel or one value) whose output only a 1x1 conv with stride 1 and no
// padding reads, as its input. The pointwise conv may clamp, shuffle (etwebgpu.conv_shuffle), have
// an epilogue, or a prologue when the depthwise conv has no epilogue (one expression between
// them); its output tiles must be few (with more it takes the large tiles) and the bindings
// within 8.
size_t depthwise_pointwise(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  if (auto it = g.options().force_route.find("depthwise_pointwise"); it != g.options().force_route.end()) {
    if (it->second == "split") return 0;
    if (it->second != "fused")
      throw Error(ErrorKind::InvalidArgument, "force_route depthwise_pointwise = \"" + it->second + "\": use fused or split");
  }
  std::vector<bool> removed(ir.chain.size(), false);
  size_t fused = 0;
  for (size_t j = 0; j < ir.chain.size(); ++j) {
    const format::VkOpCall& pwc = ir.chain[j];
    const auto pwr = read_conv(ir, pwc);
    if (!pwr || !ix.tensor(pwc.args[0]) || !ix.tensor(pwc.args[1])) continue;
    const int32_t mid = pwc.args[0];
    const auto& md = ix.dims(mid);
    const auto& pwd = ix.dims(pwc.args[1]);
    if (md.size() != 4 || pwd.size() != 4 || pwd[1] != md[1] || pwd[2] != 1 || pwd[3] != 1) continue;
    if (!ints_all(ir, pwc.args[3], 1) || !ints_all(ir, pwc.args[4], 0) || ir.values[pwc.args[8]].kind != VkValueKind::Int ||
        ir.values[pwc.args[8]].int_val != 1)
      continue;
    const int64_t C = md[1], OC = pwd[0];
    const uint64_t N = static_cast<uint64_t>(md[0] * md[2] * md[3]);
    if (C > kMaxChannels || kernel::ceil_div(N, 64) * kernel::ceil_div(static_cast<uint64_t>(OC), 64) >= kMaxTiles) continue;
    const size_t p = ix.producer(mid);
    // Read by this call alone, and only as its input (not also as a passthrough or an operand).
    if (p == graph::UseDef::npos || removed[p] || ix.sole_reader(mid, p) != j ||
        std::count(pwc.args.begin(), pwc.args.end(), mid) != 1)
      continue;
    const format::VkOpCall& dwc = ir.chain[p];
    const auto dwr = read_conv(ir, dwc);
    if (!dwr || dwr->pass >= 0 || dwr->pro >= 0 || dwc.args.back() != mid || !ix.tensor(dwc.args[0]) || !ix.tensor(dwc.args[1]))
      continue;
    const int32_t x = dwc.args[0];
    const auto& xd = ix.dims(x);
    const auto& dwd = ix.dims(dwc.args[1]);
    if (xd.size() != 4 || xd[1] != C || dwd.size() != 4 || dwd[0] != C || dwd[1] != 1 ||
        ir.values[dwc.args[8]].kind != VkValueKind::Int || ir.values[dwc.args[8]].int_val != C)
      continue;
    // The one expression on the depthwise output: its epilogue (inputs none) or the pointwise
    // conv's prologue.
    int32_t pro = -1;
    std::vector<int32_t> pro_inputs;
    if (dwr->ep >= 0) {
      // Its inputs (after the expression, before the output) must hold one value per channel or one.
      const format::VkExpr& e = *ir.values[dwr->ep].expr;
      pro_inputs.assign(dwc.args.begin() + dwr->ep_at + 1, dwc.args.end() - 1);
      bool ok = pwr->pro < 0 && pro_inputs.size() <= kMaxPrologueInputs;
      for (const auto& v : e.views) ok = ok && !v;
      for (int32_t in : pro_inputs) ok = ok && per_channel(ix, in, C);
      if (!ok) continue;
      format::VkExpr pe = e;
      pe.on_input = true;
      pe.views.assign(pro_inputs.size() + 1, std::nullopt);  // a prologue counts its operands by its views
      pro = graph::add_expr(ir, std::move(pe));
    } else if (pwr->pro >= 0) {
      pro = pwr->pro;
      const auto from = pwc.args.begin() + static_cast<std::ptrdiff_t>(pwr->pro_at + 1);
      pro_inputs.assign(from, from + static_cast<std::ptrdiff_t>(pwr->pro_inputs));
    }
    // The pointwise conv's epilogue: from its expression to the output.
    std::vector<int32_t> tail;
    if (pwr->ep >= 0) tail.assign(pwc.args.begin() + static_cast<std::ptrdiff_t>(pwr->ep_at), pwc.args.end() - 1);
    if (kFixedBindings + pro_inputs.size() + pwr->ep_inputs + (pwr->pass >= 0 ? 2 : 0) > kMaxBindings) continue;
    // The depthwise input is read at the pointwise conv now. (Packed memory objects were split by
    // lifetime before the passes, so only an in-place write could change it in between.)
    if (!ix.unchanged_between(x, p, j)) continue;
    const int32_t null = graph::add_null(ir);
    std::vector<int32_t> args(dwc.args.begin(), dwc.args.begin() + 6);
    args.push_back(dwr->lo >= 0 ? dwr->lo : null);
    args.push_back(dwr->hi >= 0 ? dwr->hi : null);
    args.push_back(pwc.args[1]);
    args.push_back(pwc.args[2]);
    args.push_back(pwr->lo >= 0 ? pwr->lo : null);
    args.push_back(pwr->hi >= 0 ? pwr->hi : null);
    args.push_back(pwr->pass >= 0 ? pwr->pass : null);
    if (pro >= 0) {
      args.push_back(pro);
      args.insert(args.end(), pro_inputs.begin(), pro_inputs.end());
    }
    args.insert(args.end(), tail.begin(), tail.end());
    args.push_back(pwc.args.back());
    format::VkOpCall& target = ir.chain[j];
    target.name = kDepthwisePointwise;
    target.args = std::move(args);
    removed[p] = true;
    ++fused;
  }
  if (fused) graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_LOAD_REWRITE(depthwise_pointwise, ConvPairs);

}  // namespace
}  // namespace etwebgpu::ops
