// etwebgpu.channel_shuffle (graph/cat_folding.h) and etwebgpu.conv_shuffle
// (src/ops/conv/conv_shuffle.h): ShuffleNetV2's channel shuffle after the cat of its two halves
// (cat, view, transpose, view, split) is one dispatch, and none where the second half comes from
// a conv, which then stores it interleaved with the passthrough, on every conv route, with the
// unfused graph's and the reference's result. What keeps the shuffle's dispatch; malformed calls
// are load errors.
#include "reference/conv/conv_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

Id conv(OpGraph& g, Id x, const HostTensor& w, const HostTensor* b, int64_t stride, int64_t pad, int64_t groups, Id out) {
  auto& gb = g.gb;
  gb.op("aten.convolution.default", {x, g.constant(w), b ? g.constant(*b) : gb.null(), gb.int_list({stride, stride}),
                                     gb.int_list({pad, pad}), gb.int_list({1, 1}), gb.boolean(false), gb.int_list({0, 0}),
                                     gb.int_(groups), out});
  return out;
}

// torchvision's channel_shuffle of cat((a, b), 1) ([1, C, H, W] each), then chunk(2, 1) into
// the returned pieces, or the whole shuffled tensor when `split` is false.
std::vector<Id> shuffle(OpGraph& g, Id a, Id b, int64_t C, int64_t H, int64_t W, bool split) {
  auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
  Id cat = t({1, 2 * C, H, W}), v5 = t({1, 2, C, H, W}), p5 = t({1, C, 2, H, W});
  g.gb.op("aten.cat.default", {g.gb.value_list({a, b}), g.gb.int_(1), cat});
  g.gb.op("aten.view_copy.default", {cat, g.gb.int_list({1, 2, C, H, W}), v5});
  g.gb.op("aten.permute_copy.default", {v5, g.gb.int_list({0, 2, 1, 3, 4}), p5});
  if (!split) {
    Id out = g.output(DType::Float32, {1, 2 * C, H, W});
    g.gb.op("aten.view_copy.default", {p5, g.gb.int_list({1, 2 * C, H, W}), out});
    return {out};
  }
  Id v4 = t({1, 2 * C, H, W});
  g.gb.op("aten.view_copy.default", {p5, g.gb.int_list({1, 2 * C, H, W}), v4});
  Id x1 = g.output(DType::Float32, {1, C, H, W}), x2 = g.output(DType::Float32, {1, C, H, W});
  g.gb.op("aten.split_with_sizes_copy.default", {v4, g.gb.int_list({C, C}), g.gb.int_(1), g.gb.value_list({x1, x2})});
  return {x1, x2};
}

// The interleave of a and b ([1, C, H, W]): channel 2c is a's c, 2c + 1 b's.
std::vector<double> interleave(const HostTensor& a, const HostTensor& b) {
  const auto av = f64(a), bv = f64(b);
  const int64_t C = a.shape[1], R = a.numel() / C;
  std::vector<double> out;
  for (int64_t k = 0; k < 2 * C; ++k)
    for (int64_t p = 0; p < R; ++p) out.push_back((k % 2 ? bv : av)[static_cast<size_t>((k / 2) * R + p)]);
  return out;
}

// t relu'd, as float64 (the references are float64).
HostTensor relu(const HostTensor& t) {
  std::vector<double> v = f64(t);
  for (double& e : v) e = std::max(e, 0.0);
  return ref_tensor(t.shape, v);
}

