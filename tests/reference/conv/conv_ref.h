// fp64 reference for torch.nn.functional.conv1d/conv2d/conv_transpose1d/conv_transpose2d, written
// from PyTorch's definitions (cross-correlation; transposed = gradient of conv w.r.t. its input).
#pragma once
#include <limits>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

struct ConvArgs {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, oph = 0, opw = 0, groups = 1;
  bool transposed = false;
  double out_min = -std::numeric_limits<double>::infinity(), out_max = std::numeric_limits<double>::infinity();
};
// x [B, C, H, W] or [B, C, L]; weight [OC, C/g, KH, KW] (transposed: [C, OC/g, KH, KW]); bias [OC] or null.
// For 1-D, only the w-fields of ConvArgs are used. Result clamped to [out_min, out_max].
HostTensor conv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, ConvArgs a);

}  // namespace etwebgpu::ref
