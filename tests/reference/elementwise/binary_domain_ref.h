// fp64 references for the binary ops whose result depends on the value domain: rounding
// division, logical and/or, comparisons against a scalar, NaN-propagating minimum/maximum.
// Written from PyTorch's semantics (ATen's div_floor / div_trunc, torch.minimum), not the WGSL.
#pragma once
#include <string>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// torch.div(a, b, rounding_mode=mode), mode "trunc" or "floor", with broadcasting. Float inputs
// give Float64 (x/0 is +-inf or NaN like true division); int32 inputs give Int32 (b != 0).
HostTensor div_rounding(const HostTensor& a, const HostTensor& b, const std::string& mode);
// torch.logical_and / logical_or ('&' / '|'): nonzero (NaN included) is true; Bool result.
HostTensor logical(char op, const HostTensor& a, const HostTensor& b);
// torch.{eq,ne,lt,le,gt,ge}(a, scalar) for op "eq".."ge"; Bool result; NaN compares unequal.
HostTensor compare_scalar(const std::string& op, const HostTensor& a, double scalar);
// torch.minimum / torch.maximum ('<' / '>'): NaN in either operand gives NaN.
HostTensor min_max(char op, const HostTensor& a, const HostTensor& b);

}  // namespace etwebgpu::ref
