// aten.convolution / et_vk.conv_with_clamp against the fp64 reference (tests/reference/conv),
// on both routes for groups == 1 (im2col GEMM and direct), grouped/depthwise, transposed and 1-D.
#include <cfloat>
#include <cmath>

#include "reference/conv/conv_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct Conv {
  std::vector<int64_t> stride{1, 1}, padding{0, 0}, dilation{1, 1}, output_padding{0, 0};
  int64_t groups = 1;
  bool transposed = false;
  bool clamp = false;
  std::optional<double> cmin, cmax;
  bool int_min = false;  // encode output_min as Int (as exports do for 0)
};

ref::ConvArgs ref_args(const Conv& c) {
  ref::ConvArgs a;
  auto two = [](const std::vector<int64_t>& v, int i) { return v.size() == 1 ? v[0] : v[i]; };
  bool one = c.stride.size() == 1 && c.padding.size() == 1 && c.dilation.size() == 1 && c.output_padding.size() == 1;
  // 1-D lists have one element that applies to W.
  a.sh = two(c.stride, 0), a.sw = two(c.stride, one ? 0 : 1);
  a.ph = two(c.padding, 0), a.pw = two(c.padding, one ? 0 : 1);
  a.dh = two(c.dilation, 0), a.dw = two(c.dilation, one ? 0 : 1);
  a.oph = two(c.output_padding, 0), a.opw = two(c.output_padding, one ? 0 : 1);
  a.groups = c.groups;
  a.transposed = c.transposed;
  if (c.cmin) a.out_min = *c.cmin;
  if (c.cmax) a.out_max = *c.cmax;
  return a;
}

struct Built {
  std::unique_ptr<OpGraph> g;
};

std::unique_ptr<OpGraph> make_conv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const Conv& c,
                                   const std::vector<int64_t>& od, std::vector<int64_t> max_in = {},
                                   std::vector<int64_t> max_out = {}) {
  auto g = std::make_unique<OpGraph>();
  Id xi = g->input(x, max_in, !max_in.empty());
  Id wi = g->constant(w);
  Id bi = bias ? g->constant(*bias) : g->gb.null();
  Id o = g->output(DType::Float32, max_out.empty() ? od : max_out);
  std::vector<Id> args{xi, wi, bi, g->gb.int_list(c.stride), g->gb.int_list(c.padding), g->gb.int_list(c.dilation),
                       g->gb.boolean(c.transposed), g->gb.int_list(c.output_padding), g->gb.int_(c.groups)};
  if (c.clamp) {
    args.push_back(!c.cmin ? g->gb.null() : c.int_min ? g->gb.int_(static_cast<int64_t>(*c.cmin)) : g->gb.dbl(*c.cmin));
    args.push_back(!c.cmax ? g->gb.null() : g->gb.dbl(*c.cmax));
  }
  args.push_back(o);
  g->gb.op(c.clamp ? "et_vk.conv_with_clamp.default" : "aten.convolution.default", args);
  return g;
}

HostTensor run_conv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const Conv& c,
                    const std::string& route = "", std::string* variant = nullptr) {
  auto ref = ref::conv(x, w, bias, ref_args(c));
  auto g = make_conv(x, w, bias, c, ref.shape);
  LoadOptions o;
  if (!route.empty()) o.force_route["conv"] = route;
  auto out = g->run(o)[0];
  if (variant) {
    Profile p;
    g->model()->run(g->inputs, &p);
    *variant = p.dispatches.size() == 1 ? p.dispatches[0].variant : "?";
  }
  return out;
}

void expect_conv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const Conv& c,
                 const std::string& route, const std::string& want_variant) {
  auto ref = ref::conv(x, w, bias, ref_args(c));
  std::string v;
  auto got = run_conv(x, w, bias, c, route, &v);
  EXPECT_EQ(got.shape, ref.shape);
  EXPECT_TRUE(Close(got, ref, 1e-4, 1e-4)) << "route " << route;
  EXPECT_EQ(v, want_variant) << "route " << route;
}

std::string load_error(const HostTensor& x, const HostTensor& w, const Conv& c, std::vector<int64_t> od,
                       const std::string& route = "") {
  auto g = make_conv(x, w, nullptr, c, od);
  LoadOptions o;
  if (!route.empty()) o.force_route["conv"] = route;
  try {
    g->run(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OpConv, GemmAndDirectRoutesAgreeWithStridePaddingBias) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 5, 9, 11}, 1), w = random_f32({7, 5, 3, 3}, 2), b = random_f32({7}, 3);
  Conv c;
  c.stride = {2, 2};
  c.padding = {1, 1};
  expect_conv(x, w, &b, c, "", "conv_direct");  // K = 45 over 1 tile: direct by default
  expect_conv(x, w, &b, c, "gemm", "conv_gemm");
  expect_conv(x, w, &b, c, "direct", "conv_direct");
}

