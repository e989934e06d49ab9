// Normalizations and softmax against fp64 references (tests/reference/norm).
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/norm/norm_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {


HostTensor run_softmax(const char* op, const HostTensor& x, int64_t dim, const char* route = "") {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, x.shape);
  g.gb.op(op, {in, g.gb.int_(dim), g.gb.boolean(false), o});
  LoadOptions opts;
  if (*route) opts.force_route["softmax"] = route;
  return g.run(opts)[0];
}

TEST(OpSoftmax, LastDimOddSizesMatchReference) {
  ETW_REQUIRE_GPU();
  for (auto shape : std::vector<std::vector<int64_t>>{{3, 7, 50}, {5, 33}, {1}, {2, 257}}) {
    auto x = random_f32(shape, 1, -4, 4);
    EXPECT_TRUE(Close(run_softmax("aten._softmax.default", x, -1), ref::softmax(x, -1, false), 1e-6, 1e-4))
        << shape_str(shape);
  }
}

TEST(OpSoftmax, RowsOf4096UseTheWholeWorkgroup) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4096}, 2, -8, 8);
  EXPECT_TRUE(Close(run_softmax("aten._softmax.default", x, 1), ref::softmax(x, 1, false), 1e-7, 1e-4));
}

TEST(OpSoftmax, Vec4AndGeneralRoutesAgreeWithReferenceOnLongAndShortRows) {
  ETW_REQUIRE_GPU();
  // Row lengths divisible by 4 take the vec4 kernel: shorter than, equal to and longer than
  // 4 * 256, plus a single vec4.
  for (auto shape : std::vector<std::vector<int64_t>>{{5, 4}, {3, 1024}, {2, 4100}, {7, 36}}) {
    auto x = random_f32(shape, 9, -8, 8);
    for (const char* op : {"aten._softmax.default", "aten._log_softmax.default"}) {
      bool log = op[6] == 'l';
      auto ref = ref::softmax(x, -1, log);
      auto fast = run_softmax(op, x, -1, "vec4"), slow = run_softmax(op, x, -1, "general");
      EXPECT_TRUE(Close(fast, ref, 1e-6, 1e-4)) << op << shape_str(shape);
      EXPECT_TRUE(Close(fast, slow, 1e-6, 1e-5)) << op << shape_str(shape);
    }
  }
}

TEST(OpSoftmax, Vec4RouteHandlesMinusInfinityLikePyTorch) {
  ETW_REQUIRE_GPU();
  // Row 0: leading -inf entries (the online max starts at -inf); row 1: all -inf (NaN in PyTorch).
  auto x = random_f32({2, 8}, 10, -2, 2);
  float ninf = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < 5; ++i) x.as<float>()[i] = ninf;
  for (int i = 8; i < 16; ++i) x.as<float>()[i] = ninf;
  auto fast = run_softmax("aten._softmax.default", x, -1, "vec4");
  auto ref = ref::softmax(x, -1, false);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(fast.as<float>()[i], ref.as<double>()[i], 1e-6) << i;
  for (int i = 8; i < 16; ++i) EXPECT_TRUE(std::isnan(fast.as<float>()[i])) << i;
}

// Short rows that vec4 does not take (Swin's windows of 49, ViT's 197 tokens) run norm_row_lanes
// by default: eight rows a workgroup, row counts that leave the last one part-empty; forced
// "lanes" on a length vec4 would take; both softmax and log_softmax against the reference and the
// general route; a NaN in a row makes it NaN and a row of -inf NaN, as PyTorch (and norm_row).
TEST(OpSoftmax, ShortRowsTakeTheLanesRouteAndMatchTheGeneralOne) {
  ETW_REQUIRE_GPU();
  struct Case { std::vector<int64_t> shape; const char* route; };
  for (const Case& c : {Case{{3, 49}, ""}, Case{{9, 197}, ""}, Case{{13, 1}, ""}, Case{{2, 1023}, ""}, Case{{5, 64}, "lanes"}}) {
    auto x = random_f32(c.shape, 11, -8, 8);
    for (const char* op : {"aten._softmax.default", "aten._log_softmax.default"}) {
      const bool log = op[6] == 'l';
      OpGraph g;
      Id in = g.input(x);
      g.gb.op(op, {in, g.gb.int_(-1), g.gb.boolean(false), g.output(DType::Float32, x.shape)});
      LoadOptions opts;
      if (*c.route) opts.force_route["softmax"] = c.route;
      auto got = g.run(opts)[0];
      auto v = g.variants();
      const std::string at = std::string(op) + shape_str(c.shape);
      EXPECT_EQ(std::count(v.begin(), v.end(), "row_lanes"), 1) << at;
      EXPECT_TRUE(Close(got, ref::softmax(x, -1, log), log ? 1e-5 : 1e-6, 1e-4)) << at;
      EXPECT_TRUE(Close(got, run_softmax(op, x, -1, "general"), 1e-6, 1e-5)) << at;
    }
  }
  auto x = random_f32({3, 49}, 12, -2, 2);
  const float ninf = -std::numeric_limits<float>::infinity();
  x.as<float>()[10] = std::numeric_limits<float>::quiet_NaN();  // row 0
  for (int i = 49; i < 98; ++i) x.as<float>()[i] = ninf;          // row 1
  for (int i = 98; i < 100; ++i) x.as<float>()[i] = ninf;         // row 2: two leading -inf
  auto got = run_softmax("aten._softmax.default", x, -1);
  auto ref = ref::softmax(x, -1, false);
  for (int i = 0; i < 98; ++i) EXPECT_TRUE(std::isnan(got.as<float>()[i])) << i;
  for (int i = 98; i < 147; ++i) EXPECT_NEAR(got.as<float>()[i], ref.as<double>()[i], 1e-6) << i;
}

