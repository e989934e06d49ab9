// fp64 reference for dtype conversion (Tensor.to(dtype)), written from PyTorch's semantics.
#pragma once
#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// x converted to `to` (Float32, Int32 or Bool): float -> int truncates toward zero, anything ->
// bool is x != 0, bool -> number is 0/1. Float targets come back as Float64 for comparison.
HostTensor convert(const HostTensor& x, DType to);

}  // namespace etwebgpu::ref
