// et_vk.linear_dq8ca_q4gsw (ExecuTorch's 8da4w linears): [input, input_scales, input_zp, weights,
// weight_sums, weight_scales, group_size, bias, out]. input f32 [..., K]; input_scales f32 and
// input_zp int8 (or int32), one per row (torchao.choose_qparams_affine's outputs); weights uint8
// [N, K_pad / 2] packed like et_vk.linear_q4gsw (K padded to 8, byte = (q[2j+1] + 8) << 4 |
// (q[2j] + 8)); weight_sums int32 [num_groups, >= N] (= sum of q in each group, checked at load);
// weight_scales f32 [num_groups, >= N]; bias Null (ExecuTorch's reference ignores it).
// Routes (force_route "linear_dq8ca_q4gsw"):
//   gemv_rows  K and the group size multiples of 8: linear_q4gsw's GEMV quantizing each activation
//              as it reads it (torchao.quantize_affine: round(x * (1 / scale)) + zp, clamped to
//              int8), exact integer sums per chunk (q4gsw_gemv_rows.h); one dispatch
//   dot4 / portable  other shapes: dq8ca_quantize_rows quantizes each row into a scratch of packed
//              words, then dq8ca_q4gsw_linear (one workgroup per output) accumulates (x_q - zp) x int4
//              products per block of eight in integers (dot4I8Packed, or its portable form)
// With the choose_qparams_affine call before it, the load rewrite below makes one kernel of the
// two (etwebgpu.linear_dq8ca_q4gsw_qparams: gemv_rows choosing each row's parameters itself).
#include <optional>
#include <set>

#include "graph/epilogue_fusion.h"
#include "graph/rewrite_pipeline.h"
#include "graph/fusion.h"
#include "ops/epilogue.h"
#include "ops/quantized/choose_qparams.h"
#include "ops/quantized/q4gsw_gemv_rows.h"
#include "ops/quantized/q8_common.h"

