// 4-bit group-wise symmetric weights (Vulkan "q4gsw" layouts, backends/vulkan custom_ops_lib.py):
// * et_vk.linear_q4gsw [input, weight, weight_scales, group_size, bias, out]:
//   weight uint8 [N, K_pad/2] (K padded to a multiple of 8), byte = (q[2j+1]+8) << 4 | (q[2j]+8);
//   weight_scales [num_groups, N_pad] (transposed, N padded to 8); w[n, k] = q[n, k] * s[k / gs, n].
//   Routes: see add_linear_kernels; force_route "linear_q4gsw". A fused epilogue (ops/epilogue.h,
//   e.g. the residual add after a projection) follows the op's own arguments.
// * et_vk.embedding_q4gsw [weight, weight_scales, group_size, indices, is_linear_weight, out]:
//   weight uint8 [V, D/2], byte = (q[2j]+8) << 4 | (q[2j+1]+8) (nibbles swapped when
//   is_linear_weight); weight_scales [V, D/gs] or a single scale.
// * et_vk.linear_qcs4w [input, weight, scales, out]: 4-bit channel-wise symmetric weights,
//   weight uint8 [N, ceil(K/2)], byte = (q[2j]+8) << 4 | (q[2j+1]+8); scales [N]. Same kernels
//   as linear_q4gsw (QCS defined); force_route "linear_qcs4w" = "gemv" | "gemm".
// Packed bytes are uploaded as-is through Graph::raw_constant_buffer and read in place.
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include "graph/epilogue_fusion.h"
#include "graph/rewrite_pipeline.h"
#include "graph/fusion.h"
#include "graph/index_check.h"
#include "ops/epilogue.h"
#include "ops/op_common.h"
#include "ops/quantized/q4gsw_gemv_rows.h"
#include "ops/rope/rope.h"

