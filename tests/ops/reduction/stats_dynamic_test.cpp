// Dynamic shapes for the reductions, topk, batch-stats norm, glu and distances added with the
// portable-library ops: the same loaded model reruns on a smaller input and every output follows
// the live shape (and, for var and max.dim, switches between the workgroup and thread routes).
#include "reference/distance/distance_ref.h"
#include "reference/elementwise/math_ref.h"
#include "reference/norm/batch_stats_ref.h"
#include "reference/reduction/reduction_ref.h"
#include "reference/reduction/stats_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
using ref::Reduce;

namespace {

TEST(OpStatsDynamic, VarMeanAndMaxDimFollowTheLiveShapeAcrossRoutes) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({4, 300}, 1100, -3, 3), small = random_f32({3, 9}, 1101, -3, 3);
  OpGraph g;
  Id in = g.input(big, {4, 300}, true);
  Id v = g.output(DType::Float32, {4}), m = g.output(DType::Float32, {4});
  Id mx = g.output(DType::Float32, {4}), mi = g.output(DType::Int64, {4});
  g.gb.op("aten.var_mean.correction", {in, g.gb.int_list({-1}), g.gb.null(), g.gb.boolean(false), g.gb.value_list({v, m})});
  g.gb.op("aten.max.dim", {in, g.gb.int_(-1), g.gb.boolean(false), g.gb.value_list({mx, mi})});
  for (const auto& x : {big, small}) {
    auto out = x.shape == big.shape ? g.run() : g.rerun({x});
    EXPECT_TRUE(Close(out[0], ref::var(x, {-1}, 1.0, false), 1e-5, 1e-4)) << shape_str(x.shape);
    EXPECT_TRUE(Close(out[1], ref::reduce(Reduce::Mean, x, {-1}, false), 1e-6, 1e-5)) << shape_str(x.shape);
    EXPECT_TRUE(Close(out[2], ref::reduce(Reduce::Amax, x, {-1}, false), 0, 0)) << shape_str(x.shape);
    EXPECT_TRUE(Close(out[3], ref::reduce(Reduce::Argmax, x, {-1}, false), 0, 0)) << shape_str(x.shape);
  }
}

TEST(OpStatsDynamic, TopkGluAndCdistFollowTheLiveShape) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({3, 20}, 1110, -3, 3), small = random_f32({2, 6}, 1111, -3, 3);
  auto other = random_f32({5, 20}, 1112, -3, 3), other_small = random_f32({5, 6}, 1113, -3, 3);
  OpGraph g;
  Id in = g.input(big, {3, 20}, true);
  Id x2 = g.input(other, {5, 20}, true);
  Id tv = g.output(DType::Float32, {3, 4}), ti = g.output(DType::Int64, {3, 4});
  Id gl = g.output(DType::Float32, {3, 10}), cd = g.output(DType::Float32, {3, 5});
  g.gb.op("aten.topk.default", {in, g.gb.int_(4), g.gb.int_(-1), g.gb.boolean(false), g.gb.boolean(true), g.gb.value_list({tv, ti})});
  g.gb.op("aten.glu.default", {in, g.gb.int_(1), gl});
  g.gb.op("aten._cdist_forward.default", {in, x2, g.gb.dbl(2.0), g.gb.null(), cd});
  for (int pass = 0; pass < 2; ++pass) {
    const auto& a = pass == 0 ? big : small;
    const auto& b = pass == 0 ? other : other_small;
    auto out = pass == 0 ? g.run() : g.rerun({a, b});
    auto [v, i] = ref::topk(a, 4, -1, false);
    EXPECT_TRUE(Close(out[0], v, 0, 0)) << pass;
    EXPECT_TRUE(Close(out[1], i, 0, 0)) << pass;
    EXPECT_TRUE(Close(out[2], ref::glu(a, 1), 1e-6, 1e-5)) << pass;
    EXPECT_TRUE(Close(out[3], ref::cdist(a, b, 2.0), 1e-5, 1e-4)) << pass;
  }
}

TEST(OpStatsDynamic, BatchStatisticsFollowALiveBatchSize) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({6, 3, 40}, 1120, -2, 4), small = random_f32({2, 3, 7}, 1121, -2, 4);
  OpGraph g;
  Id in = g.input(big, {6, 3, 40}, true);
  Id o = g.output(DType::Float32, {6, 3, 40}), sm = g.output(DType::Float32, {3}), si = g.output(DType::Float32, {3});
  g.gb.op("aten._native_batch_norm_legit.no_stats",
          {in, g.gb.null(), g.gb.null(), g.gb.boolean(true), g.gb.dbl(0.1), g.gb.dbl(1e-5), g.gb.value_list({o, sm, si})});
  for (const auto& x : {big, small}) {
    auto out = x.shape == big.shape ? g.run() : g.rerun({x});
    auto want = ref::batch_norm_train(x, {}, {}, {}, {}, 0.1, 1e-5);
    EXPECT_TRUE(Close(out[0], want.out, 2e-5, 1e-4)) << shape_str(x.shape);
    EXPECT_TRUE(Close(out[2], want.save_invstd, 1e-5, 1e-4)) << shape_str(x.shape);
  }
}

}  // namespace
