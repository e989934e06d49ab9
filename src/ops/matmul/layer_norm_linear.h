// etwebgpu.layer_norm_linear: a layer norm over the last dim fused into the one linear that reads
// it (pre-norm transformers: LN -> QKV projection, LN -> MLP up-projection), one dispatch instead
// of two. Arguments:
//   [x, norm weight | Null, norm bias | Null, eps, weight [N, K], bias | Null, (epilogue...), out]
// = linear(layer_norm(x, [K], norm weight, norm bias, eps), weight, bias).
// etwebgpu.layer_norm_addmm: the same in front of an addmm (GPT-2's Conv1D, a [K, N] weight):
//   [x, norm weight | Null, norm bias | Null, eps, bias, mat2 [K, N], beta, alpha, (epilogue...), out]
// = addmm(bias, layer_norm(x, [K], ...), mat2, beta, alpha), x 2-D.
// Both run on the GEMM kernels with the norm in their A loads (NORM_A of matmul_gemm.wgsl and
// matmul_gemm_small.wgsl). The load rewrite in layer_norm_linear.cpp makes such calls; matmul.cpp
// builds them.
#pragma once
#include <cstdint>

namespace etwebgpu::ops {

inline constexpr const char* kLayerNormLinear = "etwebgpu.layer_norm_linear";
inline constexpr const char* kLayerNormAddmm = "etwebgpu.layer_norm_addmm";

// Whether a GEMM with vec4 operands of this size runs on the 64x64 kernels by default (matmul.cpp's
// route rule): the only ones with the norm prologue, so the rewrite leaves larger GEMMs alone.
bool gemm_takes_64x64_tiles(int64_t M, int64_t N, int64_t K, int64_t batch);

}  // namespace etwebgpu::ops