TEST(OpSoftmax, NonLastAndNegativeDimsMatchReference) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 5, 6}, 3, -3, 3);
  for (int64_t d : {0, 1, -2, -3}) EXPECT_TRUE(Close(run_softmax("aten._softmax.default", x, d), ref::softmax(x, d, false))) << d;
}

TEST(OpSoftmax, LargeLogitsStayFiniteBecauseTheMaxIsSubtracted) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 19}, 4, 80, 120);  // exp(100) overflows f32 without the max shift
  auto got = run_softmax("aten._softmax.default", x, -1);
  EXPECT_TRUE(Close(got, ref::softmax(x, -1, false)));
}

TEST(OpLogSoftmax, MatchesReferenceOnLastAndFirstDim) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({6, 41}, 5, -60, 60);
  EXPECT_TRUE(Close(run_softmax("aten._log_softmax.default", x, -1), ref::softmax(x, -1, true), 1e-4, 1e-5));
  EXPECT_TRUE(Close(run_softmax("aten._log_softmax.default", x, 0), ref::softmax(x, 0, true), 1e-4, 1e-5));
}

TEST(OpSoftmax, DynamicShapeRerunsWithFewerRows) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({6, 37}, 6), small = random_f32({2, 37}, 7);
  OpGraph g;
  Id in = g.input(big, {6, 37}, true);
  Id o = g.output(DType::Float32, {6, 37});
  g.gb.op("aten._softmax.default", {in, g.gb.int_(-1), g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref::softmax(big, -1, false)));
  auto got = g.rerun({small})[0];
  EXPECT_TRUE(Close(got, ref::softmax(small, -1, false)));
}

TEST(OpSoftmax, MoreThan65535RowsFoldTheGrid) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({70001, 2}, 8);
  EXPECT_TRUE(Close(run_softmax("aten._softmax.default", x, 1), ref::softmax(x, 1, false)));
}

TEST(OpSoftmax, IntegerInputAndBadDimFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] { run_softmax("aten._softmax.default", random_i32({3, 4}, 1, 0, 5), 1); });
  EXPECT_TRUE(has(e, "dtype")) << e;
  e = load_error([] { run_softmax("aten._softmax.default", random_f32({3, 4}, 1), 2); });
  EXPECT_TRUE(has(e, "out of range")) << e;
}

std::vector<double> vec(const HostTensor& t) { return t.to_f64(); }

// batch norm [input, weight, bias, mean, var, momentum, eps, VL(3)]
HostTensor run_batch_norm(const HostTensor& x, const HostTensor* w, const HostTensor* b, const HostTensor& mean,
                          const HostTensor& var, double eps) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, x.shape);
  Id s1 = g.tensor(DType::Float32, {0}), s2 = g.tensor(DType::Float32, {0});
  g.gb.op("aten._native_batch_norm_legit_no_training.default",
          {in, w ? g.constant(*w) : g.gb.null(), b ? g.constant(*b) : g.gb.null(), g.constant(mean), g.constant(var),
           g.gb.dbl(0.1), g.gb.dbl(eps), g.gb.value_list({o, s1, s2})});
  return g.run()[0];
}

TEST(OpBatchNorm, AffineNchwMatchesReference) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 16, 7, 5}, 10), w = random_f32({16}, 11), b = random_f32({16}, 12);
  auto m = random_f32({16}, 13), v = random_f32({16}, 14, 0.2f, 2.f);
  EXPECT_TRUE(Close(run_batch_norm(x, &w, &b, m, v, 1e-5), ref::batch_norm(x, vec(m), vec(v), vec(w), vec(b), 1e-5)));
}

TEST(OpBatchNorm, NullWeightAndBiasMeanIdentityAffine) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 5, 9}, 15), m = random_f32({5}, 16), v = random_f32({5}, 17, 0.1f, 1.f);
  EXPECT_TRUE(Close(run_batch_norm(x, nullptr, nullptr, m, v, 1e-3), ref::batch_norm(x, vec(m), vec(v), {}, {}, 1e-3)));
}

