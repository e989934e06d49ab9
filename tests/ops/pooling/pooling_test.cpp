// 2D pooling against fp64 references (tests/reference/pooling).
#include <cmath>

#include "reference/pooling/pooling_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {


// avg_pool2d [self, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, out]
HostTensor run_avg(const HostTensor& x, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                   bool ceil_mode, bool count_pad, std::optional<int64_t> div, std::vector<int64_t> out_shape) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, out_shape);
  g.gb.op("aten.avg_pool2d.default", {in, g.gb.int_list(k), g.gb.int_list(s), g.gb.int_list(p), g.gb.boolean(ceil_mode),
                                      g.gb.boolean(count_pad), div ? g.gb.int_(*div) : g.gb.null(), o});
  return g.run()[0];
}

TEST(OpAvgPool2d, EmptyStrideMeansKernelAndPaddingCountsByDefault) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 9, 7}, 1);
  ref::Pool2d p{3, 3, 3, 3, 1, 1};
  auto ref = ref::avg_pool2d(x, p, true, std::nullopt);
  EXPECT_TRUE(Close(run_avg(x, {3}, {}, {1}, false, true, std::nullopt, ref.shape), ref));
}

TEST(OpAvgPool2d, CeilModeDropsAWindowThatStartsInThePadding) {
  ETW_REQUIRE_GPU();
  // Case 1 (pad 1) keeps a partial last window; case 2 (H=5, k=2, s=3, pad 0) drops the ceil window
  // that would start at 6 >= 5, so its output has 2 rows, not 3.
  for (auto [shape, p] : std::vector<std::pair<std::vector<int64_t>, ref::Pool2d>>{
           {{1, 2, 6, 5}, {2, 3, 2, 2, 1, 1, 1, 1, true}}, {{1, 3, 5, 8}, {2, 2, 3, 3, 0, 0, 1, 1, true}}}) {
    auto x = random_f32(shape, 2);
    for (bool cp : {true, false}) {
      auto ref = ref::avg_pool2d(x, p, cp, std::nullopt);
      EXPECT_TRUE(Close(run_avg(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, true, cp, std::nullopt, ref.shape), ref))
          << shape_str(shape) << " count_include_pad " << cp;
    }
  }
  EXPECT_EQ(ref::pool_out_size(5, 2, 0, 3, 1, true), 2);  // the rule itself: (2)*3=6 >= 5 drops the 3rd
}

TEST(OpAvgPool2d, DivisorOverrideReplacesTheWindowSize) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 7, 7}, 3);  // 3D [C,H,W]
  ref::Pool2d p{3, 2, 2, 2, 1, 1};
  auto ref = ref::avg_pool2d(x, p, false, 5);
  EXPECT_TRUE(Close(run_avg(x, {3, 2}, {2, 2}, {1, 1}, false, false, 5, ref.shape), ref));
}

TEST(OpAvgPool2d, BadPaddingAndRankFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] { run_avg(random_f32({1, 1, 6, 6}, 1), {2, 2}, {}, {2, 2}, false, true, std::nullopt, {1, 1, 5, 5}); });
  EXPECT_TRUE(has(e, "pad")) << e;
  e = load_error([] { run_avg(random_f32({6, 6}, 1), {2, 2}, {}, {0, 0}, false, true, std::nullopt, {3, 3}); });
  EXPECT_TRUE(has(e, "4D")) << e;
  e = load_error([] { run_avg(random_f32({1, 1, 6, 6}, 1), {2, 2}, {}, {0, 0}, false, true, 0, {1, 1, 3, 3}); });
  EXPECT_TRUE(has(e, "divisor")) << e;
}

std::pair<HostTensor, HostTensor> run_max(const HostTensor& x, const ref::Pool2d& p, bool empty_stride,
                                          std::vector<int64_t> out_shape) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, out_shape), idx = g.output(DType::Int32, out_shape);
  g.gb.op("aten.max_pool2d_with_indices.default",
          {in, g.gb.int_list({p.kh, p.kw}), g.gb.int_list(empty_stride ? std::vector<int64_t>{} : std::vector<int64_t>{p.sh, p.sw}),
           g.gb.int_list({p.ph, p.pw}), g.gb.int_list({p.dh, p.dw}), g.gb.boolean(p.ceil_mode), g.gb.value_list({o, idx})});
  auto out = g.run();
  return {out[0], out[1]};
}

