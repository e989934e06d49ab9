// fp64 references for upsample_bilinear2d / upsample_nearest2d over the last two dims, following
// PyTorch's CPU index rules (scales are float, as PyTorch computes them).
#pragma once
#include <optional>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// scale_h/scale_w: the user's scale factors when given (PyTorch then uses 1/scale), else nullopt.
HostTensor upsample_bilinear2d(const HostTensor& x, int64_t oh, int64_t ow, bool align_corners,
                               std::optional<double> scale_h = std::nullopt, std::optional<double> scale_w = std::nullopt);
HostTensor upsample_nearest2d(const HostTensor& x, int64_t oh, int64_t ow, std::optional<double> scale_h = std::nullopt,
                              std::optional<double> scale_w = std::nullopt);

}  // namespace etwebgpu::ref
