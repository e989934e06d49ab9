// The 4-bit linears' kernels shared by linear_q4gsw and its multi-output form (quantized.cpp) and
// the 8da4w linears (dq8ca_linear.cpp): the GEMV q4gsw_gemv_rows.wgsl (route "gemv_rows") and the
// routes around it (add_linear_kernels).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/epilogue.h"
#include "ops/norm/input_norm.h"
#include "ops/op_common.h"
#include "ops/quantized/choose_qparams.h"

namespace etwebgpu::ops::q4 {

// = Params in q4gsw_weights.wgsl (without the 8da4w fields).
struct LinParams {
  uint32_t m, n, k, gs, wrow, srow, has_bias, pad;
  uint32_t n0, n1;  // several outputs: the first two widths
  uint32_t hd;      // RopeOut: the head dim
  float norm_eps;   // an input norm's eps (gemv_rows under NORM_IN)
  uint32_t rope_row0, pad1, pad2, pad3;  // RopeOut: the table row of input row 0
};
static_assert(sizeof(LinParams) == 64);

// Where the 8da4w kernel finds each row's activation scale and zero point.
struct ActQuant {
  enum class Source { None, Tensors, Self } source = Source::None;
  int32_t scales = -1, zero_points = -1;  // Tensors: choose_qparams_affine's outputs, one per row
  q8::RowQparams args;                    // Self: choose_qparams_affine's arguments
  bool active() const { return source != Source::None; }
};

// A SwiGLU on the output (q4gsw_swiglu_fusion.cpp): the weights hold gate and up rows interleaved
// (row 2j gate j, row 2j + 1 up j; scale columns likewise) and the linear stores
// h[..., j] = silu(gate_j) * up_j with the float operations of the kernels it replaced (sigmoid:
// the export's decomposed gate * sigmoid(gate)). gemv_rows stores h itself (one invocation holds
// both rows of a pair); the other routes store the interleaved products into `pairs` and
// q4gsw_swiglu_pairs.wgsl makes h of them.
struct SwigluOut {
  int32_t h = -1, pairs = -1;
  bool sigmoid = false;
  bool active() const { return h >= 0; }
};

// Rotary embeddings on the output (q4gsw_rope_fusion.cpp): the first two outputs of a multi-output
// linear are q and k, [..., Hq * D] and [..., Hk * D], and the linear stores them rotated as
// et_vk.apply_rotary_emb rotates them (interleaved pairs (2i, 2i + 1) of each head by row m's
// cos[m, i] and sin[m, i], the same float operations) into q and k [..., H, D]; a third output
// (v) is stored as it is. gemv_rows rotates in the invocation that holds both rows of a pair; the
// other routes store the raw products into the linear's outputs and rope_rotary rotates them.
// The tables' rows may be a slice [start, end) of dim 0 (ExecuTorch's Llama slices them at the
// chunk's positions; the fusion reads the slice in place): input row m takes table row start + m.
struct RopeOut {
  int32_t q = -1, k = -1, cos = -1, sin = -1;
  int32_t start = -1, end = -1;  // Int / SymInt values, -1: none (0, and the tables' rows)
  uint32_t head_dim = 0;
  bool active() const { return q >= 0; }
  // The first table row of this run's M input rows; an Error (InvalidArgument) naming the shapes
  // where [start, end), clamped as aten.slice clamps it, does not hold M rows of the tables.
  int64_t first_row(const kernel::Live& l, int64_t m) const;
};

// The outputs of a multi-output call: its ValueList holds the linear's outputs, one per width of
// the IntList at `widths_arg` (2 or 3; each the last dim of its output, f32/f16, one rank), then,
// `rotated`, the rotated q and k. Returns the linear's outputs with *widths and their sum *n, and
// the rotated pair in *rot; Format errors name the value.
std::vector<int32_t> read_multi_outs(OpContext& oc, size_t widths_arg, bool rotated, std::vector<int64_t>* widths, int64_t* n,
                                     std::vector<int32_t>* rot);

// Reads the rotary output of a `*_multi_rope` call: cos and sin at `cos_arg`, `cos_arg + 1`, the
// slice of their rows (start, end: Int, SymInt or Null) at `cos_arg + 2`, `cos_arg + 3`, the
// rotated outputs q and k after `raw` outputs of the linear ([q, k, v?] widths `widths`); Format
// errors name the value.
RopeOut read_rope_out(OpContext& oc, size_t cos_arg, const std::vector<int32_t>& raw, const std::vector<int32_t>& rotated,
                      const std::vector<int64_t>& widths);

// Reads the SwiGLU output of a `*_swiglu` call: the form String at `form_arg` and its output
// ValueList [h, pairs] (h [..., F] and pairs [..., 2F] of one rank, f32/f16); Format errors name
// the value.
SwigluOut read_swiglu_out(OpContext& oc, size_t form_arg);

// Whether gemv_rows takes input x with these weights: K and the group size multiples of 8, weight
// rows of whole words and x read as vec4s.
bool gemv_rows_fits(Graph& g, int32_t x, const LinParams& base);
// Whether a call in the IR (an input-norm host, input_norm.h) takes an input norm: its input
// (argument 0), the packed weight at w_arg and the group size at gs_arg fit gemv_rows, and its
// GEMV runs few enough workgroups on a row for each to sum the row's squares again at less cost
// than the norm's own dispatch.
// quantized_acts: an 8da4w GEMV; rotary: one storing rotated q/k pairs (their layouts differ).
bool gemv_rows_takes_norm(const format::VkGraphIR& ir, const format::VkOpCall& c, size_t w_arg, size_t gs_arg,
                          bool quantized_acts, bool rotary);

// The route force_route["linear_dq8ca_q4gsw"] pins: "" (chosen by shape), "gemv_rows", "dot4" or
// "portable" (read by the 8da4w ops and by the linear kernels they share).
std::string dq8ca_route(const OpContext& oc);

// The gemv_rows kernel over any row count: x [..., K] times the packed weights w (scales sc
// [groups, >= N], bias -1 = none) into outs (widths base.n0, base.n1, then the rest, for more than
// one), the epilogue `ep` applied to a single output; reductions by subgroup where
// use_subgroups allows. With an active `norm` it reads the norm's input instead of x and
// normalizes each row itself (NORM_IN).
kernel::Kernel gemv_rows(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                         const LinParams& base, const ActQuant& aq, const Epilogue& ep, const SwigluOut& glu = {},
                         const RopeOut& rope = {}, const InputNorm& norm = {});

// The kernels of a 4-bit linear (q4gsw_weights.wgsl; `qcs` selects the channel-wise packing):
//   gemv_rows   one 256-wide workgroup per 8 or 16 outputs of a row, a chunk of packed words per
//               step (q4gsw, K and group size multiples of 8)
//   gemv        one workgroup per output, one weight at a time (other shapes, qcs4w)
//   gemm        16x16 tiles (a few rows, or shapes the large tiles do not take)
//   gemm_large  the shared 128x128 register-blocked core (gemm_core.wgsl) dequantizing in its loads
//               (q4gsw, K a multiple of 8, group size a multiple of 4; >= 32 rows)
// One row takes a GEMV (gemv_rows where it fits). force_route[force_key]: "gemv_rows", "gemv",
// "gemm" (tiled or large by rows), "gemm_tiled", "gemm_large". `base` holds everything but the
// live row count m; `ep` is the fused epilogue, `glu` a SwiGLU on the output (outs then
// {glu.pairs}, widths {2F}), `rope` rotary embeddings on the first two outputs. An 8da4w linear choosing its
// own activation parameters (aq Self; needs gemv_rows' shapes) takes gemv_rows on one row (or
// every row count, forced "gemv_rows") and on several the GEMM kernels over its rows fake-quantized
// into scratch (dq8ca_dequant_rows.wgsl, route "dequant_rows"), as torchao's quantize_affine /
// dequantize_affine compute them. An active input `norm` (input_norm.h; needs gemv_rows' shapes):
// one row takes gemv_rows normalizing the norm's input, whatever the route forced; more rows read
// x, which the deferred norm wrote.
void add_linear_kernels(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                        const std::vector<int64_t>& widths, LinParams base, bool qcs, const char* force_key, const Epilogue& ep,
                        const ActQuant& aq = {}, const SwigluOut& glu = {}, const RopeOut& rope = {}, const InputNorm& norm = {});

}  // namespace etwebgpu::ops::q4
