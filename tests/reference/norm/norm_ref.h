// fp64 references for normalizations and softmax, written from PyTorch's definitions.
#pragma once
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// softmax / log_softmax along `dim` (negative allowed), subtracting the max for stability.
HostTensor softmax(const HostTensor& x, int64_t dim, bool log);
// Inference batch norm over [N, C, ...]; weight/bias may be empty (affine=False).
HostTensor batch_norm(const HostTensor& x, const std::vector<double>& mean, const std::vector<double>& var,
                      const std::vector<double>& weight, const std::vector<double>& bias, double eps);
// layer_norm over the trailing `norm_dims` dims; also returns per-row mean and rstd.
HostTensor layer_norm(const HostTensor& x, int64_t norm_dims, const std::vector<double>& weight,
                      const std::vector<double>& bias, double eps, std::vector<double>* mean = nullptr,
                      std::vector<double>* rstd = nullptr);
// group_norm over [N, C, *] with `groups`; per-channel weight/bias (may be empty).
HostTensor group_norm(const HostTensor& x, int64_t groups, const std::vector<double>& weight,
                      const std::vector<double>& bias, double eps, std::vector<double>* mean = nullptr,
                      std::vector<double>* rstd = nullptr);
// x * rsqrt(mean(x^2 over last dim) + eps) * weight.
HostTensor rms_norm(const HostTensor& x, const std::vector<double>& weight, double eps);

}  // namespace etwebgpu::ref
