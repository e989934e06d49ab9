// Math ops of the portable library (trig/hyperbolic, erf, log/exp variants, logit, elu, sign,
// isinf/isnan, _conj_physical; fmod, remainder, floor_divide, atan2, rsub, pow with a scalar base,
// div.Scalar_mode, bitwise *.Scalar) against fp64 references (tests/reference/elementwise/math_ref),
// in both spellings (VkGraph OperatorCall and out-variant KernelCall).
#include <cmath>
#include <functional>
#include <limits>

#include "etwebgpu/builder.h"
#include "reference/broadcast.h"
#include "reference/elementwise/math_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
using ref::MathBinOp;
using ref::MathOp;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

using ArgsFn = std::function<std::vector<Id>(GraphBuilder&, const std::vector<Id>&)>;

// One op over graph inputs `ins`; `args` turns their ids into the schema arguments (out appended).
HostTensor run_op(const std::string& op, const std::vector<HostTensor>& ins, DType out_t, std::vector<int64_t> out_shape,
                  const ArgsFn& args) {
  OpGraph g;
  std::vector<Id> ids;
  for (const auto& t : ins) ids.push_back(g.input(t));
  Id o = g.output(out_t, std::move(out_shape));
  std::vector<Id> a = args(g.gb, ids);
  a.push_back(o);
  g.gb.op(op, a);
  return g.run()[0];
}

HostTensor run_unary(const std::string& op, const HostTensor& x, DType out_t = DType::Float32) {
  return run_op(op, {x}, out_t, x.shape, [](GraphBuilder&, const std::vector<Id>& i) { return i; });
}

// x with `edge` written over its first elements.
HostTensor with_edges(HostTensor x, const std::vector<float>& edge) {
  for (size_t i = 0; i < edge.size() && i < static_cast<size_t>(x.numel()); ++i) x.as<float>()[i] = edge[i];
  return x;
}

const std::vector<float> kEdges{0.f, -0.f, 1.f, -1.f, kInf, -kInf, kNan, 1e-7f, -1e-7f, 0.5f, 2.f, -2.f, 30.f, -30.f};

std::string error_of(const std::function<void()>& f) { return load_error(f); }

TEST(OpMath, TrigAndHyperbolicMatchReferenceInAndOutOfTheirDomains) {
  ETW_REQUIRE_GPU();
  struct C { const char* op; MathOp r; float lo, hi; double atol, rtol; };
  C cs[] = {{"aten.acos.default", MathOp::Acos, -1.2f, 1.2f, 2e-6, 1e-5},
            {"aten.asin.default", MathOp::Asin, -1.2f, 1.2f, 2e-6, 1e-5},
            {"aten.atan.default", MathOp::Atan, -20, 20, 2e-6, 1e-5},
            {"aten.acosh.default", MathOp::Acosh, 0.5f, 50, 2e-6, 1e-5},
            {"aten.asinh.default", MathOp::Asinh, -50, 50, 2e-6, 1e-5},
            {"aten.atanh.default", MathOp::Atanh, -1.1f, 1.1f, 2e-6, 1e-5},
            {"aten.cosh.default", MathOp::Cosh, -12, 12, 1e-6, 2e-5},
            {"aten.sinh.default", MathOp::Sinh, -12, 12, 1e-6, 2e-5},
            {"aten.tan.default", MathOp::Tan, -1.4f, 1.4f, 1e-5, 1e-4}};
  uint64_t seed = 300;
  for (auto& c : cs) {
    auto x = with_edges(random_f32({3, 7, 11}, seed++, c.lo, c.hi), kEdges);
    if (c.r == MathOp::Tan) x.as<float>()[12] = 1.f, x.as<float>()[13] = -1.f;  // tan(+-30) is ill-conditioned in f32
    EXPECT_TRUE(CloseNan(run_unary(c.op, x), ref::math(c.r, x), c.atol, c.rtol)) << c.op;
  }
}

