// et_vk.linear_dq8ca_q4gsw (ExecuTorch's 8da4w linears): [input, input_scales, input_zp, weights,
// weight_sums, weight_scales, group_size, bias, out]. input f32 [..., K]; input_scales f32 and
// input_zp int8 (or int32), one per row (torchao.choose_qparams_affine's outputs); weights uint8
// [N, K_pad / 2] packed like et_vk.linear_q4gsw (K padded to 8, byte = (q[2j+1] + 8) << 4 |
// (q[2j] + 8)); weight_sums int32 [num_groups, >= N] (= sum of q in each group, checked at load);
// weight_scales f32 [num_groups, >= N]; bias Null (ExecuTorch's reference ignores it).
// Two kernels: dq8ca_quantize_rows quantizes each row with its scale and zero point
// (torchao.quantize_affine: round(x * (1 / scale)) + zp, clamped to int8) into a scratch of packed
// words, then dq8ca_q4gsw_linear (one workgroup per output) accumulates (x_q - zp) x int4
// products exactly in integers per block of eight and scales them. Routes: "dot4" (dot4I8Packed) and "portable";
// force_route "linear_dq8ca_q4gsw" pins one. With the choose_qparams_affine call before it, the
// load rewrite below makes one kernel of the three (etwebgpu.linear_dq8ca_q4gsw_qparams).
#include <set>

#include "graph/epilogue_fusion.h"
#include "graph/fusion.h"
#include "ops/epilogue.h"
#include "ops/quantized/choose_qparams.h"
#include "ops/quantized/q8_common.h"

