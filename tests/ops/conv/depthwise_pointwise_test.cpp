// etwebgpu.depthwise_pointwise (src/ops/conv/depthwise_pointwise.h): a depthwise conv and the 1x1
// conv reading its output are one dispatch, against the float64 reference and the unfused graph:
// over channel counts that do and do not fill the staged rounds, strides, dilations and batch 2,
// with each clamp, epilogue and prologue form ExecuTorch's exports give them, inside ShuffleNetV2's
// shuffle and with the delegate's packed memory objects. What keeps the two dispatches, and
// malformed calls as load errors.
#include <cmath>
#include <limits>

#include "reference/conv/conv_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct Geometry {
  int64_t stride = 1, pad = 1, dilation = 1;
};

// aten.convolution (or et_vk.conv_with_clamp with bounds lo / hi) of x into out.
void conv(OpGraph& g, Id x, const HostTensor& w, const HostTensor* b, Geometry geo, int64_t groups, Id out,
          std::optional<std::pair<double, double>> clamp = std::nullopt) {
  auto& gb = g.gb;
  std::vector<Id> args = {x, g.constant(w), b ? g.constant(*b) : gb.null(), gb.int_list({geo.stride, geo.stride}),
                          gb.int_list({geo.pad, geo.pad}), gb.int_list({geo.dilation, geo.dilation}), gb.boolean(false),
                          gb.int_list({0, 0}), gb.int_(groups)};
  if (clamp) args.insert(args.end(), {gb.dbl(clamp->first), gb.dbl(clamp->second)});
  args.push_back(out);
  gb.op(clamp ? "et_vk.conv_with_clamp.default" : "aten.convolution.default", args);
}

ref::ConvArgs args_of(Geometry geo, int64_t groups) {
  ref::ConvArgs a;
  a.sh = a.sw = geo.stride;
  a.ph = a.pw = geo.pad;
  a.dh = a.dw = geo.dilation;
  a.groups = groups;
  return a;
}

HostTensor map(const HostTensor& t, const std::function<double(double)>& f) {
  std::vector<double> v = f64(t);
  for (double& e : v) e = f(e);
  return ref_tensor(t.shape, v);
}

// One pair on each kind of shape: channels below, at and past the 32 of a round, output channels
// past one workgroup's 64, a stride-2 depthwise conv, a 5x5 dilated one, batch 2; with and
// without biases. One dispatch each, within the reference's tolerance and the unfused result's.
TEST(OpDepthwisePointwise, ThePairIsOneDispatchOnEveryShape) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t B, C, OC, H, W, k; Geometry geo; bool biases; };
  const std::vector<Case> cases = {
      {1, 58, 58, 28, 28, 3, {1, 1, 1}, true},    // ShuffleNetV2's first stage
      {1, 116, 116, 28, 28, 3, {2, 1, 1}, true},  // a downsampling branch
      {1, 232, 232, 7, 7, 3, {1, 1, 1}, false},
      {1, 32, 16, 14, 14, 3, {1, 1, 1}, true},    // one full round, OC below a workgroup's
      {2, 20, 70, 9, 11, 5, {1, 4, 2}, true},     // 5x5 dilated, batch 2, OC past 64
      {1, 7, 3, 5, 6, 3, {2, 0, 1}, false},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE("C " + std::to_string(k.C) + " OC " + std::to_string(k.OC) + " " + std::to_string(k.H) + "x" + std::to_string(k.W));
    HostTensor x = random_f32({k.B, k.C, k.H, k.W}, 1), dw = random_f32({k.C, 1, k.k, k.k}, 2, -0.5f, 0.5f);
    HostTensor db = random_f32({k.C}, 3), pw = random_f32({k.OC, k.C, 1, 1}, 4, -0.3f, 0.3f), pb = random_f32({k.OC}, 5);
    const ref::ConvArgs da = args_of(k.geo, k.C);
    HostTensor mid = ref::conv(x, dw, k.biases ? &db : nullptr, da);
    HostTensor want = ref::conv(mid, pw, k.biases ? &pb : nullptr, ref::ConvArgs{});
    auto build = [&](OpGraph& g) {
      Id m = g.tensor(DType::Float32, mid.shape);
      conv(g, g.input(x), dw, k.biases ? &db : nullptr, k.geo, k.C, m);
      conv(g, m, pw, k.biases ? &pb : nullptr, {1, 0, 1}, 1, g.output(DType::Float32, want.shape));
    };
    LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
    EXPECT_EQ(fused.ops, std::vector<std::string>{"etwebgpu.depthwise_pointwise"});
    EXPECT_EQ(fused.variants, std::vector<std::string>{"depthwise_pointwise"});
    EXPECT_TRUE(Close(fused.out[0], want, 1e-4, 1e-4));
    EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-4, 1e-4));
  }
}