TEST(OpMath, SinhCoshStayFiniteUpToTheFloatRange) {
  ETW_REQUIRE_GPU();
  // sinh(89) ~ 2.2e38 < FLT_MAX although exp(89) overflows; sinh(90) is past FLT_MAX: inf.
  auto x = HostTensor::from(DType::Float32, {5}, std::vector<float>{88.5f, -88.5f, 89.f, -89.f, 1e-6f});
  EXPECT_TRUE(CloseNan(run_unary("aten.sinh.default", x), ref::math(MathOp::Sinh, x), 0, 1e-5));
  EXPECT_TRUE(CloseNan(run_unary("aten.cosh.default", x), ref::math(MathOp::Cosh, x), 0, 1e-5));
  auto big = HostTensor::from(DType::Float32, {2}, std::vector<float>{90.f, -90.f});
  auto sh = run_unary("aten.sinh.default", big), ch = run_unary("aten.cosh.default", big);
  EXPECT_TRUE(std::isinf(sh.as<float>()[0]) && sh.as<float>()[0] > 0 && std::isinf(sh.as<float>()[1]) && sh.as<float>()[1] < 0);
  EXPECT_TRUE(std::isinf(ch.as<float>()[0]) && std::isinf(ch.as<float>()[1]) && ch.as<float>()[1] > 0);
}

TEST(OpMath, ErfExpm1Log1pAsinhAtanhKeepRelativeAccuracyNearZero) {
  ETW_REQUIRE_GPU();
  auto x = HostTensor::from(DType::Float32, {8}, std::vector<float>{1e-7f, -1e-7f, 3e-5f, -3e-5f, 1e-3f, -2e-3f, 0.f, 0.2f});
  for (auto [op, r] : {std::pair{"aten.erf.default", MathOp::Erf}, std::pair{"aten.expm1.default", MathOp::Expm1},
                       std::pair{"aten.log1p.default", MathOp::Log1p}, std::pair{"aten.asinh.default", MathOp::Asinh},
                       std::pair{"aten.atanh.default", MathOp::Atanh}, std::pair{"aten.sinh.default", MathOp::Sinh}})
    EXPECT_TRUE(CloseNan(run_unary(op, x), ref::math(r, x), 0, 2e-5)) << op;
}

TEST(OpMath, ErfExpm1AndLogFamilyMatchReferenceWithEdgeValues) {
  ETW_REQUIRE_GPU();
  struct C { const char* op; MathOp r; float lo, hi; };
  C cs[] = {{"aten.erf.default", MathOp::Erf, -5, 5},       {"aten.expm1.default", MathOp::Expm1, -20, 20},
            {"aten.log1p.default", MathOp::Log1p, -1.5f, 40}, {"aten.log2.default", MathOp::Log2, -1, 1000},
            {"aten.log10.default", MathOp::Log10, -1, 1000}};
  uint64_t seed = 320;
  for (auto& c : cs) {
    auto x = with_edges(random_f32({5, 33}, seed++, c.lo, c.hi), kEdges);
    EXPECT_TRUE(CloseNan(run_unary(c.op, x), ref::math(c.r, x), 1e-6, 2e-5)) << c.op;
  }
}

TEST(OpMath, IntegerInputsOfFloatMathArePromoted) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({4, 9}, 330, -3, 60);
  EXPECT_TRUE(CloseNan(run_unary("aten.log2.default", x), ref::math(MathOp::Log2, x), 1e-6, 1e-5));
  EXPECT_TRUE(CloseNan(run_unary("aten.atan.default", x), ref::math(MathOp::Atan, x), 1e-6, 1e-5));
}

TEST(OpMath, LogitClampsToEpsOnlyWhenEpsIsGiven) {
  ETW_REQUIRE_GPU();
  auto x = with_edges(random_f32({4, 19}, 340, -0.2f, 1.2f), {0.f, 1.f, kNan, 1e-4f, 0.9999f, 0.5f});
  auto logit = [&](std::optional<double> eps) {
    return run_op("aten.logit.default", {x}, DType::Float32, x.shape, [&](GraphBuilder& b, const std::vector<Id>& i) {
      return std::vector<Id>{i[0], eps ? b.dbl(*eps) : b.null()};
    });
  };
  EXPECT_TRUE(CloseNan(logit(std::nullopt), ref::logit(x, std::nullopt), 1e-5, 1e-5));  // NaN outside [0,1], +-inf at 1/0
  EXPECT_TRUE(CloseNan(logit(0.01), ref::logit(x, 0.01), 1e-5, 1e-5));                  // finite everywhere but NaN
  EXPECT_TRUE(CloseNan(logit(-1.0), ref::logit(x, std::nullopt), 1e-5, 1e-5));          // negative eps: no clamping
}

