// aten binary elementwise ops against fp64 references (tests/reference/elementwise_ref).
#include <cmath>
#include <optional>

#include "reference/elementwise/elementwise_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor run_binary(const std::string& op, const HostTensor& a, const HostTensor& b, DType out_t,
                      std::vector<int64_t> out_dims, std::optional<double> alpha = std::nullopt,
                      const LoadOptions& opts = {}) {
  OpGraph g;
  Id x = g.input(a), y = g.input(b);
  Id o = g.output(out_t, out_dims);
  std::vector<Id> args{x, y};
  if (alpha) args.push_back(*alpha == static_cast<int64_t>(*alpha) ? g.gb.int_(static_cast<int64_t>(*alpha)) : g.gb.dbl(*alpha));
  args.push_back(o);
  g.gb.op(op, args);
  return g.run(opts)[0];
}

LoadOptions binary_route(const char* r) {
  LoadOptions o;
  o.force_route["binary"] = r;
  return o;
}

TEST(OpBinary, AddBroadcastsAcrossRanksOneToSix) {
  ETW_REQUIRE_GPU();
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{7}, {1}}, {{3, 5}, {5}}, {{2, 3, 4}, {3, 1}}, {{2, 3, 4, 5}, {1, 3, 1, 5}}, {{2, 1, 4, 1, 5}, {4, 1, 5}},
      {{2, 3, 1, 2, 3, 2}, {1, 1, 4, 1, 3, 1}}};
  uint64_t seed = 1;
  for (auto& [sa, sb] : cases) {
    auto a = random_f32(sa, seed++), b = random_f32(sb, seed++);
    auto ref = ref::binary(ref::BinaryOp::Add, a, b, 1.0);
    EXPECT_TRUE(Close(run_binary("aten.add.Tensor", a, b, DType::Float32, ref.shape, 1.0), ref))
        << shape_str(sa) << " + " << shape_str(sb);
  }
}

TEST(OpBinary, SubWithAlphaBroadcastsPerChannel) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 8, 6, 6}, 3), b = random_f32({2, 8, 1, 1}, 4);
  auto ref = ref::binary(ref::BinaryOp::Sub, a, b, 2.5);
  EXPECT_TRUE(Close(run_binary("aten.sub.Tensor", a, b, DType::Float32, ref.shape, 2.5), ref));
}

TEST(OpBinary, MulDivPowMinMaxMatchReference) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({4, 33}, 5, 0.1f, 2.f), b = random_f32({4, 33}, 6, -2.f, 2.f);
  struct C { const char* op; ref::BinaryOp r; } cs[] = {{"aten.mul.Tensor", ref::BinaryOp::Mul},
                                                         {"aten.div.Tensor", ref::BinaryOp::Div},
                                                         {"aten.pow.Tensor_Tensor", ref::BinaryOp::Pow},
                                                         {"aten.minimum.default", ref::BinaryOp::Min},
                                                         {"aten.maximum.default", ref::BinaryOp::Max}};
  for (auto& c : cs) {
    auto ref = ref::binary(c.r, a, b, 1.0);
    EXPECT_TRUE(Close(run_binary(c.op, a, b, DType::Float32, ref.shape), ref, 1e-5, 1e-4)) << c.op;
  }
}

TEST(OpBinary, Int32AddSubMulAreExact) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({3, 17}, 7, -1000, 1000), b = random_i32({1, 17}, 8, -1000, 1000);
  EXPECT_TRUE(Close(run_binary("aten.add.Tensor", a, b, DType::Int32, {3, 17}, 3.0), ref::binary(ref::BinaryOp::Add, a, b, 3.0)));
  EXPECT_TRUE(Close(run_binary("aten.sub.Tensor", a, b, DType::Int32, {3, 17}, 1.0), ref::binary(ref::BinaryOp::Sub, a, b, 1.0)));
  EXPECT_TRUE(Close(run_binary("aten.mul.Tensor", a, b, DType::Int32, {3, 17}), ref::binary(ref::BinaryOp::Mul, a, b, 1.0)));
}