namespace etwebgpu::ops {
namespace {

struct QuantParams {
  uint32_t m, k, kw, total;
};
static_assert(sizeof(QuantParams) == 16);

struct DqParams {
  uint32_t m, n, k, gs, wrow, srow, sumrow, kw, groups, blocks, pad, pad1;
};
static_assert(sizeof(DqParams) == 48);

// The linear_q4gsw uniform of the same product (gemv_rows' Params).
q4::LinParams lin_params(const DqParams& p) {
  q4::LinParams l{};
  l.n = p.n;
  l.k = p.k;
  l.gs = p.gs;
  l.wrow = p.wrow;
  l.srow = p.srow;
  return l;
}

// The input, weight and output checks both linears share: weights, weight_sums, weight_scales,
// group_size and bias are arguments `a`, a + 1, ..., a + 4. Declares the output's shape; returns
// the uniform without its row count.
DqParams check_dq8ca(OpContext& oc, int32_t x, size_t a, const std::vector<int32_t>& outs) {
  Graph& g = oc.g;
  int32_t w = oc.arg(a), sums = oc.arg(a + 1), ws = oc.arg(a + 2);
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16}, "input");
  for (int32_t out : outs) require_dtype(oc, out, {VkDType::Float32, VkDType::Float16}, "out");
  require_dtype(oc, w, {VkDType::UInt8, VkDType::Int8}, "weights (packed int4)");
  require_dtype(oc, sums, {VkDType::Int32}, "weight_sums");
  require_dtype(oc, ws, {VkDType::Float32}, "weight_scales");
  q8::require_const(oc, w, "weights");
  q8::require_const(oc, sums, "weight_sums");
  q8::require_const(oc, ws, "weight_scales");
  if (!g.is_null(oc.arg(a + 4))) oc.fail(ErrorKind::Unsupported, "bias must be Null (ExecuTorch's reference ignores it)");
  const auto& tx = g.tensor(x);
  int64_t N = 0;
  for (int32_t out : outs) {
    const auto& to = g.tensor(out);
    if (tx.rank() < 1 || to.rank() != tx.rank())
      oc.fail(ErrorKind::Format, "input " + shape_str(tx.max_dims) + " and out " + shape_str(to.max_dims) + " ranks differ");
    N += to.max_dims.back();
  }
  const int64_t K = tx.max_dims.back();
  if (K < 1 || N < 1) oc.fail(ErrorKind::Format, "input and out need features, got K = " + std::to_string(K) + ", N = " + std::to_string(N));
  const int64_t rows = tx.max_numel() / K;
  const int64_t gs = g.integer(oc.arg(a + 3));
  if (gs <= 0 || K % gs != 0)
    oc.fail(ErrorKind::Format, "group_size " + std::to_string(gs) + " does not divide K = " + std::to_string(K));
  const int64_t G = K / gs, kpad = (K + 7) / 8 * 8;
  const auto& tw = g.tensor(w);
  if (tw.rank() != 2 || tw.max_dims[0] != N || tw.max_dims[1] != kpad / 2)
    oc.fail(ErrorKind::Format, "weights must be [" + std::to_string(N) + ", " + std::to_string(kpad / 2) + "] (K = " + std::to_string(K) +
                                   " padded to 8, two per byte), got " + shape_str(tw.max_dims));
  const auto& ts = g.tensor(ws);
  if (ts.rank() != 2 || ts.max_dims[0] != G || ts.max_dims[1] < N)
    oc.fail(ErrorKind::Format, "weight_scales must be [" + std::to_string(G) + ", >= " + std::to_string(N) + "] (groups of " +
                                   std::to_string(gs) + "), got " + shape_str(ts.max_dims));
  const auto& tsum = g.tensor(sums);
  if (tsum.rank() != 2 || tsum.max_dims[0] != G || tsum.max_dims[1] < N)
    oc.fail(ErrorKind::Format, "weight_sums must be [" + std::to_string(G) + ", >= " + std::to_string(N) + "], got " + shape_str(tsum.max_dims));
  const int64_t srow = ts.max_dims[1], sumrow = tsum.max_dims[1];
  {
    auto sv = q8::f32_values(oc, ws);
    for (int64_t gi = 0; gi < G; ++gi)
      for (int64_t n = 0; n < N; ++n) {
        float s = sv[gi * srow + n];
        if (!std::isfinite(s) || s <= 0)
          oc.fail(ErrorKind::Format, "weight_scales[" + std::to_string(gi) + ", " + std::to_string(n) + "] must be finite and positive, got " +
                                         q8::num_str(s));
      }
    auto bytes = g.constant_bytes(w);
    if (static_cast<int64_t>(bytes.size()) < N * (kpad / 2)) oc.fail(ErrorKind::Format, "weights data is shorter than its shape");
    auto sum = q8::int_values(oc, sums);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t gi = 0; gi < G; ++gi) {
        int64_t s = 0;
        for (int64_t k = gi * gs; k < (gi + 1) * gs; ++k) {
          uint8_t b = bytes[n * (kpad / 2) + k / 2];
          s += static_cast<int64_t>((k & 1) ? (b >> 4) : (b & 15)) - 8;
        }
        if (s != sum[gi * sumrow + n])
          oc.fail(ErrorKind::Format, "weight_sums[" + std::to_string(gi) + ", " + std::to_string(n) + "] = " +
                                         std::to_string(sum[gi * sumrow + n]) + " but the weights of that group sum to " + std::to_string(s));
      }
  }
  uint32_t lim = g.ctx().info().max_workgroups_per_dim;
  if (static_cast<uint64_t>(rows) * N > uint64_t(lim) * lim) oc.fail(ErrorKind::Limit, "GEMV grid exceeds the device limit");
  for (int32_t out : outs)
    oc.output(out, [x, K, n = g.tensor(out).max_dims.back()](const kernel::Live& l) {
      const auto& dx = l.dims(x);
      if (dx.back() != K) throw Error(ErrorKind::InvalidArgument, "input " + shape_str(dx) + " must end in K = " + std::to_string(K));
      std::vector<int64_t> od = dx;
      od.back() = n;
      return od;
    });
  DqParams p{};
  p.n = static_cast<uint32_t>(N);
  p.k = static_cast<uint32_t>(K);
  p.gs = static_cast<uint32_t>(gs);
  p.wrow = static_cast<uint32_t>(kpad / 2);
  p.srow = static_cast<uint32_t>(srow);
  p.sumrow = static_cast<uint32_t>(sumrow);
  p.kw = static_cast<uint32_t>(kpad / 4);
  p.groups = static_cast<uint32_t>(G);
  p.blocks = gs % 8 == 0 ? static_cast<uint32_t>(K / 8) : 0u;
  return p;
}

