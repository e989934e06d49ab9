// upsample_bilinear2d / upsample_nearest2d against fp64 references (tests/reference/resize).
#include "reference/resize/resize_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {


struct Up {
  std::optional<std::vector<int64_t>> size;
  std::optional<std::vector<double>> scales;
};

HostTensor run_up(bool bilinear, const HostTensor& x, Up u, bool align, std::vector<int64_t> out_shape,
                  const HostTensor* rerun = nullptr, std::vector<int64_t> max_in = {}, const char* route = "") {
  OpGraph g;
  Id in = g.input(x, max_in, !max_in.empty());
  Id o = g.output(DType::Float32, out_shape);
  Id size = u.size ? g.gb.int_list(*u.size) : g.gb.null();
  Id sf = u.scales ? g.gb.double_list(*u.scales) : g.gb.null();
  if (bilinear) g.gb.op("aten.upsample_bilinear2d.vec", {in, size, g.gb.boolean(align), sf, o});
  else g.gb.op("aten.upsample_nearest2d.vec", {in, size, sf, o});
  LoadOptions opts;
  if (*route) opts.force_route["upsample"] = route;
  auto out = g.run(opts)[0];
  if (rerun) return g.rerun({*rerun})[0];
  return out;
}

TEST(OpUpsampleBilinear2d, FiveToEightDistinguishesAlignCornersFormulas) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 5, 5}, 1);
  auto ref_f = ref::upsample_bilinear2d(x, 8, 8, false), ref_t = ref::upsample_bilinear2d(x, 8, 8, true);
  ASSERT_FALSE(Close(ref_f, ref_t));  // the two formulas really differ at this ratio
  EXPECT_TRUE(Close(run_up(true, x, {std::vector<int64_t>{8, 8}, {}}, false, {2, 3, 8, 8}), ref_f));
  EXPECT_TRUE(Close(run_up(true, x, {std::vector<int64_t>{8, 8}, {}}, true, {2, 3, 8, 8}), ref_t));
}

TEST(OpUpsampleBilinear2d, ScaleFactorIsUsedAsGivenNotAsInOverOut) {
  ETW_REQUIRE_GPU();
  // 5 * 1.7 = 8.5 -> 8 rows; PyTorch samples with 1/1.7, not 5/8.
  auto x = random_f32({1, 2, 5, 6}, 2);
  auto ref = ref::upsample_bilinear2d(x, 8, 15, false, 1.7, 2.5);
  ASSERT_FALSE(Close(ref, ref::upsample_bilinear2d(x, 8, 15, false)));
  EXPECT_TRUE(Close(run_up(true, x, {{}, std::vector<double>{1.7, 2.5}}, false, {1, 2, 8, 15}), ref));
}

TEST(OpUpsampleBilinear2d, DownsamplingOddSizesAndRank3) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 9, 7}, 3);
  EXPECT_TRUE(Close(run_up(true, x, {std::vector<int64_t>{4, 3}, {}}, false, {3, 4, 3}), ref::upsample_bilinear2d(x, 4, 3, false)));
  EXPECT_TRUE(Close(run_up(true, x, {std::vector<int64_t>{4, 1}, {}}, true, {3, 4, 1}), ref::upsample_bilinear2d(x, 4, 1, true)));
}

TEST(OpUpsampleBilinear2d, DynamicInputRecomputesOutputFromScale) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({2, 2, 6, 6}, 4), small = random_f32({1, 2, 3, 5}, 5);
  auto got = run_up(true, big, {{}, std::vector<double>{2.0, 2.0}}, false, {2, 2, 12, 12}, &small, {2, 2, 6, 6});
  EXPECT_TRUE(Close(got, ref::upsample_bilinear2d(small, 6, 10, false, 2.0, 2.0)));
}

TEST(OpUpsampleBilinear2d, LargeOutputPast65535Workgroups) {
  ETW_REQUIRE_GPU();
  // 64 planes of 128 x 2080 = 17M outputs: more than 65535 workgroups of 256.
  auto y = random_f32({64, 1, 64, 1040}, 7);
  auto ref = ref::upsample_bilinear2d(y, 128, 2080, false);
  EXPECT_TRUE(Close(run_up(true, y, {std::vector<int64_t>{128, 2080}, {}}, false, {64, 1, 128, 2080}, nullptr, {}, "general"), ref));
}