TEST(OpConv, AsymmetricDilationPaddingStrideOnBothRoutes) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 8, 13, 10}, 4), w = random_f32({70, 8, 3, 2}, 5);  // OC 70: two M tiles
  Conv c;
  c.stride = {1, 2};
  c.padding = {2, 1};
  c.dilation = {2, 3};
  expect_conv(x, w, nullptr, c, "gemm", "conv_gemm");
  expect_conv(x, w, nullptr, c, "direct", "conv_direct_vec4");  // 8 channels: vec4 direct
}

TEST(OpConv, SingleElementListsBroadcastToBothDims) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 4, 10, 9}, 6), w = random_f32({6, 4, 3, 3}, 7), b = random_f32({6}, 8);
  Conv c;
  c.stride = {2};
  c.padding = {1};
  c.dilation = {1};
  c.output_padding = {0};
  auto ref = ref::conv(x, w, &b, [] { ref::ConvArgs a; a.sh = a.sw = 2; a.ph = a.pw = 1; return a; }());
  EXPECT_TRUE(Close(run_conv(x, w, &b, c), ref, 1e-4, 1e-4));
}

TEST(OpConv, RgbStemWithThreeChannelsAndNoBias) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 17, 15}, 9), w = random_f32({16, 3, 3, 3}, 10);
  Conv c;
  c.stride = {2, 2};
  c.padding = {1, 1};
  expect_conv(x, w, nullptr, c, "gemm", "conv_gemm");
  expect_conv(x, w, nullptr, c, "direct", "conv_direct");
}

TEST(OpConv, PatchEmbedStrideEqualsKernel) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 3, 20, 20}, 11), w = random_f32({24, 3, 4, 4}, 12), b = random_f32({24}, 13);
  Conv c;
  c.stride = {4, 4};
  expect_conv(x, w, &b, c, "gemm", "conv_gemm");
  expect_conv(x, w, &b, c, "direct", "conv_direct");
}

TEST(OpConv, GroupedUsesVec4DirectWhenChannelsPerGroupDivideBy4) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 16, 7, 9}, 14), w = random_f32({12, 8, 3, 3}, 15), b = random_f32({12}, 16);
  Conv c;
  c.groups = 2;
  c.padding = {1, 1};
  expect_conv(x, w, &b, c, "", "conv_direct_vec4");
  expect_conv(x, w, &b, c, "gemm", "conv_direct_vec4");  // "gemm" is only for groups == 1
  auto x3 = random_f32({1, 9, 8, 7}, 17), w3 = random_f32({6, 3, 2, 3}, 18);
  Conv c3;
  c3.groups = 3;
  c3.stride = {2, 1};
  c3.dilation = {2, 1};
  expect_conv(x3, w3, nullptr, c3, "", "conv_direct");
}

TEST(OpConv, DepthwiseWithChannelMultiplier) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 6, 11, 10}, 19), w = random_f32({6, 1, 3, 3}, 20), b = random_f32({6}, 21);
  Conv c;
  c.groups = 6;
  c.padding = {1, 1};
  expect_conv(x, w, &b, c, "", "conv_depthwise");
  auto w2 = random_f32({12, 1, 5, 5}, 22);  // 2 outputs per input channel: the direct kernel
  Conv c2;
  c2.groups = 6;
  c2.padding = {2, 2};
  c2.stride = {2, 2};
  expect_conv(x, w2, nullptr, c2, "", "conv_direct");
}

TEST(OpConv, Conv1dOnBothRoutesAndGrouped) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 6, 23}, 23), w = random_f32({5, 6, 4}, 24), b = random_f32({5}, 25);
  Conv c;
  c.stride = {2};
  c.padding = {2};
  c.dilation = {2};
  c.output_padding = {0};
  expect_conv(x, w, &b, c, "gemm", "conv_gemm");
  expect_conv(x, w, &b, c, "direct", "conv_direct");
  auto wg = random_f32({4, 3, 3}, 26);
  Conv cg = c;
  cg.groups = 2;
  expect_conv(x, wg, nullptr, cg, "", "conv_direct");
}