void build_linear_dq8ca_q4gsw(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() < 9) oc.fail(ErrorKind::Format, "expects 9 arguments, got " + std::to_string(oc.nargs()));
  const Epilogue ep = Epilogue::read(oc, 8, "linear_dq8ca_q4gsw");
  int32_t x = oc.arg(0), isc = oc.arg(1), izp = oc.arg(2), w = oc.arg(3), ws = oc.arg(5), out = oc.out();
  require_dtype(oc, isc, {VkDType::Float32, VkDType::Float16}, "input_scales");
  require_dtype(oc, izp, {VkDType::Int8, VkDType::Int32}, "input_zp");
  const DqParams base = check_dq8ca(oc, x, 3, {out});
  const int64_t K = base.k, N = base.n, rows = g.tensor(x).max_numel() / K, kw = base.kw;
  if (g.tensor(isc).max_numel() != rows || g.tensor(izp).max_numel() != rows)
    oc.fail(ErrorKind::Format, "input_scales " + shape_str(g.tensor(isc).max_dims) + " and input_zp " + shape_str(g.tensor(izp).max_dims) +
                                   " must hold one value per row of input " + shape_str(g.tensor(x).max_dims));
  const std::string route = q4::dq8ca_route(oc);
  const q4::LinParams lin = lin_params(base);
  if (route == "gemv_rows" || (route.empty() && q4::gemv_rows_fits(g, x, lin))) {
    if (!q4::gemv_rows_fits(g, x, lin))
      oc.fail(ErrorKind::InvalidArgument, "force_route linear_dq8ca_q4gsw = \"gemv_rows\" needs K and group_size multiples of 8");
    q4::ActQuant aq;
    aq.source = q4::ActQuant::Source::Tensors;
    aq.scales = isc;
    aq.zero_points = izp;
    oc.add(q4::gemv_rows(oc, x, w, ws, -1, {out}, lin, aq, ep).variant("gemv_rows"));
    return;
  }
  const bool dot4 = q8::use_dot4(oc, "linear_dq8ca_q4gsw");
  const gpu::Buffer& xq = g.make_scratch(static_cast<uint64_t>(rows * kw) * 4, "dq8ca activations");
  auto live_rows = [x, K](const kernel::Live& l) { return static_cast<uint64_t>(l.numel(x) / K); };
  kernel::Kernel qk("dq8ca_quantize_rows");
  oc.add(qk.input("X", x)
             .input("SC", isc)
             .input("ZP", izp)
             .buffer("XQ", xq, "u32", kernel::Access::ReadWrite)
             .params<QuantParams>([live_rows, K, kw](const kernel::Live& l) {
               const uint64_t m = live_rows(l);
               return QuantParams{kernel::u32(m, "rows"), static_cast<uint32_t>(K), static_cast<uint32_t>(kw),
                                  kernel::u32(m * kw, "activation words")};
             })
             .constant("WG", 256)
             .groups([live_rows, kw](const kernel::Live& l) { return kernel::Groups::linear(ceil_div(live_rows(l) * kw, 256)); })
             .variant("quantize"));
  kernel::Kernel lk("dq8ca_q4gsw_linear");
  if (dot4) lk.define("DOT4");
  lk.buffer("XQ", xq, "u32", kernel::Access::Read)
             .buffer("W", g.raw_constant_buffer(w), "u32", kernel::Access::Read)
             .input("WS", ws)
             .input("SC", isc)
             .input("ZP", izp)
             .output("O", out);
  ep.apply<DqParams>(lk, [live_rows, base](const kernel::Live& l) {
    DqParams p = base;
    p.m = kernel::u32(live_rows(l), "rows");
    return p;
  });
  oc.add(lk.groups([live_rows, N](const kernel::Live& l) { return kernel::Groups::linear(live_rows(l) * N); })
             .variant(dot4 ? "dot4" : "portable"));
}