// The forms around the pair: MobileNetV2's relu6 on the depthwise conv (et_vk.conv_with_clamp) and
// a clamp on the pointwise one; relu as the depthwise conv's epilogue; a per-channel affine between
// the two (the pointwise conv's prologue); the pointwise conv's residual add (an epilogue with an
// input).
TEST(OpDepthwisePointwise, ClampsProloguesAndEpiloguesRunInTheOneDispatch) {
  ETW_REQUIRE_GPU();
  const int64_t C = 40, OC = 24, H = 10, W = 12;
  HostTensor x = random_f32({1, C, H, W}, 6, -4.f, 4.f), dw = random_f32({C, 1, 3, 3}, 7, -0.8f, 0.8f);
  HostTensor db = random_f32({C}, 8), pw = random_f32({OC, C, 1, 1}, 9, -0.4f, 0.4f), pb = random_f32({OC}, 10);
  HostTensor scale = random_f32({1, C, 1, 1}, 11), res = random_f32({1, OC, H, W}, 12);
  const HostTensor mid = ref::conv(x, dw, &db, args_of({}, C));
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  auto relu = [](double v) { return std::max(v, 0.0); };
  auto t = [](OpGraph& g, std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
  struct Form { const char* name; std::function<void(OpGraph&)> build; HostTensor want; std::string op; };
  ref::ConvArgs clamp_pw;
  clamp_pw.out_min = -0.5, clamp_pw.out_max = 0.5;
  std::vector<double> sv = f64(scale);
  HostTensor scaled = mid;
  {
    std::vector<double> v = f64(mid);
    for (size_t i = 0; i < v.size(); ++i) v[i] *= sv[i / (H * W)];
    scaled = ref_tensor(mid.shape, v);
  }
  std::vector<double> plus = f64(ref::conv(map(mid, relu), pw, &pb, ref::ConvArgs{}));
  const std::vector<double> rv = f64(res);
  for (size_t i = 0; i < plus.size(); ++i) plus[i] += rv[i];
  const std::vector<Form> forms = {
      {"relu6 clamp, then a clamped pointwise conv",
       [&](OpGraph& g) {
         Id m = t(g, mid.shape);
         conv(g, g.input(x), dw, &db, {}, C, m, std::pair{0.0, 6.0});
         conv(g, m, pw, &pb, {1, 0, 1}, 1, g.output(DType::Float32, {1, OC, H, W}), std::pair{-0.5, 0.5});
       },
       ref::conv(map(mid, relu6), pw, &pb, clamp_pw), "etwebgpu.depthwise_pointwise"},
      {"relu as the depthwise epilogue",
       [&](OpGraph& g) {
         Id m = t(g, mid.shape), r = t(g, mid.shape);
         conv(g, g.input(x), dw, &db, {}, C, m);
         g.gb.op("aten.relu.default", {m, r});
         conv(g, r, pw, &pb, {1, 0, 1}, 1, g.output(DType::Float32, {1, OC, H, W}));
       },
       ref::conv(map(mid, relu), pw, &pb, ref::ConvArgs{}), "fused[convolution+relu+convolution]"},
      {"a per-channel scale between them",
       [&](OpGraph& g) {
         Id m = t(g, mid.shape), s = t(g, mid.shape);
         conv(g, g.input(x), dw, &db, {}, C, m);
         g.gb.op("aten.mul.Tensor", {m, g.input(scale), s});
         conv(g, s, pw, &pb, {1, 0, 1}, 1, g.output(DType::Float32, {1, OC, H, W}));
       },
       ref::conv(scaled, pw, &pb, ref::ConvArgs{}), "fused[convolution+mul+convolution]"},
      {"a residual add after the pointwise conv",
       [&](OpGraph& g) {
         Id m = t(g, mid.shape), r = t(g, mid.shape), c = t(g, {1, OC, H, W});
         conv(g, g.input(x), dw, &db, {}, C, m);
         g.gb.op("aten.relu.default", {m, r});
         conv(g, r, pw, &pb, {1, 0, 1}, 1, c);
         g.gb.op("aten.add.Tensor", {c, g.input(res), g.gb.int_(1), g.output(DType::Float32, {1, OC, H, W})});
       },
       ref_tensor({1, OC, H, W}, plus), "fused[convolution+relu+convolution+add]"},
  };
  for (const Form& f : forms) {
    SCOPED_TRACE(f.name);
    LoadedGraph fused = load_graph(f.build, true), plain = load_graph(f.build, false);
    EXPECT_EQ(fused.variants, std::vector<std::string>{"depthwise_pointwise"});
    EXPECT_EQ(fused.ops, std::vector<std::string>{f.op});
    EXPECT_TRUE(Close(fused.out[0], f.want, 1e-4, 1e-4));
    EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-4, 1e-4));
  }
}

