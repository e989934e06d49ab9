// The arguments of torchao.choose_qparams_affine (per-row blocks), read and checked once for the op
// itself and for the 8da4w linear that chooses its activation parameters in its own kernel
// (etwebgpu.linear_dq8ca_q4gsw_qparams, whose arguments 0..9 are the same).
#pragma once
#include <cstdint>

#include "ops/op_common.h"

namespace etwebgpu::ops::q8 {

// What q8_row_qparams.wgsl needs (P.mode, P.sym_zp, P.qmin, P.qmax, P.denom, P.eps).
struct RowQparams {
  uint32_t mode = 0;  // 0 ASYMMETRIC, 1 SYMMETRIC
  int32_t sym_zp = 0;
  float qmin = 0, qmax = 0, denom = 1, eps = 0;
  bool keepdim = false;
};

// Arguments 1..9 of `oc` ([input = arg 0, mapping_type, block_size, target_dtype, quant_min,
// quant_max, eps, scale_dtype, zero_point_dtype, keepdim]) for zero points of `zp_dtype`; a bad
// one is an Error naming the op and the value.
RowQparams row_qparams_args(const OpContext& oc, int32_t x, format::VkDType zp_dtype);

}  // namespace etwebgpu::ops::q8
