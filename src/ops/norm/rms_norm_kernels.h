// The rms_norm kernels for another op's node: a linear with an RMSNorm folded into its input
// (ops/quantized/q4gsw_gemv_rows.h NormIn) runs them before its GEMM routes.
#pragma once
#include <cstdint>
#include <functional>

#include "ops/op_common.h"

namespace etwebgpu::ops {

// out = rms_norm(x, weight (-1: none), eps) over the last dim, as et_vk.rms_norm computes it, run
// only when `when` holds; the caller declares out's live shape.
void add_rms_norm_kernels(OpContext& oc, int32_t x, int32_t weight, double eps, int32_t out,
                          std::function<bool(const kernel::Live&)> when);

}  // namespace etwebgpu::ops
