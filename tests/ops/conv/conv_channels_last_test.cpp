// etwebgpu.conv_channels_last (src/ops/conv/conv_channels_last.h): a conv whose output only a
// permute to N, H, W, C reads (ConvNeXt's depthwise conv before its LayerNorm, a patch
// embedding's flatten(2).transpose(1, 2)) stores that order itself, one dispatch instead of two,
// on every conv route, with the unfused graph's result; other orders a chain of layout calls
// makes (MobileViT's unfold and fold) through a map; shared outputs keep the copy; a malformed
// call is a load error.
#include "reference/conv/conv_ref.h"
#include "reference/memory/memory_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// aten.convolution, or with `layout` > 0 etwebgpu.conv_channels_last of that layout.
Id conv(OpGraph& g, Id x, const HostTensor& w, const HostTensor* b, int64_t stride, int64_t pad, int64_t groups, Id out,
        int64_t layout = 0, bool transposed = false) {
  auto& gb = g.gb;
  std::vector<Id> args{x, g.constant(w), b ? g.constant(*b) : gb.null(), gb.int_list({stride, stride}), gb.int_list({pad, pad}),
                       gb.int_list({1, 1}), gb.boolean(transposed), gb.int_list({0, 0}), gb.int_(groups)};
  if (layout) args.push_back(gb.int_(layout));
  args.push_back(out);
  gb.op(layout ? "etwebgpu.conv_channels_last" : "aten.convolution.default", args);
  return out;
}

// ConvNeXt's block start: depthwise 7x7 conv, then permute(0, 2, 3, 1) as the graph output.
TEST(OpConvChannelsLast, DepthwiseConvThenPermuteToChannelsLastIsOneDispatch) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 8, 9, 7}, 1), w = random_f32({8, 1, 7, 7}, 2, -0.2f, 0.2f), b = random_f32({8}, 3);
  auto build = [&](OpGraph& g) {
    Id c = g.tensor(DType::Float32, {1, 8, 9, 7});
    conv(g, g.input(x), w, &b, 1, 3, 8, c);
    g.gb.op("aten.permute_copy.default", {c, g.gb.int_list({0, 2, 3, 1}), g.output(DType::Float32, {1, 9, 7, 8})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 2u);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"etwebgpu.conv_channels_last"});
  EXPECT_EQ(fused.variants, std::vector<std::string>{"conv_depthwise"});
  EXPECT_EQ(fused.out[0].data, plain.out[0].data);
  ref::ConvArgs a;
  a.ph = a.pw = 3;
  a.groups = 8;
  EXPECT_TRUE(Close(fused.out[0], ref::permute(ref::conv(x, w, &b, a), {0, 2, 3, 1}), 1e-5, 1e-5));
}

// A patch embedding (conv k = stride, then view [B, C, H * W] and transpose(1, 2)) on every conv
// route: the routes store through the same index, each against the reference.
TEST(OpConvChannelsLast, PatchEmbeddingViewAndTransposeOnEveryRoute) {
  ETW_REQUIRE_GPU();
  struct Case { std::vector<int64_t> x, w; int64_t stride; const char* route; const char* variant; };
  const std::vector<Case> cases = {
      {{1, 3, 16, 12}, {20, 3, 4, 4}, 4, "", "conv_direct"},
      {{1, 3, 16, 12}, {20, 3, 4, 4}, 4, "direct", "conv_direct"},
      {{1, 8, 16, 12}, {20, 8, 2, 2}, 2, "gemm", "conv_gemm"},
      {{1, 8, 16, 12}, {20, 8, 2, 2}, 2, "gemm_small", "conv_gemm_small"},
      {{1, 64, 16, 12}, {20, 64, 2, 2}, 2, "gemm_splitk", "conv_gemm_splitk"},
      {{1, 8, 64, 64}, {64, 8, 2, 2}, 2, "gemm_large_m64", "conv_gemm_64x128_aligned_row4"},
      {{1, 8, 64, 48}, {128, 8, 2, 2}, 2, "gemm_large", "conv_gemm_128x128_aligned_row4"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string("route ") + k.route);
    HostTensor x = random_f32(k.x, 4), w = random_f32(k.w, 5, -0.3f, 0.3f), b = random_f32({k.w[0]}, 6);
    const int64_t C = k.w[0], H = k.x[2] / k.stride, W = k.x[3] / k.stride;
    auto build = [&](OpGraph& g) {
      Id c = g.tensor(DType::Float32, {1, C, H, W}), v = g.tensor(DType::Float32, {1, C, H * W});
      conv(g, g.input(x), w, &b, k.stride, 0, 1, c);
      g.gb.op("aten.view_copy.default", {c, g.gb.int_list({1, C, H * W}), v});
      g.gb.op("aten.permute_copy.default", {v, g.gb.int_list({0, 2, 1}), g.output(DType::Float32, {1, H * W, C})});
    };
    std::map<std::string, std::string> r;
    if (*k.route) r["conv"] = k.route;
    LoadedGraph fused = load_graph(build, true, r);
    EXPECT_EQ(fused.ops.front(), "etwebgpu.conv_channels_last");
    EXPECT_EQ(fused.variants.front(), k.variant);
    ref::ConvArgs a;
    a.sh = a.sw = k.stride;
    HostTensor want = ref::permute(ref::conv(x, w, &b, a), {0, 2, 3, 1});
    want.shape = {1, H * W, C};
    EXPECT_TRUE(Close(fused.out[0], want, 1e-4, 1e-4));
  }
}