namespace etwebgpu::ops {
namespace {

using q4::LinParams;

void require_constant(const OpContext& oc, int32_t id, const char* what) {
  if (oc.g.tensor(id).constant_id < 0) oc.fail(ErrorKind::Unsupported, std::string(what) + " must be a constant tensor");
}

}  // namespace

namespace q4 {

namespace {

constexpr int64_t kLargeRows = 32;

// = Params of dq8ca_dequant_rows.wgsl.
struct DequantRowsParams {
  uint32_t m, k, pad0, pad1;
  uint32_t mode;
  int32_t sym_zp;
  float qmin, qmax, denom, eps;
  uint32_t pad2, pad3;
};
static_assert(sizeof(DequantRowsParams) == 48);

struct SwigluPairsParams {
  uint32_t n, pad0, pad1, pad2;
};

}  // namespace

void add_linear_kernels(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                        const std::vector<int64_t>& widths, LinParams base, bool qcs, const char* force_key, const Epilogue& ep,
                        const ActQuant& aq, const SwigluOut& glu, const RopeOut& rope, const InputNorm& norm) {
  Graph& g = oc.g;
  const auto& tx = g.tensor(x);
  const bool self_quant = aq.source == ActQuant::Source::Self;
  // The 8da4w kernels that choose their own parameters exist only where the route is free or
  // gemv_rows (dq8ca_linear.cpp): gemv_rows pins every row count to it.
  std::string route = self_quant ? q4::dq8ca_route(oc)
                                 : pinned_route(oc, force_key, {"gemv_rows", "gemv", "gemm", "gemm_tiled", "gemm_large"});
  if (self_quant && route != "gemv_rows") route = "";
  int64_t K = base.k, N = base.n;
  int64_t max_m = tx.max_numel() / std::max<int64_t>(K, 1);
  uint32_t lim = g.ctx().info().max_workgroups_per_dim;
  if (ceil_div(max_m, 16) > lim || ceil_div(N, 16) > lim)
    oc.fail(ErrorKind::Limit, "GEMM grid for " + std::to_string(max_m) + " x " + std::to_string(N) + " exceeds the device limit");
  if (static_cast<uint64_t>(max_m) * N > uint64_t(lim) * lim) oc.fail(ErrorKind::Limit, "GEMV grid exceeds the device limit");
  // vec4 reads of X need whole vec4 rows and a binding of at least one vec4.
  const bool x_vec4 = K % 8 == 0 && holds_vec4(g, x);
  const bool rows_ok = !qcs && gemv_rows_fits(g, x, base);
  if (self_quant && !rows_ok)
    oc.fail(ErrorKind::Unsupported, "K = " + std::to_string(base.k) + " and group_size = " + std::to_string(base.gs) +
                                        ": the kernel that chooses its own activation parameters needs both multiples of 8");
  const bool large_ok = !qcs && x_vec4 && base.gs % 4 == 0 && base.wrow % 4 == 0;
  if (route == "gemm_large" && !large_ok)
    oc.fail(ErrorKind::InvalidArgument, std::string("force_route ") + force_key +
                                            " = \"gemm_large\" needs q4gsw weights, K % 8 == 0 and group_size % 4 == 0");
  if (route == "gemv_rows" && !rows_ok)
    oc.fail(ErrorKind::InvalidArgument, std::string("force_route ") + force_key +
                                            " = \"gemv_rows\" needs q4gsw weights, K % 8 == 0 and group_size % 8 == 0");
  if (norm.active() && !rows_ok)
    oc.fail(ErrorKind::Format, "an input norm needs the gemv_rows kernel: q4gsw weights, K % 8 == 0 and group_size % 8 == 0");

  // (The 8da4w linears' checks declared their outputs.)
  for (size_t i = 0; i < outs.size() && !self_quant; ++i)
    oc.output(outs[i], [x, base, n = widths[i]](const kernel::Live& l) {
      const auto& dx = l.dims(x);
      if (dx.back() != base.k)
        throw Error(ErrorKind::InvalidArgument, "input " + shape_str(dx) + " must end in K = " + std::to_string(base.k));
      std::vector<int64_t> od = dx;
      od.back() = n;
      return od;
    });
  if (glu.active())
    oc.output(glu.h, [x, f = base.n / 2](const kernel::Live& l) {
      std::vector<int64_t> od = l.dims(x);
      od.back() = f;
      return od;
    });
  if (rope.active()) {
    // q and k [..., H, D]: the linear's outputs split into heads; the tables one row per row.
    for (size_t i = 0; i < 2; ++i)
      oc.output(i ? rope.k : rope.q, [x, d = static_cast<int64_t>(rope.head_dim), w = widths[i]](const kernel::Live& l) {
        std::vector<int64_t> od = l.dims(x);
        od.back() = w / d;
        od.push_back(d);
        return od;
      });
    oc.prepare([x, base, rope](const kernel::Live& l) {
      const auto& dc = l.dims(rope.cos);
      if (dc.size() != 2 || l.dims(rope.sin) != dc)
        throw Error(ErrorKind::InvalidArgument, "freqs_cos " + shape_str(dc) + " and freqs_sin " + shape_str(l.dims(rope.sin)) +
                                                    " must be one [rows, head_dim / 2] shape");
      rope.first_row(l, l.numel(x) / base.k);  // the rows the run takes exist
    });
  }
  if (outs.size() > 1) {
    base.n0 = static_cast<uint32_t>(widths[0]);
    base.n1 = static_cast<uint32_t>(widths[1]);
  }
  auto params = [x, base](const kernel::Live& l) {
    LinParams p = base;
    p.m = kernel::u32(l.numel(x) / base.k, "rows");
    return p;
  };
  auto rows = [x, base](const kernel::Live& l) { return static_cast<uint64_t>(l.numel(x) / base.k); };
  // 8da4w: gemv_rows up to kLargeRows rows (bit-identical to choose_qparams_affine and the
  // unfused kernel), the large GEMM from there.
  // One row with an input norm: gemv_rows normalizing it, the only kernel that does.
  auto norm_here = [rows, on = norm.active()](const kernel::Live& l) { return on && input_norm_inline(rows(l)); };
  auto gemv = [rows, route, self_quant, large_ok, norm_here](const kernel::Live& l) {
    if (norm_here(l)) return true;
    if (self_quant) return route == "gemv_rows" || !large_ok || rows(l) < kLargeRows;
    return route == "gemv" || route == "gemv_rows" || (route.empty() && rows(l) == 1);
  };
  auto large = [rows, route, large_ok](const kernel::Live& l) {
    return route == "gemm_large" || (large_ok && (route.empty() || route == "gemm") && rows(l) >= kLargeRows);
  };
  // 8da4w on many rows: the rows fake-quantized into scratch (dq8ca_dequant_rows), which the large
  // GEMM reads as its X.
  const gpu::Buffer* xd = self_quant && large_ok ? &g.shared_scratch(static_cast<uint64_t>(max_m * K) * 4) : nullptr;
  auto linear = [&](const char* shader, bool vec4_x) {
    kernel::Kernel k(shader);
    if (qcs) k.define("QCS");
    if (xd) k.buffer("X", *xd, "vec4<f32>", kernel::Access::Read);
    else k.input("X", x, vec4_x);
    k.buffer("W", g.raw_constant_buffer(w), "u32", kernel::Access::Read).input("SC", sc).input("BIAS", bias).output("O", outs[0]);
    if (outs.size() > 1) k.define("MULTI").output("O1", outs[1]);
    if (outs.size() > 2) k.define("MULTI3").output("O2", outs[2]);
    ep.apply<LinParams>(k, params);
    return k;
  };
  // The one-row GEMV is gemv_rows where it fits, unless route "gemv" pins the simple one.
  const bool rows_gemv = self_quant || norm.active() || (rows_ok && route != "gemv");
  auto takes_rows = [gemv, rows_gemv](const kernel::Live& l) { return rows_gemv && gemv(l); };
  if (rows_gemv) {
    const std::string variant = !self_quant ? "gemv_rows" : outs.size() > 1 ? "gemv_rows_qparams_multi" : "gemv_rows_qparams";
    if (norm.active())
      oc.add(gemv_rows(oc, x, w, sc, bias, outs, base, aq, ep, glu, rope, norm).when(norm_here).variant(variant + "_norm"));
    oc.add(gemv_rows(oc, x, w, sc, bias, outs, base, aq, ep, glu, rope)
               .when([gemv, norm_here](const kernel::Live& l) { return gemv(l) && !norm_here(l); })
               .variant(variant));
  } else {
    oc.add(linear("q4gsw_gemv", false)
               .when(gemv)
               .groups([rows, base](const kernel::Live& l) { return kernel::Groups::linear(rows(l) * base.n); })
               .variant("gemv"));
  }
  if (xd) {
    const DequantRowsParams dp{0, base.k, 0, 0, aq.args.mode, aq.args.sym_zp, aq.args.qmin, aq.args.qmax, aq.args.denom, aq.args.eps, 0, 0};
    kernel::Kernel dk("dq8ca_dequant_rows");
    if (use_subgroups(oc, 256)) dk.define("SUBGROUPS");
    oc.add(dk.input("X", x)
               .buffer("XD", *xd, kernel::Storage::F32, kernel::Access::ReadWrite)
               .params<DequantRowsParams>([rows, dp](const kernel::Live& l) {
                 DequantRowsParams p = dp;
                 p.m = kernel::u32(rows(l), "rows");
                 return p;
               })
               .groups([rows](const kernel::Live& l) { return kernel::Groups::linear(rows(l)); })
               .when([gemv](const kernel::Live& l) { return !gemv(l); })
               .variant("dequant_rows"));
  }
  if (!self_quant)
    oc.add(linear("q4gsw_gemm", false)
               .when([gemv, large](const kernel::Live& l) { return !gemv(l) && !large(l); })
               .groups([rows, base](const kernel::Live& l) {
                 return kernel::Groups::grid(ceil_div(base.n, 16), ceil_div(rows(l), 16));
               })
               .variant("gemm"));
  if (large_ok)
    oc.add(linear("q4gsw_gemm_large", true)
               .define("NESTED_TILES")
               .constant("TM", 8)
               .when([gemv, large](const kernel::Live& l) { return !gemv(l) && large(l); })
               .groups([rows, base](const kernel::Live& l) {
                 return kernel::Groups::grid(ceil_div(base.n, 128), ceil_div(rows(l), 128));
               })
               .variant("gemm_large"));
  // Rotary embeddings off gemv_rows: the kernels above stored q and k as they are.
  if (rope.active())
    oc.add(rope::interleaved_rows(outs[0], outs[1], rope.cos, rope.sin, rope.q, rope.k, rope.head_dim,
                                  [rope, x, K = base.k](const kernel::Live& l) { return rope.first_row(l, l.numel(x) / K); })
               .when([takes_rows](const kernel::Live& l) { return !takes_rows(l); })
               .variant("rope_rows"));
  // A SwiGLU output off gemv_rows: the kernels above stored the pairs; h from them.
  if (glu.active()) {
    kernel::Kernel pk("q4gsw_swiglu_pairs");
    if (glu.sigmoid) pk.define("SIGMOID_FORM");
    oc.add(pk.input("PAIRS", glu.pairs)
               .output("H", glu.h)
               .params<SwigluPairsParams>([h = glu.h](const kernel::Live& l) { return SwigluPairsParams{kernel::u32(l.numel(h), "SwiGLU outputs"), 0, 0, 0}; })
               .flat(glu.h)
               .when([takes_rows](const kernel::Live& l) { return !takes_rows(l); })
               .variant("swiglu_pairs"));
  }
}

}  // namespace q4

namespace {

// The checks of a q4gsw linear's input x, weight w, scales sc, group size (argument gs_arg) and
// bias (-1: none) for N outputs of output rank `out_rank`; returns the uniform without m.
LinParams check_q4gsw(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t gs_arg, int32_t bias, int64_t N, size_t out_rank) {
  Graph& g = oc.g;
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16}, "input");
  require_dtype(oc, w, {VkDType::UInt8, VkDType::Int8}, "weight (packed int4)");
  require_dtype(oc, sc, {VkDType::Float32, VkDType::Float16}, "weight_scales");
  require_constant(oc, w, "weight");
  require_constant(oc, sc, "weight_scales");
  int64_t gs = g.integer(gs_arg);
  const auto& tx = g.tensor(x);
  const auto& tw = g.tensor(w);
  const auto& ts = g.tensor(sc);
  if (tx.rank() < 1 || static_cast<int64_t>(out_rank) != tx.rank()) oc.fail(ErrorKind::InvalidArgument, "input and out ranks differ");
  if (tw.rank() != 2) oc.fail(ErrorKind::InvalidArgument, "weight must be [N, K/2], got " + shape_str(tw.max_dims));
  if (ts.rank() != 2) oc.fail(ErrorKind::InvalidArgument, "weight_scales must be [num_groups, N], got " + shape_str(ts.max_dims));
  int64_t K = tx.max_dims.back();
  if (gs <= 0) oc.fail(ErrorKind::InvalidArgument, "group_size must be positive, got " + std::to_string(gs));
  if (tw.max_dims[0] < N) oc.fail(ErrorKind::InvalidArgument, "weight has " + std::to_string(tw.max_dims[0]) + " rows, out needs " + std::to_string(N));
  if (tw.max_dims[1] * 2 < K)
    oc.fail(ErrorKind::InvalidArgument, "weight packs " + std::to_string(tw.max_dims[1] * 2) + " input channels, input has " + std::to_string(K));
  if (ts.max_dims[0] * gs < K)
    oc.fail(ErrorKind::InvalidArgument, std::to_string(ts.max_dims[0]) + " scale groups of " + std::to_string(gs) +
                                            " do not cover K = " + std::to_string(K));
  if (ts.max_dims[1] < N) oc.fail(ErrorKind::InvalidArgument, "weight_scales has " + std::to_string(ts.max_dims[1]) + " columns, N = " + std::to_string(N));
  if (bias >= 0) {
    require_dtype(oc, bias, {VkDType::Float32, VkDType::Float16}, "bias");
    if (g.tensor(bias).max_numel() < N) oc.fail(ErrorKind::InvalidArgument, "bias is shorter than N");
  }
  return LinParams{0, static_cast<uint32_t>(N), static_cast<uint32_t>(K), static_cast<uint32_t>(gs), static_cast<uint32_t>(tw.max_dims[1]),
                   static_cast<uint32_t>(ts.max_dims[1]), bias >= 0 ? 1u : 0u, 0, 0, 0, 0, 0};
}