TEST(OpConv, TransposedWithStrideOutputPaddingAndGroups) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 4, 5, 6}, 27), w = random_f32({4, 3, 3, 3}, 28), b = random_f32({3}, 29);
  Conv c;
  c.transposed = true;
  c.stride = {2, 2};
  c.padding = {1, 1};
  c.output_padding = {1, 0};
  expect_conv(x, w, &b, c, "", "conv_transpose");
  auto wg = random_f32({6, 2, 3, 2}, 30);  // groups 3: OC = 6
  auto xg = random_f32({1, 6, 4, 5}, 31);
  Conv cg;
  cg.transposed = true;
  cg.groups = 3;
  cg.stride = {3, 2};
  cg.dilation = {2, 1};
  cg.padding = {0, 1};
  cg.output_padding = {1, 1};  // < stride
  expect_conv(xg, wg, nullptr, cg, "", "conv_transpose");
  auto x1 = random_f32({1, 3, 7}, 32), w1 = random_f32({3, 2, 4}, 33);  // 1-D transposed
  Conv c1;
  c1.transposed = true;
  c1.stride = {2};
  c1.padding = {1};
  c1.dilation = {1};
  c1.output_padding = {1};
  expect_conv(x1, w1, nullptr, c1, "", "conv_transpose");
}

TEST(OpConv, ConvWithClampAppliesBoundsInEpilogue) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 4, 8, 8}, 34, -2.f, 2.f), w = random_f32({8, 4, 3, 3}, 35), b = random_f32({8}, 36);
  Conv c;
  c.clamp = true;
  c.padding = {1, 1};
  c.cmin = 0.0;
  c.int_min = true;  // Int(0), as observed in exports
  c.cmax = 0.5;
  expect_conv(x, w, &b, c, "gemm", "conv_gemm");
  expect_conv(x, w, &b, c, "direct", "conv_direct_vec4");
  Conv hi = c;
  hi.cmax = DBL_MAX;  // relu-like: no upper bound
  expect_conv(x, w, &b, hi, "gemm", "conv_gemm");
  expect_conv(x, w, &b, hi, "", "conv_direct_vec4");
  Conv lo = c;
  lo.cmin.reset();  // Null min
  lo.cmax = 0.25;
  expect_conv(x, w, &b, lo, "gemm", "conv_gemm");
  expect_conv(x, w, &b, lo, "", "conv_direct_vec4");
  Conv dw = c;
  dw.groups = 4;
  auto wd = random_f32({4, 1, 3, 3}, 37), bd = random_f32({4}, 38);
  expect_conv(x, wd, &bd, dw, "", "conv_depthwise");
  Conv tr = c;
  tr.transposed = true;
  tr.stride = {2, 2};
  auto wt = random_f32({4, 3, 3, 3}, 39), bt = random_f32({3}, 40);
  expect_conv(x, wt, &bt, tr, "", "conv_transpose");
}

TEST(OpConv, DynamicSpatialSizeRecomputesOutputOnRerun) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({5, 3, 3, 3}, 41), b = random_f32({5}, 42);
  Conv c;
  c.stride = {2, 2};
  c.padding = {1, 1};
  for (const char* route : {"gemm", "direct"}) {
    auto x0 = random_f32({2, 3, 16, 16}, 43);
    auto ref0 = ref::conv(x0, w, &b, ref_args(c));
    auto g = make_conv(x0, w, &b, c, ref0.shape, {2, 3, 16, 16}, ref0.shape);
    LoadOptions o;
    o.force_route["conv"] = route;
    EXPECT_TRUE(Close(g->run(o)[0], ref0, 1e-4, 1e-4)) << route;
    auto x1 = random_f32({1, 3, 9, 7}, 44);
    auto ref1 = ref::conv(x1, w, &b, ref_args(c));
    auto got = g->rerun({x1})[0];
    EXPECT_EQ(got.shape, (std::vector<int64_t>{1, 5, 5, 4})) << route;
    EXPECT_TRUE(Close(got, ref1, 1e-4, 1e-4)) << route;
  }
  // Transposed conv, dynamic too.
  auto wt = random_f32({3, 2, 3, 3}, 45);
  Conv ct;
  ct.transposed = true;
  ct.stride = {2, 2};
  auto x0 = random_f32({1, 3, 6, 6}, 46);
  auto ref0 = ref::conv(x0, wt, nullptr, ref_args(ct));
  auto g = make_conv(x0, wt, nullptr, ct, ref0.shape, {1, 3, 6, 6}, ref0.shape);
  EXPECT_TRUE(Close(g->run()[0], ref0, 1e-4, 1e-4));
  auto x1 = random_f32({1, 3, 4, 5}, 47);
  EXPECT_TRUE(Close(g->rerun({x1})[0], ref::conv(x1, wt, nullptr, ref_args(ct)), 1e-4, 1e-4));
}

TEST(OpConv, DirectKernelPast65535WorkgroupsIsCorrect) {
  ETW_REQUIRE_GPU();
  // 1x1, two outputs per input channel: 128 * 400 * 400 outputs > 65535 * 256, so the flat grid
  // folds into 2-D.
  auto x = random_f32({1, 64, 400, 400}, 48), w = random_f32({128, 1, 1, 1}, 49), b = random_f32({128}, 50);
  Conv c;
  c.groups = 64;
  ASSERT_GT(128LL * 400 * 400, 65535LL * 256);
  expect_conv(x, w, &b, c, "", "conv_direct");
}