// The pieces `got` (the split halves, or one whole) against the interleave `want`.
void expect_pieces(const std::vector<HostTensor>& got, const std::vector<double>& want, double tol) {
  std::vector<double> all;
  for (const HostTensor& t : got)
    for (double v : f64(t)) all.push_back(v);
  ASSERT_EQ(all.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(all[i], want[i], tol * (1 + std::abs(want[i]))) << i;
}

// A stride-1 ShuffleNetV2 block's end: the branch's 1x1 conv (with relu as its epilogue, or
// without) and the passthrough half, shuffled and split. One dispatch, the conv's, on every route.
TEST(OpConvShuffle, TheBranchConvStoresTheShuffleOnEveryRoute) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t C, H, W, k, groups; const char* route; const char* variant; };
  const std::vector<Case> cases = {
      {58, 14, 14, 1, 1, "", "conv_gemm_small"},
      {24, 14, 14, 1, 1, "", "conv_direct_vec4"},
      {6, 14, 14, 1, 1, "direct", "conv_direct"},
      {24, 14, 14, 1, 1, "gemm", "conv_gemm"},
      {64, 14, 14, 3, 1, "gemm_splitk", "conv_gemm_splitk"},
      {64, 32, 32, 1, 1, "gemm_large_m64", "conv_gemm_64x128_aligned_row4"},
      {128, 32, 16, 1, 1, "gemm_large", "conv_gemm_128x128_aligned_row4"},
      {16, 9, 7, 3, 16, "", "conv_depthwise"},
  };
  for (const Case& k : cases)
  for (bool with_relu : {true, false}) {
    SCOPED_TRACE(std::string("route ") + k.route + " " + k.variant + (with_relu ? " relu" : ""));
    HostTensor a = random_f32({1, k.C, k.H, k.W}, 1), x = random_f32({1, k.C, k.H, k.W}, 2);
    HostTensor w = random_f32({k.C, k.C / k.groups, k.k, k.k}, 3, -0.2f, 0.2f), bias = random_f32({k.C}, 4);
    auto build = [&](OpGraph& g) {
      Id c = g.tensor(DType::Float32, {1, k.C, k.H, k.W}), r = g.tensor(DType::Float32, {1, k.C, k.H, k.W});
      conv(g, g.input(x), w, &bias, 1, k.k / 2, k.groups, c);
      if (with_relu) g.gb.op("aten.relu.default", {c, r});
      shuffle(g, g.input(a), with_relu ? r : c, k.C, k.H, k.W, true);
    };
    const std::string op = with_relu ? "fused[conv_shuffle+relu]" : "etwebgpu.conv_shuffle";
    std::map<std::string, std::string> routes;
    if (*k.route) routes["conv"] = k.route;
    LoadedGraph fused = load_graph(build, true, routes), plain = load_graph(build, false, routes);
    if (k.route != std::string("gemm_splitk")) {
      EXPECT_EQ(fused.ops, std::vector<std::string>{op});
      EXPECT_EQ(fused.variants, std::vector<std::string>{k.variant});
    } else {  // partial sums, then the reduce that stores
      EXPECT_EQ(fused.ops, std::vector<std::string>(2, op));
      EXPECT_EQ(fused.variants, (std::vector<std::string>{"conv_gemm_splitk", "conv_splitk_reduce"}));
    }
    ref::ConvArgs ca;
    ca.ph = ca.pw = k.k / 2;
    ca.groups = k.groups;
    HostTensor b = ref::conv(x, w, &bias, ca);
    expect_pieces(fused.out, interleave(a, with_relu ? relu(b) : b), 1e-4);
    for (size_t o = 0; o < 2; ++o) EXPECT_TRUE(SameAsUnfused(fused.out[o], plain.out[o])) << o;
  }
}

// A downsampling block: both halves are convs of one input; the second stores the shuffle and
// copies the first's output, and the whole shuffled tensor is the output (no split).
TEST(OpConvShuffle, ADownsamplingBlocksSecondConvCopiesTheFirst) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 8, 10, 10}, 5), w1 = random_f32({8, 1, 3, 3}, 6), w2 = random_f32({8, 8, 1, 1}, 7);
  auto build = [&](OpGraph& g) {
    Id xi = g.input(x), a = g.tensor(DType::Float32, {1, 8, 5, 5}), xs = g.tensor(DType::Float32, {1, 8, 5, 5});
    Id b = g.tensor(DType::Float32, {1, 8, 5, 5});
    conv(g, xi, w1, nullptr, 2, 1, 8, a);
    conv(g, xi, w1, nullptr, 2, 1, 8, xs);
    conv(g, xs, w2, nullptr, 1, 0, 1, b);
    shuffle(g, a, b, 8, 5, 5, false);
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  ASSERT_EQ(fused.ops.size(), 2u);  // the two depthwise convs are one (common subexpressions)
  EXPECT_EQ(fused.ops.back(), "etwebgpu.conv_shuffle");
  ref::ConvArgs dw;
  dw.sh = dw.sw = 2, dw.ph = dw.pw = 1, dw.groups = 8;
  HostTensor a = ref::conv(x, w1, nullptr, dw);
  expect_pieces(fused.out, interleave(a, ref::conv(a, w2, nullptr, ref::ConvArgs{})), 1e-4);
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
}