// etwebgpu.linear_dq8ca_q4gsw_qparams [input, mapping_type, block_size, target_dtype, quant_min,
// quant_max, eps, scale_dtype, zero_point_dtype, keepdim (choose_qparams_affine's arguments),
// weights, weight_sums, weight_scales, group_size, bias, (epilogue,) out]: the two calls in one
// gemv_rows kernel (DQ8CA_SELF), made by fuse_choose_qparams below where gemv_rows fits. Zero
// points int8, as the export's are.
// etwebgpu.linear_dq8ca_q4gsw_qparams_multi [the same up to bias, widths (IntList), out =
// ValueList of 2 or 3 tensors]: such linears of one input with their weights, sums and scales
// stacked (q, k and v), one kernel writing each output.
void add_qparams_kernel(OpContext& oc, const std::vector<int32_t>& outs, const std::vector<int64_t>& widths, const Epilogue& ep,
                        const InputNorm& norm, const q4::SwigluOut& glu = {}, const q4::RopeOut& rope = {}) {
  int32_t x = oc.arg(0), w = oc.arg(10), ws = oc.arg(12);
  q4::ActQuant aq;
  aq.source = q4::ActQuant::Source::Self;
  aq.args = q8::row_qparams_args(oc, x, VkDType::Int8);
  const q4::LinParams lin = lin_params(check_dq8ca(oc, x, 10, outs));
  q4::add_linear_kernels(oc, x, w, ws, -1, outs, widths, lin, false, "linear_dq8ca_q4gsw", ep, aq, glu, rope, norm);
}

void build_linear_dq8ca_q4gsw_qparams(OpContext& oc) {
  if (oc.nargs() < 16) oc.fail(ErrorKind::Format, "expects 16 arguments, got " + std::to_string(oc.nargs()));
  const InputNorm norm = InputNorm::read(oc, 15, oc.arg(0));
  const Epilogue ep = Epilogue::read(oc, 15 + norm.args(), "linear_dq8ca_q4gsw");
  add_qparams_kernel(oc, {oc.out()}, {oc.g.tensor(oc.out()).max_dims.back()}, ep, norm);
}

// The multi-output call, with rotary embeddings or not (etwebgpu.linear_dq8ca_q4gsw_qparams_multi_rope:
// freqs_cos, freqs_sin and the slice of their rows [start, end) after the widths, the rotated q
// and k after the outputs, q4gsw_gemv_rows.h RopeOut).
void build_qparams_multi(OpContext& oc, bool with_rope) {
  const InputNorm norm = InputNorm::read(oc, with_rope ? 20 : 16, oc.arg(0));
  const size_t nargs = (with_rope ? 21 : 17) + norm.args();
  if (oc.nargs() != nargs) oc.fail(ErrorKind::Format, "expects " + std::to_string(nargs) + " arguments, got " + std::to_string(oc.nargs()));
  std::vector<int64_t> widths;
  std::vector<int32_t> rotated;
  int64_t N = 0;
  const auto outs = q4::read_multi_outs(oc, 15, with_rope, &widths, &N, &rotated);
  q4::RopeOut rope;
  if (with_rope) rope = q4::read_rope_out(oc, 16, outs, rotated, widths);
  add_qparams_kernel(oc, outs, widths, Epilogue(), norm, {}, rope);
}

void build_linear_dq8ca_q4gsw_qparams_multi(OpContext& oc) { build_qparams_multi(oc, false); }
void build_linear_dq8ca_q4gsw_qparams_multi_rope(OpContext& oc) { build_qparams_multi(oc, true); }

// etwebgpu.linear_dq8ca_q4gsw_qparams_swiglu [the same 15 arguments up to bias, form (String),
// out = ValueList[h, pairs]]: an 8da4w Llama MLP's gate and up with their weights, sums and scales
// interleaved (row 2j gate j, 2j + 1 up j) and silu(gate) * up on the output
// (q4gsw_swiglu_fusion.cpp).
void build_linear_dq8ca_q4gsw_qparams_swiglu(OpContext& oc) {
  const InputNorm norm = InputNorm::read(oc, 16, oc.arg(0));
  if (oc.nargs() != 17 + norm.args())
    oc.fail(ErrorKind::Format, "expects " + std::to_string(17 + norm.args()) + " arguments, got " + std::to_string(oc.nargs()));
  const q4::SwigluOut glu = q4::read_swiglu_out(oc, 15);
  add_qparams_kernel(oc, {glu.pairs}, {oc.g.tensor(glu.pairs).max_dims.back()}, Epilogue(), norm, glu);
}