// Depthwise convs (one input and one output channel a group) take conv_depthwise, four outputs of
// a row per invocation: odd widths (a last, partial quad), strides, dilations, 7x7 (ConvNeXt),
// 1-D; each against the reference and the direct kernel force_route["depthwise"] = "direct" pins.
TEST(OpConv, DepthwiseRowsMatchTheReferenceAndTheDirectKernel) {
  ETW_REQUIRE_GPU();
  struct Case { std::vector<int64_t> x; int64_t k, stride, pad, dil; };
  for (const Case& k : {Case{{1, 6, 11, 10}, 3, 1, 1, 1}, Case{{2, 5, 13, 9}, 3, 2, 1, 1}, Case{{1, 8, 9, 7}, 7, 1, 3, 1},
                        Case{{1, 4, 12, 11}, 5, 2, 2, 1}, Case{{1, 3, 10, 10}, 3, 1, 2, 2}, Case{{1, 6, 17}, 5, 1, 2, 1}}) {
    const bool conv1d = k.x.size() == 3;
    const int64_t C = k.x[1];
    auto x = random_f32(k.x, 130), b = random_f32({C}, 131);
    auto w = conv1d ? random_f32({C, 1, k.k}, 132) : random_f32({C, 1, k.k, k.k}, 132);
    Conv c;
    c.groups = C;
    if (conv1d) c.stride = {k.stride}, c.padding = {k.pad}, c.dilation = {k.dil}, c.output_padding = {0};
    else c.stride = {k.stride, k.stride}, c.padding = {k.pad, k.pad}, c.dilation = {k.dil, k.dil};
    SCOPED_TRACE(shape_str(k.x) + " k" + std::to_string(k.k));
    expect_conv(x, w, &b, c, "", "conv_depthwise");
    auto ref = ref::conv(x, w, &b, ref_args(c));
    auto g = make_conv(x, w, &b, c, ref.shape);
    LoadOptions o;
    o.force_route["depthwise"] = "direct";
    EXPECT_TRUE(Close(g->run(o)[0], ref, 1e-4, 1e-4));
    EXPECT_EQ(g->variants(), std::vector<std::string>{"conv_direct"});
  }
}

// Large-tile implicit GEMM (conv_gemm_large.wgsl): 128x128 ("gemm_large") and 64x128
// ("gemm_large_m64") tiles agree with the reference and with the 64x64 kernel on edge tiles.
TEST(OpConv, LargeTileGemmMatchesSmallTileOnOddEdgesStridePaddingDilation) {
  ETW_REQUIRE_GPU();
  // OC 70 (partial row tile), N = 2 * 7 * 9 = 126 (partial column tile), K = 5 * 9 = 45 (K % 8 != 0).
  auto x = random_f32({2, 5, 13, 17}, 60), w = random_f32({70, 5, 3, 3}, 61), b = random_f32({70}, 62);
  Conv c;
  c.stride = {2, 2};
  c.padding = {1, 2};
  c.dilation = {1, 2};
  auto small = run_conv(x, w, &b, c, "gemm");
  for (auto [r, v] : {std::pair{"gemm_large", "conv_gemm_128x128"}, std::pair{"gemm_large_m64", "conv_gemm_64x128"}}) {
    expect_conv(x, w, &b, c, r, v);
    EXPECT_TRUE(Close(run_conv(x, w, &b, c, r), small, 1e-4, 1e-4)) << r;
  }
  // Non-square kernel (KH 3, KW 2), asymmetric stride, no bias, OC past two 64-row tiles.
  auto x2 = random_f32({1, 8, 21, 30}, 63), w2 = random_f32({130, 8, 3, 2}, 64);
  Conv c2;
  c2.stride = {1, 2};
  c2.padding = {2, 1};
  c2.dilation = {2, 3};
  expect_conv(x2, w2, nullptr, c2, "gemm_large", "conv_gemm_128x128");
  expect_conv(x2, w2, nullptr, c2, "gemm_large_m64", "conv_gemm_64x128");
  // RGB stem (K = 27) and 1x1 (K = IC) kernels. The stem's OW = 12: column quads along output
  // rows (ROW4), stride 2, over N = 120 (a partial tile) and K % 8 != 0.
  auto x3 = random_f32({1, 3, 19, 23}, 65), w3 = random_f32({32, 3, 3, 3}, 66);
  Conv c3;
  c3.stride = {2, 2};
  c3.padding = {1, 1};
  expect_conv(x3, w3, nullptr, c3, "gemm_large", "conv_gemm_128x128_row4");
  expect_conv(x3, w3, nullptr, c3, "gemm_large_m64", "conv_gemm_64x128_row4");
  auto w4 = random_f32({48, 3, 1, 1}, 67);
  expect_conv(x3, w4, nullptr, Conv{}, "gemm_large_m64", "conv_gemm_64x128");
}