// ShuffleNetV2's stride-1 branch end: depthwise conv, 1x1 conv with relu, shuffled with the
// passthrough half and split. The shuffle is stored by the pair's one dispatch.
TEST(OpDepthwisePointwise, ShuffleNetsBranchStoresItsShuffleInTheOneDispatch) {
  ETW_REQUIRE_GPU();
  const int64_t C = 24, H = 7, W = 7;
  HostTensor a = random_f32({1, C, H, W}, 13), x = random_f32({1, C, H, W}, 14), dw = random_f32({C, 1, 3, 3}, 15);
  HostTensor pw = random_f32({C, C, 1, 1}, 16, -0.3f, 0.3f);
  auto build = [&](OpGraph& g) {
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id m = t({1, C, H, W}), c = t({1, C, H, W}), r = t({1, C, H, W}), cat = t({1, 2 * C, H, W}), v5 = t({1, 2, C, H, W});
    Id p5 = t({1, C, 2, H, W}), v4 = t({1, 2 * C, H, W});
    conv(g, g.input(x), dw, nullptr, {}, C, m);
    conv(g, m, pw, nullptr, {1, 0, 1}, 1, c);
    g.gb.op("aten.relu.default", {c, r});
    g.gb.op("aten.cat.default", {g.gb.value_list({g.input(a), r}), g.gb.int_(1), cat});
    g.gb.op("aten.view_copy.default", {cat, g.gb.int_list({1, 2, C, H, W}), v5});
    g.gb.op("aten.permute_copy.default", {v5, g.gb.int_list({0, 2, 1, 3, 4}), p5});
    g.gb.op("aten.view_copy.default", {p5, g.gb.int_list({1, 2 * C, H, W}), v4});
    g.gb.op("aten.split_with_sizes_copy.default", {v4, g.gb.int_list({C, C}), g.gb.int_(1),
                                                   g.gb.value_list({g.output(DType::Float32, {1, C, H, W}), g.output(DType::Float32, {1, C, H, W})})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"fused[convolution+convolution+relu]"});
  EXPECT_EQ(fused.variants, std::vector<std::string>{"depthwise_pointwise"});
  const auto branch = f64(map(ref::conv(ref::conv(x, dw, nullptr, args_of({}, C)), pw, nullptr, ref::ConvArgs{}),
                              [](double v) { return std::max(v, 0.0); }));
  const auto pass = f64(a);
  ASSERT_EQ(fused.out.size(), 2u);
  for (size_t piece = 0; piece < 2; ++piece) {
    const auto got = f64(fused.out[piece]);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < H * W; ++p) {
        const int64_t k = static_cast<int64_t>(piece) * C + c;  // channel of the interleave
        const double want = (k % 2 ? branch : pass)[static_cast<size_t>((k / 2) * H * W + p)];
        EXPECT_NEAR(got[static_cast<size_t>(c * H * W + p)], want, 1e-4 * (1 + std::abs(want))) << piece << " " << c << " " << p;
      }
    EXPECT_TRUE(Close(fused.out[piece], plain.out[piece], 1e-4, 1e-4));
  }
}