TEST(OpBatchNorm, Rank2InputNormalizesPerColumn) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({7, 3}, 18), w = random_f32({3}, 19), m = random_f32({3}, 20), v = random_f32({3}, 21, 0.5f, 1.f);
  EXPECT_TRUE(Close(run_batch_norm(x, &w, nullptr, m, v, 1e-5), ref::batch_norm(x, vec(m), vec(v), vec(w), {}, 1e-5)));
}

TEST(OpBatchNorm, ChannelMismatchRankAndDtypeFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto m = random_f32({4}, 1), v = random_f32({4}, 2, 0.5f, 1.f);
  auto e = load_error([&] { run_batch_norm(random_f32({2, 5, 3, 3}, 3), nullptr, nullptr, m, v, 1e-5); });
  EXPECT_TRUE(has(e, "running_mean")) << e;
  e = load_error([&] { run_batch_norm(random_f32({4}, 3), nullptr, nullptr, m, v, 1e-5); });
  EXPECT_TRUE(has(e, "rank")) << e;
  e = load_error([&] { run_batch_norm(random_i32({2, 4, 3}, 3, 0, 9), nullptr, nullptr, m, v, 1e-5); });
  EXPECT_TRUE(has(e, "dtype")) << e;
}

TEST(OpLayerNorm, TrailingDimsWithAffineAndStatsMatchReference) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 10, 3, 16}, 30, -2, 3), w = random_f32({3, 16}, 31), b = random_f32({3, 16}, 32);
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, x.shape);
  Id mean = g.output(DType::Float32, {2, 10, 1, 1}), rstd = g.output(DType::Float32, {2, 10, 1, 1});
  g.gb.op("aten.native_layer_norm.default", {in, g.gb.int_list({3, 16}), g.constant(w), g.constant(b), g.gb.dbl(1e-5),
                                             g.gb.value_list({o, mean, rstd})});
  auto out = g.run();
  std::vector<double> rm, rr;
  auto ref = ref::layer_norm(x, 2, vec(w), vec(b), 1e-5, &rm, &rr);
  EXPECT_TRUE(Close(out[0], ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(out[1], ref_tensor({2, 10, 1, 1}, rm)));
  EXPECT_TRUE(Close(out[2], ref_tensor({2, 10, 1, 1}, rr), 1e-5, 1e-4));
}

TEST(OpLayerNorm, NullAffineAndUnusableStatSlotsStillNormalize) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({5, 4096}, 33, -1, 5);
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, x.shape);
  Id s1 = g.tensor(DType::Float32, {1}), s2 = g.tensor(DType::Int32, {5});  // too small / wrong dtype
  g.gb.op("aten.native_layer_norm.default",
          {in, g.gb.int_list({4096}), g.gb.null(), g.gb.null(), g.gb.dbl(1e-6), g.gb.value_list({o, s1, s2})});
  EXPECT_TRUE(Close(g.run()[0], ref::layer_norm(x, 1, {}, {}, 1e-6), 1e-5, 1e-4));
}

TEST(OpLayerNorm, DynamicShapeRerunsWithSmallerLeadingDim) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({4, 9, 48}, 34), small = random_f32({4, 3, 48}, 35);
  auto w = random_f32({48}, 36), b = random_f32({48}, 37);
  OpGraph g;
  Id in = g.input(big, {4, 9, 48}, true);
  Id o = g.output(DType::Float32, {4, 9, 48});
  Id s1 = g.tensor(DType::Float32, {4, 9, 1}), s2 = g.tensor(DType::Float32, {4, 9, 1});
  g.gb.op("aten.native_layer_norm.default", {in, g.gb.int_list({48}), g.constant(w), g.constant(b), g.gb.dbl(1e-5),
                                             g.gb.value_list({o, s1, s2})});
  EXPECT_TRUE(Close(g.run()[0], ref::layer_norm(big, 1, vec(w), vec(b), 1e-5)));
  auto got = g.rerun({small})[0];
  EXPECT_TRUE(Close(got, ref::layer_norm(small, 1, vec(w), vec(b), 1e-5)));
}

// Layer norm over the last dim on a forced route; returns {out, mean, rstd} and the variants run.
std::vector<HostTensor> run_layer_norm_route(const HostTensor& x, const HostTensor& w, const HostTensor& b, const char* route,
                                             std::vector<std::string>* variants) {
  int64_t len = x.shape.back(), rows = x.numel() / len;
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, x.shape);
  Id mean = g.output(DType::Float32, {rows, 1}), rstd = g.output(DType::Float32, {rows, 1});
  g.gb.op("aten.native_layer_norm.default", {in, g.gb.int_list({len}), g.constant(w), g.constant(b), g.gb.dbl(1e-5),
                                             g.gb.value_list({o, mean, rstd})});
  LoadOptions opts;
  opts.force_route["norm"] = route;
  auto out = g.run(opts);
  *variants = g.variants();
  return out;
}