TEST(OpMath, EluAppliesAlphaScaleAndInputScale) {
  ETW_REQUIRE_GPU();
  auto x = with_edges(random_f32({3, 41}, 350, -6, 6), {0.f, -0.f, -kInf, kInf, kNan, -1e-6f});
  auto elu = [&](double alpha, double scale, double input_scale) {
    return run_op("aten.elu.default", {x}, DType::Float32, x.shape, [&](GraphBuilder& b, const std::vector<Id>& i) {
      return std::vector<Id>{i[0], b.dbl(alpha), b.int_(static_cast<int64_t>(scale)), b.dbl(input_scale)};
    });
  };
  EXPECT_TRUE(CloseNan(elu(1.0, 1, 1.0), ref::elu(x, 1.0, 1, 1.0), 1e-6, 1e-5));
  // SELU's constants are elu(alpha=1.6733, scale=1.0507); here scale 2 and input_scale 0.5.
  EXPECT_TRUE(CloseNan(elu(1.6732632423543772, 2, 0.5), ref::elu(x, 1.6732632423543772, 2, 0.5), 1e-6, 1e-5));
}

TEST(OpMath, SignOfFloatIsZeroForNanAndZerosAndKeepsIntAndBoolDtypes) {
  ETW_REQUIRE_GPU();
  auto x = with_edges(random_f32({2, 13}, 360, -3, 3), {0.f, -0.f, kNan, kInf, -kInf, 1e-30f, -1e-30f});
  auto got = run_unary("aten.sign.default", x);
  EXPECT_TRUE(CloseNan(got, ref::math(MathOp::Sign, x), 0, 0));
  EXPECT_FALSE(std::signbit(got.as<float>()[1])) << "sign(-0.0) is +0.0 in ATen";
  auto xi = random_i32({3, 7}, 361, -5, 5);
  EXPECT_TRUE(CloseNan(run_unary("aten.sign.default", xi, DType::Int32), ref::math(MathOp::Sign, xi), 0, 0));
  auto xb = random_bool({11}, 362);
  EXPECT_TRUE(CloseNan(run_unary("aten.sign.default", xb, DType::Bool), xb, 0, 0));
}

TEST(OpMath, IsinfIsnanGiveBoolAndIntegersAreNeverEither) {
  ETW_REQUIRE_GPU();
  auto x = with_edges(random_f32({5, 5}, 370), {kInf, -kInf, kNan, -kNan, std::numeric_limits<float>::max(), 0.f});
  EXPECT_TRUE(CloseNan(run_unary("aten.isinf.default", x, DType::Bool), ref::isinf(x), 0, 0));
  EXPECT_TRUE(CloseNan(run_unary("aten.isnan.default", x, DType::Bool), ref::isnan(x), 0, 0));
  // 0x7f800000 as an int32 is a plain integer, not an infinity.
  auto xi = HostTensor::from(DType::Int32, {3}, std::vector<int32_t>{0x7f800000, 0x7fc00000, -1});
  EXPECT_TRUE(CloseNan(run_unary("aten.isinf.default", xi, DType::Bool), HostTensor(DType::Bool, {3}), 0, 0));
  EXPECT_TRUE(CloseNan(run_unary("aten.isnan.default", xi, DType::Bool), HostTensor(DType::Bool, {3}), 0, 0));
}