void build_linear_q4gsw(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), w = oc.arg(1), sc = oc.arg(2), bias = g.is_null(oc.arg(4)) ? -1 : oc.arg(4), out = oc.out();
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16}, "out");
  const int64_t N = g.tensor(out).max_dims.back();
  LinParams base = check_q4gsw(oc, x, w, sc, oc.arg(3), bias, N, g.tensor(out).rank());
  const InputNorm norm = InputNorm::read(oc, 5, x);
  q4::add_linear_kernels(oc, x, w, sc, bias, {out}, {N}, base, false, "linear_q4gsw",
                         Epilogue::read(oc, 5 + norm.args(), "linear_q4gsw"), {}, {}, {}, norm);
}

// etwebgpu.linear_q4gsw_multi [input, weight, weight_scales, group_size, widths (IntList), out =
// ValueList[2 or 3 tensors]]: linear_q4gsw projections of one input with their weights stacked
// row-wise and their scales column-wise (fuse_q4gsw_projections), one kernel writing each output.
// etwebgpu.linear_q4gsw_multi_rope [input, weight, weight_scales, group_size, widths, freqs_cos,
// freqs_sin, start, end, out = ValueList[q, k, (v,) q_rot, k_rot]]: the multi-output linear of
// q, k (and v) with et_vk.apply_rotary_emb on q and k (q4gsw_rope_fusion.cpp, q4gsw_gemv_rows.h
// RopeOut), the tables' rows [start, end) of dim 0 (Int, SymInt, or Null: 0 and every row):
// q_rot and k_rot [..., H, D] hold the rotated heads; q and k the products on the GEMM routes.
void build_q4gsw_multi(OpContext& oc, bool with_rope) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), w = oc.arg(1), sc = oc.arg(2);
  const InputNorm norm = InputNorm::read(oc, with_rope ? 9 : 5, x);
  const size_t nargs = (with_rope ? 10 : 6) + norm.args();
  if (oc.nargs() != nargs) oc.fail(ErrorKind::Format, "expects " + std::to_string(nargs) + " arguments, got " + std::to_string(oc.nargs()));
  std::vector<int64_t> widths;
  std::vector<int32_t> rotated;
  int64_t N = 0;
  const auto outs = q4::read_multi_outs(oc, 4, with_rope, &widths, &N, &rotated);
  q4::RopeOut rope;
  if (with_rope) rope = q4::read_rope_out(oc, 5, outs, rotated, widths);
  if (g.tensor(w).rank() == 2 && g.tensor(w).max_dims[0] != N)
    oc.fail(ErrorKind::Format, "weight has " + std::to_string(g.tensor(w).max_dims[0]) + " rows, the widths add up to " + std::to_string(N));
  LinParams base = check_q4gsw(oc, x, w, sc, oc.arg(3), -1, N, g.tensor(outs[0]).rank());
  q4::add_linear_kernels(oc, x, w, sc, -1, outs, widths, base, false, "linear_q4gsw", Epilogue(), {}, {}, rope, norm);
}

