// fp64 references for the math ops of tests/ops/elementwise/math_test.cpp (trig/hyperbolic, erf,
// log/exp variants, logit, elu, sign, isinf/isnan; fmod, remainder, floor_divide, atan2, rsub,
// pow with a scalar base), written from PyTorch's documented semantics.
#pragma once
#include <optional>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

enum class MathOp { Acos, Acosh, Asin, Asinh, Atan, Atanh, Cosh, Sinh, Tan, Erf, Expm1, Log10, Log1p, Log2, Sign };
// Float64 result for float (and int) inputs; Sign of an Int32 input gives Int32.
HostTensor math(MathOp op, const HostTensor& x);
// torch.logit(x, eps): eps nullopt (or negative) = no clamping to [eps, 1 - eps].
HostTensor logit(const HostTensor& x, std::optional<double> eps);
// torch.nn.functional.elu with alpha, scale, input_scale.
HostTensor elu(const HostTensor& x, double alpha, double scale, double input_scale);
// torch.isinf / torch.isnan: Bool.
HostTensor isinf(const HostTensor& x);
HostTensor isnan(const HostTensor& x);

enum class MathBinOp { Atan2, Fmod, Remainder, FloorDivide, Rsub, Pow };
// Broadcasting a (op) b. Float64 when either input is float, else Int32 (integer division by zero
// gives 0 here: PyTorch raises, the GPU kernel documents 0). Rsub: b - alpha * a.
HostTensor math_binary(MathBinOp op, const HostTensor& a, const HostTensor& b, double alpha = 1.0);

}  // namespace etwebgpu::ref

namespace etwebgpu::ref {

// torch.clamp(x, min, max) with tensor bounds (nullptr = None), broadcasting all three: Float64;
// NaN in x or a given bound gives NaN; min > max gives max.
HostTensor clamp_tensor(const HostTensor& x, const HostTensor* lo, const HostTensor* hi);
// torch.nn.functional.glu(x, dim): first half along dim times sigmoid of the second: Float64.
HostTensor glu(const HostTensor& x, int64_t dim);

}  // namespace etwebgpu::ref