// As the delegate packs memory: the pointwise output in the memory object of the depthwise input
// (a 1x1 conv's output, dead after the depthwise conv in the export), and, in a second graph, a
// tensor written between the two convs in it. The fused call reads that input at the pointwise
// conv; the results are the reference's and the unfused run's.
TEST(OpDepthwisePointwise, PackedMemoryObjectsAsTheExportWritesThem) {
  ETW_REQUIRE_GPU();
  const int64_t C = 16, H = 9, W = 9;
  HostTensor x = random_f32({1, C, H, W}, 17), w1 = random_f32({C, C, 1, 1}, 30, -0.3f, 0.3f);
  HostTensor dw = random_f32({C, 1, 3, 3}, 18), pw = random_f32({C, C, 1, 1}, 19, -0.3f, 0.3f);
  auto build = [&](OpGraph& g) {
    auto t = [&](int32_t mem) { return g.gb.tensor(DType::Float32, {1, C, H, W}, mem); };
    Id a = t(0), m = t(1), o = t(0);
    conv(g, g.input(x), w1, nullptr, {1, 0, 1}, 1, a);
    conv(g, a, dw, nullptr, {}, C, m);
    conv(g, m, pw, nullptr, {1, 0, 1}, 1, o);
    g.gb.op("aten._softmax.default", {o, g.gb.int_(1), g.gb.boolean(false), g.output(DType::Float32, {1, C, H, W})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  ASSERT_EQ(fused.ops.size(), 3u);
  EXPECT_EQ(fused.ops[1], "etwebgpu.depthwise_pointwise");
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-6, 1e-4));
  const HostTensor o = ref::conv(ref::conv(ref::conv(x, w1, nullptr, ref::ConvArgs{}), dw, nullptr, args_of({}, C)), pw, nullptr,
                                 ref::ConvArgs{});
  const std::vector<double> ov = f64(o), got = f64(fused.out[0]);
  for (int64_t p = 0; p < H * W; ++p) {  // softmax over the channels of each pixel
    double sum = 0;
    for (int64_t c = 0; c < C; ++c) sum += std::exp(ov[static_cast<size_t>(c * H * W + p)]);
    for (int64_t c = 0; c < C; ++c) {
      const size_t i = static_cast<size_t>(c * H * W + p);
      EXPECT_NEAR(got[i], std::exp(ov[i]) / sum, 1e-5) << c << " " << p;
    }
  }
  HostTensor y = random_f32({1, 8, 6, 6}, 31), w8 = random_f32({8, 8, 1, 1}, 23), dw8 = random_f32({8, 1, 3, 3}, 32);
  auto reuse = [&](OpGraph& g) {
    auto t = [&](int32_t mem) { return g.gb.tensor(DType::Float32, {1, 8, 6, 6}, mem); };
    Id a = t(0), m = t(1), z = t(0);
    conv(g, g.input(y), w8, nullptr, {1, 0, 1}, 1, a);
    conv(g, a, dw8, nullptr, {}, 8, m);
    g.gb.op("aten._softmax.default", {g.input(y), g.gb.int_(1), g.gb.boolean(false), z});
    conv(g, m, w8, nullptr, {1, 0, 1}, 1, g.output(DType::Float32, {1, 8, 6, 6}));
    g.gb.op("aten._softmax.default", {z, g.gb.int_(2), g.gb.boolean(false), g.output(DType::Float32, {1, 8, 6, 6})});
  };
  LoadedGraph between = load_graph(reuse, true), unfused = load_graph(reuse, false);
  EXPECT_EQ(std::count(between.variants.begin(), between.variants.end(), "depthwise_pointwise"), 1);
  for (size_t o = 0; o < 2; ++o) EXPECT_TRUE(Close(between.out[o], unfused.out[o], 1e-6, 1e-4)) << o;
}

// The pair stays two dispatches where the depthwise output is read elsewhere too, where the second
// conv is no 1x1 stride-1 unpadded one, where the depthwise input is written in place between them,
// where
// the pointwise output is large enough for the large tiles, past 512 channels, and under
// force_route depthwise_pointwise = split; each with the unfused result.
TEST(OpDepthwisePointwise, WhatKeepsTheTwoDispatches) {
  ETW_REQUIRE_GPU();
  auto check = [&](const char* what, int64_t C, int64_t H, const std::function<void(OpGraph&, Id, Id)>& after,
                   std::map<std::string, std::string> routes = {}) {
    SCOPED_TRACE(what);
    HostTensor x = random_f32({1, C, H, H}, 20), dw = random_f32({C, 1, 3, 3}, 21);
    auto build = [&](OpGraph& g) {
      Id in = g.input(x), m = g.tensor(DType::Float32, {1, C, H, H});
      conv(g, in, dw, nullptr, {}, C, m);
      after(g, in, m);
    };
    LoadedGraph fused = load_graph(build, true, routes), plain = load_graph(build, false, routes);
    for (const std::string& v : fused.variants) EXPECT_NE(v, "depthwise_pointwise");
    ASSERT_EQ(fused.out.size(), plain.out.size());
    for (size_t o = 0; o < fused.out.size(); ++o) EXPECT_TRUE(SameAsUnfused(fused.out[o], plain.out[o])) << o;
  };
  auto pointwise = [](int64_t C, int64_t OC, int64_t H, Geometry geo = {1, 0, 1}, int64_t k = 1) {
    return [=](OpGraph& g, Id, Id m) {
      HostTensor w = random_f32({OC, C, k, k}, 22);
      const int64_t oh = (H + 2 * geo.pad - k) / geo.stride + 1;
      conv(g, m, w, nullptr, geo, 1, g.output(DType::Float32, {1, OC, oh, oh}));
    };
  };
  check("read elsewhere", 8, 6, [&](OpGraph& g, Id in, Id m) {
    pointwise(8, 8, 6)(g, in, m);
    g.gb.op("aten.neg.default", {m, g.output(DType::Float32, {1, 8, 6, 6})});
  });
  check("a 3x3 second conv", 8, 6, pointwise(8, 8, 6, {1, 1, 1}, 3));
  check("a stride-2 second conv", 8, 6, pointwise(8, 8, 6, {2, 0, 1}));
  check("a padded second conv", 8, 6, pointwise(8, 8, 6, {1, 1, 1}));
  check("large tiles", 16, 64, pointwise(16, 64, 64));
  check("past 512 channels", 520, 4, pointwise(520, 8, 4));
  check("forced split", 8, 6, pointwise(8, 8, 6), {{"depthwise_pointwise", "split"}});
  check("the input written in place between", 8, 6, [&](OpGraph& g, Id in, Id m) {
    HostTensor w = random_f32({8, 8, 1, 1}, 33), y = random_f32({1, 8, 6, 6}, 34);
    g.gb.op("aten.copy_.default", {in, g.input(y), g.gb.boolean(false), in});
    conv(g, m, w, nullptr, {1, 0, 1}, 1, g.output(DType::Float32, {1, 8, 6, 6}));
  });
}

// The op as a call of its own (no rewrite): both clamps, both biases, a stride-2 depthwise conv;
// then storing a shuffle with a passthrough into two pieces.
TEST(OpDepthwisePointwise, CallsOfTheOpMatchTheReference) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 6, 9, 8}, 35, -3.f, 3.f), dw = random_f32({6, 1, 3, 3}, 36), db = random_f32({6}, 37);
  HostTensor pw = random_f32({5, 6, 1, 1}, 38), pb = random_f32({5}, 39), pass = random_f32({1, 5, 5, 4}, 40);
  auto own = [&](OpGraph& g, Id pass_id) {
    return std::vector<Id>{g.input(x), g.constant(dw), g.constant(db), g.gb.int_list({2, 2}), g.gb.int_list({1}),
                           g.gb.int_list({1, 1}), g.gb.dbl(-1.0), g.gb.dbl(1.5), g.constant(pw), g.constant(pb),
                           g.gb.null(), g.gb.dbl(2.0), pass_id};
  };
  ref::ConvArgs da = args_of({2, 1, 1}, 6), pa;
  da.out_min = -1.0, da.out_max = 1.5;
  pa.out_max = 2.0;
  const HostTensor want = ref::conv(ref::conv(x, dw, &db, da), pw, &pb, pa);
  auto got = load_graph(
      [&](OpGraph& g) {
        auto a = own(g, g.gb.null());
        a.push_back(g.output(DType::Float32, {1, 5, 5, 4}));
        g.gb.op("etwebgpu.depthwise_pointwise", a);
      },
      false);
  EXPECT_TRUE(Close(got.out[0], want, 1e-5, 1e-4));
  auto shuffled = load_graph(
      [&](OpGraph& g) {
        auto a = own(g, g.input(pass));
        a.push_back(g.gb.value_list({g.output(DType::Float32, {1, 3, 5, 4}), g.output(DType::Float32, {1, 7, 5, 4})}));
        g.gb.op("etwebgpu.depthwise_pointwise", a);
      },
      false);
  ASSERT_EQ(shuffled.out.size(), 2u);
  const auto wv = f64(want), pv = f64(pass), g0 = f64(shuffled.out[0]), g1 = f64(shuffled.out[1]);
  for (int64_t k = 0; k < 10; ++k)  // channel k of the interleave: pass's k / 2 (even), the conv's (odd)
    for (int64_t p = 0; p < 20; ++p) {
      const double e = (k % 2 ? wv : pv)[static_cast<size_t>((k / 2) * 20 + p)];
      const auto& gv = k < 3 ? g0 : g1;
      EXPECT_NEAR(gv[static_cast<size_t>((k < 3 ? k : k - 3) * 20 + p)], e, 1e-4 * (1 + std::abs(e))) << k << " " << p;
    }
}