void build_linear_q4gsw_multi(OpContext& oc) { build_q4gsw_multi(oc, false); }
void build_linear_q4gsw_multi_rope(OpContext& oc) { build_q4gsw_multi(oc, true); }

// etwebgpu.linear_q4gsw_swiglu [input, weight, weight_scales, group_size, form (String), out =
// ValueList[h, pairs]]: a Llama MLP's gate and up linear_q4gsw with their weight rows and scale
// columns interleaved (row 2j gate j, 2j + 1 up j) and silu(gate) * up on the output
// (q4gsw_swiglu_fusion.cpp, q4gsw_gemv_rows.h SwigluOut); pairs [..., 2F] holds the products on
// the GEMM routes.
void build_linear_q4gsw_swiglu(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), w = oc.arg(1), sc = oc.arg(2);
  const InputNorm norm = InputNorm::read(oc, 5, x);
  if (oc.nargs() != 6 + norm.args())
    oc.fail(ErrorKind::Format, "expects " + std::to_string(6 + norm.args()) + " arguments, got " + std::to_string(oc.nargs()));
  const q4::SwigluOut glu = q4::read_swiglu_out(oc, 4);
  const int64_t N = g.tensor(glu.pairs).max_dims.back();
  if (g.tensor(w).rank() == 2 && g.tensor(w).max_dims[0] != N)
    oc.fail(ErrorKind::Format, "weight has " + std::to_string(g.tensor(w).max_dims[0]) + " rows, pairs needs " + std::to_string(N));
  LinParams base = check_q4gsw(oc, x, w, sc, oc.arg(3), -1, N, g.tensor(glu.pairs).rank());
  q4::add_linear_kernels(oc, x, w, sc, -1, {glu.pairs}, {N}, base, false, "linear_q4gsw", Epilogue(), {}, glu, {}, norm);
}

