// GEMM routes at the edges that random finite data does not reach: the automatic GEMV threshold
// (one row only), the transposed-weight GEMV's 64-lane reduction (K past 32 lanes on the scalar
// kernel), and an infinity in one row of A that must not leak into the row above through a K
// bound read one element too far (the tiled kernels multiply that element by zero: inf * 0 = NaN).
#include <limits>

#include "reference/matmul/matmul_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor run_op(const char* op, const HostTensor& a, const HostTensor& b, std::vector<int64_t> od, const char* route,
                  std::vector<std::string>* variants, bool b_constant = false) {
  OpGraph g;
  Id x = g.input(a);
  Id y = b_constant ? g.constant(b) : g.input(b);
  Id o = g.output(DType::Float32, od);
  if (std::string(op) == "aten.linear.default") g.gb.op(op, {x, y, g.gb.null(), o});
  else g.gb.op(op, {x, y, o});
  LoadOptions opts;
  if (*route) opts.force_route["matmul"] = route;
  auto out = g.run(opts)[0];
  *variants = g.variants();
  return out;
}

TEST(OpMatmulRouteEdges, AutomaticRouteTakesGemvForOneRowOnlyAndBothSidesMatchReference) {
  ETW_REQUIRE_GPU();
  std::vector<std::string> used;
  for (int64_t M : {1, 2, 3}) {
    for (int64_t K : {36, 37}) {  // vec4 and scalar kernels
      auto a = random_f32({M, K}, 600 + M * 100 + K), b = random_f32({K, 44}, 700 + K);
      EXPECT_TRUE(Close(run_op("aten.mm.default", a, b, {M, 44}, "", &used), ref::matmul(a, b), 1e-5, 1e-4))
          << "M=" << M << " K=" << K;
      std::string want = M == 1 ? (K % 4 == 0 ? "gemv_vec4" : "gemv") : (K % 4 == 0 ? "gemm_small16" : "gemm_tiled");
      EXPECT_EQ(used, std::vector<std::string>{want}) << "M=" << M << " K=" << K;
    }
  }
}

TEST(OpMatmulRouteEdges, TransposedWeightGemvReducesAllSixtyFourLanes) {
  ETW_REQUIRE_GPU();
  // K 67 (not a multiple of 4: the scalar kernel) spans all 64 lanes of each column's reduction.
  auto x = random_f32({1, 67}, 610), w = random_f32({9, 67}, 611);
  std::vector<std::string> used;
  EXPECT_TRUE(Close(run_op("aten.linear.default", x, w, {1, 9}, "gemv", &used, true), ref::linear(x, w, nullptr), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"gemv"});
}

TEST(OpMatmulRouteEdges, InfinityInOneRowStaysInThatRowOnEveryRoute) {
  ETW_REQUIRE_GPU();
  // K 19: the last K tile is partial, so the element after a row's end (the next row's first) is
  // inside a loaded tile.
  auto a = random_f32({3, 19}, 620), b = random_f32({19, 8}, 621, 0.5f, 1.f);
  a.as<float>()[19] = std::numeric_limits<float>::infinity();  // row 1, column 0
  auto ref = ref::matmul(a, b);
  std::vector<std::string> used;
  for (const char* r : {"tiled", "large"}) {
    EXPECT_TRUE(Close(run_op("aten.mm.default", a, b, {3, 8}, r, &used), ref, 1e-5, 1e-4)) << r;
  }
  auto a4 = random_f32({3, 20}, 622), b4 = random_f32({20, 8}, 623, 0.5f, 1.f);
  a4.as<float>()[20] = -std::numeric_limits<float>::infinity();
  auto ref4 = ref::matmul(a4, b4);
  for (const char* r : {"vec4", "large", "large_m64"})
    EXPECT_TRUE(Close(run_op("aten.mm.default", a4, b4, {3, 8}, r, &used), ref4, 1e-5, 1e-4)) << r;
}

}  // namespace