// Kept as two dispatches: a conv output read twice, a conv with an epilogue (its operands would be
// read in the stored order). A permute to another order (N, W, H, C, of the channels-last shape
// here: C = H = W) is stored through a map.
TEST(OpConvChannelsLast, SharedOutputsAndEpiloguesKeepTheCopyOtherOrdersAreMapped) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 4, 6, 6}, 7), w = random_f32({6, 4, 3, 3}, 8);
  auto variants = [&](const std::function<void(OpGraph&, Id)>& tail) {
    auto build = [&](OpGraph& g) {
      Id c = g.tensor(DType::Float32, {1, 6, 6, 6});
      conv(g, g.input(x), w, nullptr, 1, 1, 1, c);
      tail(g, c);
    };
    LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
    for (size_t k = 0; k < fused.out.size(); ++k) EXPECT_TRUE(SameAsUnfused(fused.out[k], plain.out[k])) << k;
    return fused.ops;
  };
  auto other = variants([](OpGraph& g, Id c) {
    g.gb.op("aten.permute_copy.default", {c, g.gb.int_list({0, 3, 2, 1}), g.output(DType::Float32, {1, 6, 6, 6})});
  });
  EXPECT_EQ(other, (std::vector<std::string>{"etwebgpu.conv_channels_last"}));
  auto twice = variants([](OpGraph& g, Id c) {
    g.gb.op("aten.permute_copy.default", {c, g.gb.int_list({0, 2, 3, 1}), g.output(DType::Float32, {1, 6, 6, 6})});
    g.gb.op("aten.relu.default", {c, g.output(DType::Float32, {1, 6, 6, 6})});
  });
  EXPECT_EQ(twice.size(), 3u);
  EXPECT_EQ(twice.front(), "aten.convolution.default");
  auto epilogue = variants([](OpGraph& g, Id c) {
    Id r = g.tensor(DType::Float32, {1, 6, 6, 6});
    g.gb.op("aten.relu.default", {c, r});
    g.gb.op("aten.permute_copy.default", {r, g.gb.int_list({0, 2, 3, 1}), g.output(DType::Float32, {1, 6, 6, 6})});
  });
  EXPECT_EQ(epilogue, (std::vector<std::string>{"fused[convolution+relu]", "aten.permute_copy.default"}));
}

