// fp64 references for creation ops, written from PyTorch's semantics.
#pragma once
#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// torch.full(shape, v, dtype): float targets come back as Float64 (v rounded to float32), int32
// targets truncate toward zero, bool targets are v != 0.
HostTensor full(std::vector<int64_t> shape, double v, DType dtype);
// torch.arange(start, end, step, dtype): ceil((end - start) / step) values start + i * step,
// computed in double then cast (Float64 for float32 targets).
HostTensor arange(double start, double end, double step, DType dtype);

}  // namespace etwebgpu::ref