TEST(OpConv, LargeTileGemmAlignedVariantAndDefaultRouting) {
  ETW_REQUIRE_GPU();
  // OC 64, N = 16 * 8 = 128, K = 8 * 9 = 72: every tile is whole.
  auto x = random_f32({1, 8, 16, 8}, 68), w = random_f32({64, 8, 3, 3}, 69), b = random_f32({64}, 70);
  Conv c;
  c.padding = {1, 1};
  expect_conv(x, w, &b, c, "gemm_large_m64", "conv_gemm_64x128_aligned_row4");
  expect_conv(x, w, &b, c, "gemm_large", "conv_gemm_128x128_row4");  // OC 64 < 128: edge checks
  // OW = 6 (not a multiple of 4): whole tiles (N = 64 * 6 = 384) with the per-column loader.
  auto xa = random_f32({1, 8, 64, 6}, 84);
  expect_conv(xa, w, &b, c, "gemm_large_m64", "conv_gemm_64x128_aligned");
  expect_conv(x, w, &b, c, "gemm", "conv_gemm");                 // 1 tile: too small for large tiles
  expect_conv(x, w, &b, c, "", "conv_gemm_small");               // and K = 72 over 1 tile: small tiles
  // 128 x 128 output = 128 column tiles: the default route takes the large kernel (64 rows for OC 64).
  auto xl = random_f32({1, 8, 128, 128}, 71), wl = random_f32({64, 8, 3, 3}, 72), bl = random_f32({64}, 73);
  expect_conv(xl, wl, &bl, c, "", "conv_gemm_64x128_aligned_row4");
  // OC 32 takes 64x128 tiles too (the H200 ran 32->32 at 128x128 in 0.048 ms, 0.054 on 64x64
  // tiles), unaligned: half of each tile's rows are past OC.
  auto ws = random_f32({32, 8, 3, 3}, 74);
  expect_conv(xl, ws, nullptr, c, "", "conv_gemm_64x128_row4");
}

TEST(OpConv, LargeTileGemm128AlignedVariantWhenEveryTileIsWhole) {
  ETW_REQUIRE_GPU();
  // OC 128, N = 16 * 8 = 128, K = 8 * 9 = 72: one whole 128x128 tile, no edge checks.
  auto x = random_f32({1, 8, 16, 8}, 75), w = random_f32({128, 8, 3, 3}, 76), b = random_f32({128}, 77);
  Conv c;
  c.padding = {1, 1};
  expect_conv(x, w, &b, c, "gemm_large", "conv_gemm_128x128_aligned_row4");
  // Same shapes with OC 130: the unaligned 128x128 kernel with a 2-row second tile.
  auto w2 = random_f32({130, 8, 3, 3}, 78);
  expect_conv(x, w2, nullptr, c, "gemm_large", "conv_gemm_128x128_row4");
  // OW = 6: whole tiles (N = 384) with the per-column loader.
  auto xa = random_f32({1, 8, 64, 6}, 85);
  expect_conv(xa, w, &b, c, "gemm_large", "conv_gemm_128x128_aligned");
}