// MobileViT's unfold ([1, C, H, W] -> [4, H * W / 4, C]: the 2x2 patches' pixels as the batch, the
// patches as tokens) and fold (back), as timm writes them: reshapes and two transposes, which
// layout_chains gathers by a constant table. The conv stores its output through the unfold's map,
// reads its input through the fold's, or both, on every conv route: one dispatch, the unfused
// graph's values.
HostTensor unfold_ref(HostTensor t, int64_t C, int64_t H, int64_t W) {
  t.shape = {C * H / 2, 2, W / 2, 2};
  t = ref::permute(t, {0, 2, 1, 3});
  t.shape = {1, C, H * W / 4, 4};
  t = ref::permute(t, {0, 3, 2, 1});
  t.shape = {4, H * W / 4, C};
  return t;
}
HostTensor fold_ref(HostTensor t, int64_t C, int64_t H, int64_t W) {
  t.shape = {1, 4, H * W / 4, C};
  t = ref::permute(t, {0, 3, 2, 1});
  t.shape = {C * H / 2, W / 2, 2, 2};
  t = ref::permute(t, {0, 2, 1, 3});
  t.shape = {1, C, H, W};
  return t;
}
void unfold(OpGraph& g, Id c, int64_t C, int64_t H, int64_t W, Id out) {
  auto& gb = g.gb;
  Id a = g.tensor(DType::Float32, {C * H / 2, 2, W / 2, 2}), b = g.tensor(DType::Float32, {C * H / 2, W / 2, 2, 2}),
     d = g.tensor(DType::Float32, {1, C, H * W / 4, 4}), e = g.tensor(DType::Float32, {1, 4, H * W / 4, C});
  gb.op("aten.view_copy.default", {c, gb.int_list({C * H / 2, 2, W / 2, 2}), a});
  gb.op("aten.permute_copy.default", {a, gb.int_list({0, 2, 1, 3}), b});
  gb.op("aten.view_copy.default", {b, gb.int_list({1, C, H * W / 4, 4}), d});
  gb.op("aten.permute_copy.default", {d, gb.int_list({0, 3, 2, 1}), e});
  gb.op("aten.view_copy.default", {e, gb.int_list({4, H * W / 4, C}), out});
}
void fold(OpGraph& g, Id y, int64_t C, int64_t H, int64_t W, Id out) {
  auto& gb = g.gb;
  Id a = g.tensor(DType::Float32, {1, 4, H * W / 4, C}), b = g.tensor(DType::Float32, {1, C, H * W / 4, 4}),
     d = g.tensor(DType::Float32, {C * H / 2, W / 2, 2, 2}), e = g.tensor(DType::Float32, {C * H / 2, 2, W / 2, 2});
  gb.op("aten.view_copy.default", {y, gb.int_list({1, 4, H * W / 4, C}), a});
  gb.op("aten.permute_copy.default", {a, gb.int_list({0, 3, 2, 1}), b});
  gb.op("aten.view_copy.default", {b, gb.int_list({C * H / 2, W / 2, 2, 2}), d});
  gb.op("aten.permute_copy.default", {d, gb.int_list({0, 2, 1, 3}), e});
  gb.op("aten.view_copy.default", {e, gb.int_list({1, C, H, W}), out});
}

TEST(OpConvChannelsLast, MobileVitUnfoldAndFoldAreStoredAndReadThroughMaps) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t C, OC, k, groups; const char* route; const char* variant; };
  const std::vector<Case> cases = {
      {16, 24, 1, 1, "", "conv_direct_vec4"},
      {16, 24, 1, 1, "gemm_small", "conv_gemm_small"},
      {8, 12, 3, 1, "gemm", "conv_gemm"},
      {64, 12, 1, 1, "gemm_splitk", "conv_gemm_splitk"},
      {8, 64, 3, 1, "gemm_large_m64", "conv_gemm_64x128_row4"},
      {8, 8, 3, 8, "", "conv_depthwise"},
  };
  const int64_t H = 8, W = 12;
  for (const Case& k : cases)
    for (const char* sides : {"output", "input", "both"}) {
      const std::string at = std::string("route ") + k.route + " " + k.variant + ", mapped " + sides;
      const bool in = std::string(sides) != "output", out = std::string(sides) != "input";
      HostTensor x = random_f32({1, k.C, H, W}, 30), w = random_f32({k.OC, k.C / k.groups, k.k, k.k}, 31, -0.3f, 0.3f),
                 b = random_f32({k.OC}, 32);
      HostTensor xin = x;  // in: the tokens the fold reads
      if (in) {
        const std::vector<double> t = f64(unfold_ref(x, k.C, H, W));
        xin = HostTensor::from(DType::Float32, {4, H * W / 4, k.C}, std::vector<float>(t.begin(), t.end()));
      }
      auto build = [&](OpGraph& g) {
        Id xi = g.input(xin);
        if (in) {
          Id f = g.tensor(DType::Float32, {1, k.C, H, W});
          fold(g, xi, k.C, H, W, f);
          xi = f;
        }
        if (!out) {
          conv(g, xi, w, &b, 1, k.k / 2, k.groups, g.output(DType::Float32, {1, k.OC, H, W}));
          return;
        }
        Id c = g.tensor(DType::Float32, {1, k.OC, H, W});
        conv(g, xi, w, &b, 1, k.k / 2, k.groups, c);
        unfold(g, c, k.OC, H, W, g.output(DType::Float32, {4, H * W / 4, k.OC}));
      };
      std::map<std::string, std::string> r;
      if (*k.route) r["conv"] = k.route;
      LoadedGraph fused = load_graph(build, true, r), plain = load_graph(build, false, r);
      for (const std::string& op : fused.ops) EXPECT_EQ(op, "etwebgpu.conv_channels_last") << at;  // split-K: two dispatches
      EXPECT_EQ(fused.variants.front(), k.variant) << at;
      EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0])) << at;
      ref::ConvArgs a;
      a.ph = a.pw = k.k / 2;
      a.groups = k.groups;
      HostTensor want = ref::conv(x, w, &b, a);
      EXPECT_TRUE(Close(fused.out[0], out ? unfold_ref(want, k.OC, H, W) : want, 1e-4, 1e-4)) << at;
    }
}