// Clamp bounds past float32's range, as an export may write "no bound" (DBL_MAX): as
// et_vk.conv_with_clamp, an upper bound of DBL_MAX clamps nothing and a lower one of DBL_MAX makes
// every value +inf; on both convs.
TEST(OpDepthwisePointwise, ClampBoundsPastFloatRangeActAsTheirInfinities) {
  ETW_REQUIRE_GPU();
  const double big = std::numeric_limits<double>::max();
  HostTensor x = random_f32({1, 4, 5, 5}, 41), dw = random_f32({4, 1, 3, 3}, 42), pw = random_f32({3, 4, 1, 1}, 43);
  auto run = [&](double dw_lo, double dw_hi, double pw_lo) {
    return load_graph(
               [&](OpGraph& g) {
                 g.gb.op("etwebgpu.depthwise_pointwise",
                         {g.input(x), g.constant(dw), g.gb.null(), g.gb.int_list({1, 1}), g.gb.int_list({1, 1}), g.gb.int_list({1, 1}),
                          g.gb.dbl(dw_lo), g.gb.dbl(dw_hi), g.constant(pw), g.gb.null(), g.gb.dbl(pw_lo), g.gb.null(), g.gb.null(),
                          g.output(DType::Float32, {1, 3, 5, 5})});
               },
               false)
        .out[0];
  };
  ref::ConvArgs da = args_of({}, 4);
  da.out_min = 0.0;
  EXPECT_TRUE(Close(run(0.0, big, -big), ref::conv(ref::conv(x, dw, nullptr, da), pw, nullptr, ref::ConvArgs{}), 1e-5, 1e-4));
  for (double v : f64(run(big, big, -big))) EXPECT_TRUE(std::isnan(v) || std::isinf(v)) << v;  // +inf times signed weights
  for (double v : f64(run(-big, big, big))) EXPECT_EQ(v, std::numeric_limits<double>::infinity());
}

