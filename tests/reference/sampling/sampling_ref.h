// fp64 references for grid_sampler_2d and _upsample_bilinear2d_aa, written from PyTorch's
// documented behaviour (torch.nn.functional.grid_sample, interpolate(antialias=True)).
#pragma once
#include <optional>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// input [N, C, H, W], grid [N, Ho, Wo, 2]; interp 0 bilinear, 1 nearest, 2 bicubic;
// padding 0 zeros, 1 border, 2 reflection.
HostTensor grid_sampler_2d(const HostTensor& input, const HostTensor& grid, int interp, int padding, bool align_corners);
// Antialiased bilinear resize of [N, C, H, W] to [N, C, oh, ow] (triangle filter widened by the
// downscale factor, weights normalized per output); scales override in/out when given.
HostTensor upsample_bilinear2d_aa(const HostTensor& input, int64_t oh, int64_t ow, bool align_corners,
                                  std::optional<double> scale_h, std::optional<double> scale_w);

}  // namespace etwebgpu::ref