// The op as a call of its own (no rewrite): 2-D into [N, H, W, C], and 1-D into [N, L, C].
TEST(OpConvChannelsLast, CallsOfTheOpMatchThePermutedConv) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({2, 4, 6, 5}, 12), w = random_f32({6, 4, 3, 3}, 13), b = random_f32({6}, 14);
  auto got = load_graph(
      [&](OpGraph& g) {
        conv(g, g.input(x), w, &b, 1, 1, 1, g.output(DType::Float32, {2, 6, 5, 6}), 2);
      },
      false);
  ref::ConvArgs a;
  a.ph = a.pw = 1;
  EXPECT_TRUE(Close(got.out[0], ref::permute(ref::conv(x, w, &b, a), {0, 2, 3, 1}), 1e-5, 1e-5));
  HostTensor x1 = random_f32({1, 4, 9}, 15), w1 = random_f32({6, 4, 3}, 16);
  auto got1 = load_graph(
      [&](OpGraph& g) {
        g.gb.op("etwebgpu.conv_channels_last", {g.input(x1), g.constant(w1), g.gb.null(), g.gb.int_list({1}), g.gb.int_list({1}),
                                                g.gb.int_list({1}), g.gb.boolean(false), g.gb.int_list({0}), g.gb.int_(1),
                                                g.gb.int_(2), g.output(DType::Float32, {1, 9, 6})});
      },
      false);
  ref::ConvArgs a1;
  a1.pw = 1;
  EXPECT_TRUE(Close(got1.out[0], ref::permute(ref::conv(x1, w1, nullptr, a1), {0, 2, 1}), 1e-5, 1e-5));
  // A channels-last input [N, H, W, C], and both sides.
  const std::vector<double> xv = f64(ref::permute(x, {0, 2, 3, 1}));
  HostTensor xl = HostTensor::from(DType::Float32, {2, 6, 5, 4}, std::vector<float>(xv.begin(), xv.end()));
  for (int64_t layout : {1, 3}) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    auto got2 = load_graph(
        [&](OpGraph& g) {
          conv(g, g.input(xl), w, &b, 1, 1, 1, g.output(DType::Float32, layout == 3 ? std::vector<int64_t>{2, 6, 5, 6} : std::vector<int64_t>{2, 6, 6, 5}), layout);
        },
        false);
    HostTensor want = ref::conv(x, w, &b, a);
    EXPECT_TRUE(Close(got2.out[0], layout == 3 ? ref::permute(want, {0, 2, 3, 1}) : want, 1e-5, 1e-5));
  }
}