TEST(OpMath, ConjPhysicalCopiesRealTensorsOfEveryDtypeBitForBit) {
  ETW_REQUIRE_GPU();
  auto xf = with_edges(random_f32({4, 6}, 380), {-0.f, kNan, -kInf});
  auto got = run_unary("aten._conj_physical.default", xf);
  EXPECT_EQ(got.data, xf.data);
  auto xi = random_i32({7}, 381, -1000000, 1000000);
  EXPECT_EQ(run_unary("aten._conj_physical.default", xi, DType::Int32).data, xi.data);
  auto xb = random_bool({9}, 382);
  EXPECT_EQ(run_unary("aten._conj_physical.default", xb, DType::Bool).data, xb.data);
  std::string e = error_of([&] { run_unary("aten._conj_physical.default", xi, DType::Float32); });
  EXPECT_TRUE(has(e, "aten._conj_physical.default") && has(e, "differs")) << e;
}

TEST(OpMath, BadDtypesFailAtLoadNamingTheOp) {
  ETW_REQUIRE_GPU();
  auto xi = random_i32({4}, 390, -3, 3);
  std::string e = error_of([&] { run_unary("aten.sign.default", xi, DType::Float32); });
  EXPECT_TRUE(has(e, "aten.sign.default")) << e;
  e = error_of([&] { run_unary("aten.isnan.default", random_f32({4}, 391), DType::Float32); });
  EXPECT_TRUE(has(e, "aten.isnan.default") && has(e, "bool")) << e;
  e = error_of([&] { run_unary("aten.erf.default", xi, DType::Int32); });
  EXPECT_TRUE(has(e, "aten.erf.default") && has(e, "float only")) << e;
}

// ---- binary ----

HostTensor run_binary(const std::string& op, const HostTensor& a, const HostTensor& b, DType out_t) {
  auto shape = ref::broadcast(a.shape, b.shape);
  return run_op(op, {a, b}, out_t, shape, [](GraphBuilder&, const std::vector<Id>& i) { return i; });
}
// op(tensor, scalar [, extra scalar args])
HostTensor run_scalar(const std::string& op, const HostTensor& a, double s, bool int_scalar, DType out_t,
                      const std::vector<double>& extra = {}) {
  return run_op(op, {a}, out_t, a.shape, [&](GraphBuilder& b, const std::vector<Id>& i) {
    std::vector<Id> r{i[0], int_scalar ? b.int_(static_cast<int64_t>(s)) : b.dbl(s)};
    for (double e : extra) r.push_back(b.dbl(e));
    return r;
  });
}
HostTensor scalar_tensor_like(double s, DType t) {
  if (t == DType::Int32) return HostTensor::from(DType::Int32, {}, std::vector<int32_t>{static_cast<int32_t>(s)});
  return HostTensor::from(DType::Float32, {}, std::vector<float>{static_cast<float>(s)});
}

TEST(OpMathBinary, FmodKeepsTheDividendSignAndRemainderTheDivisorSign) {
  ETW_REQUIRE_GPU();
  auto a = with_edges(random_f32({4, 1, 9}, 400, -20, 20), {5.f, -5.f, 0.f, -0.f, kInf, 7.5f, -7.5f, 3.f, kNan});
  auto b = with_edges(random_f32({3, 1}, 401, -6, 6), {3.f, -3.f, 0.f});
  b.as<float>()[1] = -3.f;
  for (auto [op, r] : {std::pair{"aten.fmod.Tensor", MathBinOp::Fmod}, std::pair{"aten.remainder.Tensor", MathBinOp::Remainder}}) {
    EXPECT_TRUE(CloseNan(run_binary(op, a, b, DType::Float32), ref::math_binary(r, a, b), 1e-5, 1e-5)) << op;
    auto bi = with_edges(random_f32({1}, 402), {kInf});
    EXPECT_TRUE(CloseNan(run_binary(op, a, bi, DType::Float32), ref::math_binary(r, a, bi), 1e-5, 1e-5)) << op << " by inf";
  }
  auto ai = random_i32({5, 8}, 403, -50, 50), bi = random_i32({8}, 404, -7, 7);
  bi.as<int32_t>()[3] = 0;  // PyTorch raises; the kernel gives 0 (documented)
  EXPECT_TRUE(CloseNan(run_binary("aten.fmod.Tensor", ai, bi, DType::Int32), ref::math_binary(MathBinOp::Fmod, ai, bi), 0, 0));
  EXPECT_TRUE(CloseNan(run_binary("aten.remainder.Tensor", ai, bi, DType::Int32), ref::math_binary(MathBinOp::Remainder, ai, bi), 0, 0));
  for (double s : {3.0, -3.0}) {
    EXPECT_TRUE(CloseNan(run_scalar("aten.fmod.Scalar", ai, s, true, DType::Int32),
                      ref::math_binary(MathBinOp::Fmod, ai, scalar_tensor_like(s, DType::Int32)), 0, 0));
    EXPECT_TRUE(CloseNan(run_scalar("aten.remainder.Scalar", a, s + 0.5, false, DType::Float32),
                      ref::math_binary(MathBinOp::Remainder, a, scalar_tensor_like(s + 0.5, DType::Float32)), 1e-5, 1e-5));
  }
}

