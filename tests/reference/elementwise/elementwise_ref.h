// fp64 references for elementwise ops, written from PyTorch's documented semantics.
#pragma once
#include "etwebgpu/tensor.h"
#include "reference/broadcast.h"

namespace etwebgpu::ref {

enum class BinaryOp { Add, Sub, Mul, Div, Pow, Min, Max, Eq, Ne, Lt, Le, Gt, Ge, LogicalXor };
// a (op) b with broadcasting; alpha scales b for Add/Sub. Comparisons give Bool; integer inputs
// with Add/Sub/Mul give Int32 results (exact); everything else Float64.
HostTensor binary(BinaryOp op, const HostTensor& a, const HostTensor& b, double alpha);
// Bitwise and/or/xor of int32 or bool tensors with broadcasting ('&', '|', '^'); result has a's dtype.
HostTensor bitwise(char op, const HostTensor& a, const HostTensor& b);

}  // namespace etwebgpu::ref
