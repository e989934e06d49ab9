// Binary ops over the value domains and dtypes where a wrong kernel hides from random positive
// inputs: float comparisons with ties, +-inf and NaN; every comparison against a scalar that the
// tensor holds exactly (lt vs le); logical and/or; rounding division with zeros and negative
// operands; pow with negative bases; NaN-propagating minimum/maximum; empty and 1-element tensors.
// References: tests/reference/elementwise (fp64, PyTorch semantics).
#include <cmath>
#include <limits>

#include "reference/elementwise/binary_domain_ref.h"
#include "reference/elementwise/elementwise_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

HostTensor f32(std::vector<int64_t> shape, std::vector<float> v) { return HostTensor::from<float>(DType::Float32, std::move(shape), v); }
HostTensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) { return HostTensor::from<int32_t>(DType::Int32, std::move(shape), v); }

// One op over two graph inputs; `extra` are arguments between `other` and `out` (alpha, mode).
HostTensor run2(const std::string& op, const HostTensor& a, const HostTensor& b, DType out_t,
                const std::vector<int64_t>& out_dims, std::function<std::vector<Id>(GraphBuilder&)> extra = {},
                const LoadOptions& opts = {}) {
  OpGraph g;
  Id x = g.input(a), y = g.input(b);
  Id o = g.output(out_t, out_dims);
  std::vector<Id> args{x, y};
  if (extra)
    for (Id e : extra(g.gb)) args.push_back(e);
  args.push_back(o);
  g.gb.op(op, args);
  return g.run(opts)[0];
}

// A tensor op with a scalar `other` (Int when integral and `as_int`, else Double).
HostTensor run_scalar(const std::string& op, const HostTensor& a, double s, bool as_int, DType out_t) {
  OpGraph g;
  Id x = g.input(a);
  Id o = g.output(out_t, a.shape);
  g.gb.op(op, {x, as_int ? g.gb.int_(static_cast<int64_t>(s)) : g.gb.dbl(s), o});
  return g.run()[0];
}

// Float operands that tie, straddle and include +-inf / NaN / signed zeros, in 2 x 9 layouts.
std::pair<HostTensor, HostTensor> float_compare_operands() {
  auto a = f32({2, 9}, {-1.5f, 0.f, 2.f, kInf, -kInf, kNan, 1.f, -0.f, 3.25f,
                        5.f, -2.f, 7.f, kInf, 0.5f, 0.f, kNan, -3.f, 1e-30f});
  auto b = f32({2, 9}, {-1.5f, -0.f, 3.f, kInf, 0.f, 1.f, kNan, 0.f, -3.25f,
                        4.f, -2.f, 8.f, -kInf, 0.5f, -1.f, kNan, -3.f, 0.f});
  return {a, b};
}

struct Cmp { const char* tensor_op; const char* scalar_op; const char* name; ref::BinaryOp r; };
const Cmp kComparisons[] = {{"aten.eq.Tensor", "aten.eq.Scalar", "eq", ref::BinaryOp::Eq},
                            {"aten.ne.Tensor", "aten.ne.Scalar", "ne", ref::BinaryOp::Ne},
                            {"aten.lt.Tensor", "aten.lt.Scalar", "lt", ref::BinaryOp::Lt},
                            {"aten.le.Tensor", "aten.le.Scalar", "le", ref::BinaryOp::Le},
                            {"aten.gt.Tensor", "aten.gt.Scalar", "gt", ref::BinaryOp::Gt},
                            {"aten.ge.Tensor", "aten.ge.Scalar", "ge", ref::BinaryOp::Ge}};

TEST(OpBinaryDomain, FloatTensorComparisonsHandleTiesInfinitiesAndNan) {
  ETW_REQUIRE_GPU();
  auto [a, b] = float_compare_operands();
  auto row = f32({9}, {0.f, -1.5f, 2.f, kInf, kNan, 1.f, -0.f, 3.25f, -kInf});
  for (auto& c : kComparisons) {
    EXPECT_TRUE(Close(run2(c.tensor_op, a, b, DType::Bool, {2, 9}), ref::binary(c.r, a, b, 1.0))) << c.tensor_op;
    // Broadcast row against the [2, 9] operand, in both operand orders.
    EXPECT_TRUE(Close(run2(c.tensor_op, row, a, DType::Bool, {2, 9}), ref::binary(c.r, row, a, 1.0))) << c.tensor_op;
  }
}