// linear_q4gsw calls reading one input (or contiguous clones of one tensor, as the export gives q,
// k and v), without bias or epilogue, with one K and group size: up to three consecutive ones
// become one etwebgpu.linear_q4gsw_multi over their stacked weights, one dispatch instead of three.
// It runs at the first call; nothing between the first and the last call may write the source,
// and each input clone must be read by its linear alone.
size_t fuse_q4gsw_projections(Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  using format::VkValueKind;
  auto candidate = [&](size_t i) {
    const auto& c = ir.chain[i];
    if (c.name != "et_vk.linear_q4gsw.default" || c.args.size() != 6 || ir.values[c.args[4]].kind != VkValueKind::Null) return false;
    const auto& w = ir.values[c.args[1]], &s = ir.values[c.args[2]], &y = ir.values[c.args[5]];
    return graph::constant_2d(ir, c.args[1], format::VkDType::UInt8, 1) && graph::constant_2d(ir, c.args[2], format::VkDType::Float32, 4) &&
           ir.values[c.args[3]].kind == VkValueKind::Int && y.kind == VkValueKind::Tensor && !ix.pinned(c.args[5]) &&
           !y.tensor.dims.empty() && s.tensor.dims[1] >= y.tensor.dims.back() && w.tensor.dims[0] == y.tensor.dims.back();
  };
  auto compatible = [&](size_t i, size_t j) {
    const auto &f = ir.chain[i], &c = ir.chain[j];
    return ir.values[f.args[1]].tensor.dims[1] == ir.values[c.args[1]].tensor.dims[1] &&
           ir.values[c.args[3]].int_val == ir.values[f.args[3]].int_val &&
           ir.values[c.args[2]].tensor.dims[0] == ir.values[f.args[2]].tensor.dims[0] &&
           ir.values[c.args[0]].tensor.dims == ir.values[f.args[0]].tensor.dims;
  };
  return graph::rewrite_projection_groups(ir, ix, 3, candidate, compatible, [&](const std::vector<size_t>& group) {
    // Stacked constants: weight rows one after another, scale columns side by side.
    std::vector<int32_t> ws, ss, outs;
    std::vector<int64_t> widths;
    for (size_t j : group) {
      const auto& c = ir.chain[j];
      ws.push_back(c.args[1]);
      ss.push_back(c.args[2]);
      widths.push_back(ir.values[c.args[5]].tensor.dims.back());
      outs.push_back(c.args[5]);
    }
    const auto& first = ir.chain[group[0]];
    format::VkOpCall call;
    call.node_id = first.node_id;
    call.name = "etwebgpu.linear_q4gsw_multi";
    call.args = {first.args[0], graph::stack_rows(ir, ws, format::VkDType::UInt8, 1),
                 graph::stack_columns(ir, ss, widths, format::VkDType::Float32, 4), first.args[3],
                 graph::add_int_list(ir, widths), graph::add_value_list(ir, outs)};
    return call;
  });
}

