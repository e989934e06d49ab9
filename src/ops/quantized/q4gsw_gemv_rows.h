// The 4-bit linears' kernels shared by linear_q4gsw and its multi-output form (quantized.cpp) and
// the 8da4w linears (dq8ca_linear.cpp): the GEMV q4gsw_gemv_rows.wgsl (route "gemv_rows") and the
// routes around it (add_linear_kernels).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/epilogue.h"
#include "ops/op_common.h"
#include "ops/quantized/choose_qparams.h"

namespace etwebgpu::ops::q4 {

// = Params in q4gsw_weights.wgsl (without the 8da4w fields).
struct LinParams {
  uint32_t m, n, k, gs, wrow, srow, has_bias, pad;
  uint32_t n0, n1;  // several outputs: the first two widths
  float norm_eps;   // FoldedInput::Norm: the folded RMSNorm's eps
  uint32_t pad2;
};
static_assert(sizeof(LinParams) == 48);

// Where the 8da4w kernel finds each row's activation scale and zero point.
struct ActQuant {
  enum class Source { None, Tensors, Self } source = Source::None;
  int32_t scales = -1, zero_points = -1;  // Tensors: choose_qparams_affine's outputs, one per row
  q8::RowQparams args;                    // Self: choose_qparams_affine's arguments
};

// An input the linear computes as it reads it: a load rewrite folded its producer in, and the
// host call's input argument is a ValueList instead of a tensor.
//  - Norm (q4gsw_norm_fusion.cpp): [x, weight (Tensor | Null), eps, y], y = rms_norm(x, weight, eps);
//  - Swiglu (q4gsw_swiglu_fusion.cpp): [gate, up, y, form], y = silu(gate) * up, form the String
//    "silu" (gate / (1 + exp(-gate))) or "sigmoid" (gate * sigmoid(gate): the export's decomposed
//    silu), so the product is the one the unfused kernels compute.
// gemv_rows computes x's rows as it reads them; y is what the host's other kernels (GEMM routes)
// read, written first by the fold's own kernel when one of them runs.
struct FoldedInput {
  enum class Kind { None, Norm, Swiglu } kind = Kind::None;
  int32_t x = -1;       // the norm's input, or gate
  int32_t weight = -1;  // Norm: its weight (-1: none)
  float eps = 0;        // Norm
  int32_t up = -1;      // Swiglu
  bool sigmoid = false; // Swiglu: the form gate * sigmoid(gate)
  int32_t y = -1;       // the tensor the fold replaced
  bool active() const { return kind != Kind::None; }
};

// Whether calls of op `name` take a folded input (the load rewrites that make them check).
bool takes_folded_input(const std::string& name);

// Reads the host's input argument `arg`: a tensor (returned, the fold inactive) or a folded
// input's ValueList, whose y is returned and whose shapes and dtypes are checked (y declared like x).
int32_t read_input(OpContext& oc, size_t arg, FoldedInput* fold);

// Adds the fold's own kernel (writing y), run when `when` holds: before the host's kernels that
// read y.
void add_fold_kernel(OpContext& oc, const FoldedInput& fold, std::function<bool(const kernel::Live&)> when);

// Whether gemv_rows takes input x with these weights: K and the group size multiples of 8, weight
// rows of whole words and x read as vec4s.
bool gemv_rows_fits(Graph& g, int32_t x, const LinParams& base);

// The gemv_rows kernel over any row count: x [..., K] (with `fold`: computed from the fold's
// inputs as it is read) times the packed weights w (scales sc
// [groups, >= N], bias -1 = none) into outs (widths base.n0, base.n1, then the rest, for more than
// one), the epilogue `ep` applied to a single output; reductions by subgroup where
// use_subgroups allows.
kernel::Kernel gemv_rows(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                         const LinParams& base, const ActQuant& aq, const Epilogue& ep, const FoldedInput& fold = {});

// The kernels of a 4-bit linear (q4gsw_weights.wgsl; `qcs` selects the channel-wise packing):
//   gemv_rows   one 256-wide workgroup per 8 or 16 outputs of a row, a chunk of packed words per
//               step (q4gsw, K and group size multiples of 8)
//   gemv        one workgroup per output, one weight at a time (other shapes, qcs4w)
//   gemm        16x16 tiles (a few rows, or shapes the large tiles do not take)
//   gemm_large  the shared 128x128 register-blocked core (gemm_core.wgsl) dequantizing in its loads
//               (q4gsw, K a multiple of 8, group size a multiple of 4; >= 32 rows)
// One row takes a GEMV (gemv_rows where it fits). force_route[force_key]: "gemv_rows", "gemv",
// "gemm" (tiled or large by rows), "gemm_tiled", "gemm_large". `base` holds everything but the
// live row count m; `ep` is the fused epilogue, `fold` a folded input. An 8da4w linear choosing its
// own activation parameters (aq Self; needs gemv_rows' shapes) takes gemv_rows on one row (or
// every row count, forced "gemv_rows") and on several the GEMM kernels over its rows fake-quantized
// into scratch (dq8ca_dequant_rows.wgsl, route "dequant_rows"), as torchao's quantize_affine /
// dequantize_affine compute them.
void add_linear_kernels(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                        const std::vector<int64_t>& widths, LinParams base, bool qcs, const char* force_key, const Epilogue& ep,
                        const FoldedInput& fold = {}, const ActQuant& aq = {});

}  // namespace etwebgpu::ops::q4
