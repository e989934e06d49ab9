// The 4-bit GEMV shared by linear_q4gsw and its multi-output form (quantized.cpp) and the 8da4w
// linears (dq8ca_linear.cpp): q4gsw_gemv_rows.wgsl, route "gemv_rows".
#pragma once
#include <cstdint>
#include <vector>

#include "ops/epilogue.h"
#include "ops/op_common.h"
#include "ops/quantized/choose_qparams.h"

namespace etwebgpu::ops::q4 {

// = Params in q4gsw_weights.wgsl (without the 8da4w fields).
struct LinParams {
  uint32_t m, n, k, gs, wrow, srow, has_bias, pad;
  uint32_t n0, n1, pad1, pad2;  // several outputs: the first two widths
};
static_assert(sizeof(LinParams) == 48);

// Where the 8da4w kernel finds each row's activation scale and zero point.
struct ActQuant {
  enum class Source { None, Tensors, Self } source = Source::None;
  int32_t scales = -1, zero_points = -1;  // Tensors: choose_qparams_affine's outputs, one per row
  q8::RowQparams args;                    // Self: choose_qparams_affine's arguments
};

// Whether gemv_rows takes input x with these weights: K and the group size multiples of 8, weight
// rows of whole words and x read as vec4s.
bool gemv_rows_fits(Graph& g, int32_t x, const LinParams& base);

// The gemv_rows kernel over any row count: x [..., K] times the packed weights w (scales sc
// [groups, >= N], bias -1 = none) into outs (widths base.n0, base.n1, then the rest, for more than
// one), the epilogue `ep` applied to a single output; reductions by subgroup where
// use_subgroups allows.
kernel::Kernel gemv_rows(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                         const LinParams& base, const ActQuant& aq, const Epilogue& ep);

}  // namespace etwebgpu::ops::q4