TEST(OpConvChannelsLast, MalformedCallsAreLoadErrors) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 4, 6, 5}, 9), w = random_f32({6, 4, 3, 3}, 10), wt = random_f32({4, 6, 3, 3}, 11);
  auto error = [&](const std::function<void(OpGraph&)>& build) {
    return load_error([&] { load_graph(build, false); });
  };
  std::string e = error([&](OpGraph& g) {
    conv(g, g.input(x), w, nullptr, 1, 1, 1, g.output(DType::Float32, {1, 6, 6, 5, 1}), 2);
  });
  EXPECT_TRUE(has(e, "channels-last") && has(e, "[1, 6, 6, 5, 1]")) << e;
  e = error([&](OpGraph& g) {
    conv(g, g.input(x), wt, nullptr, 1, 1, 1, g.output(DType::Float32, {1, 6, 5, 6}), 2, true);
  });
  EXPECT_TRUE(has(e, "not transposed")) << e;
  for (int64_t bad : {0, 16, -1, 5, 10}) {
    e = error([&](OpGraph& g) {
      std::vector<Id> args{g.input(x), g.constant(w), g.gb.null(), g.gb.int_list({1, 1}), g.gb.int_list({1, 1}), g.gb.int_list({1, 1}),
                           g.gb.boolean(false), g.gb.int_list({0, 0}), g.gb.int_(1), g.gb.int_(bad), g.output(DType::Float32, {1, 6, 5, 6})};
      g.gb.op("etwebgpu.conv_channels_last", args);
    });
    EXPECT_TRUE(has(e, "layout must")) << bad << ": " << e;
  }
  // Maps: an output map stores each of the conv's 180 outputs once into [180]; an input map reads
  // each of the conv's view's 120 inputs from the input's 120.
  auto mapped = [&](int64_t layout, const HostTensor& map, const std::vector<int64_t>& out_dims) {
    return error([&](OpGraph& g) {
      std::vector<Id> args{g.input(x), g.constant(w), g.gb.null(), g.gb.int_list({1, 1}), g.gb.int_list({1, 1}), g.gb.int_list({1, 1}),
                           g.gb.boolean(false), g.gb.int_list({0, 0}), g.gb.int_(1), g.gb.int_(layout)};
      if (layout == 4) args.push_back(g.gb.int_list({1, 4, 6, 5}));
      args.push_back(g.constant(map));
      args.push_back(g.output(DType::Float32, out_dims));
      g.gb.op("etwebgpu.conv_channels_last", args);
    });
  };
  auto ints = [](std::vector<int32_t> v) { return HostTensor::from(DType::Int32, {static_cast<int64_t>(v.size())}, v); };
  std::vector<int32_t> perm(180);
  for (int32_t i = 0; i < 180; ++i) perm[i] = 179 - i;
  std::vector<int32_t> twice = perm;
  twice[5] = twice[6];
  std::vector<int32_t> past(120, 0);
  past[7] = 120;
  e = mapped(8, ints(twice), {180});
  EXPECT_TRUE(has(e, "output map's element 6 is 173") && has(e, "taken before")) << e;
  e = mapped(8, ints(std::vector<int32_t>(perm.begin(), perm.end() - 1)), {180});
  EXPECT_TRUE(has(e, "Int32 constant of 180 elements")) << e;
  e = mapped(8, random_f32({180}, 33), {180});
  EXPECT_TRUE(has(e, "Int32 constant")) << e;
  e = mapped(4, ints(past), {1, 6, 6, 5});
  EXPECT_TRUE(has(e, "input map's element 7 is 120") && has(e, "0 to 119")) << e;
  EXPECT_EQ(mapped(8, ints(perm), {180}), "");  // well formed
}