// Up to three consecutive etwebgpu.linear_dq8ca_q4gsw_qparams of one input (or clones of one
// tensor: the export's q, k and v), without epilogue, with the same activation arguments, K and
// group size, become one etwebgpu.linear_dq8ca_q4gsw_qparams_multi over their stacked weights,
// weight sums and scales: one dispatch instead of three.
size_t fuse_qparams_projections(Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  using format::VkValueKind;
  auto candidate = [&](size_t i) {
    const auto& c = ir.chain[i];
    if (c.name != "etwebgpu.linear_dq8ca_q4gsw_qparams" || c.args.size() != 16) return false;
    const auto& y = ir.values[c.args[15]];
    if (y.kind != VkValueKind::Tensor || y.tensor.dims.empty() || ix.pinned(c.args[15]) ||
        !graph::constant_2d(ir, c.args[10], format::VkDType::UInt8, 1) || !graph::constant_2d(ir, c.args[11], format::VkDType::Int32, 4) ||
        !graph::constant_2d(ir, c.args[12], format::VkDType::Float32, 4) || ir.values[c.args[13]].kind != VkValueKind::Int ||
        ir.values[c.args[14]].kind != VkValueKind::Null)
      return false;
    const int64_t width = y.tensor.dims.back();
    return ir.values[c.args[10]].tensor.dims[0] == width && ir.values[c.args[11]].tensor.dims[1] >= width &&
           ir.values[c.args[12]].tensor.dims[1] >= width;
  };
  auto compatible = [&](size_t i, size_t j) {
    const auto &f = ir.chain[i], &c = ir.chain[j];
    if (ir.values[c.args[0]].tensor.dims != ir.values[f.args[0]].tensor.dims || !graph::same_scalar(ir, c.args[13], f.args[13])) return false;
    for (size_t a = 1; a <= 9; ++a)
      if (!graph::same_scalar(ir, c.args[a], f.args[a])) return false;
    return ir.values[c.args[10]].tensor.dims[1] == ir.values[f.args[10]].tensor.dims[1] &&
           ir.values[c.args[11]].tensor.dims[0] == ir.values[f.args[11]].tensor.dims[0] &&
           ir.values[c.args[12]].tensor.dims[0] == ir.values[f.args[12]].tensor.dims[0];
  };
  return graph::rewrite_projection_groups(ir, ix, 3, candidate, compatible, [&](const std::vector<size_t>& group) {
    std::vector<int32_t> ws, sums, scales, outs;
    std::vector<int64_t> widths;
    for (size_t j : group) {
      const auto& c = ir.chain[j];
      ws.push_back(c.args[10]);
      sums.push_back(c.args[11]);
      scales.push_back(c.args[12]);
      widths.push_back(ir.values[c.args[15]].tensor.dims.back());
      outs.push_back(c.args[15]);
    }
    format::VkOpCall call;
    call.node_id = ir.chain[group[0]].node_id;
    call.name = "etwebgpu.linear_dq8ca_q4gsw_qparams_multi";
    call.args.assign(ir.chain[group[0]].args.begin(), ir.chain[group[0]].args.begin() + 10);
    const int32_t gs = ir.chain[group[0]].args[13], bias = ir.chain[group[0]].args[14];
    call.args.push_back(graph::stack_rows(ir, ws, format::VkDType::UInt8, 1));
    call.args.push_back(graph::stack_columns(ir, sums, widths, format::VkDType::Int32, 4));
    call.args.push_back(graph::stack_columns(ir, scales, widths, format::VkDType::Float32, 4));
    call.args.push_back(gs);
    call.args.push_back(bias);
    call.args.push_back(graph::add_int_list(ir, widths));
    call.args.push_back(graph::add_value_list(ir, outs));
    return call;
  });
}