TEST(OpMathBinary, FloorDivideRoundsTowardMinusInfinityLikePython) {
  ETW_REQUIRE_GPU();
  auto a = with_edges(random_f32({6, 7}, 410, -30, 30), {7.f, -7.f, 7.f, -7.f, 0.f, -0.f, 1.f, -1.f, kNan, kInf});
  auto b = with_edges(random_f32({6, 7}, 411, -5, 5), {2.f, 2.f, -2.f, -2.f, 3.f, 3.f, 0.f, 0.f, 1.f, 2.f});
  auto got = run_binary("aten.floor_divide.default", a, b, DType::Float32);
  EXPECT_TRUE(CloseNan(got, ref::math_binary(MathBinOp::FloorDivide, a, b), 1e-5, 1e-5));
  EXPECT_TRUE(std::signbit(got.as<float>()[5])) << "-0 // 3 is -0";
  auto ai = random_i32({3, 11}, 412, -40, 40), bi = random_i32({11}, 413, -6, 6);
  EXPECT_TRUE(CloseNan(run_binary("aten.floor_divide.default", ai, bi, DType::Int32),
                    ref::math_binary(MathBinOp::FloorDivide, ai, bi), 0, 0));
}

TEST(OpMathBinary, DivScalarModeTruncatesOrFloors) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({5, 9}, 420, -20, 20);
  auto ai = random_i32({5, 9}, 421, -20, 20);
  auto run_mode = [](const HostTensor& x, double s, bool int_scalar, const char* mode, DType t) {
    return run_op("aten.div.Scalar_mode", {x}, t, x.shape, [&](GraphBuilder& b, const std::vector<Id>& i) {
      return std::vector<Id>{i[0], int_scalar ? b.int_(static_cast<int64_t>(s)) : b.dbl(s), b.str(mode)};
    });
  };
  auto av = a.to_f64(), aiv = ai.to_f64();
  std::vector<double> trunc_f(av.size()), trunc_i(aiv.size());
  for (size_t i = 0; i < av.size(); ++i) trunc_f[i] = std::trunc(av[i] / -2.5), trunc_i[i] = std::trunc(aiv[i] / -3);
  EXPECT_TRUE(CloseNan(run_mode(a, -2.5, false, "trunc", DType::Float32), ref_tensor(a.shape, trunc_f), 0, 0));
  HostTensor ti(DType::Int32, ai.shape);
  for (size_t i = 0; i < aiv.size(); ++i) ti.as<int32_t>()[i] = static_cast<int32_t>(trunc_i[i]);
  EXPECT_TRUE(CloseNan(run_mode(ai, -3, true, "trunc", DType::Int32), ti, 0, 0));
  EXPECT_TRUE(CloseNan(run_mode(ai, -3, true, "floor", DType::Int32),
                    ref::math_binary(MathBinOp::FloorDivide, ai, scalar_tensor_like(-3, DType::Int32)), 0, 0));
  EXPECT_TRUE(CloseNan(run_mode(a, 2.5, false, "floor", DType::Float32),
                    ref::math_binary(MathBinOp::FloorDivide, a, scalar_tensor_like(2.5, DType::Float32)), 1e-5, 1e-5));
  std::string e = error_of([&] { run_mode(a, 2.0, false, "ceil", DType::Float32); });
  EXPECT_TRUE(has(e, "aten.div.Scalar_mode") && has(e, "ceil")) << e;
}