TEST(OpLayerNorm, LanesAndWorkgroupRoutesMatchReferenceAcrossRowLengthsAndPartialWorkgroups) {
  ETW_REQUIRE_GPU();
  // Lengths around the 32-lane stride and the 1024 register limit; row counts that leave the last
  // workgroup of eight rows part-empty. The offset of 1000 makes a one-pass variance lose digits.
  for (auto [rows, len] : std::vector<std::pair<int64_t, int64_t>>{{13, 1}, {9, 31}, {8, 32}, {3, 33}, {197, 192},
                                                                   {17, 384}, {5, 1000}, {2, 1024}}) {
    auto x = random_f32({rows, len}, 60 + len, 999, 1001), w = random_f32({len}, 61), b = random_f32({len}, 62);
    std::vector<double> rm, rr;
    auto ref = ref::layer_norm(x, 1, vec(w), vec(b), 1e-5, &rm, &rr);
    for (const char* route : {"lanes", "workgroup"}) {
      std::vector<std::string> variants;
      auto out = run_layer_norm_route(x, w, b, route, &variants);
      std::string want = std::string(route) == "lanes" ? "row_lanes" : "row";
      EXPECT_NE(std::find(variants.begin(), variants.end(), want), variants.end()) << route << " " << len;
      EXPECT_TRUE(Close(out[0], ref, 5e-4, 1e-3)) << route << " " << rows << "x" << len;
      EXPECT_TRUE(Close(out[1], ref_tensor({rows, 1}, rm), 1e-6, 1e-6)) << route << " " << rows << "x" << len;
      EXPECT_TRUE(Close(out[2], ref_tensor({rows, 1}, rr), 1e-5, 1e-3)) << route << " " << rows << "x" << len;
    }
  }
}

// force_route norm = "split": short rows too (one chunk, a partial one, several) through
// norm_row_split, layer_norm and rms_norm, against the references.
TEST(OpLayerNorm, SplitRouteMatchesReferenceOnOneChunkAndMany) {
  ETW_REQUIRE_GPU();
  for (auto [rows, len] : std::vector<std::pair<int64_t, int64_t>>{{3, 7}, {2, 4096}, {2, 4097}, {1, 20000}}) {
    auto x = random_f32({rows, len}, 80 + len, 999, 1001), w = random_f32({len}, 81), b = random_f32({len}, 82);
    std::vector<double> rm, rr;
    auto ref = ref::layer_norm(x, 1, vec(w), vec(b), 1e-5, &rm, &rr);
    std::vector<std::string> variants;
    auto out = run_layer_norm_route(x, w, b, "split", &variants);
    const std::string at = std::to_string(rows) + "x" + std::to_string(len);
    EXPECT_EQ(std::count(variants.begin(), variants.end(), "split_apply"), 1) << at;
    EXPECT_TRUE(Close(out[0], ref, 5e-4, 1e-3)) << at;
    EXPECT_TRUE(Close(out[1], ref_tensor({rows, 1}, rm), 1e-6, 1e-6)) << at;
    EXPECT_TRUE(Close(out[2], ref_tensor({rows, 1}, rr), 1e-5, 1e-3)) << at;
  }
  // A 20,000-wide row of rms_norm: split by default (one row, five chunks).
  auto x = random_f32({1, 20000}, 83, -2, 2), w = random_f32({20000}, 84);
  OpGraph g;
  Id in = g.input(x);
  g.gb.op("et_vk.rms_norm.default", {in, g.constant(w), g.gb.dbl(1e-6), g.output(DType::Float32, {1, 20000})});
  auto out = g.run();
  auto v = g.variants();
  EXPECT_EQ(std::count(v.begin(), v.end(), "split_apply"), 1);
  EXPECT_TRUE(Close(out[0], ref::rms_norm(x, vec(w), 1e-6), 1e-5, 1e-4));
}

TEST(OpLayerNorm, RowsPast1024TakeTheWorkgroupKernelEvenWhenLanesAreForced) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 1025}, 63, -2, 2), w = random_f32({1025}, 64), b = random_f32({1025}, 65);
  std::vector<std::string> variants;
  auto out = run_layer_norm_route(x, w, b, "lanes", &variants);
  EXPECT_EQ(std::find(variants.begin(), variants.end(), "row_lanes"), variants.end());
  EXPECT_TRUE(Close(out[0], ref::layer_norm(x, 1, vec(w), vec(b), 1e-5), 1e-5, 1e-4));
}

TEST(OpSoftmax, UnknownSoftmaxRouteFailsAtLoad) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] { run_softmax("aten._softmax.default", random_f32({2, 8}, 13), -1, "warp"); });
  EXPECT_TRUE(has(e, "force_route softmax must be \"vec4\", \"lanes\" or \"general\", got \"warp\"")) << e;
}

