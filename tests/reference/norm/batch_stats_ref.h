// fp64 reference for batch norm with batch statistics (aten._native_batch_norm_legit, training).
#pragma once
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

struct BatchNormTrain {
  HostTensor out, save_mean, save_invstd;  // Float64; save_* have shape [C]
  std::vector<double> running_mean, running_var;  // after the momentum update (when given)
};
// x: [N, C, ...]; w/b: C values or empty (None); running stats: C values or empty (None).
BatchNormTrain batch_norm_train(const HostTensor& x, const std::vector<double>& w, const std::vector<double>& b,
                                std::vector<double> running_mean, std::vector<double> running_var, double momentum,
                                double eps);

}  // namespace etwebgpu::ref
