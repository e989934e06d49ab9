// The op codes of the elementwise kernels, in one table. Each entry is
//   X(Name, code, wgsl)
// where wgsl is the body of the op's `case` in the generated WGSL switch
//   fn unary_f32(op: u32, x: f32, f0: f32, f1: f32, f2: f32, i0: i32) -> f32
//   fn binary_f32(op: u32, x: f32, y: f32, alpha: f32) -> f32
// or nullptr for an op those functions do not evaluate (integer and bool results: the kernels
// elementwise_unary.wgsl and binary.wgsl compute them themselves). The enums UnaryOp / BinaryOp,
// the fused term parser's check (fused_terms.cpp) and the WGSL constants UNARY_<NAME> /
// BINARY_<NAME> (Name in upper snake case) all come from here; the helpers the bodies call
// (nan, erfc_pos, pow_f, ...) are in unary_math.wgsl and binary_math.wgsl. Codes are stable:
// fused expressions (format::VkExpr, graph/fusion.h) carry them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace etwebgpu::ops {

// Unary ops. unary_f32's arguments f0..f2, i0 are the op's (clamp bounds, slopes, logit's eps
// flag and bounds, elu's alpha / scale / input_scale).
#define ETW_UNARY_OPS(X)                                                                                    \
  X(Abs, 0, "return abs(x);")                                                                               \
  X(Neg, 1, "return -x;")                                                                                   \
  X(Exp, 2, "return exp(x);")                                                                               \
  X(Sqrt, 3, "if (x < 0.0) { return nan(); } return sqrt(x);")                                              \
  X(Rsqrt, 4, "if (x < 0.0) { return nan(); } if (x == 0.0) { return inf(false); } return 1.0 / sqrt(x);")  \
  X(Sin, 5, "return sin(x);")                                                                               \
  X(Cos, 6, "return cos(x);")                                                                               \
  X(Tanh, 7, "if (is_nan(x)) { return x; } return safe_tanh(x);")                                           \
  X(Round, 8, "return round(x);  // WGSL round() is round-half-to-even, as torch.round")                    \
  X(Sigmoid, 9, "return 1.0 / (1.0 + exp(-x));")                                                            \
  X(Relu, 10, "if (is_nan(x)) { return x; } return select(x, 0.0, x < 0.0);")                               \
  X(GeluErf, 11,                                                                                            \
    "// 0.5 x (1 + erf(x / sqrt 2)), written with erfc so negative x keeps relative accuracy.\n"            \
    "let e = erfc_pos(abs(x) * 0.70710678118654752);\n"                                                     \
    "if (x >= 0.0) { return x * (1.0 - 0.5 * e); }\n"                                                       \
    "return 0.5 * x * e;")                                                                                  \
  X(GeluTanh, 12,                                                                                           \
    "let k = 0.7978845608028654 * (x + 0.044715 * x * x * x);\n"                                            \
    "return 0.5 * x * (1.0 + safe_tanh(k));")                                                               \
  X(Silu, 13, "return x / (1.0 + exp(-x));")                                                                \
  X(Hardswish, 14, "return x * clamp_f(x + 3.0, 0.0, 6.0) / 6.0;")                                          \
  X(Clamp, 15, "return clamp_f(x, f0, f1);")                                                                \
  X(LeakyRelu, 16, "return select(f0 * x, x, x >= 0.0);")                                                   \
  X(Log, 17, "if (x < 0.0) { return nan(); } if (x == 0.0) { return inf(true); } return log(x);")           \
  X(Reciprocal, 18, "return 1.0 / x;")                                                                      \
  X(Floor, 19, "return floor(x);")                                                                          \
  X(Ceil, 20, "return ceil(x);")                                                                            \
  X(Trunc, 21, "return trunc(x);")                                                                          \
  X(BitwiseNot, 30, nullptr)                                                                                \
  X(LogicalNot, 31, nullptr)                                                                                \
  X(Acos, 40, "return acos_f(x);")                                                                          \
  X(Acosh, 41, "return acosh_f(x);")                                                                        \
  X(Asin, 42, "return asin_f(x);")                                                                          \
  X(Asinh, 43, "return asinh_f(x);")                                                                        \
  X(Atan, 44, "return atan(x);")                                                                            \
  X(Atanh, 45, "return atanh_f(x);")                                                                        \
  X(Cosh, 46, "return cosh_f(x);")                                                                          \
  X(Sinh, 47, "return sinh_f(x);")                                                                          \
  X(Tan, 48, "if (is_inf(x)) { return nan(); } return tan(x);")                                             \
  X(Erf, 49, "if (is_nan(x)) { return x; } return erf_f(x);")                                               \
  X(Expm1, 50, "return expm1_f(x);")                                                                        \
  X(Log10, 51, "return log2_ieee(x) * 0.30102999566398120;")                                                \
  X(Log1p, 52, "return log1p_f(x);")                                                                        \
  X(Log2, 53, "return log2_ieee(x);")                                                                       \
  X(Logit, 54, "return logit_f(x, i0, f0, f1);")                                                            \
  X(Elu, 55,                                                                                                \
    "// elu: scale * (x > 0 ? x : alpha * (exp(x * input_scale) - 1))\n"                                    \
    "if (x > 0.0) { return f1 * x; }\n"                                                                     \
    "return f1 * f0 * expm1_f(x * f2);")                                                                    \
  X(Sign, 56, "return select(0.0, 1.0, x > 0.0) - select(0.0, 1.0, x < 0.0);  // sign(NaN) = 0 as in ATen") \
  X(Isinf, 60, nullptr)                                                                                     \
  X(Isnan, 61, nullptr)                                                                                     \
  X(Identity, 62, nullptr)

