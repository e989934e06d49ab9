// fp64 references for var / var_mean and prod, from PyTorch's definitions.
#pragma once
#include <utility>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// torch.var(x, dims, correction, keepdim) (dims empty = all): sum((x - mean)^2) / max(0, N - correction),
// Float64 (inf or NaN where N - correction <= 0).
HostTensor var(const HostTensor& x, std::vector<int64_t> dims, double correction, bool keepdim);
// torch.prod over dims (empty = all): Float64 for float inputs, Int32 (wrapping like int32 words) otherwise.
HostTensor prod(const HostTensor& x, std::vector<int64_t> dims, bool keepdim);

}  // namespace etwebgpu::ref

namespace etwebgpu::ref {

// torch.topk(x, k, dim, largest) with sorted=True: values (Float64, or Int32 for int inputs) and
// indices (Int32). NaN counts as larger than every number; equal values keep index order.
std::pair<HostTensor, HostTensor> topk(const HostTensor& x, int64_t k, int64_t dim, bool largest);

}  // namespace etwebgpu::ref
