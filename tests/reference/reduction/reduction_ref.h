// fp64 references for reductions and cumsum, from PyTorch's definitions.
#pragma once
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

enum class Reduce { Sum, Mean, Amax, Amin, Argmax, Argmin, Any, All };
// Reduces `dims` (negative allowed; empty = all dims). Sum/Mean/Amax/Amin give Float64 (Int32 for
// integer inputs of Sum/Amax/Amin), Argmax/Argmin Int32 (first occurrence; NaN is the extreme),
// Any/All Bool.
HostTensor reduce(Reduce op, const HostTensor& x, std::vector<int64_t> dims, bool keepdim);
// Inclusive prefix sum along dim: Float64 for float inputs, Int32 for int/bool inputs.
HostTensor cumsum(const HostTensor& x, int64_t dim);

}  // namespace etwebgpu::ref
