// fp64 reference for torch.as_strided(x, size, stride, storage_offset) on a contiguous x:
// out[c] = x_flat[storage_offset + sum_d c_d * stride_d].
#pragma once
#include <cstdint>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

HostTensor as_strided(const HostTensor& x, const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                      int64_t storage_offset);

}  // namespace etwebgpu::ref