TEST(OpConv, LargeTileGemmClampConv1dAndDynamicRerun) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 4, 8, 8}, 75, -2.f, 2.f), w = random_f32({40, 4, 3, 3}, 76), b = random_f32({40}, 77);
  Conv c;
  c.clamp = true;
  c.padding = {1, 1};
  c.cmin = -0.25;
  c.cmax = 0.5;
  expect_conv(x, w, &b, c, "gemm_large", "conv_gemm_128x128_row4");
  expect_conv(x, w, &b, c, "gemm_large_m64", "conv_gemm_64x128_row4");
  auto x9 = random_f32({1, 4, 8, 9}, 87, -2.f, 2.f);  // OW = 9: the per-column loader
  expect_conv(x9, w, &b, c, "gemm_large", "conv_gemm_128x128");
  expect_conv(x9, w, &b, c, "gemm_large_m64", "conv_gemm_64x128");
  auto x1 = random_f32({2, 6, 150}, 78), w1 = random_f32({66, 6, 5}, 79), b1 = random_f32({66}, 80);
  Conv c1;
  c1.stride = {1};
  c1.padding = {2};
  c1.dilation = {1};
  c1.output_padding = {0};
  expect_conv(x1, w1, &b1, c1, "gemm_large_m64", "conv_gemm_64x128");
  expect_conv(x1, w1, &b1, c1, "gemm", "conv_gemm");
  // Conv1d with OW = 152 over 2 batches: quads never straddle a batch.
  auto x1q = random_f32({2, 6, 152}, 86);
  expect_conv(x1q, w1, &b1, c1, "gemm_large_m64", "conv_gemm_64x128_row4");
  // Dynamic spatial size on the large kernel: aligned with quads at the bound (N = 16 * 16 = 256),
  // edges and the per-column loader after (OW = 7).
  auto wd = random_f32({64, 3, 3, 3}, 81);
  Conv cd;
  cd.padding = {1, 1};
  auto x0 = random_f32({1, 3, 16, 16}, 82);
  auto ref0 = ref::conv(x0, wd, nullptr, ref_args(cd));
  auto g = make_conv(x0, wd, nullptr, cd, ref0.shape, {1, 3, 16, 16}, ref0.shape);
  LoadOptions o;
  o.force_route["conv"] = "gemm_large_m64";
  EXPECT_TRUE(Close(g->run(o)[0], ref0, 1e-4, 1e-4));
  auto xs = random_f32({1, 3, 9, 7}, 83);
  auto got = g->rerun({xs})[0];
  EXPECT_EQ(got.shape, (std::vector<int64_t>{1, 64, 9, 7}));
  EXPECT_TRUE(Close(got, ref::conv(xs, wd, nullptr, ref_args(cd)), 1e-4, 1e-4));
}

TEST(OpConv, InvalidConfigurationsFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 4, 6, 6}, 51), w = random_f32({2, 4, 3, 3}, 52);
  Conv op;
  op.output_padding = {1, 1};
  EXPECT_NE(load_error(x, w, op, {1, 2, 4, 4}).find("output_padding"), std::string::npos);
  Conv st;
  st.stride = {0, 1};
  EXPECT_NE(load_error(x, w, st, {1, 2, 4, 4}).find("stride"), std::string::npos);
  Conv l3;
  l3.padding = {1, 1, 1};
  EXPECT_NE(load_error(x, w, l3, {1, 2, 4, 4}).find("padding must have 1 or 2"), std::string::npos);
  Conv gr;
  gr.groups = 3;  // 4 input channels do not split into 3 groups
  EXPECT_NE(load_error(x, w, gr, {1, 2, 4, 4}).find("groups"), std::string::npos);
  auto w5 = random_f32({2, 5, 3, 3}, 53);  // channel mismatch
  EXPECT_NE(load_error(x, w5, Conv{}, {1, 2, 4, 4}).find("does not match input channels"), std::string::npos);
  auto x5 = random_f32({1, 2, 3, 4, 4}, 54), w3d = random_f32({2, 2, 1, 1, 1}, 55);
  EXPECT_NE(load_error(x5, w3d, Conv{}, {1, 2, 3, 4, 4}).find("only 1-D"), std::string::npos);
  auto wbig = random_f32({2, 4, 7, 7}, 56);  // kernel larger than the input
  EXPECT_NE(load_error(x, wbig, Conv{}, {1, 2, 1, 1}).find("too small"), std::string::npos);
  Conv tp;
  tp.transposed = true;
  tp.stride = {2, 2};
  tp.output_padding = {2, 0};  // not smaller than stride or dilation
  auto wt = random_f32({4, 2, 3, 3}, 57);
  EXPECT_NE(load_error(x, wt, tp, {1, 2, 14, 13}).find("output_padding must be smaller"), std::string::npos);
  EXPECT_NE(load_error(x, w, Conv{}, {1, 2, 4, 4}, "winograd").find("force_route"), std::string::npos);
  auto xi = random_i32({1, 4, 6, 6}, 58, 0, 3);
  EXPECT_NE(load_error(xi, w, Conv{}, {1, 2, 4, 4}).find("dtype"), std::string::npos);
  EXPECT_NE(load_error(x, w, Conv{}, {1, 2, 3, 3}).find("exceeds its bound"), std::string::npos);
}

}  // namespace