TEST(OpBinaryDomain, MixedIntAndFloatComparisonsPromoteToFloat) {
  ETW_REQUIRE_GPU();
  auto ints = i32({2, 4}, {-2, -1, 0, 1, 2, 3, 4, 5});
  auto floats = f32({4}, {-1.5f, 0.f, 1.f, 2.5f});
  for (auto& c : kComparisons) {
    EXPECT_TRUE(Close(run2(c.tensor_op, ints, floats, DType::Bool, {2, 4}), ref::binary(c.r, ints, floats, 1.0)))
        << c.tensor_op;
    EXPECT_TRUE(Close(run2(c.tensor_op, floats, ints, DType::Bool, {2, 4}), ref::binary(c.r, floats, ints, 1.0)))
        << c.tensor_op;
  }
}

TEST(OpBinaryDomain, EveryScalarComparisonSeparatesBelowEqualAndAbove) {
  ETW_REQUIRE_GPU();
  // Each tensor holds the scalar itself, values on both sides, infinities and NaN.
  auto fa = f32({2, 4}, {2.5f, 2.4999f, 2.5001f, -kInf, kInf, kNan, -2.5f, 0.f});
  auto ia = i32({2, 4}, {2, 1, 3, -2, 0, 2, 100, -100});
  for (auto& c : kComparisons) {
    EXPECT_TRUE(Close(run_scalar(c.scalar_op, fa, 2.5, false, DType::Bool), ref::compare_scalar(c.name, fa, 2.5)))
        << c.scalar_op << " float tensor, Double scalar";
    EXPECT_TRUE(Close(run_scalar(c.scalar_op, fa, 0.0, true, DType::Bool), ref::compare_scalar(c.name, fa, 0.0)))
        << c.scalar_op << " float tensor, Int scalar";
    EXPECT_TRUE(Close(run_scalar(c.scalar_op, ia, 2.0, true, DType::Bool), ref::compare_scalar(c.name, ia, 2.0)))
        << c.scalar_op << " int tensor, Int scalar";
    // An int tensor against a fractional scalar compares in float (PyTorch promotion).
    EXPECT_TRUE(Close(run_scalar(c.scalar_op, ia, 1.5, false, DType::Bool), ref::compare_scalar(c.name, ia, 1.5)))
        << c.scalar_op << " int tensor, Double scalar";
  }
}

TEST(OpBinaryDomain, LogicalAndOrTreatNonzeroAndNanAsTrueForEveryDtype) {
  ETW_REQUIRE_GPU();
  auto ba = random_bool({3, 8}, 70), bb = random_bool({1, 8}, 71);
  auto fa = f32({6}, {0.f, 1.f, 0.f, -2.f, kNan, -0.f}), fb = f32({6}, {0.f, 0.f, 3.f, kInf, 0.f, 5.f});
  auto ia = i32({2, 3}, {0, -7, 0, 1, 0, 9}), ib = i32({3}, {0, 0, 4});
  for (auto [op, c] : {std::pair{"aten.logical_and.default", '&'}, std::pair{"aten.logical_or.default", '|'}}) {
    EXPECT_TRUE(Close(run2(op, ba, bb, DType::Bool, {3, 8}), ref::logical(c, ba, bb))) << op << " bool";
    EXPECT_TRUE(Close(run2(op, fa, fb, DType::Bool, {6}), ref::logical(c, fa, fb))) << op << " float";
    EXPECT_TRUE(Close(run2(op, ia, ib, DType::Bool, {2, 3}), ref::logical(c, ia, ib))) << op << " int";
  }
}