// The block as the delegate packs its memory: each memory object reused once its tensor died (the
// conv's output, the cat and the views share two objects; the pieces are intermediates of their
// own objects, read by the next calls). The pieces get storage of their own where the conv now
// writes them; the results are the unfused run's.
TEST(OpConvShuffle, PackedMemoryObjectsAsTheExportWritesThem) {
  ETW_REQUIRE_GPU();
  const int64_t C = 8, H = 6, W = 5;
  HostTensor a = random_f32({1, C, H, W}, 22), x = random_f32({1, C, H, W}, 23), w = random_f32({C, C, 1, 1}, 24);
  auto build = [&](OpGraph& g) {
    auto t = [&](std::vector<int64_t> d, int32_t mem) { return g.gb.tensor(DType::Float32, std::move(d), mem); };
    Id c = t({1, C, H, W}, 0), r = t({1, C, H, W}, 1), cat = t({1, 2 * C, H, W}, 0), v5 = t({1, 2, C, H, W}, 1);
    Id p5 = t({1, C, 2, H, W}, 0), v4 = t({1, 2 * C, H, W}, 1), x1 = t({1, C, H, W}, 0), x2 = t({1, C, H, W}, 2);
    conv(g, g.input(x), w, nullptr, 1, 0, 1, c);
    g.gb.op("aten.relu.default", {c, r});
    g.gb.op("aten.cat.default", {g.gb.value_list({g.input(a), r}), g.gb.int_(1), cat});
    g.gb.op("aten.view_copy.default", {cat, g.gb.int_list({1, 2, C, H, W}), v5});
    g.gb.op("aten.permute_copy.default", {v5, g.gb.int_list({0, 2, 1, 3, 4}), p5});
    g.gb.op("aten.view_copy.default", {p5, g.gb.int_list({1, 2 * C, H, W}), v4});
    g.gb.op("aten.split_with_sizes_copy.default", {v4, g.gb.int_list({C, C}), g.gb.int_(1), g.gb.value_list({x1, x2})});
    g.gb.op("aten.neg.default", {x1, g.output(DType::Float32, {1, C, H, W})});
    g.gb.op("aten.sigmoid.default", {x2, g.output(DType::Float32, {1, C, H, W})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"fused[conv_shuffle+relu]", "aten.neg.default", "aten.sigmoid.default"}));
  for (size_t o = 0; o < 2; ++o) EXPECT_TRUE(SameAsUnfused(fused.out[o], plain.out[o])) << o;
}