// Binary ops. binary_f32's alpha scales y in add / sub (x in rsub). The comparisons and logical
// ops (bool results) are the codes Eq..LogicalOr: binary.cpp and binary.wgsl test that range, so
// a new op takes a code outside it.
#define ETW_BINARY_OPS(X)                                                                  \
  X(Add, 0, "return x + alpha * y;")                                                       \
  X(Sub, 1, "return x - alpha * y;")                                                       \
  X(Mul, 2, "return x * y;")                                                               \
  X(Div, 3, "return x / y;")                                                               \
  X(DivTrunc, 4, "return trunc(x / y);")                                                   \
  X(DivFloor, 5, "return floor_div_f(x, y);")                                              \
  X(Pow, 6, "return pow_f(x, y);")                                                         \
  X(Min, 7, "if (is_nan(x)) { return x; } if (is_nan(y)) { return y; } return min(x, y);") \
  X(Max, 8, "if (is_nan(x)) { return x; } if (is_nan(y)) { return y; } return max(x, y);") \
  X(Atan2, 9, "return atan2_f(x, y);")                                                     \
  X(Eq, 10, nullptr)                                                                       \
  X(Ne, 11, nullptr)                                                                       \
  X(Lt, 12, nullptr)                                                                       \
  X(Le, 13, nullptr)                                                                       \
  X(Gt, 14, nullptr)                                                                       \
  X(Ge, 15, nullptr)                                                                       \
  X(LogicalXor, 16, nullptr)                                                               \
  X(LogicalAnd, 20, nullptr)                                                               \
  X(LogicalOr, 21, nullptr)                                                                \
  X(BitAnd, 22, nullptr)                                                                   \
  X(BitOr, 23, nullptr)                                                                    \
  X(BitXor, 24, nullptr)                                                                   \
  X(Fmod, 25, "return fmod_f(x, y);")                                                      \
  X(Remainder, 26,                                                                         \
    "// remainder: fmod moved to the sign of the divisor\n"                                \
    "let m = fmod_f(x, y);\n"                                                              \
    "if (m != 0.0 && (y < 0.0) != (m < 0.0)) { return m + y; }\n"                          \
    "return m;")                                                                           \
  X(Rsub, 27, "return y - alpha * x;")                                                     \
  X(PowScalarBase, 28, "return pow_f(y, x);  // pow.Scalar: y is the scalar base")

#define ETW_OP_ENUMERATOR(name, code, wgsl) name = code,
enum class UnaryOp : uint32_t { ETW_UNARY_OPS(ETW_OP_ENUMERATOR) };
enum class BinaryOp : uint32_t { ETW_BINARY_OPS(ETW_OP_ENUMERATOR) };
#undef ETW_OP_ENUMERATOR

struct ElementwiseOp {
  const char* name;  // the enumerator: "GeluErf"
  uint32_t code;
  const char* wgsl;  // its case body in unary_f32 / binary_f32; nullptr: not one of their ops
};
#define ETW_OP_ENTRY(name, code, wgsl) ElementwiseOp{#name, code, wgsl},
inline constexpr ElementwiseOp kUnaryOps[] = {ETW_UNARY_OPS(ETW_OP_ENTRY)};
inline constexpr ElementwiseOp kBinaryOps[] = {ETW_BINARY_OPS(ETW_OP_ENTRY)};
#undef ETW_OP_ENTRY

constexpr uint32_t code(UnaryOp op) { return static_cast<uint32_t>(op); }
constexpr uint32_t code(BinaryOp op) { return static_cast<uint32_t>(op); }
constexpr bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::LogicalOr; }

namespace detail {
// An enum may give two enumerators one value; a kernel's switch may not.
template <size_t N>
constexpr bool codes_unique(const ElementwiseOp (&ops)[N]) {
  for (size_t i = 0; i < N; ++i)
    for (size_t j = i + 1; j < N; ++j)
      if (ops[i].code == ops[j].code) return false;
  return true;
}
// The comparisons are tested as a range: no float op inside it.
constexpr bool no_float_op_among_comparisons() {
  for (const ElementwiseOp& op : kBinaryOps)
    if (op.wgsl && op.code >= code(BinaryOp::Eq) && op.code <= code(BinaryOp::LogicalOr)) return false;
  return true;
}
}  // namespace detail
static_assert(detail::codes_unique(kUnaryOps), "two unary ops share a code");
static_assert(detail::codes_unique(kBinaryOps), "two binary ops share a code");
static_assert(detail::no_float_op_among_comparisons(), "a float op code inside Eq..LogicalOr");

// Whether `code` is a float op of unary_f32 / binary_f32 (what a fused term may name).
bool is_unary_f32(uint32_t code);
bool is_binary_f32(uint32_t code);

// The WGSL constant of a code in the table ("UNARY_GELU_ERF"); throws Error(Internal) otherwise.
std::string unary_constant(uint32_t code);
std::string binary_constant(uint32_t code);

// Generated WGSL. unary_ops_wgsl: `const UNARY_<NAME>: u32 = <code>u;` for every unary op and
// fn unary_f32 (one case per op with a body; other codes give NaN), for shaders that include
// unary_math.wgsl. binary_ops_wgsl: the BINARY_ constants and fn binary_f32 (others give 0),
// for shaders that include binary_math.wgsl; binary_op_codes_wgsl: the constants only. A kernel
// takes them as its prelude (kernel::Kernel::prelude) or appends them to its generated text.
const std::string& unary_ops_wgsl();
const std::string& binary_ops_wgsl();
const std::string& binary_op_codes_wgsl();

}  // namespace etwebgpu::ops
