// fp64 references for 2D pooling over the last two dims, from PyTorch's CPU kernel definitions.
#pragma once
#include <optional>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

struct Pool2d {
  int64_t kh, kw, sh, sw, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false;
};
// PyTorch's pooling_output_shape.
int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode);
HostTensor avg_pool2d(const HostTensor& x, const Pool2d& p, bool count_include_pad,
                      std::optional<int64_t> divisor_override);
// Values (Float64) and flat h*W+w indices (Int32) into each input plane.
std::pair<HostTensor, HostTensor> max_pool2d(const HostTensor& x, const Pool2d& p);
HostTensor adaptive_avg_pool2d(const HostTensor& x, int64_t oh, int64_t ow);

}  // namespace etwebgpu::ref