// et_vk.linear_qcs4w [input, weight, scales, out]: weight uint8 [N, ceil(K/2)] packed as
// ExecuTorch's Vulkan FuseQuantizedOpsTransform packs it, byte j = (q[2j] + 8) << 4 | (q[2j+1] + 8)
// (odd K padded with q = 0); scales [N]; w[n, k] = q[n, k] * scales[n]; no bias (a linear's bias
// lowers to a separate add).
void build_linear_qcs4w(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), w = oc.arg(1), sc = oc.arg(2), out = oc.out();
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16}, "out");
  require_dtype(oc, w, {VkDType::UInt8, VkDType::Int8}, "weight (packed int4)");
  require_dtype(oc, sc, {VkDType::Float32, VkDType::Float16}, "scales");
  require_constant(oc, w, "weight");
  require_constant(oc, sc, "scales");
  const auto& tx = g.tensor(x);
  const auto& tw = g.tensor(w);
  const auto& ts = g.tensor(sc);
  const auto& to = g.tensor(out);
  if (tx.rank() < 1 || to.rank() != tx.rank()) oc.fail(ErrorKind::InvalidArgument, "input and out ranks differ");
  if (tw.rank() != 2) oc.fail(ErrorKind::InvalidArgument, "weight must be [N, ceil(K/2)], got " + shape_str(tw.max_dims));
  int64_t K = tx.max_dims.back(), N = to.max_dims.back();
  if (K < 1) oc.fail(ErrorKind::InvalidArgument, "input has no features");
  if (tw.max_dims[0] != N)
    oc.fail(ErrorKind::InvalidArgument, "weight has " + std::to_string(tw.max_dims[0]) + " rows, out has " + std::to_string(N) + " features");
  if (tw.max_dims[1] != (K + 1) / 2)
    oc.fail(ErrorKind::InvalidArgument, "weight " + shape_str(tw.max_dims) + " packs " + std::to_string(tw.max_dims[1] * 2) +
                                            " input channels, input has " + std::to_string(K));
  if (ts.rank() != 1 || ts.max_dims[0] != N)
    oc.fail(ErrorKind::InvalidArgument, "scales must be [" + std::to_string(N) + "], got " + shape_str(ts.max_dims));
  LinParams base{0, static_cast<uint32_t>(N), static_cast<uint32_t>(K), static_cast<uint32_t>(K),
                 static_cast<uint32_t>(tw.max_dims[1]), 0, 0, 0, 0, 0, 0, 0};
  q4::add_linear_kernels(oc, x, w, sc, -1, {out}, {N}, base, true, "linear_qcs4w", Epilogue());
}