TEST(OpMaxPool2d, ValuesAndFlatPlaneIndicesMatchReference) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 10, 9}, 4);
  ref::Pool2d p{3, 3, 3, 3, 1, 1, 1, 1, false};
  auto [rv, ri] = ref::max_pool2d(x, p);
  auto [v, i] = run_max(x, p, true, rv.shape);
  EXPECT_TRUE(Close(v, rv));
  EXPECT_TRUE(Close(i, ri));
}

TEST(OpMaxPool2d, DilationCeilModeAndAsymmetricStride) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 2, 11, 8}, 5);
  ref::Pool2d p{3, 2, 2, 3, 1, 1, 2, 2, true};
  auto [rv, ri] = ref::max_pool2d(x, p);
  auto [v, i] = run_max(x, p, false, rv.shape);
  EXPECT_TRUE(Close(v, rv));
  EXPECT_TRUE(Close(i, ri));
}

TEST(OpMaxPool2d, NanWinsItsWindowLikePyTorch) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 1, 4, 4}, 6);
  x.as<float>()[5] = NAN;
  ref::Pool2d p{2, 2, 2, 2};
  auto [rv, ri] = ref::max_pool2d(x, p);
  auto [v, i] = run_max(x, p, true, rv.shape);
  EXPECT_TRUE(std::isnan(v.as<float>()[0]));
  EXPECT_EQ(i.as<int32_t>()[0], 5);
  EXPECT_TRUE(CloseNan(v, rv));
  EXPECT_TRUE(Close(i, ri));
}

TEST(OpMaxPool2d, PlainMaxPoolMatchesAndDynamicInputShrinks) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({3, 4, 8, 8}, 7), small = random_f32({1, 4, 5, 8}, 8);
  ref::Pool2d p{2, 2, 2, 2};
  OpGraph g;
  Id in = g.input(big, {3, 4, 8, 8}, true);
  Id o = g.output(DType::Float32, {3, 4, 4, 4});
  g.gb.op("aten.max_pool2d.default", {in, g.gb.int_list({2, 2}), g.gb.int_list({}), g.gb.int_list({0, 0}),
                                      g.gb.int_list({1, 1}), g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref::max_pool2d(big, p).first));
  EXPECT_TRUE(Close(g.rerun({small})[0], ref::max_pool2d(small, p).first));
}

TEST(OpMaxPool2d, LargeOutputPast65535Workgroups) {
  ETW_REQUIRE_GPU();
  // A 1x2 window with stride (1, 1) over one long row: 65536*256+9 outputs, > 65535 workgroups.
  int64_t w = 65536LL * 256 + 10;
  auto x = random_f32({1, 1, 1, w}, 9);
  ref::Pool2d p{1, 2, 1, 1};
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, {1, 1, 1, w - 1});
  g.gb.op("aten.max_pool2d.default", {in, g.gb.int_list({1, 2}), g.gb.int_list({1, 1}), g.gb.int_list({0, 0}),
                                      g.gb.int_list({1, 1}), g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref::max_pool2d(x, p).first));
}

HostTensor run_adaptive(const char* op, const HostTensor& x, int64_t oh, int64_t ow) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, {x.shape[0], x.shape[1], oh, ow});
  g.gb.op(op, {in, g.gb.int_list({oh, ow}), o});
  return g.run()[0];
}

TEST(OpAdaptiveAvgPool2d, OverlappingWindowsForNonDivisibleSizes) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 10, 7}, 10);
  EXPECT_TRUE(Close(run_adaptive("aten._adaptive_avg_pool2d.default", x, 4, 3), ref::adaptive_avg_pool2d(x, 4, 3)));
  EXPECT_TRUE(Close(run_adaptive("aten.adaptive_avg_pool2d.default", x, 1, 1), ref::adaptive_avg_pool2d(x, 1, 1)));
  EXPECT_TRUE(Close(run_adaptive("aten._adaptive_avg_pool2d.default", x, 13, 9), ref::adaptive_avg_pool2d(x, 13, 9)));
}

TEST(OpAdaptiveAvgPool2d, NonPositiveOutputSizeFails) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] { run_adaptive("aten._adaptive_avg_pool2d.default", random_f32({1, 1, 4, 4}, 1), 0, 2); });
  EXPECT_TRUE(has(e, "output_size")) << e;
}

}  // namespace