TEST(OpBinaryDomain, DivTensorModeTruncAndFloorOnNegativeFloatsAndZeros) {
  ETW_REQUIRE_GPU();
  // Quotients of both signs, exact integers, and x/0 (+inf, -inf, NaN for 0/0).
  auto a = f32({2, 8}, {7.f, -7.f, 7.f, -7.f, 6.f, -6.f, 0.5f, -0.5f, 1.f, -1.f, 0.f, 5.25f, -5.25f, 9.f, -0.f, 3.f});
  auto b = f32({2, 8}, {2.f, 2.f, -2.f, -2.f, 3.f, 3.f, 4.f, 4.f, 0.f, 0.f, 0.f, -1.5f, 1.5f, 0.75f, 2.f, -4.f});
  for (const char* mode : {"trunc", "floor"}) {
    auto got = run2("aten.div.Tensor_mode", a, b, DType::Float32, {2, 8}, [&](GraphBuilder& gb) { return std::vector<Id>{gb.str(mode)}; });
    EXPECT_TRUE(CloseNan(got, ref::div_rounding(a, b, mode), 0, 0)) << mode;
  }
  // Random operands (divisors kept away from 0) against the reference, broadcast divisor.
  auto ra = random_f32({3, 7}, 72, -20.f, 20.f), rb = random_f32({7}, 73, 0.25f, 3.f);
  for (int i = 0; i < 7; i += 2) rb.as<float>()[i] = -rb.as<float>()[i];
  for (const char* mode : {"trunc", "floor"}) {
    auto got = run2("aten.div.Tensor_mode", ra, rb, DType::Float32, {3, 7}, [&](GraphBuilder& gb) { return std::vector<Id>{gb.str(mode)}; });
    EXPECT_TRUE(Close(got, ref::div_rounding(ra, rb, mode), 0, 0)) << mode;
  }
  // A Null mode is true division.
  auto got = run2("aten.div.Tensor_mode", ra, rb, DType::Float32, {3, 7}, [](GraphBuilder& gb) { return std::vector<Id>{gb.null()}; });
  EXPECT_TRUE(Close(got, ref::binary(ref::BinaryOp::Div, ra, rb, 1.0), 1e-6, 1e-6));
}

TEST(OpBinaryDomain, DivTensorModeOnInt32RoundsTowardZeroOrDown) {
  ETW_REQUIRE_GPU();
  auto a = i32({2, 6}, {7, -7, 7, -7, 6, -6, 0, 1, -1, 100, -100, 5});
  auto b = i32({2, 6}, {2, 2, -2, -2, 3, 3, 5, 3, 3, -7, -7, 5});
  for (const char* mode : {"trunc", "floor"}) {
    auto got = run2("aten.div.Tensor_mode", a, b, DType::Int32, {2, 6}, [&](GraphBuilder& gb) { return std::vector<Id>{gb.str(mode)}; });
    EXPECT_TRUE(Close(got, ref::div_rounding(a, b, mode))) << mode;
  }
  EXPECT_TRUE(has(load_error([&] {
                    run2("aten.div.Tensor_mode", a, b, DType::Int32, {2, 6}, [](GraphBuilder& gb) { return std::vector<Id>{gb.str("round")}; });
                  }),
                  "rounding_mode 'round'"));
}

TEST(OpBinaryDomain, TrueDivisionByZeroGivesSignedInfinityAndZeroByZeroNan) {
  ETW_REQUIRE_GPU();
  auto a = f32({6}, {1.f, -1.f, 0.f, 2.f, kInf, -3.f}), b = f32({6}, {0.f, 0.f, 0.f, -0.f, 0.f, kInf});
  EXPECT_TRUE(CloseNan(run2("aten.div.Tensor", a, b, DType::Float32, {6}), ref::binary(ref::BinaryOp::Div, a, b, 1.0)));
  // A NaN where the reference is finite must fail even under CloseNan: the opt-in is per element.
  auto nan_got = f32({2}, {kNan, 1.f});
  EXPECT_FALSE(CloseNan(nan_got, ref_tensor({2}, {1.0, 1.0})));
  EXPECT_FALSE(Close(nan_got, ref_tensor({2}, {NAN, 1.0})));  // strict by default
}