namespace etwebgpu::ops {
namespace {

struct QuantParams {
  uint32_t m, k, kw, total;
};
static_assert(sizeof(QuantParams) == 16);

struct DqParams {
  uint32_t m, n, k, gs, wrow, srow, sumrow, kw, groups, blocks, mode;
  int32_t sym_zp;
  float qmin, qmax, denom, eps;  // SELF_QPARAMS: q8_row_qparams' arguments
  uint32_t pad, pad1, pad2, pad3;
};
static_assert(sizeof(DqParams) == 80);

// Outputs per workgroup of the kernel that chooses its own activation parameters, and the most
// activation words of one row its workgroup memory holds (12 KiB: K up to 12288).
constexpr uint32_t kSelfNb = 8;
constexpr int64_t kSelfMaxWords = 3072;

// The input, weight and output checks both linears share: weights, weight_sums, weight_scales,
// group_size and bias are arguments `a`, a + 1, ..., a + 4. Declares the output's shape; returns
// the uniform without its row count.
DqParams check_dq8ca(OpContext& oc, int32_t x, size_t a) {
  Graph& g = oc.g;
  int32_t w = oc.arg(a), sums = oc.arg(a + 1), ws = oc.arg(a + 2), out = oc.out();
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16}, "out");
  require_dtype(oc, w, {VkDType::UInt8, VkDType::Int8}, "weights (packed int4)");
  require_dtype(oc, sums, {VkDType::Int32}, "weight_sums");
  require_dtype(oc, ws, {VkDType::Float32}, "weight_scales");
  q8::require_const(oc, w, "weights");
  q8::require_const(oc, sums, "weight_sums");
  q8::require_const(oc, ws, "weight_scales");
  if (!g.is_null(oc.arg(a + 4))) oc.fail(ErrorKind::Unsupported, "bias must be Null (ExecuTorch's reference ignores it)");
  const auto& tx = g.tensor(x);
  const auto& to = g.tensor(out);
  if (tx.rank() < 1 || to.rank() != tx.rank())
    oc.fail(ErrorKind::Format, "input " + shape_str(tx.max_dims) + " and out " + shape_str(to.max_dims) + " ranks differ");
  const int64_t K = tx.max_dims.back(), N = to.max_dims.back();
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
  oc.output(out, [x, K, N](const kernel::Live& l) {
    const auto& dx = l.dims(x);
    if (dx.back() != K) throw Error(ErrorKind::InvalidArgument, "input " + shape_str(dx) + " must end in K = " + std::to_string(K));
    std::vector<int64_t> od = dx;
    od.back() = N;
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
  const DqParams base = check_dq8ca(oc, x, 3);
  const int64_t K = base.k, N = base.n, rows = g.tensor(x).max_numel() / K, kw = base.kw;
  if (g.tensor(isc).max_numel() != rows || g.tensor(izp).max_numel() != rows)
    oc.fail(ErrorKind::Format, "input_scales " + shape_str(g.tensor(isc).max_dims) + " and input_zp " + shape_str(g.tensor(izp).max_dims) +
                                   " must hold one value per row of input " + shape_str(g.tensor(x).max_dims));
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
// weights, weight_sums, weight_scales, group_size, bias, (epilogue,) out]: the two calls in one kernel
// (SELF_QPARAMS), made by fuse_choose_qparams below. Zero points int8, as the export's are.
void build_linear_dq8ca_q4gsw_qparams(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() < 16) oc.fail(ErrorKind::Format, "expects 16 arguments, got " + std::to_string(oc.nargs()));
  const Epilogue ep = Epilogue::read(oc, 15, "linear_dq8ca_q4gsw");
  int32_t x = oc.arg(0), w = oc.arg(10), ws = oc.arg(12), out = oc.out();
  const q8::RowQparams a = q8::row_qparams_args(oc, x, VkDType::Int8);
  DqParams base = check_dq8ca(oc, x, 10);
  if (base.kw > kSelfMaxWords)
    oc.fail(ErrorKind::Unsupported, "K = " + std::to_string(base.k) + ": one workgroup quantizes at most " +
                                        std::to_string(kSelfMaxWords * 4) + " activations");
  base.mode = a.mode;
  base.sym_zp = a.sym_zp;
  base.qmin = a.qmin;
  base.qmax = a.qmax;
  base.denom = a.denom;
  base.eps = a.eps;
  const bool dot4 = q8::use_dot4(oc, "linear_dq8ca_q4gsw");
  const int64_t K = base.k, N = base.n;
  auto live_rows = [x, K](const kernel::Live& l) { return static_cast<uint64_t>(l.numel(x) / K); };
  kernel::Kernel k("dq8ca_q4gsw_linear");
  k.define("SELF_QPARAMS").constant("NB", kSelfNb).constant("XS_WORDS", base.kw);
  if (dot4) k.define("DOT4");
  k.input("X", x).buffer("W", g.raw_constant_buffer(w), "u32", kernel::Access::Read).input("WS", ws).output("O", out);
  ep.apply<DqParams>(k, [live_rows, base](const kernel::Live& l) {
    DqParams p = base;
    p.m = kernel::u32(live_rows(l), "rows");
    return p;
  });
  oc.add(k.groups([live_rows, N](const kernel::Live& l) { return kernel::Groups::linear(live_rows(l) * ceil_div(N, kSelfNb)); })
             .variant(dot4 ? "dot4_qparams" : "portable_qparams"));
}

// choose_qparams_affine(x) -> (scale, zp) read by one linear_dq8ca_q4gsw of x alone (the export
// gives each its own clone of the same tensor) becomes etwebgpu.linear_dq8ca_q4gsw_qparams: three
// dispatches and two small tensors per 8da4w linear become one dispatch. When x is the same
// tensor, or clones of one source that no call between the two clones names otherwise.
size_t fuse_choose_qparams(Graph&, format::VkGraphIR& ir) {
  const size_t n = ir.chain.size();
  const auto mentions = graph::tensor_mentions(ir);
  const std::set<int32_t> pinned = graph::pinned_values(ir);
  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t i = 0; i < n; ++i) {
    auto& lin = ir.chain[i];
    if (lin.name != "et_vk.linear_dq8ca_q4gsw.default" || lin.args.size() < 9) continue;  // an epilogue may follow
    const int32_t sc = lin.args[1], zp = lin.args[2];
    if (ir.values[sc].kind != format::VkValueKind::Tensor || ir.values[zp].kind != format::VkValueKind::Tensor ||
        ir.values[zp].tensor.dtype != format::VkDType::Int8 || pinned.count(sc) || pinned.count(zp) ||
        mentions[sc].size() != 2 || mentions[zp] != mentions[sc] || mentions[sc][1] != i)
      continue;
    const size_t ci = mentions[sc][0];
    const auto& cq = ir.chain[ci];
    if (removed[ci] || cq.name != "torchao.choose_qparams_affine.default" || cq.args.size() != 11 ||
        ir.values[cq.args.back()].kind != format::VkValueKind::ValueList ||
        ir.values[cq.args.back()].ids != std::vector<int32_t>{sc, zp})
      continue;
    // The choose call's input and the linear's: one tensor, or clones of one source.
    const int32_t xc = cq.args[0], xl = lin.args[0];
    size_t clone_c = n, clone_l = n;
    const int32_t src_c = graph::clone_source(ir, mentions, xc, &clone_c), src_l = graph::clone_source(ir, mentions, xl, &clone_l);
    if (src_c != src_l) continue;
    if (xc != xl && (clone_c == n || clone_l == n ||
                     !graph::only_clones_read_between(ir, mentions, src_c, std::min(clone_c, clone_l), std::max(clone_c, clone_l))))
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
    if (xc != xl && clone_c < n && !pinned.count(xc) && mentions[xc].size() == 2) removed[clone_c] = true;
    ++fused;
  }
  if (fused) graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_OP("et_vk.linear_dq8ca_q4gsw.default", build_linear_dq8ca_q4gsw);
ETW_REGISTER_OP("etwebgpu.linear_dq8ca_q4gsw_qparams", build_linear_dq8ca_q4gsw_qparams);
ETW_REGISTER_LOAD_REWRITE(fuse_choose_qparams);
ETW_REGISTER_EPILOGUE_HOST("et_vk.linear_dq8ca_q4gsw.default");

}  // namespace
}  // namespace etwebgpu::ops