// Split-K (conv_gemm.wgsl SPLITK / SPLITK_REDUCE): a ResNet 7x7 layer gives the 64x64 GEMM two
// tiles, so K = 512 * 9 (past the small tiles' K) is split and a reduce kernel adds the partials,
// the bias and the clamp. A smaller input on rerun splits differently; a forced split on a conv
// with many tiles too.
TEST(OpConv, SplitKOfFewTilesMatchesTheReference) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 512, 7, 7}, 61), w = random_f32({128, 512, 3, 3}, 62, -0.1f, 0.1f), b = random_f32({128}, 63);
  for (bool clamp : {false, true}) {
    Conv c;
    c.padding = {1, 1};
    c.clamp = clamp;
    if (clamp) c.cmin = 0.0, c.cmax = 0.5;
    auto ref = ref::conv(x, w, &b, ref_args(c));
    auto g = make_conv(x, w, &b, c, ref.shape, {1, 512, 7, 7}, ref.shape);
    EXPECT_TRUE(Close(g->run()[0], ref, 1e-4, 1e-4)) << "clamp " << clamp;
    EXPECT_EQ(g->variants(), (std::vector<std::string>{"conv_gemm_splitk", "conv_splitk_reduce"}));
    if (clamp) continue;
    auto x1 = random_f32({1, 512, 3, 5}, 64);
    EXPECT_TRUE(Close(g->rerun({x1})[0], ref::conv(x1, w, &b, ref_args(c)), 1e-4, 1e-4)) << "smaller rerun";
  }
  // Forced on a conv the 64x64 GEMM would fill the GPU with: still split, still right.
  auto x2 = random_f32({2, 16, 20, 20}, 65), w2 = random_f32({24, 16, 3, 3}, 66), b2 = random_f32({24}, 67);
  Conv c;
  c.padding = {1, 1};
  auto ref2 = ref::conv(x2, w2, &b2, ref_args(c));
  auto g2 = make_conv(x2, w2, &b2, c, ref2.shape);
  LoadOptions o;
  o.force_route["conv"] = "gemm_splitk";
  EXPECT_TRUE(Close(g2->run(o)[0], ref2, 1e-4, 1e-4));
  EXPECT_EQ(g2->variants(), (std::vector<std::string>{"conv_gemm_splitk", "conv_splitk_reduce"}));
}

// A Whisper-style conv1d (384 -> 384 channels, kernel 3, stride 2 over 1500 steps: 144 tiles of
// the 64x64 GEMM over K = 1152, 2256 of the small ones) splits K, as a conv2d does; the small
// tiles forced on it, and a forced split of a small conv1d, are right.
TEST(OpConv, Conv1dSplitsKOrTakesTheSmallTilesLikeConv2d) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 384, 3000}, 68), w = random_f32({384, 384, 3}, 69, -0.05f, 0.05f), b = random_f32({384}, 70);
  Conv c;
  c.stride = {2};
  c.padding = {1};
  c.dilation = {1};
  c.output_padding = {0};
  auto ref = ref::conv(x, w, &b, ref_args(c));
  auto g = make_conv(x, w, &b, c, ref.shape);
  EXPECT_TRUE(Close(g->run()[0], ref, 1e-4, 1e-4));
  EXPECT_EQ(g->variants(), (std::vector<std::string>{"conv_gemm_splitk", "conv_splitk_reduce"}));
  LoadOptions small;
  small.force_route["conv"] = "gemm_small";
  EXPECT_TRUE(Close(g->run(small)[0], ref, 1e-4, 1e-4));
  EXPECT_EQ(g->variants(), std::vector<std::string>{"conv_gemm_small"});
  auto xs = random_f32({2, 16, 23}, 71), ws = random_f32({5, 16, 4}, 72), bs = random_f32({5}, 73);
  Conv cs = c;
  cs.dilation = {2};
  cs.padding = {2};
  auto refs = ref::conv(xs, ws, &bs, ref_args(cs));
  auto gs = make_conv(xs, ws, &bs, cs, refs.shape);
  LoadOptions o;
  o.force_route["conv"] = "gemm_splitk";
  EXPECT_TRUE(Close(gs->run(o)[0], refs, 1e-5, 1e-4));
  EXPECT_EQ(gs->variants(), (std::vector<std::string>{"conv_gemm_splitk", "conv_splitk_reduce"}));
}

// A residual add fused into a split conv runs in the reduce kernel's store; into a small-tile
// conv (the default here), in its own store.
TEST(OpConv, SplitKReduceAndSmallTilesApplyTheFusedEpilogue) {
  ETW_REQUIRE_GPU();
  for (std::string route : {"gemm_splitk", ""}) {
    SCOPED_TRACE(route);
    auto x = random_f32({1, 128, 7, 7}, 71), w = random_f32({128, 128, 3, 3}, 72, -0.1f, 0.1f), r = random_f32({1, 128, 7, 7}, 73);
    OpGraph g;
    auto& gb = g.gb;
    Id c = g.tensor(DType::Float32, {1, 128, 7, 7});
    gb.op("aten.convolution.default", {g.input(x), g.constant(w), gb.null(), gb.int_list({1, 1}), gb.int_list({1, 1}),
                                       gb.int_list({1, 1}), gb.boolean(false), gb.int_list({0, 0}), gb.int_(1), c});
    gb.op("aten.add.Tensor", {c, g.input(r), gb.int_(1), g.output(DType::Float32, {1, 128, 7, 7})});
    LoadOptions o;
    if (!route.empty()) o.force_route["conv"] = route;
    auto got = g.run(o)[0];
    Conv cv;
    cv.padding = {1, 1};
    auto ref = ref::conv(x, w, nullptr, ref_args(cv));
    auto rv = f64(r);
    for (size_t i = 0; i < rv.size(); ++i) reinterpret_cast<double*>(ref.data.data())[i] += rv[i];
    EXPECT_TRUE(Close(got, ref, 1e-4, 1e-4));
    Profile p;
    g.model()->run(g.inputs, &p);
    ASSERT_EQ(p.dispatches.size(), route.empty() ? 1u : 2u);
    EXPECT_EQ(p.dispatches.back().op, "fused[convolution+add]");
    EXPECT_EQ(p.dispatches.back().variant, route.empty() ? "conv_gemm_small" : "conv_splitk_reduce");
  }
}

