// linear / mm / bmm / addmm / matmul against fp64 references (tests/reference/matmul), on every
// GEMM route (tiled, vec4, gemv, large, large_m64) via LoadOptions::force_route.
#include <array>
#include <cmath>
#include <optional>

#include "reference/matmul/matmul_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

LoadOptions route(const std::string& r) {
  LoadOptions o;
  if (!r.empty()) o.force_route["matmul"] = r;
  return o;
}

// A 2-operand op (mm, bmm, matmul) with both operands as graph inputs.
HostTensor run2(const std::string& op, const HostTensor& a, const HostTensor& b, const std::vector<int64_t>& od,
                const std::string& r = "", std::vector<std::string>* used = nullptr) {
  OpGraph g;
  Id x = g.input(a), y = g.input(b);
  Id o = g.output(DType::Float32, od);
  g.gb.op(op, {x, y, o});
  auto out = g.run(route(r))[0];
  if (used) *used = g.variants();
  return out;
}

HostTensor run_linear(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const std::string& r = "",
                      std::vector<std::string>* used = nullptr) {
  OpGraph g;
  Id xi = g.input(x);
  Id wi = g.constant(w);
  Id bi = bias ? g.constant(*bias) : g.gb.null();
  auto od = x.shape;
  od.back() = w.shape[0];
  Id o = g.output(DType::Float32, od);
  g.gb.op("aten.linear.default", {xi, wi, bi, o});
  auto out = g.run(route(r))[0];
  if (used) *used = g.variants();
  return out;
}

// addmm(mb, m1, m2, beta 0.5, alpha -2) on route `r`, checked against its reference; `used`: the
// variants it dispatched.
void expect_addmm(const HostTensor& mb, const HostTensor& m1, const HostTensor& m2, const std::string& r,
                  std::vector<std::string>* used) {
  OpGraph g;
  Id o = g.output(DType::Float32, {m1.shape[0], m2.shape[1]});
  g.gb.op("aten.addmm.default", {g.constant(mb), g.input(m1), g.input(m2), g.gb.dbl(0.5), g.gb.dbl(-2.0), o});
  EXPECT_TRUE(Close(g.run(route(r))[0], ref::addmm(mb, m1, m2, 0.5, -2.0), 1e-5, 1e-4)) << r;
  *used = g.variants();
}

// linear(x, w, bias) + res, the add fused into the linear's store, on route `r`, checked against
// its reference; `used`: the variants it dispatched.
void expect_linear_residual(const HostTensor& x, const HostTensor& w, const HostTensor& bias, const HostTensor& res,
                            const std::string& r, std::vector<std::string>* used) {
  OpGraph g;
  Id l = g.tensor(DType::Float32, res.shape);
  g.gb.op("aten.linear.default", {g.input(x), g.constant(w), g.constant(bias), l});
  g.gb.op("aten.add.Tensor", {l, g.input(res), g.gb.int_(1), g.output(DType::Float32, res.shape)});
  auto ref = ref::linear(x, w, &bias);
  for (int64_t i = 0; i < ref.numel(); ++i) ref.as<double>()[i] += res.as<float>()[i];
  EXPECT_TRUE(Close(g.run(route(r))[0], ref, 1e-5, 1e-4)) << r;
  *used = g.variants();
}