TEST(OpLayerNorm, UnknownNormRouteFailsAtLoad) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 8}, 66), w = random_f32({8}, 67), b = random_f32({8}, 68);
  std::vector<std::string> variants;
  auto e = load_error([&] { run_layer_norm_route(x, w, b, "warp", &variants); });
  EXPECT_TRUE(has(e, "force_route norm")) << e;
}

TEST(OpLayerNorm, NormalizedShapeMustBeTheTrailingShape) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] {
    OpGraph g;
    Id in = g.input(random_f32({2, 6, 5}, 1));
    Id o = g.output(DType::Float32, {2, 6, 5});
    g.gb.op("aten.native_layer_norm.default",
            {in, g.gb.int_list({6}), g.gb.null(), g.gb.null(), g.gb.dbl(1e-5), g.gb.value_list({o, o, o})});
    g.run();
  });
  EXPECT_TRUE(has(e, "normalized_shape")) << e;
}

HostTensor run_group_norm(const HostTensor& x, int64_t groups, const HostTensor* w, const HostTensor* b, double eps,
                          std::vector<HostTensor>* stats = nullptr, std::vector<std::string>* variants = nullptr) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, x.shape);
  int64_t hw = x.numel() / (x.shape[0] * x.shape[1]);
  Id m = stats ? g.output(DType::Float32, {x.shape[0], groups}) : g.tensor(DType::Float32, {x.shape[0], groups});
  Id r = stats ? g.output(DType::Float32, {x.shape[0], groups}) : g.tensor(DType::Float32, {x.shape[0], groups});
  g.gb.op("aten.native_group_norm.default",
          {in, w ? g.constant(*w) : g.gb.null(), b ? g.constant(*b) : g.gb.null(), g.gb.int_(x.shape[0]),
           g.gb.int_(x.shape[1]), g.gb.int_(hw), g.gb.int_(groups), g.gb.dbl(eps), g.gb.value_list({o, m, r})});
  auto out = g.run();
  if (stats) *stats = {out[1], out[2]};
  if (variants) *variants = g.variants();
  return out[0];
}

// PoolFormer's GroupNorm of one group over C x H x W (a row of 64 x 40 x 40 = 102,400) splits
// over chunks of 4,096 (norm_row_split: partials, then the merge and the normalization), with an
// offset of 1000 that a one-pass variance would lose and channel means that differ; rows whose last chunk is partial and two
// groups over a batch of two take it too; the stats match.
TEST(OpGroupNorm, LongGroupsSplitOverWorkgroupsAndMatchTheReference) {
  ETW_REQUIRE_GPU();
  struct Case { std::vector<int64_t> shape; int64_t groups; };
  for (const Case& c : {Case{{1, 64, 40, 40}, 1}, Case{{2, 8, 48, 48}, 2}, Case{{1, 3, 91, 91}, 1}}) {
    const int64_t C = c.shape[1];
    auto x = random_f32(c.shape, 70, 999, 1001), w = random_f32({C}, 71), b = random_f32({C}, 72);
    // Channel c offset by c / 4: chunks of different means, whose spread the merge must add.
    const int64_t hw = x.numel() / (c.shape[0] * C);
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] += static_cast<float>((i / hw) % C) / 4.f;
    std::vector<HostTensor> st;
    std::vector<double> rm, rr;
    std::vector<std::string> variants;
    auto ref = ref::group_norm(x, c.groups, vec(w), vec(b), 1e-5, &rm, &rr);
    auto out = run_group_norm(x, c.groups, &w, &b, 1e-5, &st, &variants);
    const std::string at = shape_str(c.shape) + " groups " + std::to_string(c.groups);
    EXPECT_EQ(std::count(variants.begin(), variants.end(), "split_partials"), 1) << at;
    EXPECT_EQ(std::count(variants.begin(), variants.end(), "split_apply"), 1) << at;
    EXPECT_EQ(std::count(variants.begin(), variants.end(), "row"), 0) << at;
    EXPECT_TRUE(Close(out, ref, 5e-4, 1e-3)) << at;
    EXPECT_TRUE(Close(st[0], ref_tensor({c.shape[0], c.groups}, rm), 1e-6, 1e-6)) << at;
    EXPECT_TRUE(Close(st[1], ref_tensor({c.shape[0], c.groups}, rr), 1e-5, 1e-3)) << at;
  }
}

TEST(OpGroupNorm, AffineWithStatsMatchesReference) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 12, 5, 7}, 40, -2, 2), w = random_f32({12}, 41), b = random_f32({12}, 42);
  std::vector<HostTensor> st;
  std::vector<double> rm, rr;
  auto ref = ref::group_norm(x, 3, vec(w), vec(b), 1e-5, &rm, &rr);
  EXPECT_TRUE(Close(run_group_norm(x, 3, &w, &b, 1e-5, &st), ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(st[0], ref_tensor({2, 3}, rm)));
  EXPECT_TRUE(Close(st[1], ref_tensor({2, 3}, rr), 1e-5, 1e-4));
}