TEST(OpMathBinary, Atan2HandlesQuadrantsSignedZerosAndInfinities) {
  ETW_REQUIRE_GPU();
  auto y = with_edges(random_f32({4, 10}, 430, -3, 3), {0.f, 0.f, -0.f, -0.f, kInf, kInf, -kInf, 1.f, -1.f, kNan});
  auto x = with_edges(random_f32({4, 10}, 431, -3, 3), {0.f, -0.f, 0.f, -0.f, kInf, -kInf, 2.f, -kInf, kInf, 1.f});
  EXPECT_TRUE(CloseNan(run_binary("aten.atan2.default", y, x, DType::Float32), ref::math_binary(MathBinOp::Atan2, y, x), 2e-6, 1e-5));
  auto yi = random_i32({3, 1}, 432, -4, 4), xi = random_i32({1, 5}, 433, -4, 4);
  EXPECT_TRUE(CloseNan(run_binary("aten.atan2.default", yi, xi, DType::Float32), ref::math_binary(MathBinOp::Atan2, yi, xi), 2e-6, 1e-5));
  std::string e = error_of([&] { run_binary("aten.atan2.default", yi, xi, DType::Int32); });
  EXPECT_TRUE(has(e, "aten.atan2.default") && has(e, "float output")) << e;
}

TEST(OpMathBinary, PowScalarTakesTheScalarAsBase) {
  ETW_REQUIRE_GPU();
  auto e = with_edges(random_f32({3, 13}, 440, -4, 4), {0.f, 1.f, -1.f, 2.f, 0.5f, kNan, kInf, -kInf});
  auto pow_s = [&](double base) {
    return run_op("aten.pow.Scalar", {e}, DType::Float32, e.shape, [&](GraphBuilder& b, const std::vector<Id>& i) {
      return std::vector<Id>{b.dbl(base), i[0]};
    });
  };
  for (double base : {2.0, 0.5, 1.0, 0.0})
    EXPECT_TRUE(CloseNan(pow_s(base), ref::math_binary(MathBinOp::Pow, scalar_tensor_like(base, DType::Float32), e), 1e-6, 2e-5))
        << "base " << base;
  // Negative base with integral exponents only (non-integral ones are NaN in both).
  auto ei = random_i32({9}, 441, -4, 5);
  auto got = run_op("aten.pow.Scalar", {ei}, DType::Float32, ei.shape, [&](GraphBuilder& b, const std::vector<Id>& i) {
    return std::vector<Id>{b.dbl(-3.0), i[0]};
  });
  EXPECT_TRUE(CloseNan(got, ref::math_binary(MathBinOp::Pow, scalar_tensor_like(-3.0, DType::Float32), ei), 1e-6, 2e-5));
}

TEST(OpMathBinary, RsubScalarIsOtherMinusAlphaTimesSelf) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 3, 5}, 450, -10, 10);
  EXPECT_TRUE(CloseNan(run_scalar("aten.rsub.Scalar", a, 1.5, false, DType::Float32, {2.0}),
                    ref::math_binary(MathBinOp::Rsub, a, scalar_tensor_like(1.5, DType::Float32), 2.0), 1e-6, 1e-6));
  auto ai = random_i32({17}, 451, -100, 100);
  auto got = run_op("aten.rsub.Scalar", {ai}, DType::Int32, ai.shape, [](GraphBuilder& b, const std::vector<Id>& i) {
    return std::vector<Id>{i[0], b.int_(7), b.int_(3)};
  });
  EXPECT_TRUE(CloseNan(got, ref::math_binary(MathBinOp::Rsub, ai, scalar_tensor_like(7, DType::Int32), 3.0), 0, 0));
}