struct EmbParams {
  uint32_t n, d, v, gs, groups, wrow, site, pad1;
};
static_assert(sizeof(EmbParams) == 32);

void build_embedding_q4gsw(OpContext& oc) {
  Graph& g = oc.g;
  int32_t w = oc.arg(0), sc = oc.arg(1), idx = oc.arg(3), out = oc.out();
  require_dtype(oc, w, {VkDType::UInt8, VkDType::Int8}, "weight (packed int4)");
  require_dtype(oc, sc, {VkDType::Float32, VkDType::Float16}, "weight_scales");
  require_dtype(oc, idx, {VkDType::Int32, VkDType::Int64}, "indices");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16}, "out");
  require_constant(oc, w, "weight");
  int64_t gs = g.integer(oc.arg(2));
  bool linear = g.is_null(oc.arg(4)) ? false : g.boolean(oc.arg(4));
  const auto& tw = g.tensor(w);
  const auto& ts = g.tensor(sc);
  if (tw.rank() != 2) oc.fail(ErrorKind::InvalidArgument, "weight must be [V, D/2], got " + shape_str(tw.max_dims));
  int64_t V = tw.max_dims[0], D = tw.max_dims[1] * 2;
  if (g.tensor(out).max_dims.back() != D)
    oc.fail(ErrorKind::InvalidArgument, "out's last dim " + std::to_string(g.tensor(out).max_dims.back()) + " must be " + std::to_string(D));
  int64_t groups = 0;  // 0: one scale for the whole table
  if (ts.max_numel() == 1) {
    groups = 0;
  } else if (ts.rank() == 2 && ts.max_dims[0] == V) {
    groups = ts.max_dims[1];
    if (gs <= 0 || groups * gs != D)
      oc.fail(ErrorKind::InvalidArgument, std::to_string(groups) + " groups of " + std::to_string(gs) + " do not cover D = " + std::to_string(D));
  } else {
    oc.fail(ErrorKind::InvalidArgument, "weight_scales must be [V, D/group_size] or one value, got " + shape_str(ts.max_dims));
  }
  if (g.tensor(out).max_numel() < g.tensor(idx).max_numel() * D) oc.fail(ErrorKind::InvalidArgument, "out is smaller than indices x D");
  const uint32_t site = g.index_check().add_site(oc.call.name + " (node " + std::to_string(oc.call.node_id) + ")", 0,
                                                 graph::IndexCheck::Negatives::Reject);
  EmbParams base{0, static_cast<uint32_t>(D), static_cast<uint32_t>(V), static_cast<uint32_t>(std::max<int64_t>(gs, 1)),
                 static_cast<uint32_t>(groups), static_cast<uint32_t>(tw.max_dims[1]), site, 0};
  oc.output(out, [idx, D](const kernel::Live& l) {
    std::vector<int64_t> od = l.dims(idx);
    od.push_back(D);
    return od;
  });
  oc.add(kernel::Kernel("q4gsw_embedding")
             .constant("LINEAR", linear ? 1.0 : 0.0)
             .buffer("W", g.raw_constant_buffer(w), "u32", kernel::Access::Read)
             .input("SC", sc)
             .input("IDX", idx)
             .output("O", out)
             .fixed(g.index_check().binding())
             .params<EmbParams>([base, out](const kernel::Live& l) {
               EmbParams p = base;
               p.n = kernel::u32(l.numel(out), "output numel");
               return p;
             })
             .flat(out));
}

