// References for quantized_decomposed quantize / dequantize and et_vk.q8ta_add / q8ta_relu, written
// from PyTorch's reference (torch/ao/quantization/fx/_decomposed.py, ExecuTorch's
// backends/vulkan/custom_ops_lib.py). PyTorch computes them in float32: x * float32(1.0 / scale),
// round half to even, + zero point, clamp; (q - zero_point) * scale. These follow it operation by
// operation in float32, so the GPU must agree exactly.
#pragma once
#include <cstdint>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// Per tensor (channels == 1) or per channel of dim `axis`: scales / zero_points hold one value per
// channel. Returns int8 (qmin >= -128) or uint8 tensors of x's shape.
HostTensor quantize_affine(const HostTensor& x, const std::vector<double>& scales, const std::vector<int64_t>& zps,
                           int64_t axis, int64_t qmin, int64_t qmax, DType out);
// float32 result.
HostTensor dequantize_affine(const HostTensor& q, const std::vector<double>& scales, const std::vector<int64_t>& zps,
                             int64_t axis);
// int8 a + alpha * b (or relu(a) when b is null), requantized.
HostTensor q8ta_elementwise(const HostTensor& a, double sa, int64_t za, const HostTensor* b, double sb, int64_t zb,
                            double so, int64_t zo, double alpha);

}  // namespace etwebgpu::ref