std::string load_error(OpGraph& g, const LoadOptions& o = {}) {
  try {
    g.run(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OpMatmul, MmOddShapesMatchReferenceOnTiledRoute) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({17, 19}, 1), b = random_f32({19, 33}, 2);
  std::vector<std::string> used;
  EXPECT_TRUE(Close(run2("aten.mm.default", a, b, {17, 33}, "", &used), ref::matmul(a, b), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_tiled"});  // K % 4 != 0: vec4 is not valid
}

TEST(OpMatmul, MmTiledAndVec4RoutesAgreeWhenKAndNAreMultiplesOf4) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({70, 36}, 3), b = random_f32({36, 68}, 4);  // two tiles each way, partial edges
  auto ref = ref::matmul(a, b);
  std::vector<std::string> used;
  EXPECT_TRUE(Close(run2("aten.mm.default", a, b, {70, 68}, "tiled", &used), ref, 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_tiled"});
  EXPECT_TRUE(Close(run2("aten.mm.default", a, b, {70, 68}, "vec4", &used), ref, 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_vec4"});
  EXPECT_TRUE(Close(run2("aten.mm.default", a, b, {70, 68}, "", &used), ref, 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_small16"});  // automatic choice: 9 tiles of 32x32
  EXPECT_TRUE(Close(run2("aten.mm.default", a, b, {70, 68}, "small", &used), ref, 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_small"});
}

TEST(OpMatmul, RowVectorGivesSameResultOnGemvTiledAndVec4Routes) {
  ETW_REQUIRE_GPU();
  // [1, K] @ [K, N]: B not transposed; K and N multiples of 4 so every route is valid.
  auto a = random_f32({1, 132}, 5), b = random_f32({132, 300}, 6);
  auto ref = ref::matmul(a, b);
  std::vector<std::string> used;
  for (auto [r, v] : {std::pair{"gemv", "gemv_vec4"}, std::pair{"tiled", "gemm_tiled"}, std::pair{"vec4", "gemm_vec4"}}) {
    EXPECT_TRUE(Close(run2("aten.mm.default", a, b, {1, 300}, r, &used), ref, 1e-5, 1e-4)) << r;
    EXPECT_EQ(used, std::vector<std::string>{v}) << r;
  }
  // Odd K and N: scalar GEMV vs tiled.
  auto a2 = random_f32({1, 37}, 7), b2 = random_f32({37, 29}, 8);
  auto ref2 = ref::matmul(a2, b2);
  EXPECT_TRUE(Close(run2("aten.mm.default", a2, b2, {1, 29}, "gemv", &used), ref2, 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemv"});
  EXPECT_TRUE(Close(run2("aten.mm.default", a2, b2, {1, 29}, "tiled", &used), ref2, 1e-5, 1e-4));
}

TEST(OpMatmul, LinearEveryRouteMatchesOnTransposedWeight) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({10, 96}, 9), bias = random_f32({10}, 10);
  auto x1 = random_f32({1, 96}, 11);
  auto ref1 = ref::linear(x1, w, &bias);
  std::vector<std::string> used;
  EXPECT_TRUE(Close(run_linear(x1, w, &bias, "", &used), ref1, 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemv_vec4"});
  for (auto [r, v] : {std::pair{"tiled", "gemm_tiled"}, std::pair{"vec4", "gemm_vec4"}, std::pair{"gemv", "gemv_vec4"}}) {
    EXPECT_TRUE(Close(run_linear(x1, w, &bias, r, &used), ref1, 1e-5, 1e-4)) << r;
    EXPECT_EQ(used, std::vector<std::string>{v}) << r;
  }
  // K % 4 != 0: scalar gemv and tiled.
  auto w2 = random_f32({21, 19}, 12), x2 = random_f32({1, 19}, 13);
  auto ref2 = ref::linear(x2, w2, nullptr);
  EXPECT_TRUE(Close(run_linear(x2, w2, nullptr, "gemv", &used), ref2, 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemv"});
  EXPECT_TRUE(Close(run_linear(x2, w2, nullptr, "tiled", &used), ref2, 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_tiled"});
}

TEST(OpMatmul, LinearFlattensBatchDimsAndAddsBias) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 5, 3, 19}, 14), w = random_f32({33, 19}, 15), bias = random_f32({33}, 16);
  EXPECT_TRUE(Close(run_linear(x, w, &bias), ref::linear(x, w, &bias), 1e-5, 1e-4));
  auto x4 = random_f32({3, 7, 64}, 17), w4 = random_f32({40, 64}, 18);
  EXPECT_TRUE(Close(run_linear(x4, w4, nullptr, "tiled"), ref::linear(x4, w4, nullptr), 1e-5, 1e-4));
  EXPECT_TRUE(Close(run_linear(x4, w4, nullptr, "vec4"), ref::linear(x4, w4, nullptr), 1e-5, 1e-4));
}

TEST(OpMatmul, LinearRank1InputGivesRank1Output) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({96}, 19), w = random_f32({10, 96}, 20);
  auto got = run_linear(x, w, nullptr);
  EXPECT_EQ(got.shape, (std::vector<int64_t>{10}));
  EXPECT_TRUE(Close(got, ref::linear(x, w, nullptr), 1e-5, 1e-4));
}

TEST(OpMatmul, BmmOddShapesPerBatch) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 17, 19}, 21), b = random_f32({3, 19, 33}, 22);
  auto ref = ref::matmul(a, b);
  EXPECT_TRUE(Close(run2("aten.bmm.default", a, b, {3, 17, 33}), ref, 1e-5, 1e-4));
  auto a2 = random_f32({2, 9, 20}, 23), b2 = random_f32({2, 20, 12}, 24);
  EXPECT_TRUE(Close(run2("aten.bmm.default", a2, b2, {2, 9, 12}, "vec4"), ref::matmul(a2, b2), 1e-5, 1e-4));
  auto a3 = random_f32({4, 1, 20}, 25), b3 = random_f32({4, 20, 12}, 26);  // batched GEMV
  EXPECT_TRUE(Close(run2("aten.bmm.default", a3, b3, {4, 1, 12}, "gemv"), ref::matmul(a3, b3), 1e-5, 1e-4));
}

TEST(OpMatmul, MatmulFollowsTorchRankRules) {
  ETW_REQUIRE_GPU();
  struct C { std::vector<int64_t> a, b; };
  std::vector<C> cases = {
      {{7}, {7}},                 // dot -> 0-dim
      {{7}, {7, 5}},              // vector @ matrix -> [5]
      {{6, 7}, {7}},              // matrix @ vector -> [6]
      {{6, 7}, {7, 5}},           // mm
      {{7}, {3, 7, 5}},           // 1-D first operand broadcast over batch -> [3, 5]
      {{3, 6, 7}, {7}},           // batched matrix @ vector -> [3, 6]
      {{2, 1, 5, 7}, {3, 7, 4}},  // broadcast batch dims -> [2, 3, 5, 4]
      {{5, 7}, {2, 3, 7, 4}},     // 2-D first operand broadcast over 2 batch dims
      {{2, 1, 3, 1, 5, 6}, {1, 4, 1, 2, 6, 3}},  // 4 batch dims with alternating broadcast
  };
  uint64_t seed = 30;
  for (auto& c : cases) {
    auto a = random_f32(c.a, seed++), b = random_f32(c.b, seed++);
    auto ref = ref::matmul(a, b);
    for (const char* r : {"", "tiled", "gemv"}) {
      auto got = run2("aten.matmul.default", a, b, ref.shape, r);
      EXPECT_EQ(got.shape, ref.shape) << shape_str(c.a) << " @ " << shape_str(c.b);
      EXPECT_TRUE(Close(got, ref, 1e-5, 1e-4)) << shape_str(c.a) << " @ " << shape_str(c.b) << " route " << r;
    }
  }
}

TEST(OpMatmul, AddmmScalesWithBetaAlphaIntOrDoubleAndBroadcastsBias) {
  ETW_REQUIRE_GPU();
  auto m1 = random_f32({9, 13}, 40), m2 = random_f32({13, 11}, 41);
  std::vector<std::vector<int64_t>> bias_shapes = {{11}, {9, 11}, {9, 1}, {1, 11}, {1}, {}};
  uint64_t seed = 42;
  for (auto& bs : bias_shapes) {
    auto bias = random_f32(bs, seed++);
    for (auto [beta, alpha] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}, std::pair{2.0, -3.0}}) {
      OpGraph g;
      Id bi = g.constant(bias);
      Id x = g.input(m1), y = g.input(m2);
      Id o = g.output(DType::Float32, {9, 11});
      // Integral scalars as Int, others as Double (both encodings occur in real exports).
      auto num = [&](double v) { return v == std::floor(v) ? g.gb.int_(static_cast<int64_t>(v)) : g.gb.dbl(v); };
      g.gb.op("aten.addmm.default", {bi, x, y, num(beta), num(alpha), o});
      EXPECT_TRUE(Close(g.run()[0], ref::addmm(bias, m1, m2, beta, alpha), 1e-5, 1e-4))
          << "bias " << shape_str(bs) << " beta " << beta << " alpha " << alpha;
    }
  }
}

TEST(OpMatmul, AddmmWithBetaZeroIgnoresNanBias) {
  ETW_REQUIRE_GPU();
  auto m1 = random_f32({4, 8}, 50), m2 = random_f32({8, 6}, 51);
  auto bias = random_f32({6}, 52);
  bias.as<float>()[2] = NAN;
  OpGraph g;
  Id bi = g.constant(bias);
  Id x = g.input(m1), y = g.input(m2);
  Id o = g.output(DType::Float32, {4, 6});
  g.gb.op("aten.addmm.default", {bi, x, y, g.gb.dbl(0.0), g.gb.dbl(1.5), o});
  auto got = g.run()[0];
  EXPECT_TRUE(Close(got, ref::addmm(bias, m1, m2, 0.0, 1.5), 1e-5, 1e-4));
}

TEST(OpMatmul, DynamicRowsSwitchBetweenTiledAndGemvOnRerun) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({24, 20}, 60), bias = random_f32({24}, 61);
  OpGraph g;
  auto x0 = random_f32({8, 20}, 62);
  Id xi = g.input(x0, {8, 20}, true);
  Id o = g.output(DType::Float32, {8, 24});
  g.gb.op("aten.linear.default", {xi, g.constant(w), g.constant(bias), o});
  EXPECT_TRUE(Close(g.run()[0], ref::linear(x0, w, &bias), 1e-5, 1e-4));
  for (int64_t rows : {3, 1, 5}) {
    auto x = random_f32({rows, 20}, 63 + rows);
    auto got = g.rerun({x})[0];
    EXPECT_EQ(got.shape, (std::vector<int64_t>{rows, 24}));
    EXPECT_TRUE(Close(got, ref::linear(x, w, &bias), 1e-5, 1e-4)) << rows;
    g.inputs = {x};
    EXPECT_EQ(g.variants(), std::vector<std::string>{rows == 1 ? "gemv_vec4" : "gemm_small16"}) << rows;
  }
}

TEST(OpMatmul, DynamicBatchedMatmulWithBroadcastOperand) {
  ETW_REQUIRE_GPU();
  auto b = random_f32({9, 5}, 70);
  OpGraph g;
  auto a0 = random_f32({4, 6, 9}, 71);
  Id ai = g.input(a0, {4, 6, 9}, true);
  Id bi = g.input(b);
  Id o = g.output(DType::Float32, {4, 6, 5});
  g.gb.op("aten.matmul.default", {ai, bi, o});
  EXPECT_TRUE(Close(g.run()[0], ref::matmul(a0, b), 1e-5, 1e-4));
  auto a1 = random_f32({2, 3, 9}, 72);
  auto got = g.rerun({a1, b})[0];
  EXPECT_EQ(got.shape, (std::vector<int64_t>{2, 3, 5}));
  EXPECT_TRUE(Close(got, ref::matmul(a1, b), 1e-5, 1e-4));
}

TEST(OpMatmul, KZeroGivesBiasOnly) {
  ETW_REQUIRE_GPU();
  auto m1 = HostTensor(DType::Float32, {3, 0}), m2 = HostTensor(DType::Float32, {0, 4});
  auto bias = random_f32({4}, 80);
  OpGraph g;
  Id bi = g.constant(bias);
  Id x = g.input(m1), y = g.input(m2);
  Id o = g.output(DType::Float32, {3, 4});
  g.gb.op("aten.addmm.default", {bi, x, y, g.gb.int_(1), g.gb.int_(1), o});
  EXPECT_TRUE(Close(g.run()[0], ref::addmm(bias, m1, m2, 1.0, 1.0)));
}

TEST(OpMatmul, GemvWithMoreThan65535ColumnBlocksFoldsItsGrid) {
  ETW_REQUIRE_GPU();
  // [N, K] weight: 4 outputs per workgroup, so N = 262147 needs 65537 workgroups.
  auto w = random_f32({262147, 4}, 83), x = random_f32({1, 4}, 84), bias = random_f32({262147}, 85);
  std::vector<std::string> used;
  EXPECT_TRUE(Close(run_linear(x, w, &bias, "", &used), ref::linear(x, w, &bias), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemv_vec4"});
}

TEST(OpMatmul, BatchPastMaxWorkgroupsPerDimensionIsALimitError) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({70000, 1, 1}, 81), b = random_f32({70000, 1, 1}, 82);
  OpGraph g;
  Id x = g.input(a), y = g.input(b);
  Id o = g.output(DType::Float32, {70000, 1, 1});
  g.gb.op("aten.bmm.default", {x, y, o});
  try {
    g.run();
    FAIL() << "expected a limit error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit) << e.what();
    EXPECT_NE(std::string(e.what()).find("maxComputeWorkgroupsPerDimension"), std::string::npos) << e.what();
  }
}

// Large-tile kernels (matmul_gemm_large.wgsl): 128x128 ("large") and 64x128 ("large_m64") tiles,
// with edge checks, or the ALIGNED variant when M, N, K are multiples of the tile.
TEST(OpMatmul, LargeTileRoutesMatchReferenceAndTiledOnOddEdges) {
  ETW_REQUIRE_GPU();
  // M 130 (two row tiles, 2 rows in the second), N 132 (4 columns past a tile), K 36 (K % 8 != 0).
  auto a = random_f32({130, 36}, 90), b = random_f32({36, 132}, 91);
  auto ref = ref::matmul(a, b);
  std::vector<std::string> used;
  auto tiled = run2("aten.mm.default", a, b, {130, 132}, "tiled", &used);
  EXPECT_TRUE(Close(tiled, ref, 1e-5, 1e-4));
  for (auto [r, v] : {std::pair{"large", "gemm_128x128"}, std::pair{"large_m64", "gemm_64x128"}}) {
    auto got = run2("aten.mm.default", a, b, {130, 132}, r, &used);
    EXPECT_TRUE(Close(got, ref, 1e-5, 1e-4)) << r;
    EXPECT_TRUE(Close(got, tiled, 1e-5, 1e-4)) << r;
    EXPECT_EQ(used, std::vector<std::string>{v}) << r;
  }
  // Fewer rows and columns than one tile, K below one K step.
  auto a2 = random_f32({5, 4}, 92), b2 = random_f32({4, 12}, 93);
  for (const char* r : {"large", "large_m64"}) {
    EXPECT_TRUE(Close(run2("aten.mm.default", a2, b2, {5, 12}, r, &used), ref::matmul(a2, b2), 1e-5, 1e-4)) << r;
    EXPECT_EQ(used, std::vector<std::string>{std::string(r) == "large" ? "gemm_128x128" : "gemm_64x128"});
  }
  // K % 4 != 0 cannot take vec4 loads: the forced large route falls back to the tiled kernel.
  auto a3 = random_f32({20, 19}, 94), b3 = random_f32({19, 24}, 95);
  EXPECT_TRUE(Close(run2("aten.mm.default", a3, b3, {20, 24}, "large", &used), ref::matmul(a3, b3), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_tiled"});
}

TEST(OpMatmul, LargeTileAlignedVariantsWhenShapesAreTileMultiples) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({128, 48}, 96), b = random_f32({48, 256}, 97);
  auto ref = ref::matmul(a, b);
  std::vector<std::string> used;
  for (auto [r, v] : {std::pair{"large", "gemm_128x128_aligned"}, std::pair{"large_m64", "gemm_64x128_aligned"},
                      std::pair{"vec4", "gemm_vec4"}}) {
    EXPECT_TRUE(Close(run2("aten.mm.default", a, b, {128, 256}, r, &used), ref, 1e-5, 1e-4)) << r;
    EXPECT_EQ(used, std::vector<std::string>{v}) << r;
  }
  // M 64: aligned for 64x128 only.
  auto a2 = random_f32({64, 16}, 98), b2 = random_f32({16, 128}, 99);
  EXPECT_TRUE(Close(run2("aten.mm.default", a2, b2, {64, 128}, "large", &used), ref::matmul(a2, b2), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_128x128"});
  EXPECT_TRUE(Close(run2("aten.mm.default", a2, b2, {64, 128}, "large_m64", &used), ref::matmul(a2, b2), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_64x128_aligned"});
}

TEST(OpMatmul, LargeTileLinearReadsTransposedWeightAndAddsBias) {
  ETW_REQUIRE_GPU();
  // [N, K] weight with N 131 (tail) and batch dims flattened into M = 2 * 67.
  auto x = random_f32({2, 67, 40}, 100), w = random_f32({131, 40}, 101), bias = random_f32({131}, 102);
  auto ref = ref::linear(x, w, &bias);
  std::vector<std::string> used;
  auto tiled = run_linear(x, w, &bias, "tiled", &used);
  EXPECT_TRUE(Close(tiled, ref, 1e-5, 1e-4));
  for (auto [r, v] : {std::pair{"large", "gemm_128x128"}, std::pair{"large_m64", "gemm_64x128"}}) {
    auto got = run_linear(x, w, &bias, r, &used);
    EXPECT_TRUE(Close(got, ref, 1e-5, 1e-4)) << r;
    EXPECT_TRUE(Close(got, tiled, 1e-5, 1e-4)) << r;
    EXPECT_EQ(used, std::vector<std::string>{v}) << r;
  }
  // Aligned transposed weight: M 128, N 128, K 32.
  auto x2 = random_f32({128, 32}, 103), w2 = random_f32({128, 32}, 104);
  EXPECT_TRUE(Close(run_linear(x2, w2, nullptr, "large", &used),
                    ref::linear(x2, w2, nullptr), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_128x128_aligned"});
}

TEST(OpMatmul, LargeTileBatchedBroadcastAndAddmmScaling) {
  ETW_REQUIRE_GPU();
  // Broadcast batch: [2, 1, 70, 36] @ [3, 36, 132] -> [2, 3, 70, 132] (batch stride 0 on both sides).
  auto a = random_f32({2, 1, 70, 36}, 105), b = random_f32({3, 36, 132}, 106);
  auto ref = ref::matmul(a, b);
  for (const char* r : {"large", "large_m64"})
    EXPECT_TRUE(Close(run2("aten.matmul.default", a, b, ref.shape, r), ref, 1e-5, 1e-4)) << r;
  auto m1 = random_f32({65, 24}, 107), m2 = random_f32({24, 130}, 108), bias = random_f32({65, 1}, 109);
  for (const char* r : {"large", "large_m64"}) {
    OpGraph g;
    Id bi = g.constant(bias);
    Id x = g.input(m1), y = g.input(m2);
    Id o = g.output(DType::Float32, {65, 130});
    g.gb.op("aten.addmm.default", {bi, x, y, g.gb.dbl(0.5), g.gb.dbl(-2.0), o});
    EXPECT_TRUE(Close(g.run(route(r))[0], ref::addmm(bias, m1, m2, 0.5, -2.0), 1e-5, 1e-4)) << r;
  }
}

TEST(OpMatmul, DefaultRouteTakesLargeTilesOnlyWhenTheyFillTheGpuOverALongK) {
  ETW_REQUIRE_GPU();
  std::vector<std::string> used;
  // 128 batches of 128x128 tiles over K = 512: 128 workgroups of 128x128 -> the large kernel, aligned.
  auto a = random_f32({128, 128, 512}, 110), b = random_f32({128, 512, 128}, 111);
  EXPECT_TRUE(Close(run2("aten.bmm.default", a, b, {128, 128, 128}, "", &used), ref::matmul(a, b), 1e-4, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_128x128_aligned"});
  // 64 batches: 64 tiles of 128x128 but 128 of 64x128.
  auto a2 = random_f32({64, 128, 512}, 112), b2 = random_f32({64, 512, 128}, 113);
  EXPECT_TRUE(Close(run2("aten.bmm.default", a2, b2, {64, 128, 128}, "", &used), ref::matmul(a2, b2), 1e-4, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_64x128_aligned"});
  // Small problems take the 64x64 kernels (split over K: 16 tiles), and so do short ones (K = 32)
  // however many tiles.
  auto a3 = random_f32({4, 128, 1024}, 114), b3 = random_f32({4, 1024, 128}, 115);
  EXPECT_TRUE(Close(run2("aten.bmm.default", a3, b3, {4, 128, 128}, "", &used), ref::matmul(a3, b3), 1e-4, 1e-4));
  EXPECT_EQ(used, (std::vector<std::string>{"gemm_vec4_splitk", "gemm_splitk_reduce"}));
  auto a4 = random_f32({128, 128, 32}, 116), b4 = random_f32({128, 32, 128}, 117);
  EXPECT_TRUE(Close(run2("aten.bmm.default", a4, b4, {128, 128, 128}, "", &used), ref::matmul(a4, b4), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemm_vec4"});
}

const std::vector<std::string> kSplitVariants{"gemm_vec4_splitk", "gemm_splitk_reduce"};

// Split-K sums K in ranges by several workgroups per tile and adds the ranges in a second kernel
// that applies alpha, the bias and the epilogue: every op, with a K that is no multiple of the
// range, batches, a broadcast bias and a fused add.
TEST(OpMatmul, SplitKRouteMatchesReferenceOnEveryOp) {
  ETW_REQUIRE_GPU();
  std::vector<std::string> used;
  auto x = random_f32({2, 37, 212}, 130), w = random_f32({44, 212}, 131), bias = random_f32({44}, 132);
  EXPECT_TRUE(Close(run_linear(x, w, &bias, "splitk", &used), ref::linear(x, w, &bias), 1e-5, 1e-4));
  EXPECT_EQ(used, kSplitVariants);
  auto a = random_f32({3, 21, 100}, 133), b = random_f32({3, 100, 28}, 134);
  for (const char* op : {"aten.bmm.default", "aten.matmul.default"}) {
    EXPECT_TRUE(Close(run2(op, a, b, {3, 21, 28}, "splitk", &used), ref::matmul(a, b), 1e-5, 1e-4)) << op;
    EXPECT_EQ(used, kSplitVariants) << op;
  }
  auto m1 = random_f32({19, 64}, 135), m2 = random_f32({64, 12}, 136), mb = random_f32({19, 1}, 137);
  EXPECT_TRUE(Close(run2("aten.mm.default", m1, m2, {19, 12}, "splitk", &used), ref::matmul(m1, m2), 1e-5, 1e-4));
  EXPECT_EQ(used, kSplitVariants);
  expect_addmm(mb, m1, m2, "splitk", &used);
  EXPECT_EQ(used, kSplitVariants);
  // A residual add fused into the linear's store runs in the reduce kernel.
  expect_linear_residual(x, w, bias, random_f32({2, 37, 44}, 138), "splitk", &used);
  EXPECT_EQ(used, kSplitVariants);
}

// By default few 64x64 tiles over a K up to 3,072 take the 16x16 small-tile kernel (197 rows of
// 192 over K = 1,024: a ViT's MLP down-projection; 42 tiles of 32x32 over K = 768), and 32x32
// small tiles where those are 160 or more (197 x 1,536); a longer K, or a [K, N] second operand
// over a K of 1,024 or more, splits across workgroups; a Whisper-size up-projection (576 tiles)
// takes the 64x64 kernel.
TEST(OpMatmul, DefaultRouteSplitsKOnlyForFewTilesOverALongK) {
  ETW_REQUIRE_GPU();
  std::vector<std::string> used;
  const std::vector<std::string> small16{"gemm_small16"}, small{"gemm_small"}, vec4{"gemm_vec4"};
  auto x = random_f32({197, 1024}, 140), w = random_f32({192, 1024}, 141);
  EXPECT_TRUE(Close(run_linear(x, w, nullptr, "", &used), ref::linear(x, w, nullptr), 1e-4, 1e-4));
  EXPECT_EQ(used, small16);
  auto xl = random_f32({20, 4096}, 148), wl = random_f32({24, 4096}, 149);
  EXPECT_TRUE(Close(run_linear(xl, wl, nullptr, "", &used), ref::linear(xl, wl, nullptr), 1e-4, 1e-4));
  EXPECT_EQ(used, kSplitVariants);
  auto a = random_f32({20, 1024}, 150), b = random_f32({1024, 24}, 151);
  EXPECT_TRUE(Close(run2("aten.mm.default", a, b, {20, 24}, "", &used), ref::matmul(a, b), 1e-4, 1e-4));
  EXPECT_EQ(used, kSplitVariants);
  auto x1 = random_f32({197, 768}, 152), w1 = random_f32({192, 768}, 153);
  EXPECT_TRUE(Close(run_linear(x1, w1, nullptr, "", &used), ref::linear(x1, w1, nullptr), 1e-4, 1e-4));
  EXPECT_EQ(used, small16);
  auto x5 = random_f32({197, 64}, 154), w5 = random_f32({1536, 64}, 155);
  EXPECT_TRUE(Close(run_linear(x5, w5, nullptr, "", &used), ref::linear(x5, w5, nullptr), 1e-5, 1e-4));
  EXPECT_EQ(used, small);
  auto x2 = random_f32({1500, 384}, 142), w2 = random_f32({1536, 384}, 143);
  EXPECT_TRUE(Close(run_linear(x2, w2, nullptr, "", &used), ref::linear(x2, w2, nullptr), 1e-4, 1e-4));
  EXPECT_EQ(used, vec4);
  auto x3 = random_f32({197, 64}, 144), w3 = random_f32({192, 64}, 145);
  EXPECT_TRUE(Close(run_linear(x3, w3, nullptr, "", &used), ref::linear(x3, w3, nullptr), 1e-5, 1e-4));
  EXPECT_EQ(used, small16);
  auto x4 = random_f32({1500, 64}, 146), w4 = random_f32({576, 64}, 147);  // 216 tiles
  EXPECT_TRUE(Close(run_linear(x4, w4, nullptr, "", &used), ref::linear(x4, w4, nullptr), 1e-5, 1e-4));
  EXPECT_EQ(used, vec4);
}

// With a dynamic row count the scratch is sized for any live shape: fewer rows split into more
// ranges and still match.
TEST(OpMatmul, DynamicRowsSplitKWithinTheScratchOnRerun) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({64, 4096}, 150);
  OpGraph g;
  auto x0 = random_f32({200, 4096}, 151);
  Id xi = g.input(x0, {200, 4096}, true);
  Id o = g.output(DType::Float32, {200, 64});
  g.gb.op("aten.linear.default", {xi, g.constant(w), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run()[0], ref::linear(x0, w, nullptr), 1e-4, 1e-4));
  for (int64_t rows : {3, 77, 200}) {
    auto x = random_f32({rows, 4096}, 152 + rows);
    auto got = g.rerun({x})[0];
    EXPECT_TRUE(Close(got, ref::linear(x, w, nullptr), 1e-4, 1e-4)) << rows;
    g.inputs = {x};
    EXPECT_EQ(g.variants(), kSplitVariants) << rows;
  }
}

TEST(OpMatmul, DynamicRowsSwitchBetweenLargeAndSmallTilesOnRerun) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({136, 32}, 120);
  OpGraph g;
  auto x0 = random_f32({128, 32}, 121);
  Id xi = g.input(x0, {128, 32}, true);
  Id o = g.output(DType::Float32, {128, 136});
  g.gb.op("aten.linear.default", {xi, g.constant(w), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run(route("large"))[0], ref::linear(x0, w, nullptr), 1e-5, 1e-4));
  for (int64_t rows : {77, 1, 128}) {
    auto x = random_f32({rows, 32}, 122 + rows);
    auto got = g.rerun({x})[0];
    EXPECT_EQ(got.shape, (std::vector<int64_t>{rows, 136}));
    EXPECT_TRUE(Close(got, ref::linear(x, w, nullptr), 1e-5, 1e-4)) << rows;
    g.inputs = {x};
    EXPECT_EQ(g.variants(), std::vector<std::string>{"gemm_128x128"}) << rows;
  }
}

TEST(OpMatmul, InvalidArgumentsFailAtLoadNamingTheProblem) {
  ETW_REQUIRE_GPU();
  {  // inner dims differ
    OpGraph g;
    Id x = g.input(random_f32({3, 4}, 1)), y = g.input(random_f32({5, 6}, 2));
    g.gb.op("aten.mm.default", {x, y, g.output(DType::Float32, {3, 6})});
    EXPECT_NE(load_error(g).find("cannot be multiplied"), std::string::npos) << load_error(g);
  }
  {  // integer operands
    OpGraph g;
    Id x = g.input(random_i32({3, 4}, 1, 0, 5)), y = g.input(random_i32({4, 2}, 2, 0, 5));
    g.gb.op("aten.mm.default", {x, y, g.output(DType::Int32, {3, 2})});
    EXPECT_NE(load_error(g).find("dtype"), std::string::npos) << load_error(g);
  }
  {  // bmm with 2-D operands
    OpGraph g;
    Id x = g.input(random_f32({3, 4}, 1)), y = g.input(random_f32({4, 2}, 2));
    g.gb.op("aten.bmm.default", {x, y, g.output(DType::Float32, {3, 2})});
    EXPECT_NE(load_error(g).find("3-D"), std::string::npos) << load_error(g);
  }
  {  // bmm batch mismatch
    OpGraph g;
    Id x = g.input(random_f32({2, 3, 4}, 1)), y = g.input(random_f32({3, 4, 2}, 2));
    g.gb.op("aten.bmm.default", {x, y, g.output(DType::Float32, {2, 3, 2})});
    EXPECT_NE(load_error(g).find("cannot be batch-multiplied"), std::string::npos) << load_error(g);
  }
  {  // matmul batch dims that do not broadcast
    OpGraph g;
    Id x = g.input(random_f32({2, 3, 4}, 1)), y = g.input(random_f32({3, 4, 2}, 2));
    g.gb.op("aten.matmul.default", {x, y, g.output(DType::Float32, {3, 3, 2})});
    EXPECT_NE(load_error(g).find("broadcast"), std::string::npos) << load_error(g);
  }
  {  // linear weight of the wrong rank, and wrong in_features
    OpGraph g;
    Id x = g.input(random_f32({3, 4}, 1));
    g.gb.op("aten.linear.default", {x, g.constant(random_f32({2, 4, 1}, 2)), g.gb.null(), g.output(DType::Float32, {3, 2})});
    EXPECT_NE(load_error(g).find("weight must be 2-D"), std::string::npos) << load_error(g);
    OpGraph g2;
    Id x2 = g2.input(random_f32({3, 5}, 1));
    g2.gb.op("aten.linear.default", {x2, g2.constant(random_f32({2, 4}, 2)), g2.gb.null(), g2.output(DType::Float32, {3, 2})});
    EXPECT_NE(load_error(g2).find("in_features"), std::string::npos) << load_error(g2);
  }
  {  // linear bias of the wrong size; addmm bias that does not broadcast
    OpGraph g;
    Id x = g.input(random_f32({3, 4}, 1));
    g.gb.op("aten.linear.default", {x, g.constant(random_f32({2, 4}, 2)), g.constant(random_f32({3}, 3)),
                                    g.output(DType::Float32, {3, 2})});
    EXPECT_NE(load_error(g).find("bias"), std::string::npos) << load_error(g);
    OpGraph g2;
    Id x2 = g2.input(random_f32({3, 4}, 1)), y2 = g2.input(random_f32({4, 2}, 1));
    g2.gb.op("aten.addmm.default", {g2.constant(random_f32({3, 3}, 3)), x2, y2, g2.gb.int_(1), g2.gb.int_(1),
                                    g2.output(DType::Float32, {3, 2})});
    EXPECT_NE(load_error(g2).find("does not broadcast"), std::string::npos) << load_error(g2);
  }
  {  // unknown forced route
    OpGraph g;
    Id x = g.input(random_f32({3, 4}, 1)), y = g.input(random_f32({4, 2}, 2));
    g.gb.op("aten.mm.default", {x, y, g.output(DType::Float32, {3, 2})});
    EXPECT_NE(load_error(g, route("fast")).find("force_route"), std::string::npos);
  }
  {  // output tensor too small for the product
    OpGraph g;
    Id x = g.input(random_f32({3, 4}, 1)), y = g.input(random_f32({4, 2}, 2));
    g.gb.op("aten.mm.default", {x, y, g.output(DType::Float32, {2, 2})});
    EXPECT_NE(load_error(g).find("exceeds its bound"), std::string::npos) << load_error(g);
  }
}

}  // namespace

namespace {

// The small-tile kernel (matmul_gemm_small.wgsl) in both forms: 32x32 tiles over four K slices
// and 16x16 tiles over sixteen, the slices added as a tree. Every op and operand layout, tiles cut
// by M and N, K of one quad (all slices but one idle), an odd count of quads (the last pass of one
// quad), batches, a broadcast bias, alpha and beta, and a fused residual add in its store.
TEST(OpMatmul, SmallTileRoutesMatchReferenceOnEveryOpAndLayout) {
  ETW_REQUIRE_GPU();
  for (std::string route : {"small", "small16"}) {
    SCOPED_TRACE(route);
    const std::vector<std::string> small{"gemm_" + route};
    std::vector<std::string> used;
    for (auto [m, n, k] : {std::array<int64_t, 3>{37, 44, 212}, {70, 68, 4}, {1 + 32 * 2, 33, 36}, {5, 4, 100}}) {
      auto x = random_f32({2, m, k}, 140 + m), w = random_f32({n, k}, 141 + n), bias = random_f32({n}, 142);
      EXPECT_TRUE(Close(run_linear(x, w, &bias, route, &used), ref::linear(x, w, &bias), 1e-5, 1e-4)) << m << " " << n << " " << k;
      EXPECT_EQ(used, small);
    }
    auto a = random_f32({3, 21, 100}, 143), b = random_f32({3, 100, 28}, 144);
    for (const char* op : {"aten.bmm.default", "aten.matmul.default"}) {
      EXPECT_TRUE(Close(run2(op, a, b, {3, 21, 28}, route, &used), ref::matmul(a, b), 1e-5, 1e-4)) << op;
      EXPECT_EQ(used, small) << op;
    }
    auto m1 = random_f32({35, 64}, 145), m2 = random_f32({64, 36}, 146), mb = random_f32({35, 1}, 147);
    expect_addmm(mb, m1, m2, route, &used);
    EXPECT_EQ(used, small);
    auto x = random_f32({2, 37, 212}, 148), w = random_f32({44, 212}, 149), bias = random_f32({44}, 150);
    expect_linear_residual(x, w, bias, random_f32({2, 37, 44}, 151), route, &used);
    EXPECT_EQ(used, small);
  }
  auto a = random_f32({3, 21, 100}, 143), b = random_f32({3, 100, 28}, 144);
  std::vector<std::string> used;
  for (const char* op : {"aten.bmm.default", "aten.matmul.default"}) {
    EXPECT_TRUE(Close(run2(op, a, b, {3, 21, 28}, "vec4", &used), ref::matmul(a, b), 1e-5, 1e-4)) << op;
    EXPECT_EQ(used, std::vector<std::string>{"gemm_vec4"}) << op;
  }
}

}  // namespace