TEST(OpMathBinary, BitwiseScalarOpsUseAll32BitsOfTheScalar) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({4, 9}, 460, -2000000000, 2000000000);
  const int64_t s = 0x5A5A5A5B;  // not representable in f32: a float-carried scalar would lose bits
  auto av = a.as<int32_t>();
  for (auto [op, f] : {std::pair<const char*, int32_t (*)(int32_t, int32_t)>{"aten.bitwise_and.Scalar", [](int32_t x, int32_t y) { return x & y; }},
                       {"aten.bitwise_or.Scalar", [](int32_t x, int32_t y) { return x | y; }},
                       {"aten.bitwise_xor.Scalar", [](int32_t x, int32_t y) { return x ^ y; }}}) {
    HostTensor want(DType::Int32, a.shape);
    for (int64_t i = 0; i < a.numel(); ++i) want.as<int32_t>()[i] = f(av[i], static_cast<int32_t>(s));
    EXPECT_TRUE(CloseNan(run_scalar(op, a, static_cast<double>(s), true, DType::Int32), want, 0, 0)) << op;
  }
  auto b = random_bool({12}, 461);
  auto bx = run_op("aten.bitwise_xor.Scalar", {b}, DType::Bool, b.shape, [](GraphBuilder& g, const std::vector<Id>& i) {
    return std::vector<Id>{i[0], g.boolean(true)};
  });
  HostTensor nb(DType::Bool, b.shape);
  for (int64_t i = 0; i < b.numel(); ++i) nb.data[i] = !b.data[i];
  EXPECT_TRUE(CloseNan(bx, nb, 0, 0));
  std::string e = error_of([&] { run_scalar("aten.bitwise_and.Scalar", random_f32({3}, 462), 1, true, DType::Float32); });
  EXPECT_TRUE(has(e, "aten.bitwise_and.Scalar")) << e;
  e = error_of([&] { run_scalar("aten.fmod.Scalar", a, 2.5, false, DType::Int32); });
  EXPECT_TRUE(has(e, "aten.fmod.Scalar")) << e;
}

// ---- KernelCall spelling ----

TEST(OpMathKernelCall, OutVariantsMapToTheSameKernels) {
  ETW_REQUIRE_GPU();
  std::vector<int64_t> shape{3, 7};
  auto xv = with_edges(random_f32(shape, 470, -3, 3), {0.f, -1.f, kNan});
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, shape), e = p.tensor(DType::Float32, shape), m = p.tensor(DType::Float32, shape);
  auto f = p.tensor(DType::Float32, shape), pw = p.tensor(DType::Float32, shape), lg = p.tensor(DType::Float32, shape);
  p.input(x);
  p.kernel("aten::erf", "out", {x, e});                                    // unary, generic rule
  p.kernel("aten::fmod", "Scalar_out", {x, p.dbl(0.75), m});               // Scalar_out, generic rule
  p.kernel("aten::floor_divide", "out", {x, m, f});                        // binary .out
  p.kernel("aten::pow", "Scalar_out", {p.dbl(2.0), x, pw});                // scalar first
  p.kernel("aten::logit", "out", {x, p.null(), lg});                       // optional arg as None
  for (auto o : {e, m, f, pw, lg}) p.output(o);
  auto model = Model::load_bytes(p.serialize());
  for (const auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto out = model->run({xv});
  EXPECT_TRUE(CloseNan(out[0], ref::math(MathOp::Erf, xv), 1e-6, 1e-5));
  auto mref = ref::math_binary(MathBinOp::Fmod, xv, scalar_tensor_like(0.75, DType::Float32));
  EXPECT_TRUE(CloseNan(out[1], mref, 1e-6, 1e-5));
  auto m32 = HostTensor(DType::Float32, shape);
  for (int64_t i = 0; i < m32.numel(); ++i) m32.as<float>()[i] = out[1].as<float>()[i];
  EXPECT_TRUE(CloseNan(out[2], ref::math_binary(MathBinOp::FloorDivide, xv, m32), 1e-5, 1e-5));
  EXPECT_TRUE(CloseNan(out[3], ref::math_binary(MathBinOp::Pow, scalar_tensor_like(2.0, DType::Float32), xv), 1e-6, 2e-5));
  EXPECT_TRUE(CloseNan(out[4], ref::logit(xv, std::nullopt), 1e-5, 1e-5));
}

}  // namespace
