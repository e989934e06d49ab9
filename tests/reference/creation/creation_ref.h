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
// et_vk.grid_priors(x [.., H, W], stride, offset): [H * W, 2] rows (w, h) of
// (arange(W) + offset) * stride and (arange(H) + offset) * stride, computed in float32 as the
// reference implementation (custom_ops_lib.py) does; returned as Float64.
HostTensor grid_priors(int64_t h, int64_t w, int64_t stride, double offset);

}  // namespace etwebgpu::ref
