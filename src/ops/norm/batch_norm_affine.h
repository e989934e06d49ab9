// The constants of an inference BatchNorm, read at load by the rewrites that fold it away
// (ops/norm/batch_norm_affine.cpp, ops/matmul/linear_batch_norm_fold.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "format/ir.h"

namespace etwebgpu::ops {

// Per channel, in double: scale = gamma / sqrt(var + eps), and the running mean and beta, so that
// the BatchNorm is (x - mean) * scale + beta.
struct BatchNormConstants {
  std::vector<double> scale, mean, beta;
};

// Those of `bn` (aten._native_batch_norm_legit_no_training, 8 arguments, eps a Double) over C
// channels: gamma and beta f32 constants of C values or Null, mean and var f32 constants of C
// values; nullopt otherwise.
std::optional<BatchNormConstants> batch_norm_constants(const format::VkGraphIR& ir, const format::VkOpCall& bn, int64_t C);

}  // namespace etwebgpu::ops