TEST(OpGroupNorm, OneGroupPerChannelWithoutAffineOnRank3) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4, 11}, 43);
  EXPECT_TRUE(Close(run_group_norm(x, 4, nullptr, nullptr, 1e-5), ref::group_norm(x, 4, {}, {}, 1e-5), 1e-5, 1e-4));
}

TEST(OpGroupNorm, GroupsThatDoNotDivideChannelsFail) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] { run_group_norm(random_f32({1, 6, 2, 2}, 1), 4, nullptr, nullptr, 1e-5); });
  EXPECT_TRUE(has(e, "does not divide")) << e;
}

HostTensor run_rms(const HostTensor& x, const HostTensor& w, double eps) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, x.shape);
  g.gb.op("et_vk.rms_norm.default", {in, g.constant(w), g.gb.dbl(eps), o});
  return g.run()[0];
}

// etwebgpu.rms_norm_deferred called directly (ops/norm/input_norm.h): on several rows the bits of
// et_vk.rms_norm on every route (4096-long rows: split, workgroup); on one row it dispatches
// nothing (its reader normalizes that row itself).
TEST(OpRmsNorm, DeferredNormRunsOnSeveralRowsOnlyAndMatchesTheNorm) {
  ETW_REQUIRE_GPU();
  for (int64_t K : {64, 4096}) {
    auto w = random_f32({K}, 54);
    for (int64_t rows : {1, 3}) {
      auto x = random_f32({rows, K}, 55, -3, 3);
      auto loaded = load_graph([&](OpGraph& g) {
        Id in = g.input(x);
        g.gb.op("et_vk.rms_norm.default", {in, g.constant(w), g.gb.dbl(1e-5), g.output(DType::Float32, x.shape)});
        Id o = g.output(DType::Float32, x.shape);
        g.gb.op("etwebgpu.rms_norm_deferred", {in, g.constant(w), g.gb.dbl(1e-5), o});
      }, true);
      const auto deferred = std::count(loaded.ops.begin(), loaded.ops.end(), "etwebgpu.rms_norm_deferred");
      const std::string at = "K " + std::to_string(K) + " rows " + std::to_string(rows);
      if (rows == 1) {
        EXPECT_EQ(deferred, 0) << at;
      } else {
        EXPECT_GT(deferred, 0) << at;
        EXPECT_EQ(loaded.out[0].data, loaded.out[1].data) << at;
        EXPECT_TRUE(Close(loaded.out[1], ref::rms_norm(x, vec(w), 1e-5), 1e-5, 1e-4)) << at;
      }
    }
  }
}

TEST(OpRmsNorm, LastDimMatchesReferenceForShortAndLongRows) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 45}, 50, -3, 3), w = random_f32({45}, 51);
  EXPECT_TRUE(Close(run_rms(x, w, 1e-6), ref::rms_norm(x, vec(w), 1e-6), 1e-5, 1e-4));
  auto y = random_f32({2, 4096}, 52, -3, 3), wy = random_f32({4096}, 53);
  EXPECT_TRUE(Close(run_rms(y, wy, 1e-5), ref::rms_norm(y, vec(wy), 1e-5), 1e-5, 1e-4));
}

TEST(OpRmsNorm, LanesAndWorkgroupRoutesMatchReference) {
  ETW_REQUIRE_GPU();
  for (int64_t len : {7, 64, 576, 1024}) {
    auto x = random_f32({11, len}, 70 + len, -3, 3), w = random_f32({len}, 71);
    auto ref = ref::rms_norm(x, vec(w), 1e-6);
    for (const char* route : {"lanes", "workgroup"}) {
      OpGraph g;
      Id in = g.input(x);
      Id o = g.output(DType::Float32, x.shape);
      g.gb.op("et_vk.rms_norm.default", {in, g.constant(w), g.gb.dbl(1e-6), o});
      LoadOptions opts;
      opts.force_route["norm"] = route;
      EXPECT_TRUE(Close(g.run(opts)[0], ref, 1e-5, 1e-4)) << route << " " << len;
      auto variants = g.variants();
      std::string want = std::string(route) == "lanes" ? "row_lanes" : "row";
      EXPECT_NE(std::find(variants.begin(), variants.end(), want), variants.end()) << route << " " << len;
    }
  }
}

