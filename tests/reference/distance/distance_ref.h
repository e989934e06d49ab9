// fp64 references for torch.cdist and torch.nn.functional.pdist (p-norm distances).
#pragma once
#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// x1 [B..., P, M], x2 [B..., R, M] (batch dims broadcast) -> [B..., P, R], Float64. p = 0 counts
// differing coordinates, p = inf is the largest absolute difference.
HostTensor cdist(const HostTensor& x1, const HostTensor& x2, double p);
// x [N, M] -> [N (N - 1) / 2], the pairs i < j in row order, Float64.
HostTensor pdist(const HostTensor& x, double p);

}  // namespace etwebgpu::ref
