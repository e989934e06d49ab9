// fp64 references for view-like copies, scatters and pads (memory/padding families), written
// from PyTorch's documented semantics by walking output coordinates (never from the WGSL).
#pragma once
#include <optional>
#include <vector>

#include "reference/memory/memory_ref.h"

namespace etwebgpu::ref {

HostTensor transpose(const HostTensor& x, int64_t d0, int64_t d1);
HostTensor narrow(const HostTensor& x, int64_t dim, int64_t start, int64_t length);
HostTensor diagonal(const HostTensor& x, int64_t offset, int64_t d1, int64_t d2);
HostTensor unfold(const HostTensor& x, int64_t dim, int64_t size, int64_t step);
HostTensor roll(const HostTensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims);
HostTensor tril(const HostTensor& x, int64_t diagonal);
HostTensor stack(const std::vector<HostTensor>& xs, int64_t dim);
HostTensor select_scatter(const HostTensor& self, const HostTensor& src, int64_t dim, int64_t index);
HostTensor slice_scatter(const HostTensor& self, const HostTensor& src, int64_t dim, std::optional<int64_t> start,
                         std::optional<int64_t> end, int64_t step);
// reflection / replication pad of the last pad.size()/2 dims; pad pairs from the last dim backwards.
HostTensor reflection_pad(const HostTensor& x, const std::vector<int64_t>& pad);
HostTensor replication_pad(const HostTensor& x, const std::vector<int64_t>& pad);
// `src` broadcast to `shape` (copy_, fill_ with a 0-dim tensor).
HostTensor broadcast_to(const HostTensor& src, const std::vector<int64_t>& shape);

}  // namespace etwebgpu::ref