TEST(OpBinaryDomain, PowOfNegativeBasesFollowsTheExponentsParity) {
  ETW_REQUIRE_GPU();
  // Integral exponents: odd keep the sign, even drop it; fractional ones of a negative base are
  // NaN; 0^-1 is inf; x^0 is 1 even for NaN and -inf.
  auto base = f32({2, 8}, {-2.f, -2.f, -3.f, -0.5f, -2.f, 0.f, kNan, -kInf, -1.5f, -1.5f, 2.f, -4.f, -0.f, 1.5f, -1.f, 3.f});
  auto expo = f32({2, 8}, {3.f, 2.f, -1.f, -3.f, 0.5f, -1.f, 0.f, 0.f, 5.f, 4.f, -2.f, 1.f, 3.f, kNan, 2.f, 0.f});
  EXPECT_TRUE(CloseNan(run2("aten.pow.Tensor_Tensor", base, expo, DType::Float32, {2, 8}),
                       ref::binary(ref::BinaryOp::Pow, base, expo, 1.0), 1e-6, 1e-5));
  auto rb = random_f32({4, 9}, 74, -3.f, 3.f);
  for (double e : {2.0, 3.0, -1.0, 0.0, 0.5}) {
    auto got = run_scalar("aten.pow.Tensor_Scalar", rb, e, e == std::round(e), DType::Float32);
    auto se = HostTensor::from<double>(DType::Float64, {}, {e});
    EXPECT_TRUE(CloseNan(got, ref::binary(ref::BinaryOp::Pow, rb, se, 1.0), 1e-6, 1e-5)) << "exponent " << e;
  }
}

TEST(OpBinaryDomain, MinimumAndMaximumPropagateNan) {
  ETW_REQUIRE_GPU();
  auto a = f32({7}, {1.f, kNan, 3.f, -kInf, kNan, -0.5f, 2.f}), b = f32({7}, {2.f, 0.f, kNan, 1.f, kNan, -0.5f, kInf});
  EXPECT_TRUE(CloseNan(run2("aten.minimum.default", a, b, DType::Float32, {7}), ref::min_max('<', a, b), 0, 0));
  EXPECT_TRUE(CloseNan(run2("aten.maximum.default", a, b, DType::Float32, {7}), ref::min_max('>', a, b), 0, 0));
  auto ia = i32({5}, {-3, 4, 0, 7, -9}), ib = i32({5}, {2, 4, -1, -7, 9});
  auto mn = run2("aten.minimum.default", ia, ib, DType::Int32, {5});
  auto mx = run2("aten.maximum.default", ia, ib, DType::Int32, {5});
  EXPECT_EQ(std::vector<int32_t>(mn.as<int32_t>(), mn.as<int32_t>() + 5), (std::vector<int32_t>{-3, 4, -1, -7, -9}));
  EXPECT_EQ(std::vector<int32_t>(mx.as<int32_t>(), mx.as<int32_t>() + 5), (std::vector<int32_t>{2, 4, 0, 7, 9}));
}

TEST(OpBinaryDomain, OneElementAndScalarBroadcastOperandsOnBothRoutes) {
  ETW_REQUIRE_GPU();
  auto one = f32({1}, {-2.5f}), big = random_f32({2, 5}, 75);
  for (const char* r : {"vec4", "general"}) {
    LoadOptions lo;
    lo.force_route["binary"] = r;
    EXPECT_TRUE(Close(run2("aten.mul.Tensor", one, one, DType::Float32, {1}, {}, lo), ref::binary(ref::BinaryOp::Mul, one, one, 1.0))) << r;
    EXPECT_TRUE(Close(run2("aten.sub.Tensor", one, big, DType::Float32, {2, 5}, [](GraphBuilder& gb) { return std::vector<Id>{gb.int_(1)}; }, lo),
                      ref::binary(ref::BinaryOp::Sub, one, big, 1.0))) << r;
  }
}

TEST(OpBinaryDomain, EmptyOperandsGiveEmptyOutputs) {
  ETW_REQUIRE_GPU();
  auto a = HostTensor(DType::Float32, {0, 3}), b = random_f32({3}, 76);
  auto got = run2("aten.add.Tensor", a, b, DType::Float32, {0, 3}, [](GraphBuilder& gb) { return std::vector<Id>{gb.int_(1)}; });
  EXPECT_EQ(got.shape, (std::vector<int64_t>{0, 3}));
  auto cmp = run2("aten.lt.Tensor", a, b, DType::Bool, {0, 3});
  EXPECT_EQ(cmp.shape, (std::vector<int64_t>{0, 3}));
}

}  // namespace
