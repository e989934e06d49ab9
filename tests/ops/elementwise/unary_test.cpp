// aten unary elementwise ops against fp64 references (tests/reference/elementwise/unary_ref).
#include <cmath>
#include <functional>
#include <limits>

#include "reference/elementwise/unary_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
using ref::UnaryOp;

namespace {

// Builds `op(x, extra args..., out)`; `extra` appends scalar args with the builder.
HostTensor run_unary(const std::string& op, const HostTensor& x, DType out_t,
                     const std::function<std::vector<Id>(GraphBuilder&)>& extra = {}) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(out_t, x.shape);
  std::vector<Id> args{in};
  if (extra)
    for (Id a : extra(g.gb)) args.push_back(a);
  args.push_back(o);
  g.gb.op(op, args);
  return g.run()[0];
}

void expect_load_error(const std::string& op, const HostTensor& x, DType out_t,
                       const std::function<std::vector<Id>(GraphBuilder&)>& extra, const std::string& needle) {
  try {
    run_unary(op, x, out_t, extra);
    ADD_FAILURE() << op << ": expected a load error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << "error does not name the op: " << e.what();
  }
}

TEST(OpUnary, FloatMathOpsMatchReferenceOnOddShape) {
  ETW_REQUIRE_GPU();
  struct C { const char* op; UnaryOp r; float lo, hi; double atol, rtol; };
  C cs[] = {{"aten.abs.default", UnaryOp::Abs, -3, 3, 0, 0},
            {"aten.neg.default", UnaryOp::Neg, -3, 3, 0, 0},
            {"aten.exp.default", UnaryOp::Exp, -10, 10, 1e-6, 1e-5},
            {"aten.sqrt.default", UnaryOp::Sqrt, 0, 50, 1e-6, 1e-5},
            {"aten.rsqrt.default", UnaryOp::Rsqrt, 0.01f, 50, 1e-6, 1e-5},
            {"aten.sin.default", UnaryOp::Sin, -6, 6, 1e-5, 1e-5},
            {"aten.cos.default", UnaryOp::Cos, -6, 6, 1e-5, 1e-5},
            {"aten.tanh.default", UnaryOp::Tanh, -5, 5, 1e-6, 1e-5},
            {"aten.sigmoid.default", UnaryOp::Sigmoid, -12, 12, 1e-6, 1e-5},
            {"aten.relu.default", UnaryOp::Relu, -2, 2, 0, 0},
            {"aten.silu.default", UnaryOp::Silu, -12, 12, 1e-6, 1e-5},
            {"aten.hardswish.default", UnaryOp::Hardswish, -5, 5, 1e-6, 1e-5},
            {"aten.log.default", UnaryOp::Log, 0.001f, 100, 1e-6, 1e-5},
            {"aten.reciprocal.default", UnaryOp::Reciprocal, 0.1f, 10, 1e-6, 1e-5},
            {"aten.floor.default", UnaryOp::Floor, -9, 9, 0, 0},
            {"aten.ceil.default", UnaryOp::Ceil, -9, 9, 0, 0},
            {"aten.trunc.default", UnaryOp::Trunc, -9, 9, 0, 0}};
  uint64_t seed = 100;
  for (auto& c : cs) {
    auto x = random_f32({3, 5, 7}, seed++, c.lo, c.hi);
    auto ref = ref::unary(c.r, x);
    EXPECT_TRUE(Close(run_unary(c.op, x, DType::Float32), ref, c.atol, c.rtol)) << c.op;
  }
}

