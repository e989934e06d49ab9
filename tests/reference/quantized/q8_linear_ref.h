// References for ExecuTorch Vulkan's int8 linears and torchao's per-token activation quantization,
// written from PyTorch's semantics (backends/vulkan custom_ops_lib.py, torchao quant_primitives.py),
// not from the WGSL kernels.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// et_vk.q8ta_linear before the output rounding: (sum_k (x[m,k] - izp) * iscale * w[n,k] * ws[n] +
// bias[n], relu) * (1 / oscale), in fp64; [M * N] row-major. The int8 result is
// clamp(round_half_even(v) + ozp, -128, 127) (see q8_requantize).
std::vector<double> q8ta_linear_prequant(const std::vector<int8_t>& x, int64_t M, int64_t K, double iscale, int64_t izp,
                                         const std::vector<int8_t>& w, int64_t N, const std::vector<float>& ws,
                                         const std::vector<float>* bias, bool relu, double oscale);
int8_t q8_requantize(double v, int64_t ozp);

// et_vk.linear_q8ta_q8csw as ExecuTorch's reference computes it: x @ (w * ws)^T + bias (fp64).
HostTensor linear_q8csw(const HostTensor& x, const std::vector<int8_t>& w, int64_t N, int64_t K,
                        const std::vector<float>& ws, const std::vector<float>* bias);

// torchao _choose_qparams_affine with block_size [1, ..., 1, K] (rows of K), float32 math as
// PyTorch does it on the CPU: min/max including 0, scale = (max - min) / (qmax - qmin) clamped to
// eps, zero_point = clamp(qmin - round(min / scale)) (ASYMMETRIC); SYMMETRIC: scale =
// max(-min, max) / ((qmax - qmin) / 2) clamped to eps, zero_point int((qmax + qmin + 1) / 2).
void choose_qparams_rows(const std::vector<float>& x, int64_t rows, int64_t K, const std::string& mapping, int64_t qmin,
                         int64_t qmax, double eps, std::vector<float>* scale, std::vector<int32_t>* zp);

// torchao quantize_affine of one value: clamp(round(x * (1 / scale)) + zp, qmin, qmax), f32 math.
int32_t quantize_affine_value(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax);

// et_vk.linear_dq8ca_q4gsw with the activations quantized per row (scale, zp):
// out[m, n] = sum_k (x_q[m, k] - zp[m]) * scale[m] * q[n, k] * ws[k / gs][n] (fp64); q int4 [N, K],
// ws [K / gs, srow].
HostTensor linear_dq8ca_q4gsw(const HostTensor& x, const std::vector<float>& scale, const std::vector<int32_t>& zp,
                              const std::vector<int8_t>& q, int64_t N, int64_t K, const std::vector<float>& ws, int64_t srow,
                              int64_t gs);

}  // namespace etwebgpu::ref