TEST(OpBinary, ComparisonsProduceBool) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({5, 9}, 9, -3, 3), b = random_i32({5, 9}, 10, -3, 3);
  struct C { const char* op; ref::BinaryOp r; } cs[] = {{"aten.eq.Tensor", ref::BinaryOp::Eq}, {"aten.ne.Tensor", ref::BinaryOp::Ne},
                                                         {"aten.lt.Tensor", ref::BinaryOp::Lt}, {"aten.le.Tensor", ref::BinaryOp::Le},
                                                         {"aten.gt.Tensor", ref::BinaryOp::Gt}, {"aten.ge.Tensor", ref::BinaryOp::Ge}};
  for (auto& c : cs) {
    auto got = run_binary(c.op, a, b, DType::Bool, {5, 9});
    ASSERT_EQ(got.dtype, DType::Bool);
    EXPECT_TRUE(Close(got, ref::binary(c.r, a, b, 1.0))) << c.op;
  }
}

TEST(OpBinary, EqScalarMatchesNegativeInfinity) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4}, 11);
  a.as<float>()[2] = -INFINITY;
  a.as<float>()[7] = -INFINITY;
  OpGraph g;
  Id x = g.input(a);
  Id o = g.output(DType::Bool, {3, 4});
  Id s = g.gb.dbl(-INFINITY);
  g.gb.op("aten.eq.Scalar", {x, s, o});
  auto got = g.run()[0];
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got.data[i], (i == 2 || i == 7) ? 1 : 0) << i;
}

TEST(OpBinary, LargeTensorPast65535WorkgroupsIsCorrect) {
  ETW_REQUIRE_GPU();
  int64_t n = 65536LL * 256 + 77;  // more than 65535 workgroups of 256
  auto a = random_f32({n}, 12), b = random_f32({1}, 13);
  auto got = run_binary("aten.add.Tensor", a, b, DType::Float32, {n}, 1.0);
  EXPECT_TRUE(Close(got, ref::binary(ref::BinaryOp::Add, a, b, 1.0)));
}

TEST(OpBinary, LogicalXorOnBoolAndFloatProducesBool) {
  ETW_REQUIRE_GPU();
  auto a = random_bool({4, 7}, 14), b = random_bool({1, 7}, 15);
  EXPECT_TRUE(Close(run_binary("aten.logical_xor.default", a, b, DType::Bool, {4, 7}), ref::binary(ref::BinaryOp::LogicalXor, a, b, 1.0)));
  auto fa = random_f32({3, 5}, 16), fb = random_f32({3, 5}, 17);
  fa.as<float>()[0] = 0.f;
  fb.as<float>()[1] = 0.f;
  fa.as<float>()[2] = fb.as<float>()[2] = 0.f;
  EXPECT_TRUE(Close(run_binary("aten.logical_xor.default", fa, fb, DType::Bool, {3, 5}), ref::binary(ref::BinaryOp::LogicalXor, fa, fb, 1.0)));
}

TEST(OpBinary, BitwiseAndOrXorOnInt32AndBool) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({3, 9}, 18, -100000, 100000), b = random_i32({9}, 19, -100000, 100000);
  auto ba = random_bool({5, 4}, 20), bb = random_bool({5, 1}, 21);
  for (auto [op, c] : {std::pair{"aten.bitwise_and.Tensor", '&'}, {"aten.bitwise_or.Tensor", '|'}, {"aten.bitwise_xor.Tensor", '^'}}) {
    EXPECT_TRUE(Close(run_binary(op, a, b, DType::Int32, {3, 9}), ref::bitwise(c, a, b))) << op;
    EXPECT_TRUE(Close(run_binary(op, ba, bb, DType::Bool, {5, 4}), ref::bitwise(c, ba, bb))) << op;
  }
}

TEST(OpBinary, NonBroadcastableShapesFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4}, 1), b = random_f32({5}, 2);
  try {
    run_binary("aten.add.Tensor", a, b, DType::Float32, {3, 4}, 1.0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broadcast"), std::string::npos) << e.what();
  }
}

