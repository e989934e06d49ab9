// fp64 references for scatter-family and mask-driven indexing ops, written from PyTorch's
// documented semantics (sequential loops over the index / mask in row-major order).
#pragma once
#include <optional>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// self[i][index[i][j]] = src[i][j] (dim 1), for every index element in row-major order (so a
// repeated target keeps the last value); `add` sums instead. src == nullptr uses `value`.
HostTensor scatter(const HostTensor& self, int64_t dim, const HostTensor& index, const HostTensor* src, double value, bool add);
// self where the (broadcast) mask is false, value where it is true.
HostTensor masked_fill(const HostTensor& self, const HostTensor& mask, double value);
// self with its mask-true positions (row-major, mask broadcast to self) taken from src in order.
HostTensor masked_scatter(const HostTensor& self, const HostTensor& mask, const HostTensor& src);
// 1-D tensor of self's elements where the mask (broadcast together with self) is true.
HostTensor masked_select(const HostTensor& self, const HostTensor& mask);
// [n, rank] int64 coordinates of the non-zero elements, row-major.
HostTensor nonzero(const HostTensor& x);
// [sum(repeats)] int64: index i repeated repeats[i] times.
HostTensor repeat_interleave(const HostTensor& repeats);

}  // namespace etwebgpu::ref