// ConvNeXt's downsampling and stage start: a LayerNorm's [N, H, W, C] output permuted to
// N, C, H, W before a conv (2x2 stride 2, or a depthwise 7x7 whose output is permuted back): the
// conv reads it in place, on every route.
TEST(OpConvChannelsLast, AChannelsLastInputSeenThroughAPermuteIsReadInPlace) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t C, OC, k, stride, pad, groups; const char* route; const char* variant; bool out_back; };
  const std::vector<Case> cases = {
      {16, 12, 2, 2, 0, 1, "", "conv_gemm_small", false},
      {8, 12, 2, 2, 0, 1, "", "conv_direct_vec4", false},
      {8, 12, 2, 2, 0, 1, "direct", "conv_direct_vec4", false},
      {8, 12, 2, 2, 0, 1, "gemm", "conv_gemm", false},
      {64, 12, 2, 2, 0, 1, "gemm_splitk", "conv_gemm_splitk", false},
      {8, 64, 2, 2, 0, 1, "gemm_large_m64", "conv_gemm_64x128_aligned_row4", false},
      {8, 8, 7, 1, 3, 8, "", "conv_depthwise", true},
  };
  const int64_t H = 16, W = 32;
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string("route ") + k.route + " " + k.variant);
    HostTensor y = random_f32({1, H, W, k.C}, 20), w = random_f32({k.OC, k.C / k.groups, k.k, k.k}, 21, -0.3f, 0.3f),
               b = random_f32({k.OC}, 22);
    const int64_t OH = (H + 2 * k.pad - k.k) / k.stride + 1, OW = (W + 2 * k.pad - k.k) / k.stride + 1;
    auto build = [&](OpGraph& g) {
      Id x = g.tensor(DType::Float32, {1, k.C, H, W});
      g.gb.op("aten.permute_copy.default", {g.input(y), g.gb.int_list({0, 3, 1, 2}), x});
      if (!k.out_back) {
        conv(g, x, w, &b, k.stride, k.pad, k.groups, g.output(DType::Float32, {1, k.OC, OH, OW}));
        return;
      }
      Id c = g.tensor(DType::Float32, {1, k.OC, OH, OW});
      conv(g, x, w, &b, k.stride, k.pad, k.groups, c);
      g.gb.op("aten.permute_copy.default", {c, g.gb.int_list({0, 2, 3, 1}), g.output(DType::Float32, {1, OH, OW, k.OC})});
    };
    std::map<std::string, std::string> r;
    if (*k.route) r["conv"] = k.route;
    LoadedGraph fused = load_graph(build, true, r), plain = load_graph(build, false, r);
    for (const std::string& op : fused.ops) EXPECT_EQ(op, "etwebgpu.conv_channels_last");  // split-K: two dispatches
    EXPECT_EQ(fused.variants.front(), k.variant);
    EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
    ref::ConvArgs a;
    a.sh = a.sw = k.stride;
    a.ph = a.pw = k.pad;
    a.groups = k.groups;
    HostTensor want = ref::conv(ref::permute(y, {0, 3, 1, 2}), w, &b, a);
    EXPECT_TRUE(Close(fused.out[0], k.out_back ? ref::permute(want, {0, 2, 3, 1}) : want, 1e-4, 1e-4));
  }
}

// The input's permute read by another call too, or the channels-last tensor written between the
// permute and the conv: the copy stays.
TEST(OpConvChannelsLast, APermutedInputReadElsewhereOrOverwrittenKeepsTheCopy) {
  ETW_REQUIRE_GPU();
  HostTensor y = random_f32({1, 6, 6, 4}, 23), w = random_f32({5, 4, 3, 3}, 24);
  auto build = [&](OpGraph& g) {
    Id x = g.tensor(DType::Float32, {1, 4, 6, 6});
    g.gb.op("aten.permute_copy.default", {g.input(y), g.gb.int_list({0, 3, 1, 2}), x});
    conv(g, x, w, nullptr, 1, 1, 1, g.output(DType::Float32, {1, 5, 6, 6}));
    g.gb.op("aten.relu.default", {x, g.output(DType::Float32, {1, 4, 6, 6})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops.size(), 3u);
  for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(SameAsUnfused(fused.out[k], plain.out[k])) << k;
}

// A 1-D conv between two permutes (a sequence model's [N, L, C] stream): both sides in place.
TEST(OpConvChannelsLast, Conv1dBetweenTwoPermutesReadsAndStoresChannelsLast) {
  ETW_REQUIRE_GPU();
  HostTensor y = random_f32({2, 17, 6}, 25), w = random_f32({5, 6, 3}, 26), b = random_f32({5}, 27);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id x = g.tensor(DType::Float32, {2, 6, 17}), c = g.tensor(DType::Float32, {2, 5, 17});
    gb.op("aten.permute_copy.default", {g.input(y), gb.int_list({0, 2, 1}), x});
    gb.op("aten.convolution.default", {x, g.constant(w), g.constant(b), gb.int_list({1}), gb.int_list({1}), gb.int_list({1}),
                                        gb.boolean(false), gb.int_list({0}), gb.int_(1), c});
    gb.op("aten.permute_copy.default", {c, gb.int_list({0, 2, 1}), g.output(DType::Float32, {2, 17, 5})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 3u);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"etwebgpu.conv_channels_last"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
  ref::ConvArgs a;
  a.pw = 1;
  EXPECT_TRUE(Close(fused.out[0], ref::permute(ref::conv(ref::permute(y, {0, 2, 1}), w, &b, a), {0, 2, 1}), 1e-5, 1e-5));
}

}  // namespace