TEST(OpUpsample2d, Vec4RouteMatchesGeneralRouteAndReference) {
  ETW_REQUIRE_GPU();
  // Output widths divisible by 4 take the vec4 route: 4x, non-integer ratios, downsampling,
  // align_corners, and a rerun to a width that does not divide by 4 (general route).
  auto x = random_f32({2, 3, 7, 9}, 20);
  struct C { int64_t oh, ow; bool align; } cs[] = {{28, 36, false}, {28, 36, true}, {11, 20, false}, {5, 4, true}, {3, 8, false}};
  for (auto& c : cs) {
    Up u{std::vector<int64_t>{c.oh, c.ow}, {}};
    std::vector<int64_t> os{2, 3, c.oh, c.ow};
    auto fast = run_up(true, x, u, c.align, os, nullptr, {}, "vec4");
    auto slow = run_up(true, x, u, c.align, os, nullptr, {}, "general");
    EXPECT_TRUE(Close(fast, ref::upsample_bilinear2d(x, c.oh, c.ow, c.align))) << c.oh << "x" << c.ow << " " << c.align;
    EXPECT_TRUE(Close(fast, slow, 0, 0)) << c.oh << "x" << c.ow;
    auto nf = run_up(false, x, u, false, os, nullptr, {}, "vec4");
    auto ns = run_up(false, x, u, false, os, nullptr, {}, "general");
    EXPECT_TRUE(Close(nf, ref::upsample_nearest2d(x, c.oh, c.ow))) << c.oh << "x" << c.ow;
    EXPECT_TRUE(Close(nf, ns, 0, 0)) << c.oh << "x" << c.ow;
  }
  auto big = random_f32({1, 2, 6, 6}, 21), small = random_f32({1, 2, 3, 5}, 22);
  auto got = run_up(true, big, {{}, std::vector<double>{4.0, 4.0}}, false, {1, 2, 24, 24}, &small, {1, 2, 6, 6});
  EXPECT_TRUE(Close(got, ref::upsample_bilinear2d(small, 12, 20, false, 4.0, 4.0)));
  auto odd = random_f32({1, 2, 3, 3}, 23);
  got = run_up(true, big, {{}, std::vector<double>{2.0, 2.0}}, false, {1, 2, 12, 12}, &odd, {1, 2, 6, 6});
  EXPECT_TRUE(Close(got, ref::upsample_bilinear2d(odd, 6, 6, false, 2.0, 2.0)));
}

TEST(OpUpsampleNearest2d, ExactTwoAndNonIntegerRatios) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 3, 5, 4}, 8);
  EXPECT_TRUE(Close(run_up(false, x, {{}, std::vector<double>{2.0, 2.0}}, false, {1, 3, 10, 8}),
                    ref::upsample_nearest2d(x, 10, 8, 2.0, 2.0)));
  EXPECT_TRUE(Close(run_up(false, x, {std::vector<int64_t>{8, 7}, {}}, false, {1, 3, 8, 7}), ref::upsample_nearest2d(x, 8, 7)));
  EXPECT_TRUE(Close(run_up(false, x, {{}, std::vector<double>{1.7, 0.6}}, false, {1, 3, 8, 2}),
                    ref::upsample_nearest2d(x, 8, 2, 1.7, 0.6)));
}

TEST(OpUpsample2d, MissingOrBadSizeArgumentsFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 1, 4, 4}, 9);
  auto e = load_error([&] { run_up(true, x, {}, false, {1, 1, 8, 8}); });
  EXPECT_TRUE(has(e, "output_size or scale_factors")) << e;
  e = load_error([&] { run_up(false, x, {std::vector<int64_t>{8}, {}}, false, {1, 1, 8, 8}); });
  EXPECT_TRUE(has(e, "2 elements")) << e;
  e = load_error([&] { run_up(true, random_f32({4, 4}, 1), {std::vector<int64_t>{8, 8}, {}}, false, {8, 8}); });
  EXPECT_TRUE(has(e, "4D")) << e;
  e = load_error([&] { run_up(true, x, {std::vector<int64_t>{9, 9}, {}}, false, {1, 1, 8, 8}); });
  EXPECT_TRUE(has(e, "bound")) << e;
}

}  // namespace