TEST(OpBinary, Vec4RouteMatchesGeneralRouteAndReferenceWithTails) {
  ETW_REQUIRE_GPU();
  // 5 * 1024 + 12 floats: several workgroups of 4 vec4 per invocation plus a partial last one.
  std::vector<int64_t> shape{4, 1283};
  auto a = random_f32(shape, 40, 0.5f, 2.f), b = random_f32(shape, 41, 0.5f, 2.f);
  struct C { const char* op; ref::BinaryOp r; std::optional<double> alpha; } cs[] = {
      {"aten.add.Tensor", ref::BinaryOp::Add, 1.0}, {"aten.add.Tensor", ref::BinaryOp::Add, 0.5},
      {"aten.sub.Tensor", ref::BinaryOp::Sub, 2.5}, {"aten.mul.Tensor", ref::BinaryOp::Mul, std::nullopt},
      {"aten.div.Tensor", ref::BinaryOp::Div, std::nullopt}};
  for (auto& c : cs) {
    auto ref = ref::binary(c.r, a, b, c.alpha.value_or(1.0));
    auto fast = run_binary(c.op, a, b, DType::Float32, shape, c.alpha, binary_route("vec4"));
    auto slow = run_binary(c.op, a, b, DType::Float32, shape, c.alpha, binary_route("general"));
    EXPECT_TRUE(Close(fast, ref, 1e-6, 1e-5)) << c.op;
    EXPECT_TRUE(Close(fast, slow, 0, 0)) << c.op;  // same f32 expression, bit-identical
  }
}

TEST(OpBinary, Vec4RouteWithScalarOtherMatchesGeneralRoute) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 8, 12}, 42, 0.5f, 2.f);
  for (const char* op : {"aten.add.Scalar", "aten.sub.Scalar", "aten.mul.Scalar", "aten.div.Scalar"}) {
    std::vector<HostTensor> outs;
    for (const char* r : {"vec4", "general"}) {
      OpGraph g;
      Id x = g.input(a);
      Id o = g.output(DType::Float32, a.shape);
      std::vector<Id> args{x, g.gb.dbl(1.75)};
      if (std::string(op).find("add") != std::string::npos || std::string(op).find("sub") != std::string::npos)
        args.push_back(g.gb.dbl(0.5));
      args.push_back(o);
      g.gb.op(op, args);
      outs.push_back(g.run(binary_route(r))[0]);
    }
    EXPECT_TRUE(Close(outs[0], outs[1], 0, 0)) << op;
    HostTensor s = HostTensor(DType::Float32, {1});
    s.as<float>()[0] = 1.75f;
    ref::BinaryOp r = op[5] == 'a' ? ref::BinaryOp::Add : op[5] == 's' ? ref::BinaryOp::Sub
                      : op[5] == 'm' ? ref::BinaryOp::Mul : ref::BinaryOp::Div;
    double alpha = (r == ref::BinaryOp::Add || r == ref::BinaryOp::Sub) ? 0.5 : 1.0;
    EXPECT_TRUE(Close(outs[0], ref::binary(r, a, s, alpha), 1e-6, 1e-5)) << op;
  }
}

TEST(OpBinary, DynamicShapeSwitchesBetweenVec4AndGeneralRoutes) {
  ETW_REQUIRE_GPU();
  // Max shape [6, 10] takes the vec4 route (60 % 4 == 0); the rerun [3, 7] (21) cannot.
  OpGraph g;
  auto a = random_f32({6, 10}, 43), b = random_f32({6, 10}, 44);
  Id x = g.input(a, {6, 10}, true), y = g.input(b, {6, 10}, true);
  Id o = g.output(DType::Float32, {6, 10});
  g.gb.op("aten.mul.Tensor", {x, y, o});
  EXPECT_TRUE(Close(g.run()[0], ref::binary(ref::BinaryOp::Mul, a, b, 1.0)));
  auto c = random_f32({3, 7}, 45), d = random_f32({3, 7}, 46);
  EXPECT_TRUE(Close(g.rerun({c, d})[0], ref::binary(ref::BinaryOp::Mul, c, d, 1.0)));
  auto e = random_f32({2, 10}, 47), f = random_f32({2, 10}, 48);
  EXPECT_TRUE(Close(g.rerun({e, f})[0], ref::binary(ref::BinaryOp::Mul, e, f, 1.0)));
}

}  // namespace