// eps only shows where a row's mean square (RMSNorm) or variance (layer norm) is near it: values
// of about 1e-3 give about 1.3e-6 against eps 1e-6. A kernel that drops eps, or adds it where the
// square root was already taken, passes every test on values near 1 and fails here, on each route.
TEST(OpNormEps, RowsWhoseMeanSquareIsNearEpsMatchReferenceOnEveryRoute) {
  ETW_REQUIRE_GPU();
  const double eps = 1e-6;
  for (int64_t len : {48, 576}) {
    auto x = random_f32({9, len}, 80 + len, -2e-3, 2e-3), w = random_f32({len}, 81), b = random_f32({len}, 82);
    auto rms_ref = ref::rms_norm(x, vec(w), eps);
    std::vector<double> rm, rr;
    auto ln_ref = ref::layer_norm(x, 1, vec(w), vec(b), eps, &rm, &rr);
    for (const char* route : {"lanes", "workgroup"}) {
      LoadOptions opts;
      opts.force_route["norm"] = route;
      OpGraph rg;
      Id rin = rg.input(x);
      Id ro = rg.output(DType::Float32, x.shape);
      rg.gb.op("et_vk.rms_norm.default", {rin, rg.constant(w), rg.gb.dbl(eps), ro});
      EXPECT_TRUE(Close(rg.run(opts)[0], rms_ref, 1e-4, 1e-3)) << "rms_norm " << route << " " << len;
      OpGraph lg;
      Id lin = lg.input(x);
      Id lo = lg.output(DType::Float32, x.shape);
      Id mean = lg.output(DType::Float32, {9, 1}), rstd = lg.output(DType::Float32, {9, 1});
      lg.gb.op("aten.native_layer_norm.default", {lin, lg.gb.int_list({len}), lg.constant(w), lg.constant(b),
                                                  lg.gb.dbl(eps), lg.gb.value_list({lo, mean, rstd})});
      auto out = lg.run(opts);
      EXPECT_TRUE(Close(out[0], ln_ref, 1e-4, 1e-3)) << "layer_norm " << route << " " << len;
      EXPECT_TRUE(Close(out[2], ref_tensor({9, 1}, rr), 1e-3, 1e-3)) << "layer_norm rstd " << route << " " << len;
      std::string want = std::string(route) == "lanes" ? "row_lanes" : "row";
      for (auto* g : {&rg, &lg}) {
        auto v = g->variants();
        EXPECT_NE(std::find(v.begin(), v.end(), want), v.end()) << route << " " << len;
      }
    }
  }
}

TEST(OpRmsNorm, WeightOfWrongLengthFailsAtLoad) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] { run_rms(random_f32({2, 8}, 1), random_f32({7}, 2), 1e-5); });
  EXPECT_TRUE(has(e, "weight")) << e;
}


// The numel(dims) elements of x (float32) from element `first_elem` on, as a tensor of `dims`.
HostTensor rows_of(const HostTensor& x, int64_t first_elem, std::vector<int64_t> dims) {
  HostTensor t;
  t.dtype = DType::Float32;
  t.shape = std::move(dims);
  const auto* src = x.data.data() + 4 * first_elem;
  t.data.assign(src, src + 4 * numel(t.shape));
  return t;
}

// select_copy(x, dim, index) -> et_vk.rms_norm: one etwebgpu.rms_norm_select reading the slice in
// x (ExecuTorch's Llama: the last position's row before the final norm), with the bits of the two
// calls unfused, on every route (rows of 64 and 1000: lanes and workgroup; 8192: split), for a
// dynamic sequence length (the index then counts from the live end) and a slice of several rows.
TEST(OpRmsNormSelect, TheSelectedSliceIsNormalizedInPlaceWithTheUnfusedBits) {
  ETW_REQUIRE_GPU();
  struct Case {
    std::vector<int64_t> dims;  // x, dim 1 selected
    int64_t index;
    std::vector<std::string> routes;
  };
  const Case cases[] = {{{1, 7, 64}, -1, {"lanes", "workgroup"}},
                        {{1, 5, 3, 1000}, 2, {"lanes", "workgroup"}},
                        {{1, 3, 8192}, -2, {"split", "workgroup"}}};
  for (const Case& c : cases) {
    const int64_t D = c.dims.back();
    auto x = random_f32(c.dims, 80 + D, -3, 3), w = random_f32({D}, 81);
    std::vector<int64_t> sd = c.dims;
    sd.erase(sd.begin() + 1);
    const int64_t slice = numel(sd);
    for (const std::string& route : c.routes) {
      auto build = [&](OpGraph& g) {
        Id in = g.input(x);
        Id s = g.tensor(DType::Float32, sd);
        g.gb.op("aten.select_copy.int", {in, g.gb.int_(1), g.gb.int_(c.index), s});
        g.gb.op("et_vk.rms_norm.default", {s, g.constant(w), g.gb.dbl(1e-5), g.output(DType::Float32, sd)});
      };
      const std::string at = shape_str(c.dims) + " index " + std::to_string(c.index) + " " + route;
      auto fused = load_graph(build, true, {{"norm", route}}), apart = load_graph(build, false, {{"norm", route}});
      EXPECT_EQ(fused.ops, std::vector<std::string>(fused.ops.size(), "etwebgpu.rms_norm_select")) << at;
      EXPECT_EQ(apart.ops.size(), fused.ops.size() + 1) << at;
      EXPECT_EQ(fused.out[0].data, apart.out[0].data) << at;
      const int64_t idx = c.index < 0 ? c.index + c.dims[1] : c.index;
      EXPECT_TRUE(Close(fused.out[0], ref::rms_norm(rows_of(x, idx * slice, sd), vec(w), 1e-5), 1e-5, 1e-4)) << at;
    }
  }
  // A dynamic length: the last row of each run's live rows.
  auto big = random_f32({1, 9, 128}, 84, -3, 3), small = random_f32({1, 4, 128}, 85, -3, 3), w = random_f32({128}, 86);
  OpGraph g;
  Id in = g.input(big, {1, 9, 128}, true);
  Id s = g.tensor(DType::Float32, {1, 128});
  g.gb.op("aten.select_copy.int", {in, g.gb.int_(1), g.gb.int_(-1), s});
  g.gb.op("et_vk.rms_norm.default", {s, g.constant(w), g.gb.dbl(1e-6), g.output(DType::Float32, {1, 128})});
  EXPECT_TRUE(Close(g.run()[0], ref::rms_norm(rows_of(big, 8 * 128, {1, 128}), vec(w), 1e-6), 1e-5, 1e-4));
  EXPECT_TRUE(Close(g.rerun({small})[0], ref::rms_norm(rows_of(small, 3 * 128, {1, 128}), vec(w), 1e-6), 1e-5, 1e-4));
}