// The shuffle stays one dispatch of its own (etwebgpu.channel_shuffle) where its second half is no
// conv's, where the conv's output is read elsewhere too, and where the passthrough is written after
// the conv; each with the unfused result.
TEST(OpConvShuffle, TheShuffleKeepsItsDispatchWhereTheConvCannotStoreIt) {
  ETW_REQUIRE_GPU();
  HostTensor a = random_f32({1, 6, 4, 5}, 8), x = random_f32({1, 6, 4, 5}, 9), w = random_f32({6, 6, 1, 1}, 10);
  auto check = [&](const std::function<void(OpGraph&)>& build, const std::vector<std::string>& ops) -> LoadedGraph {
    LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
    EXPECT_EQ(fused.ops, ops);
    EXPECT_EQ(fused.out.size(), plain.out.size());
    for (size_t o = 0; o < std::min(fused.out.size(), plain.out.size()); ++o) EXPECT_TRUE(SameAsUnfused(fused.out[o], plain.out[o])) << o;
    return fused;
  };
  auto t = [](OpGraph& g) { return g.tensor(DType::Float32, {1, 6, 4, 5}); };
  LoadedGraph no_conv = check(
      [&](OpGraph& g) {
        Id r = t(g);
        g.gb.op("aten.relu.default", {g.input(x), r});
        shuffle(g, g.input(a), r, 6, 4, 5, true);
      },
      {"aten.relu.default", "etwebgpu.channel_shuffle"});
  expect_pieces(no_conv.out, interleave(a, relu(x)), 0);
  check(
      [&](OpGraph& g) {
        Id c = t(g);
        conv(g, g.input(x), w, nullptr, 1, 0, 1, c);
        g.gb.op("aten.neg.default", {c, g.output(DType::Float32, {1, 6, 4, 5})});
        shuffle(g, g.input(a), c, 6, 4, 5, true);
      },
      {"aten.convolution.default", "aten.neg.default", "etwebgpu.channel_shuffle"});
  check(
      [&](OpGraph& g) {
        Id c = t(g), late = t(g);
        conv(g, g.input(x), w, nullptr, 1, 0, 1, c);
        g.gb.op("aten.neg.default", {g.input(a), late});
        shuffle(g, late, c, 6, 4, 5, true);
      },
      {"aten.convolution.default", "aten.neg.default", "etwebgpu.channel_shuffle"});
}

