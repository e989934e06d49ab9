// fp64 references for the indexing family, from PyTorch's semantics: index.Tensor wraps negative
// indices once; embedding, index_select and gather reject them (as PyTorch raises).
#pragma once
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

HostTensor embedding(const HostTensor& weight, const HostTensor& indices);
HostTensor index_select(const HostTensor& x, int64_t dim, const HostTensor& index);
HostTensor gather(const HostTensor& x, int64_t dim, const HostTensor& index);
// x[indices[0], indices[1], ...] for index tensors on the leading dims (broadcast together).
HostTensor index_leading(const HostTensor& x, const std::vector<HostTensor>& indices);

}  // namespace etwebgpu::ref