// Where the slice is not whole rows of x from one offset, or another call reads the selected
// tensor, the select stays a call of its own (and the result is still right).
TEST(OpRmsNormSelect, SelectsThatAreNotOneBlockOfRowsOrHaveOtherReadersStay) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({16}, 87);
  // dims before the selected one past 1; a second reader of the selected rows.
  for (int variant : {0, 1}) {
    std::vector<int64_t> xd = variant == 0 ? std::vector<int64_t>{2, 3, 16} : std::vector<int64_t>{1, 3, 16};
    auto x = random_f32(xd, 88 + variant, -3, 3);
    auto loaded = load_graph([&](OpGraph& g) {
      Id in = g.input(x);
      std::vector<int64_t> sd = {xd[0], 16};
      Id s = g.tensor(DType::Float32, sd);
      g.gb.op("aten.select_copy.int", {in, g.gb.int_(1), g.gb.int_(-1), s});
      g.gb.op("et_vk.rms_norm.default", {s, g.constant(w), g.gb.dbl(1e-5), g.output(DType::Float32, sd)});
      if (variant == 1) g.gb.op("aten.exp.default", {s, g.output(DType::Float32, sd)});
    }, true);
    const std::string at = "variant " + std::to_string(variant);
    EXPECT_EQ(std::count(loaded.ops.begin(), loaded.ops.end(), "etwebgpu.rms_norm_select"), 0) << at;
    EXPECT_EQ(std::count(loaded.ops.begin(), loaded.ops.end(), "aten.select_copy.int"), 1) << at;
    std::vector<double> want;
    for (int64_t b = 0; b < xd[0]; ++b) {
      auto r = f64(ref::rms_norm(rows_of(x, (b * 3 + 2) * 16, {1, 16}), vec(w), 1e-5));
      want.insert(want.end(), r.begin(), r.end());
    }
    EXPECT_TRUE(Close(loaded.out[0], ref_tensor({xd[0], 16}, want), 1e-5, 1e-4)) << at;
  }
}

// etwebgpu.rms_norm_select called directly: an index past the live dim is a run error naming it;
// a selected last dim, or dims before the selected one past 1, fail at load.
TEST(OpRmsNormSelect, BadIndexAndShapesAreClearErrors) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({8}, 89);
  auto run_sel = [&](std::vector<int64_t> xd, int64_t dim, int64_t index, std::vector<int64_t> od) {
    OpGraph g;
    Id in = g.input(random_f32(xd, 90));
    g.gb.op("etwebgpu.rms_norm_select", {in, g.gb.int_(dim), g.gb.int_(index), g.constant(w), g.gb.dbl(1e-5),
                                         g.output(DType::Float32, od)});
    try {
      g.run();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(run_sel({1, 4, 8}, 1, 3, {1, 8}), "");
  std::string e = run_sel({1, 4, 8}, 1, 4, {1, 8});
  EXPECT_TRUE(has(e, "index 4 out of range for dim 1 of size 4")) << e;
  e = run_sel({1, 4, 8}, 1, -5, {1, 8});
  EXPECT_TRUE(has(e, "out of range")) << e;
  e = run_sel({1, 8}, 1, 0, {1});
  EXPECT_TRUE(has(e, "must not be the normalized (last) one")) << e;
  e = run_sel({2, 4, 8}, 1, 0, {2, 8});
  EXPECT_TRUE(has(e, "must be 1")) << e;
}

}  // namespace