// A cat followed by layout calls that give back its own order (a clone, a view and a view back)
// is no shuffle: it stays a cat, with the unfused result.
TEST(OpConvShuffle, LayoutsThatKeepTheCatsOrderAreNoShuffle) {
  ETW_REQUIRE_GPU();
  HostTensor a = random_f32({1, 6, 4, 5}, 20), b = random_f32({1, 6, 4, 5}, 21);
  auto build = [&](OpGraph& g) {
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id cat = t({1, 12, 4, 5}), cl = t({1, 12, 4, 5}), v5 = t({1, 2, 6, 4, 5}), v4 = t({1, 12, 4, 5});
    g.gb.op("aten.cat.default", {g.gb.value_list({g.input(a), g.input(b)}), g.gb.int_(1), cat});
    g.gb.op("aten.clone.default", {cat, g.gb.null(), cl});
    g.gb.op("aten.view_copy.default", {cl, g.gb.int_list({1, 2, 6, 4, 5}), v5});
    g.gb.op("aten.view_copy.default", {v5, g.gb.int_list({1, 12, 4, 5}), v4});
    g.gb.op("aten.relu.default", {v4, g.output(DType::Float32, {1, 12, 4, 5})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  for (const std::string& op : fused.ops) EXPECT_EQ(op.find("shuffle"), std::string::npos) << op;
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
}

// The ops as calls of their own (no rewrite): a shuffle into two pieces of unequal size and into
// one, of three-dimensional parts; a shuffling conv into two pieces, with a bias.
TEST(OpConvShuffle, CallsOfTheOpsMatchTheInterleave) {
  ETW_REQUIRE_GPU();
  HostTensor a = random_f32({2, 3, 7}, 14), b = random_f32({2, 3, 7}, 15);
  for (std::vector<int64_t> sizes : {std::vector<int64_t>{4, 2}, std::vector<int64_t>{6}}) {
    auto got = load_graph(
        [&](OpGraph& g) {
          std::vector<Id> pieces;
          for (int64_t s : sizes) pieces.push_back(g.output(DType::Float32, {2, s, 7}));
          g.gb.op("etwebgpu.channel_shuffle", {g.gb.value_list({g.input(a), g.input(b)}), g.gb.value_list(pieces)});
        },
        false);
    ASSERT_EQ(got.out.size(), sizes.size());
    // Batch n of piece j holds channels [start_j, start_j + s_j) of batch n's interleave.
    const auto av = f64(a), bv = f64(b);
    int64_t start = 0;
    for (size_t j = 0; j < sizes.size(); ++j) {
      const auto gv = f64(got.out[j]);
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t k = 0; k < sizes[j]; ++k)
          for (int64_t p = 0; p < 7; ++p) {
            const int64_t ch = start + k;
            EXPECT_EQ(gv[static_cast<size_t>((n * sizes[j] + k) * 7 + p)], (ch % 2 ? bv : av)[static_cast<size_t>((n * 3 + ch / 2) * 7 + p)]);
          }
      start += sizes[j];
    }
  }
  HostTensor x = random_f32({1, 5, 6, 4}, 16), w = random_f32({3, 5, 3, 3}, 17), bias = random_f32({3}, 18);
  HostTensor pass = random_f32({1, 3, 6, 4}, 19);
  auto got = load_graph(
      [&](OpGraph& g) {
        g.gb.op("etwebgpu.conv_shuffle", {g.input(x), g.constant(w), g.constant(bias), g.gb.int_list({1, 1}), g.gb.int_list({1, 1}),
                                          g.gb.int_list({1, 1}), g.gb.boolean(false), g.gb.int_list({0, 0}), g.gb.int_(1), g.input(pass),
                                          g.gb.value_list({g.output(DType::Float32, {1, 1, 6, 4}), g.output(DType::Float32, {1, 5, 6, 4})})});
      },
      false);
  ref::ConvArgs ca;
  ca.ph = ca.pw = 1;
  expect_pieces(got.out, interleave(pass, ref::conv(x, w, &bias, ca)), 1e-4);
}

TEST(OpConvShuffle, MalformedCallsAreLoadErrors) {
  ETW_REQUIRE_GPU();
  HostTensor a = random_f32({1, 4, 3, 3}, 11), b = random_f32({1, 4, 3, 2}, 12), w = random_f32({4, 4, 1, 1}, 13);
  auto error = [&](const std::function<void(OpGraph&)>& build) {
    return load_error([&] { load_graph(build, false); });
  };
  auto out = [](OpGraph& g, int64_t C, int64_t W = 3) { return g.output(DType::Float32, {1, C, 3, W}); };
  std::string e = error([&](OpGraph& g) {
    g.gb.op("etwebgpu.channel_shuffle", {g.gb.value_list({g.input(a), g.input(b)}), g.gb.value_list({out(g, 8)})});
  });
  EXPECT_TRUE(has(e, "share one shape") && has(e, "[1, 4, 3, 2]")) << e;
  e = error([&](OpGraph& g) {
    g.gb.op("etwebgpu.channel_shuffle", {g.gb.value_list({g.input(a), g.input(a)}), g.gb.value_list({out(g, 4), out(g, 2)})});
  });
  EXPECT_TRUE(has(e, "sum to 6")) << e;
  e = error([&](OpGraph& g) {
    g.gb.op("etwebgpu.channel_shuffle", {g.gb.value_list({g.input(a)}), g.gb.value_list({out(g, 4)})});
  });
  EXPECT_TRUE(has(e, "two parts, got 1")) << e;
  auto conv_shuffle = [&](OpGraph& g, Id passthrough, std::vector<Id> pieces) {
    g.gb.op("etwebgpu.conv_shuffle", {g.input(a), g.constant(w), g.gb.null(), g.gb.int_list({1, 1}), g.gb.int_list({0, 0}),
                                      g.gb.int_list({1, 1}), g.gb.boolean(false), g.gb.int_list({0, 0}), g.gb.int_(1), passthrough,
                                      g.gb.value_list(pieces)});
  };
  e = error([&](OpGraph& g) { conv_shuffle(g, g.input(b), {out(g, 8)}); });
  EXPECT_TRUE(has(e, "passthrough [1, 4, 3, 2]") && has(e, "output shape [1, 4, 3, 3]")) << e;
  e = error([&](OpGraph& g) { conv_shuffle(g, g.input(a), {out(g, 4), out(g, 2), out(g, 2)}); });
  EXPECT_TRUE(has(e, "one or two pieces, got 3")) << e;
  e = error([&](OpGraph& g) { conv_shuffle(g, g.input(a), {out(g, 4), out(g, 2)}); });
  EXPECT_TRUE(has(e, "twice the conv's 4")) << e;
  e = error([&](OpGraph& g) { conv_shuffle(g, g.input(a), {out(g, 4), out(g, 4, 2)}); });
  EXPECT_TRUE(has(e, "is not a slice along dim 1")) << e;
}

}  // namespace