// The small-tile conv GEMM (conv_gemm_small.wgsl: 16x16 tiles, K in 16 slices of one workgroup
// added as a tree), forced: 1x1 and 3x3 kernels, stride, dilation, padding, batches, tiles cut by
// the output channels and pixels, a K of fewer than 16 (idle slices) and an odd K (the last
// step of one k), with and without bias, clamped; by default a SqueezeNet-like 1x1 squeeze at
// 13x13 takes it.
TEST(OpConv, SmallTilesMatchTheReference) {
  ETW_REQUIRE_GPU();
  struct Case { std::vector<int64_t> x, w; Conv c; bool bias; };
  std::vector<Case> cases;
  cases.push_back({{1, 37, 13, 13}, {21, 37, 1, 1}, Conv{}, true});
  Conv pad;
  pad.padding = {1, 1};
  cases.push_back({{2, 5, 9, 11}, {18, 5, 3, 3}, pad, false});
  Conv strided;
  strided.stride = {2, 2};
  strided.padding = {2, 1};
  strided.dilation = {2, 1};
  strided.clamp = true;
  strided.cmin = -0.2, strided.cmax = 0.3;
  cases.push_back({{1, 3, 15, 14}, {33, 3, 3, 2}, strided, true});
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    auto x = random_f32(k.x, 90 + i), w = random_f32(k.w, 95 + i, -0.3f, 0.3f), b = random_f32({k.w[0]}, 99 + i);
    auto ref = ref::conv(x, w, k.bias ? &b : nullptr, ref_args(k.c));
    auto g = make_conv(x, w, k.bias ? &b : nullptr, k.c, ref.shape);
    LoadOptions o;
    o.force_route["conv"] = "gemm_small";
    EXPECT_TRUE(Close(g->run(o)[0], ref, 1e-5, 1e-4)) << i;
    EXPECT_EQ(g->variants(), std::vector<std::string>{"conv_gemm_small"}) << i;
  }
  auto x = random_f32({1, 384, 13, 13}, 110), w = random_f32({48, 384, 1, 1}, 111, -0.1f, 0.1f), b = random_f32({48}, 112);
  Conv c;
  auto ref = ref::conv(x, w, &b, ref_args(c));
  auto g = make_conv(x, w, &b, c, ref.shape);
  EXPECT_TRUE(Close(g->run()[0], ref, 1e-4, 1e-4));
  EXPECT_EQ(g->variants(), std::vector<std::string>{"conv_gemm_small"});
}

// A short K over few tiles: the direct kernel at or below K = 48, the small tiles above it
// (ShuffleNetV2's 1x1 convs, 58 -> 58 at 28x28), both against the reference.
TEST(OpConv, ShortKOverFewTilesTakesTheDirectKernelUpTo48AndTheSmallTilesAbove) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t ic, oc, hw; const char* variant; };
  for (const Case& k : {Case{58, 58, 28, "conv_gemm_small"}, Case{49, 20, 12, "conv_gemm_small"},
                        Case{48, 20, 12, "conv_direct_vec4"}, Case{24, 58, 28, "conv_direct_vec4"}}) {
    auto x = random_f32({1, k.ic, k.hw, k.hw}, 120), w = random_f32({k.oc, k.ic, 1, 1}, 121, -0.2f, 0.2f),
         b = random_f32({k.oc}, 122);
    auto ref = ref::conv(x, w, &b, ref_args(Conv{}));
    auto g = make_conv(x, w, &b, Conv{}, ref.shape);
    EXPECT_TRUE(Close(g->run()[0], ref, 1e-4, 1e-4)) << k.ic << " -> " << k.oc;
    EXPECT_EQ(g->variants(), std::vector<std::string>{k.variant}) << k.ic << " -> " << k.oc;
  }
}
