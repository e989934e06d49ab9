#include "reference/norm/batch_stats_ref.h"

#include <cmath>

namespace etwebgpu::ref {

BatchNormTrain batch_norm_train(const HostTensor& x, const std::vector<double>& w, const std::vector<double>& b,
                                std::vector<double> running_mean, std::vector<double> running_var, double momentum,
                                double eps) {
  int64_t N = x.shape[0], C = x.shape[1], inner = 1;
  for (size_t d = 2; d < x.shape.size(); ++d) inner *= x.shape[d];
  auto v = x.to_f64();
  std::vector<double> out(v.size()), mean(C), invstd(C);
  for (int64_t c = 0; c < C; ++c) {
    double s = 0, q = 0, n = static_cast<double>(N * inner);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t k = 0; k < inner; ++k) s += v[(i * C + c) * inner + k];
    mean[c] = s / n;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t k = 0; k < inner; ++k) q += std::pow(v[(i * C + c) * inner + k] - mean[c], 2);
    invstd[c] = 1 / std::sqrt(q / n + eps);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        size_t at = static_cast<size_t>((i * C + c) * inner + k);
        double y = (v[at] - mean[c]) * invstd[c];
        if (!w.empty()) y *= w[c];
        if (!b.empty()) y += b[c];
        out[at] = y;
      }
    if (!running_mean.empty()) {
      running_mean[c] = (1 - momentum) * running_mean[c] + momentum * mean[c];
      running_var[c] = (1 - momentum) * running_var[c] + momentum * q / (n - 1);
    }
  }
  return {HostTensor::from(DType::Float64, x.shape, out), HostTensor::from(DType::Float64, {C}, mean),
          HostTensor::from(DType::Float64, {C}, invstd), running_mean, running_var};
}

}  // namespace etwebgpu::ref
