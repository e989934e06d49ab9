// The 4-bit GEMV shared by linear_q4gsw and its multi-output form (quantized.cpp) and the 8da4w
// linears (dq8ca_linear.cpp): q4gsw_gemv_rows.wgsl, route "gemv_rows".
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "ops/epilogue.h"
#include "ops/op_common.h"
#include "ops/quantized/choose_qparams.h"

namespace etwebgpu::ops::q4 {

// = Params in q4gsw_weights.wgsl (without the 8da4w fields).
struct LinParams {
  uint32_t m, n, k, gs, wrow, srow, has_bias, pad;
  uint32_t n0, n1;  // several outputs: the first two widths
  float norm_eps;   // NormIn: the folded RMSNorm's eps
  uint32_t pad2;
};
static_assert(sizeof(LinParams) == 48);

// Where the 8da4w kernel finds each row's activation scale and zero point.
struct ActQuant {
  enum class Source { None, Tensors, Self } source = Source::None;
  int32_t scales = -1, zero_points = -1;  // Tensors: choose_qparams_affine's outputs, one per row
  q8::RowQparams args;                    // Self: choose_qparams_affine's arguments
};

// An et_vk.rms_norm folded into the linear that reads its output (q4gsw_norm_fusion.cpp). The
// host call's input argument is then ValueList [x, weight (Tensor | Null), eps, y]: gemv_rows
// normalizes x's rows as it reads them; y, the normalized tensor, is what the host's other kernels
// (GEMM routes) read, written first by the norm's own kernel when one of them runs.
struct NormIn {
  int32_t x = -1;       // the norm's input (-1: no norm folded in)
  int32_t weight = -1;  // -1: none
  float eps = 0;
  int32_t y = -1;       // the normalized tensor
  bool active() const { return x >= 0; }
};

// Reads the host's input argument `arg`: a tensor (returned, NormIn inactive) or the folded norm's
// ValueList, whose y is returned and whose shapes and dtypes are checked (y declared like x).
int32_t read_input(OpContext& oc, size_t arg, NormIn* norm);

// Adds the folded norm's own kernel (writing y), run when `when` holds: before the host's kernels
// that read y.
void add_norm_kernel(OpContext& oc, const NormIn& norm, std::function<bool(const kernel::Live&)> when);

// Whether gemv_rows takes input x with these weights: K and the group size multiples of 8, weight
// rows of whole words and x read as vec4s.
bool gemv_rows_fits(Graph& g, int32_t x, const LinParams& base);

// The gemv_rows kernel over any row count: x [..., K] (with `norm`: the norm's input, normalized
// as it is read) times the packed weights w (scales sc
// [groups, >= N], bias -1 = none) into outs (widths base.n0, base.n1, then the rest, for more than
// one), the epilogue `ep` applied to a single output; reductions by subgroup where
// use_subgroups allows.
kernel::Kernel gemv_rows(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                         const LinParams& base, const ActQuant& aq, const Epilogue& ep, const NormIn& norm = {});

}  // namespace etwebgpu::ops::q4