// choose_qparams_affine(x) -> (scale, zp) read by one linear_dq8ca_q4gsw of x alone (the export
// gives each its own clone of the same tensor) becomes etwebgpu.linear_dq8ca_q4gsw_qparams: three
// dispatches and two small tensors per 8da4w linear become one dispatch. When x is the same
// tensor, or clones of one source that no call between the two clones names otherwise.
size_t fuse_choose_qparams(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  if (auto it = g.options().force_route.find("linear_dq8ca_q4gsw"); it != g.options().force_route.end() && it->second != "gemv_rows")
    return 0;  // a pinned route of the unfused kernels
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t i = 0; i < n; ++i) {
    auto& lin = ir.chain[i];
    if (lin.name != "et_vk.linear_dq8ca_q4gsw.default" || lin.args.size() < 9) continue;  // an epilogue may follow
    // gemv_rows' shapes: K and the group size multiples of 8.
    const auto& xv = ir.values[lin.args[0]];
    if (xv.kind != format::VkValueKind::Tensor || xv.tensor.dims.empty() || xv.tensor.dims.back() % 8 != 0 ||
        ir.values[lin.args[6]].kind != format::VkValueKind::Int || ir.values[lin.args[6]].int_val % 8 != 0)
      continue;
    const int32_t sc = lin.args[1], zp = lin.args[2];
    if (ir.values[sc].kind != format::VkValueKind::Tensor || ir.values[zp].kind != format::VkValueKind::Tensor ||
        ir.values[zp].tensor.dtype != format::VkDType::Int8 || ix.sole_reader(sc) != i || ix.sole_reader(zp) != i ||
        ix.producer(sc) != ix.producer(zp))
      continue;
    const size_t ci = ix.producer(sc);
    const auto& cq = ir.chain[ci];
    if (removed[ci] || cq.name != "torchao.choose_qparams_affine.default" || cq.args.size() != 11 ||
        ir.values[cq.args.back()].kind != format::VkValueKind::ValueList ||
        ir.values[cq.args.back()].ids != std::vector<int32_t>{sc, zp})
      continue;
    // The choose call's input and the linear's: one tensor, or clones of one source.
    const int32_t xc = cq.args[0], xl = lin.args[0];
    size_t clone_c = n, clone_l = n;
    const int32_t src_c = ix.clone_source(xc, &clone_c), src_l = ix.clone_source(xl, &clone_l);
    if (src_c != src_l) continue;
    if (xc != xl &&
        (clone_c == n || clone_l == n || !ix.unchanged_between(src_c, std::min(clone_c, clone_l), std::max(clone_c, clone_l))))
      continue;
    format::VkOpCall call;
    call.node_id = lin.node_id;
    call.name = "etwebgpu.linear_dq8ca_q4gsw_qparams";
    call.args = {xl};
    call.args.insert(call.args.end(), cq.args.begin() + 1, cq.args.end() - 1);
    call.args.insert(call.args.end(), lin.args.begin() + 3, lin.args.end());
    lin = std::move(call);
    removed[ci] = true;
    // The choose call's own clone, now read by nobody.
    if (xc != xl && clone_c < n && ix.sole_reader(xc, clone_c) == ci) removed[clone_c] = true;
    ++fused;
  }
  if (!fused) return 0;
  graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_OP("et_vk.linear_dq8ca_q4gsw.default", build_linear_dq8ca_q4gsw);
ETW_REGISTER_OP("etwebgpu.linear_dq8ca_q4gsw_qparams", build_linear_dq8ca_q4gsw_qparams);
ETW_REGISTER_OP("etwebgpu.linear_dq8ca_q4gsw_qparams_multi", build_linear_dq8ca_q4gsw_qparams_multi);
ETW_REGISTER_OP("etwebgpu.linear_dq8ca_q4gsw_qparams_multi_rope", build_linear_dq8ca_q4gsw_qparams_multi_rope);
ETW_REGISTER_OP("etwebgpu.linear_dq8ca_q4gsw_qparams_swiglu", build_linear_dq8ca_q4gsw_qparams_swiglu);
// Input norms (input_norm.h) at the argument after each one's own, the weight at 10, group size at 13.
bool qparams_fits(const format::VkGraphIR& ir, const format::VkOpCall& c) { return q4::gemv_rows_takes_norm(ir, c, 10, 13, true, false); }
ETW_REGISTER_INPUT_NORM_HOST("etwebgpu.linear_dq8ca_q4gsw_qparams", 15, qparams_fits);
ETW_REGISTER_INPUT_NORM_HOST("etwebgpu.linear_dq8ca_q4gsw_qparams_multi", 16, qparams_fits);
ETW_REGISTER_INPUT_NORM_HOST("etwebgpu.linear_dq8ca_q4gsw_qparams_multi_rope", 20, qparams_fits);
ETW_REGISTER_INPUT_NORM_HOST("etwebgpu.linear_dq8ca_q4gsw_qparams_swiglu", 16, qparams_fits);
ETW_REGISTER_LOAD_REWRITE(fuse_choose_qparams, Patterns);
ETW_REGISTER_LOAD_REWRITE(fuse_qparams_projections, Projections);
ETW_REGISTER_EPILOGUE_HOST("et_vk.linear_dq8ca_q4gsw.default");

}  // namespace
}  // namespace etwebgpu::ops