TEST(OpUnary, GeluNoneIsTheErfFormAndTanhIsTheApproximation) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({7, 13}, 21, -7.f, 7.f);
  x.as<float>()[0] = 0.f;
  x.as<float>()[1] = -12.f;
  x.as<float>()[2] = 12.f;
  auto none = run_unary("aten.gelu.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.str("none")}; });
  auto tanh = run_unary("aten.gelu.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.str("tanh")}; });
  EXPECT_TRUE(Close(none, ref::unary(UnaryOp::GeluErf, x), 1e-6, 1e-5));
  EXPECT_TRUE(Close(tanh, ref::unary(UnaryOp::GeluTanh, x), 1e-6, 1e-5));
  // The two forms differ by up to ~5e-4 near |x| = 2: routing the mode to the wrong kernel fails.
  EXPECT_FALSE(Close(none, ref::unary(UnaryOp::GeluTanh, x), 1e-6, 1e-5));
}

TEST(OpUnary, RoundIsHalfToEvenLikeTorchRound) {
  ETW_REQUIRE_GPU();
  std::vector<float> v{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f, 0.49999997f, 2.4f, -2.6f, 1e7f + 1.f, 8388609.f, 0.f};
  auto x = HostTensor::from<float>(DType::Float32, {static_cast<int64_t>(v.size())}, v);
  auto got = run_unary("aten.round.default", x, DType::Float32);
  EXPECT_TRUE(Close(got, ref::unary(UnaryOp::Round, x), 0, 0));
  EXPECT_EQ(got.as<float>()[2], 2.f);
  EXPECT_EQ(got.as<float>()[5], -2.f);
}

TEST(OpUnary, ClampTakesIntDoubleOrNullBounds) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({5, 11}, 31, -10.f, 10.f);
  auto both = run_unary("aten.clamp.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.int_(0), b.int_(6)}; });
  EXPECT_TRUE(Close(both, ref::unary(UnaryOp::Clamp, x, 0.0, 6.0), 0, 0));
  auto lo_only = run_unary("aten.clamp.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.dbl(-2.5), b.null()}; });
  EXPECT_TRUE(Close(lo_only, ref::unary(UnaryOp::Clamp, x, -2.5, std::nullopt), 0, 0));
  auto hi_only = run_unary("aten.clamp.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.null(), b.dbl(1.25)}; });
  EXPECT_TRUE(Close(hi_only, ref::unary(UnaryOp::Clamp, x, std::nullopt, 1.25), 0, 0));
  // min > max: torch.clamp sets every element to max.
  auto crossed = run_unary("aten.clamp.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.dbl(3.0), b.dbl(-1.0)}; });
  for (int64_t i = 0; i < crossed.numel(); ++i) ASSERT_EQ(crossed.as<float>()[i], -1.f) << i;
}

TEST(OpUnary, HardtanhUsesItsBoundsAndDefaults) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 9}, 41, -8.f, 8.f);
  auto relu6 = run_unary("aten.hardtanh.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.dbl(0.0), b.int_(6)}; });
  EXPECT_TRUE(Close(relu6, ref::unary(UnaryOp::Clamp, x, 0.0, 6.0), 0, 0));
  auto dflt = run_unary("aten.hardtanh.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.null(), b.null()}; });
  EXPECT_TRUE(Close(dflt, ref::unary(UnaryOp::Clamp, x, -1.0, 1.0), 0, 0));
}

TEST(OpUnary, Int32AbsNegReluClampAreExact) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({3, 17}, 51, -1000, 1000);
  EXPECT_TRUE(Close(run_unary("aten.abs.default", x, DType::Int32), ref::unary(UnaryOp::Abs, x)));
  EXPECT_TRUE(Close(run_unary("aten.neg.default", x, DType::Int32), ref::unary(UnaryOp::Neg, x)));
  EXPECT_TRUE(Close(run_unary("aten.relu.default", x, DType::Int32), ref::unary(UnaryOp::Relu, x)));
  auto c = run_unary("aten.clamp.default", x, DType::Int32, [](GraphBuilder& b) { return std::vector<Id>{b.int_(-300), b.dbl(450.0)}; });
  EXPECT_TRUE(Close(c, ref::unary(UnaryOp::Clamp, x, -300.0, 450.0)));
  auto lo = run_unary("aten.clamp.default", x, DType::Int32, [](GraphBuilder& b) { return std::vector<Id>{b.int_(7), b.null()}; });
  EXPECT_TRUE(Close(lo, ref::unary(UnaryOp::Clamp, x, 7.0, std::nullopt)));
  // A bound beyond int32 saturates instead of wrapping.
  auto big = run_unary("aten.clamp.default", x, DType::Int32, [](GraphBuilder& b) { return std::vector<Id>{b.int_(-5000000000LL), b.int_(5)}; });
  EXPECT_TRUE(Close(big, ref::unary(UnaryOp::Clamp, x, std::nullopt, 5.0)));
}

TEST(OpUnary, LeakyReluReadsSlopeAndDefaultsToOneHundredth) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 16, 8, 8}, 61, -4.f, 4.f);
  auto s02 = run_unary("aten.leaky_relu.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.dbl(0.2)}; });
  EXPECT_TRUE(Close(s02, ref::unary(UnaryOp::LeakyRelu, x, 0.2), 1e-7, 1e-6));
  auto s2 = run_unary("aten.leaky_relu.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.int_(2)}; });
  EXPECT_TRUE(Close(s2, ref::unary(UnaryOp::LeakyRelu, x, 2.0), 1e-7, 1e-6));
  auto dflt = run_unary("aten.leaky_relu.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.null()}; });
  EXPECT_TRUE(Close(dflt, ref::unary(UnaryOp::LeakyRelu, x, 0.01), 1e-7, 1e-6));
}

TEST(OpUnary, LeakyReluPast65535WorkgroupsSpillsTo2DDispatch) {
  ETW_REQUIRE_GPU();
  int64_t n = 65536LL * 256 + 77;  // more than 65535 workgroups of 256
  auto x = random_f32({n}, 62, -1.f, 1.f);
  auto got = run_unary("aten.leaky_relu.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.dbl(0.1)}; });
  EXPECT_TRUE(Close(got, ref::unary(UnaryOp::LeakyRelu, x, 0.1), 1e-7, 1e-6));
}

TEST(OpUnary, NanPropagatesAndLargeInputsStayFinite) {
  ETW_REQUIRE_GPU();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v{nan, -100.f, 100.f, -1000.f, 1000.f, 0.f, -0.f, 20.f, -20.f};
  auto x = HostTensor::from<float>(DType::Float32, {9}, v);
  for (auto [op, r] : {std::pair{"aten.tanh.default", UnaryOp::Tanh}, {"aten.sigmoid.default", UnaryOp::Sigmoid},
                       {"aten.silu.default", UnaryOp::Silu}, {"aten.relu.default", UnaryOp::Relu}}) {
    EXPECT_TRUE(CloseNan(run_unary(op, x, DType::Float32), ref::unary(r, x), 1e-6, 1e-5)) << op;
  }
  auto c = run_unary("aten.clamp.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.int_(-1), b.int_(1)}; });
  EXPECT_TRUE(CloseNan(c, ref::unary(UnaryOp::Clamp, x, -1.0, 1.0), 0, 0));
  auto g = run_unary("aten.gelu.default", x, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.str("none")}; });
  EXPECT_TRUE(CloseNan(g, ref::unary(UnaryOp::GeluErf, x), 1e-6, 1e-5));
  // sqrt / log of a negative number are NaN; rsqrt(0) is inf; log(0) is -inf.
  auto y = HostTensor::from<float>(DType::Float32, {3}, std::vector<float>{-1.f, 0.f, 4.f});
  EXPECT_TRUE(CloseNan(run_unary("aten.sqrt.default", y, DType::Float32), ref::unary(UnaryOp::Sqrt, y), 0, 1e-6));
  EXPECT_TRUE(CloseNan(run_unary("aten.rsqrt.default", y, DType::Float32), ref::unary(UnaryOp::Rsqrt, y), 0, 1e-6));
  EXPECT_TRUE(CloseNan(run_unary("aten.log.default", y, DType::Float32), ref::unary(UnaryOp::Log, y), 0, 1e-6));
}

TEST(OpUnary, BitwiseNotAndLogicalNotOnIntAndBool) {
  ETW_REQUIRE_GPU();
  auto xi = random_i32({6, 7}, 71, -50, 50);
  auto xb = random_bool({6, 7}, 72);
  auto xf = random_f32({6, 7}, 73, -1.f, 1.f);
  xf.as<float>()[3] = 0.f;
  xf.as<float>()[4] = -0.f;
  xi.as<int32_t>()[5] = 0;
  EXPECT_TRUE(Close(run_unary("aten.bitwise_not.default", xi, DType::Int32), ref::unary(UnaryOp::BitwiseNot, xi)));
  EXPECT_TRUE(Close(run_unary("aten.bitwise_not.default", xb, DType::Bool), ref::unary(UnaryOp::BitwiseNot, xb)));
  EXPECT_TRUE(Close(run_unary("aten.logical_not.default", xb, DType::Bool), ref::unary(UnaryOp::LogicalNot, xb)));
  EXPECT_TRUE(Close(run_unary("aten.logical_not.default", xi, DType::Bool), ref::unary(UnaryOp::LogicalNot, xi)));
  EXPECT_TRUE(Close(run_unary("aten.logical_not.default", xf, DType::Bool), ref::unary(UnaryOp::LogicalNot, xf)));
}

TEST(OpUnary, IntInputOfFloatOpIsPromotedToFloat) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({4, 5}, 81, -20, 20);
  EXPECT_TRUE(Close(run_unary("aten.sin.default", x, DType::Float32), ref::unary(UnaryOp::Sin, x), 1e-5, 1e-5));
  EXPECT_TRUE(Close(run_unary("aten.sigmoid.default", x, DType::Float32), ref::unary(UnaryOp::Sigmoid, x), 1e-6, 1e-5));
}

TEST(OpUnary, DynamicShapeFollowsTheLiveInput) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 9}, 91, -3.f, 3.f);
  OpGraph g;
  Id in = g.input(x, {}, true);
  Id o = g.output(DType::Float32, {4, 9});
  g.gb.op("aten.hardtanh.default", {in, g.gb.dbl(-0.5), g.gb.dbl(2.0), o});
  EXPECT_TRUE(Close(g.run()[0], ref::unary(UnaryOp::Clamp, x, -0.5, 2.0), 0, 0));
  auto small = random_f32({2, 5}, 92, -3.f, 3.f);
  auto got = g.rerun({small})[0];
  ASSERT_EQ(got.shape, (std::vector<int64_t>{2, 5}));
  EXPECT_TRUE(Close(got, ref::unary(UnaryOp::Clamp, small, -0.5, 2.0), 0, 0));
}

TEST(OpUnary, UnsupportedVariantsFailAtLoadNamingTheProblem) {
  ETW_REQUIRE_GPU();
  auto xf = random_f32({3, 4}, 1);
  auto xi = random_i32({3, 4}, 2, -5, 5);
  expect_load_error("aten.gelu.default", xf, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.str("erf")}; },
                    "approximate='erf'");
  expect_load_error("aten.clamp.default", xf, DType::Float32, [](GraphBuilder& b) { return std::vector<Id>{b.null(), b.null()}; },
                    "min and max");
  expect_load_error("aten.clamp.default", xi, DType::Int32, [](GraphBuilder& b) { return std::vector<Id>{b.dbl(0.5), b.null()}; },
                    "not integral");
  expect_load_error("aten.exp.default", xi, DType::Int32, {}, "float only");
  expect_load_error("aten.bitwise_not.default", xf, DType::Float32, {}, "bitwise_not of a f32 tensor");
  expect_load_error("aten.logical_not.default", xf, DType::Float32, {}, "logical_not produces bool");
}

}  // namespace
