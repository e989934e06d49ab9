// fp64 references for unary elementwise ops and where, written from PyTorch's documented semantics.
#pragma once
#include <optional>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

enum class UnaryOp {
  Abs, Neg, Exp, Sqrt, Rsqrt, Sin, Cos, Tanh, Round, Sigmoid, Relu, GeluErf, GeluTanh, Silu, Hardswish,
  Clamp, LeakyRelu, Log, Reciprocal, Floor, Ceil, Trunc, BitwiseNot, LogicalNot,
};

// Float inputs (and int inputs of float ops) give Float64; int32 inputs of abs/neg/relu/clamp/
// bitwise_not give Int32; bool bitwise_not and logical_not give Bool.
// Clamp: lo/hi = min/max (nullopt = unbounded); LeakyRelu: lo = negative_slope.
HostTensor unary(UnaryOp op, const HostTensor& x, std::optional<double> lo = std::nullopt,
                 std::optional<double> hi = std::nullopt);

// torch.where(cond, a, b) with 3-way broadcasting; Float64 if a or b is float, else a's dtype.
HostTensor where(const HostTensor& cond, const HostTensor& a, const HostTensor& b);

}  // namespace etwebgpu::ref