TEST(OpDepthwisePointwise, MalformedCallsAreLoadErrors) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 4, 5, 5}, 24), dw = random_f32({4, 1, 3, 3}, 25), pw = random_f32({6, 4, 1, 1}, 26);
  auto error = [&](const std::function<void(OpGraph&)>& build) { return load_error([&] { load_graph(build, false); }); };
  auto call = [&](OpGraph& g, std::vector<Id> args) { g.gb.op("etwebgpu.depthwise_pointwise", args); };
  auto own = [&](OpGraph& g, const HostTensor& dwt, const HostTensor& pwt, Id lo) {
    return std::vector<Id>{g.input(x), g.constant(dwt), g.gb.null(), g.gb.int_list({1, 1}), g.gb.int_list({1, 1}),
                           g.gb.int_list({1, 1}), lo, g.gb.null(), g.constant(pwt), g.gb.null(), g.gb.null(), g.gb.null(), g.gb.null()};
  };
  std::string e = error([&](OpGraph& g) { call(g, {g.input(x), g.output(DType::Float32, {1, 6, 5, 5})}); });
  EXPECT_TRUE(has(e, "at least 14 arguments, got 2")) << e;
  HostTensor bad_dw = random_f32({4, 2, 3, 3}, 27), bad_pw = random_f32({6, 4, 3, 3}, 28);
  e = error([&](OpGraph& g) {
    auto a = own(g, bad_dw, pw, g.gb.null());
    a.push_back(g.output(DType::Float32, {1, 6, 5, 5}));
    call(g, a);
  });
  EXPECT_TRUE(has(e, "depthwise weight [4, 2, 3, 3] must be [4, 1, KH, KW]")) << e;
  e = error([&](OpGraph& g) {
    auto a = own(g, dw, bad_pw, g.gb.null());
    a.push_back(g.output(DType::Float32, {1, 6, 5, 5}));
    call(g, a);
  });
  EXPECT_TRUE(has(e, "pointwise weight [6, 4, 3, 3] must be [OC, 4, 1, 1]")) << e;
  e = error([&](OpGraph& g) {
    auto a = own(g, dw, pw, g.gb.dbl(std::nan("")));
    a.push_back(g.output(DType::Float32, {1, 6, 5, 5}));
    call(g, a);
  });
  EXPECT_TRUE(has(e, "clamp bound is NaN")) << e;
  e = error([&](OpGraph& g) {
    auto a = own(g, dw, pw, g.gb.null());
    a[4] = g.gb.int_list({1, 2, 3});
    a.push_back(g.output(DType::Float32, {1, 6, 5, 5}));
    call(g, a);
  });
  EXPECT_TRUE(has(e, "padding must have 1 or 2 elements, got 3")) << e;
  e = error([&](OpGraph& g) {
    auto a = own(g, dw, pw, g.gb.null());
    a.back() = g.input(random_f32({1, 6, 5, 4}, 29));  // a passthrough of the wrong shape
    a.push_back(g.gb.value_list({g.output(DType::Float32, {1, 12, 5, 5})}));
    call(g, a);
  });
  EXPECT_TRUE(has(e, "passthrough [1, 6, 5, 4] must have the conv's output shape [1, 6, 5, 5]")) << e;
}

}  // namespace