ETW_REGISTER_OP("et_vk.linear_q4gsw.default", build_linear_q4gsw);
ETW_REGISTER_EPILOGUE_HOST("et_vk.linear_q4gsw.default");
ETW_REGISTER_OP("etwebgpu.linear_q4gsw_multi", build_linear_q4gsw_multi);
ETW_REGISTER_OP("etwebgpu.linear_q4gsw_swiglu", build_linear_q4gsw_swiglu);
ETW_REGISTER_OP("etwebgpu.linear_q4gsw_multi_rope", build_linear_q4gsw_multi_rope);
// Input norms (input_norm.h) at the argument after each one's own, the weight at 1, group size at 3.
bool q4gsw_fits(const format::VkGraphIR& ir, const format::VkOpCall& c) { return q4::gemv_rows_takes_norm(ir, c, 1, 3, false, false); }
bool q4gsw_rope_fits(const format::VkGraphIR& ir, const format::VkOpCall& c) { return q4::gemv_rows_takes_norm(ir, c, 1, 3, false, true); }
ETW_REGISTER_INPUT_NORM_HOST("et_vk.linear_q4gsw.default", 5, q4gsw_fits);
ETW_REGISTER_INPUT_NORM_HOST("etwebgpu.linear_q4gsw_multi", 5, q4gsw_fits);
ETW_REGISTER_INPUT_NORM_HOST("etwebgpu.linear_q4gsw_multi_rope", 9, q4gsw_rope_fits);
ETW_REGISTER_INPUT_NORM_HOST("etwebgpu.linear_q4gsw_swiglu", 5, q4gsw_fits);
ETW_REGISTER_LOAD_REWRITE(fuse_q4gsw_projections, Projections);
ETW_REGISTER_OP("et_vk.linear_qcs4w.default", build_linear_qcs4w);
ETW_REGISTER_OP("et_vk.embedding_q4gsw.default", build_embedding_q4gsw);

}  // namespace
}  // namespace etwebgpu::ops
