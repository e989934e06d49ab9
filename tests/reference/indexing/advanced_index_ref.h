// fp64 references for PyTorch advanced indexing (aten.index.Tensor, aten.index_put), written from
// PyTorch's documented semantics (docs "Indexing, Slicing, Joining" / NumPy advanced indexing),
// never from the WGSL:
//  * an index list shorter than self's rank is padded with full slices (None);
//  * the index tensors broadcast together to a shape B;
//  * when the index tensors sit on adjacent dims, B replaces those dims in place; when a None
//    separates them, B comes first, followed by the sliced dims in order;
//  * negative indices count from the end (once); out-of-range indices throw;
//  * a boolean mask over dims [k, k+m) is the m index tensors of mask.nonzero() (row-major order);
//  * index_put writes values (broadcast to the indexed shape) at the selected elements;
//    accumulate=true adds instead, so duplicate indices sum (bool: logical or).
// Results keep the input's kind: Float64 for float self, Int64 for integer self, Bool for bool.
#pragma once
#include <optional>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

using IndexList = std::vector<std::optional<HostTensor>>;  // std::nullopt = None (a full slice)

// x[indices] (aten.index.Tensor). Boolean masks are accepted here too (they become nonzero()).
HostTensor index_tensor(const HostTensor& x, const IndexList& indices);
// The shape x[indices] has (for a bool mask, with the live count of true elements).
std::vector<int64_t> index_shape(const std::vector<int64_t>& x_shape, const IndexList& indices);
// out = x.clone(); out[indices] = values (or += when accumulate).
HostTensor index_put(const HostTensor& x, const IndexList& indices, const HostTensor& values, bool accumulate);

}  // namespace etwebgpu::ref
