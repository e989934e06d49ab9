// Broadcasting helpers shared by the fp64 references (PyTorch's right-aligned rules).
#pragma once
#include <cstdint>
#include <vector>

namespace etwebgpu::ref {

// Broadcast shape of a and b; throws std::runtime_error when they do not broadcast.
std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Flat index into an operand of shape `s` of output element `i` of the broadcast shape `o`.
int64_t broadcast_index(int64_t i, const std::vector<int64_t>& o, const std::vector<int64_t>& s);

}  // namespace etwebgpu::ref
