// Epilogue fusion at load (graph/epilogue_fusion.h, ops/epilogue.h): an elementwise chain after a
// conv or GEMM runs in the producer's store. Each case loads the same graph with fusion on and off
// and proves (a) the dispatch count dropped to one per producer, with a fused[...] label,
// (b) the fused result equals the unfused one (bit for bit at fp32 for these chains: the producer's
// value is the f32 the unfused chain reads back; in general within ulps, since the shader compiler
// may contract across terms) and the fp64 reference, and (c) chains that must stay apart do.
#include <cmath>
#include <cstdlib>
#include <functional>

#include "ops/elementwise/elementwise_ops.h"
#include "reference/conv/conv_ref.h"
#include "reference/matmul/matmul_ref.h"
#include "support/ir_chain.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

using Loaded = LoadedGraph;

double hardswish(double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; }
double relu(double v) { return v > 0 ? v : 0; }

HostTensor map_ref(const HostTensor& r, const std::function<double(double, size_t)>& f) {
  std::vector<double> v = f64(r);
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(v[i], i);
  return ref_tensor(r.shape, v);
}

Id conv_call(OpGraph& g, Id x, Id w, Id b, std::vector<int64_t> stride, std::vector<int64_t> pad, int64_t groups,
             bool transposed, Id out) {
  auto& gb = g.gb;
  gb.op("aten.convolution.default", {x, w, b, gb.int_list(stride), gb.int_list(pad), gb.int_list({1, 1}),
                                      gb.boolean(transposed), gb.int_list({0, 0}), gb.int_(groups), out});
  return out;
}

// x [1,8,9,9] -> conv 3x3 (8 -> 16, pad 1, bias) -> hardswish
struct ConvAct {
  HostTensor x = random_f32({1, 8, 9, 9}, 1), w = random_f32({16, 8, 3, 3}, 2, -0.3f, 0.3f), b = random_f32({16}, 3);
  void build(OpGraph& g) const {
    Id c = g.tensor(DType::Float32, {1, 16, 9, 9}), o = g.output(DType::Float32, {1, 16, 9, 9});
    conv_call(g, g.input(x), g.constant(w), g.constant(b), {1, 1}, {1, 1}, 1, false, c);
    g.gb.op("aten.hardswish.default", {c, o});
  }
  HostTensor ref() const {
    ref::ConvArgs a;
    a.ph = a.pw = 1;
    return map_ref(ref::conv(x, w, &b, a), [](double v, size_t) { return hardswish(v); });
  }
};

TEST(EpilogueFusion, ConvHardswishIsOneDispatchEqualToUnfusedAndReference) {
  ETW_REQUIRE_GPU();
  ConvAct c;
  auto build = [&](OpGraph& g) { c.build(g); };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  ASSERT_EQ(plain.ops.size(), 2u);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[convolution+hardswish]"});
  EXPECT_EQ(fused.variants.size(), 1u);  // the direct conv here (short K, one tile)
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
  EXPECT_TRUE(Close(fused.out[0], c.ref(), 1e-4, 1e-4));
}

// conv (no bias) + bias [C,1,1] (broadcast) + residual r (the output's shape), then relu: the
// elementwise pass makes fused[add+add+relu], which the conv then takes with two extra inputs.
// Every conv route: the 64x64 and large-tile GEMMs, direct (depthwise) and transposed.
struct ConvResidual {
  int64_t C;
  int64_t groups;
  bool transposed;
  int64_t W;  // 8 x W images
  HostTensor x, w, bias, r;
  ConvResidual(int64_t c, int64_t groups, bool transposed, int64_t width = 8)
      : C(c), groups(groups), transposed(transposed), W(width), x(random_f32({1, c, 8, width}, 4)),
        w(random_f32(transposed ? std::vector<int64_t>{c, c / groups, 3, 3} : std::vector<int64_t>{c, c / groups, 3, 3},
                     5, -0.2f, 0.2f)),
        bias(random_f32({c, 1, 1}, 6)), r(random_f32({1, c, 8, width}, 7)) {}
  void build(OpGraph& g) const {
    auto t = [&] { return g.tensor(DType::Float32, {1, C, 8, W}); };
    Id cv = t(), a1 = t(), a2 = t(), o = g.output(DType::Float32, {1, C, 8, W});
    Id xi = g.input(x), ri = g.input(r);
    conv_call(g, xi, g.constant(w), g.gb.null(), {1, 1}, {1, 1}, groups, transposed, cv);
    g.gb.op("aten.add.Tensor", {cv, g.constant(bias), g.gb.int_(1), a1});
    g.gb.op("aten.add.Tensor", {a1, ri, g.gb.int_(1), a2});
    g.gb.op("aten.relu.default", {a2, o});
  }
  HostTensor ref() const {
    ref::ConvArgs a;
    a.ph = a.pw = 1;
    a.groups = groups;
    a.transposed = transposed;
    auto bv = f64(bias), rv = f64(r);
    size_t hw = static_cast<size_t>(8 * W);
    return map_ref(ref::conv(x, w, nullptr, a), [&](double v, size_t i) { return relu(v + bv[i / hw % C] + rv[i]); });
  }
};

TEST(EpilogueFusion, ConvBiasResidualReluOnEveryConvRoute) {
  ETW_REQUIRE_GPU();
  struct Case {
    int64_t C, groups;
    bool transposed;
    const char* route;
    const char* variant;
    int64_t width = 8;  // 7: the large-tile convs' per-column loader (OW % 4 != 0)
  } cases[] = {{16, 1, false, "gemm", "conv_gemm"},
               {64, 1, false, "gemm_large", "conv_gemm_128x128_row4"},
               {64, 1, false, "gemm_large_m64", "conv_gemm_64x128_row4"},
               {64, 1, false, "gemm_large", "conv_gemm_128x128", 7},
               {64, 1, false, "gemm_large_m64", "conv_gemm_64x128", 7},
               {16, 16, false, "", "conv_depthwise"},
               {12, 4, false, "", "conv_direct"},
               {16, 4, false, "", "conv_direct_vec4"},
               {8, 1, true, "", "conv_transpose"}};
  for (const auto& k : cases) {
    ConvResidual c(k.C, k.groups, k.transposed, k.width);
    auto build = [&](OpGraph& g) { c.build(g); };
    std::map<std::string, std::string> routes;
    if (*k.route) routes["conv"] = k.route;
    auto fused = load_graph(build, true, routes), plain = load_graph(build, false, routes);
    EXPECT_EQ(plain.ops.size(), 4u) << k.variant;
    EXPECT_EQ(fused.ops, std::vector<std::string>{"fused[convolution+add+add+relu]"}) << k.variant;
    EXPECT_EQ(fused.variants, std::vector<std::string>{k.variant});
    EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2)) << k.variant;
    EXPECT_TRUE(Close(fused.out[0], c.ref(), 1e-4, 1e-4)) << k.variant;
  }
}

// conv_with_clamp (relu6 folded by the exporter) then * 0.5: the clamp runs before the epilogue.
TEST(EpilogueFusion, ConvWithClampThenScaleKeepsTheClampFirst) {
  ETW_REQUIRE_GPU();
  ConvAct c;
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id cv = g.tensor(DType::Float32, {1, 16, 9, 9}), o = g.output(DType::Float32, {1, 16, 9, 9});
    gb.op("et_vk.conv_with_clamp.default",
          {g.input(c.x), g.constant(c.w), g.constant(c.b), gb.int_list({1, 1}), gb.int_list({1, 1}),
           gb.int_list({1, 1}), gb.boolean(false), gb.int_list({0, 0}), gb.int_(1), gb.dbl(0.0), gb.dbl(0.5), cv});
    gb.op("aten.mul.Scalar", {cv, gb.dbl(-2.0), o});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[conv_with_clamp+mul]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
  ref::ConvArgs a;
  a.ph = a.pw = 1;
  a.out_min = 0, a.out_max = 0.5;
  EXPECT_TRUE(Close(fused.out[0], map_ref(ref::conv(c.x, c.w, &c.b, a), [](double v, size_t) { return -2 * v; }),
                    1e-4, 1e-4));
}

// linear [M,K] x [N,K]^T + b -> gelu, on every GEMM route the shape allows when forced.
TEST(EpilogueFusion, LinearGeluOnEveryMatmulRoute) {
  ETW_REQUIRE_GPU();
  struct Case {
    int64_t M, K, N;
    const char* route;
    const char* variant;
  } cases[] = {{5, 12, 7, "tiled", "gemm_tiled"},
               {5, 12, 8, "vec4", "gemm_vec4"},
               {1, 13, 9, "gemv", "gemv"},
               {1, 16, 9, "gemv", "gemv_vec4"},
               {130, 32, 128, "large", "gemm_128x128"},
               {64, 32, 128, "large_m64", "gemm_64x128_aligned"}};
  for (const auto& k : cases) {
    auto x = random_f32({k.M, k.K}, 8), w = random_f32({k.N, k.K}, 9, -0.3f, 0.3f), b = random_f32({k.N}, 10);
    auto build = [&](OpGraph& g) {
      Id l = g.tensor(DType::Float32, {k.M, k.N}), o = g.output(DType::Float32, {k.M, k.N});
      g.gb.op("aten.linear.default", {g.input(x), g.constant(w), g.constant(b), l});
      g.gb.op("aten.gelu.default", {l, g.gb.str("none"), o});
    };
    auto fused = load_graph(build, true, {{"matmul", k.route}}), plain = load_graph(build, false, {{"matmul", k.route}});
    EXPECT_EQ(plain.ops.size(), 2u) << k.variant;
    EXPECT_EQ(fused.ops, std::vector<std::string>{"fused[linear+gelu]"}) << k.variant;
    EXPECT_EQ(fused.variants, std::vector<std::string>{k.variant});
    EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2)) << k.variant;
    auto ref = map_ref(ref::linear(x, w, &b), [](double v, size_t) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
    EXPECT_TRUE(Close(fused.out[0], ref, 1e-4, 1e-4)) << k.variant;
  }
}

// bmm + residual of the output's shape, then * 0.25 (fused[add+mul] taken by the bmm).
TEST(EpilogueFusion, BmmResidualScale) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4, 6}, 11), b = random_f32({3, 6, 5}, 12), r = random_f32({3, 4, 5}, 13);
  auto build = [&](OpGraph& g) {
    Id m = g.tensor(DType::Float32, {3, 4, 5}), s = g.tensor(DType::Float32, {3, 4, 5});
    Id o = g.output(DType::Float32, {3, 4, 5});
    g.gb.op("aten.bmm.default", {g.input(a), g.input(b), m});
    g.gb.op("aten.add.Tensor", {g.input(r), m, g.gb.int_(1), s});
    g.gb.op("aten.mul.Scalar", {s, g.gb.dbl(0.25), o});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[bmm+add+mul]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
  auto rv = f64(r);
  EXPECT_TRUE(Close(fused.out[0], map_ref(ref::matmul(a, b), [&](double v, size_t i) { return (rv[i] + v) * 0.25; }),
                    1e-5, 1e-5));
}

TEST(EpilogueFusion, DynamicShapesRerunSmallerMatchesUnfused) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    Id x = g.input(random_f32({6, 16}, 14), {6, 16}, true);
    Id r = g.input(random_f32({6, 8}, 15), {6, 8}, true);
    Id l = g.tensor(DType::Float32, {6, 8}), o = g.output(DType::Float32, {6, 8});
    g.gb.op("aten.linear.default", {x, g.constant(random_f32({8, 16}, 16)), g.gb.null(), l});
    g.gb.op("aten.sub.Tensor", {l, r, g.gb.dbl(2.0), o});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[linear+sub]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
  std::vector<HostTensor> small = {random_f32({2, 16}, 17), random_f32({2, 8}, 18)};
  auto f2 = fused.g->rerun(small), p2 = plain.g->rerun(small);
  ASSERT_EQ(f2[0].shape, (std::vector<int64_t>{2, 8}));
  EXPECT_TRUE(SameAsUnfused(f2[0], p2[0], 2e-2));
}

// (c) What must stay apart.
TEST(EpilogueFusion, ProducerOutputUsedTwiceIsNotFused) {
  ETW_REQUIRE_GPU();
  ConvAct c;
  auto build = [&](OpGraph& g) {
    Id cv = g.output(DType::Float32, {1, 16, 9, 9}), o = g.output(DType::Float32, {1, 16, 9, 9});
    conv_call(g, g.input(c.x), g.constant(c.w), g.constant(c.b), {1, 1}, {1, 1}, 1, false, cv);
    g.gb.op("aten.relu.default", {cv, o});
  };
  EXPECT_EQ(load_graph(build, true).ops, (std::vector<std::string>{"aten.convolution.default", "aten.relu.default"}));
  auto twice = [&](OpGraph& g) {
    Id cv = g.tensor(DType::Float32, {1, 16, 9, 9}), a = g.tensor(DType::Float32, {1, 16, 9, 9});
    Id o = g.output(DType::Float32, {1, 16, 9, 9}), o2 = g.output(DType::Float32, {1, 16, 9, 9});
    conv_call(g, g.input(c.x), g.constant(c.w), g.constant(c.b), {1, 1}, {1, 1}, 1, false, cv);
    g.gb.op("aten.relu.default", {cv, a});
    g.gb.op("aten.relu.default", {a, o});
    g.gb.op("aten.neg.default", {cv, o2});
  };
  auto fused = load_graph(twice, true), plain = load_graph(twice, false);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.convolution.default", "fused[relu+relu]", "aten.neg.default"}));
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
}

TEST(EpilogueFusion, ConsumerThatWidensTheShapeIsNotFused) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 6}, 19), w = random_f32({4, 6}, 20), r = random_f32({3, 4}, 21);
  auto build = [&](OpGraph& g) {
    Id l = g.tensor(DType::Float32, {1, 4}), o = g.output(DType::Float32, {3, 4});
    g.gb.op("aten.linear.default", {g.input(x), g.constant(w), g.gb.null(), l});
    g.gb.op("aten.add.Tensor", {l, g.input(r), g.gb.int_(1), o});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.linear.default", "aten.add.Tensor"}));
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
}

TEST(EpilogueFusion, ConsumerChangingTheDtypeIsNotFused) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 6}, 22), w = random_f32({4, 6}, 23);
  auto build = [&](OpGraph& g) {
    Id l = g.tensor(DType::Float32, {2, 4}), o = g.output(DType::Float64, {2, 4});
    g.gb.op("aten.linear.default", {g.input(x), g.constant(w), g.gb.null(), l});
    g.gb.op("aten.relu.default", {l, o});
  };
  EXPECT_EQ(load_graph(build, true).ops, (std::vector<std::string>{"aten.linear.default", "aten.relu.default"}));
}

// A call between the producer and its consumer that writes the producer's input (an in-place
// copy_): moving the producer down to the consumer would read the new value, so the pair stays
// apart. A call that only reads it does not keep them apart.
TEST(EpilogueFusion, CallBetweenWritingTheProducersInputKeepsThemApart) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 6}, 24), w = random_f32({4, 6}, 25), y = random_f32({2, 6}, 26);
  for (bool writes : {true, false}) {
    auto build = [&](OpGraph& g) {
      Id xi = g.input(x), yi = g.input(y);
      Id t = g.tensor(DType::Float32, {2, 6}), l = g.tensor(DType::Float32, {2, 4});
      Id o = g.output(DType::Float32, {2, 4}), n = g.output(DType::Float32, {2, 6});
      g.gb.op("aten.neg.default", {xi, t});
      g.gb.op("aten.linear.default", {t, g.constant(w), g.gb.null(), l});
      if (writes) g.gb.op("aten.copy_.default", {t, yi, g.gb.boolean(false), t});
      g.gb.op("aten.neg.default", {t, n});
      g.gb.op("aten.relu.default", {l, o});
    };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    if (writes)
      EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.neg.default", "aten.linear.default", "aten.copy_.default",
                                                     "aten.neg.default", "aten.relu.default"}));
    else
      EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.neg.default", "aten.neg.default", "fused[linear+relu]"}));
    EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2)) << writes;
    EXPECT_TRUE(SameAsUnfused(fused.out[1], plain.out[1], 2e-2)) << writes;
  }
}

// A file cannot spell an epilogue: whatever it puts after the op's own arguments is a Format
// error naming the op.
TEST(EpilogueFusion, AnEpilogueInAFileIsAFormatError) {
  ETW_REQUIRE_GPU();
  for (bool text : {true, false}) {
    OpGraph g;
    Id x = g.input(random_f32({2, 4}, 26)), e = g.input(random_f32({2, 3}, 27));
    Id o = g.output(DType::Float32, {2, 3});
    Id bad = text ? g.gb.str("u 13 x0 00000000 00000000 00000000 00000000 silu") : g.gb.int_(3);
    g.gb.op("aten.linear.default", {x, g.constant(random_f32({3, 4}, 28)), g.gb.null(), bad, e, o});
    std::string err = load_error([&] { g.run(); });
    EXPECT_TRUE(has(err, "Format")) << err;
    EXPECT_TRUE(has(err, "aten.linear.default")) << err;
    EXPECT_TRUE(has(err, "epilogue expression")) << err;
  }
}

// A MobileNetV3 inverted-residual block with squeeze-excite, as the exporter writes it:
// expand 1x1 + hardswish, depthwise 3x3 + hardswish, SE (mean -> 1x1 + relu -> 1x1 ->
// hardsigmoid as (v + 3).clamp(0, 6) / 6 -> mul), project 1x1, residual add. The
// adaptive_avg_pool2d(1) spelling of the pool is matched too.
struct MbBlock {
  int64_t C = 16, E = 32, S = 8, H = 7;
  HostTensor x = random_f32({1, C, H, H}, 30), we = random_f32({E, C, 1, 1}, 31, -0.4f, 0.4f),
             be = random_f32({E}, 32), wd = random_f32({E, 1, 3, 3}, 33, -0.5f, 0.5f), bd = random_f32({E}, 34),
             w1 = random_f32({S, E, 1, 1}, 35, -0.4f, 0.4f), b1 = random_f32({S}, 36),
             w2 = random_f32({E, S, 1, 1}, 37, -0.6f, 0.6f), b2 = random_f32({E}, 38),
             wp = random_f32({C, E, 1, 1}, 39, -0.3f, 0.3f), bp = random_f32({C}, 40);
  bool adaptive_pool = false;
  void build(OpGraph& g) const {
    auto& gb = g.gb;
    auto t = [&](int64_t c, int64_t h) { return g.tensor(DType::Float32, {1, c, h, h}); };
    Id xi = g.input(x);
    Id e = t(E, H), eh = t(E, H), d = t(E, H), dh = t(E, H), m = t(E, 1), h1 = t(S, 1), h2 = t(S, 1), z = t(E, 1),
       z1 = t(E, 1), z2 = t(E, 1), gate = t(E, 1), sc = t(E, H), pj = t(C, H), o = g.output(DType::Float32, {1, C, H, H});
    conv_call(g, xi, g.constant(we), g.constant(be), {1, 1}, {0, 0}, 1, false, e);
    gb.op("aten.hardswish.default", {e, eh});
    conv_call(g, eh, g.constant(wd), g.constant(bd), {1, 1}, {1, 1}, E, false, d);
    gb.op("aten.hardswish.default", {d, dh});
    if (adaptive_pool) gb.op("aten._adaptive_avg_pool2d.default", {dh, gb.int_list({1, 1}), m});
    else gb.op("aten.mean.dim", {dh, gb.int_list({-1, -2}), gb.boolean(true), gb.null(), m});
    conv_call(g, m, g.constant(w1), g.constant(b1), {1, 1}, {0, 0}, 1, false, h1);
    gb.op("aten.relu.default", {h1, h2});
    conv_call(g, h2, g.constant(w2), g.constant(b2), {1, 1}, {0, 0}, 1, false, z);
    gb.op("aten.add.Scalar", {z, gb.dbl(3.0), gb.int_(1), z1});
    gb.op("aten.clamp.default", {z1, gb.dbl(0.0), gb.dbl(6.0), z2});
    gb.op("aten.div.Scalar", {z2, gb.dbl(6.0), gate});
    gb.op("aten.mul.Tensor", {dh, gate, sc});
    conv_call(g, sc, g.constant(wp), g.constant(bp), {1, 1}, {0, 0}, 1, false, pj);
    gb.op("aten.add.Tensor", {pj, xi, gb.int_(1), o});
  }
  HostTensor ref() const {
    ref::ConvArgs one, dw;
    dw.ph = dw.pw = 1;
    dw.groups = E;
    auto hs = [](double v, size_t) { return hardswish(v); };
    auto eh = map_ref(ref::conv(x, we, &be, one), hs);
    auto dh = map_ref(ref::conv(eh, wd, &bd, dw), hs);
    auto dv = f64(dh);
    std::vector<double> mv(E, 0.0);
    for (int64_t c = 0; c < E; ++c)
      for (int64_t k = 0; k < H * H; ++k) mv[c] += dv[c * H * H + k] / (H * H);
    auto h = map_ref(ref::conv(ref_tensor({1, E, 1, 1}, mv), w1, &b1, one), [](double v, size_t) { return relu(v); });
    auto gate = f64(map_ref(ref::conv(h, w2, &b2, one),
                            [](double v, size_t) { return std::min(std::max(v + 3, 0.0), 6.0) / 6; }));
    for (size_t i = 0; i < dv.size(); ++i) dv[i] *= gate[i / (H * H)];
    auto xv = f64(x);
    return map_ref(ref::conv(ref_tensor({1, E, H, H}, dv), wp, &bp, one), [&](double v, size_t i) { return v + xv[i]; });
  }
};

TEST(EpilogueFusion, MobileNetBlockWithSqueezeExciteDropsFrom14To5Dispatches) {
  ETW_REQUIRE_GPU();
  for (bool adaptive : {false, true}) {
    MbBlock b;
    b.adaptive_pool = adaptive;
    auto build = [&](OpGraph& g) { b.build(g); };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    EXPECT_EQ(plain.ops.size(), 14u);
    // The hardsigmoid joins the gate's multiply, which the projection conv evaluates as it reads
    // its input (a prologue, ops/conv/conv_prologue.h): the squeeze-excite is the gate's two
    // kernels (the pooling, then 1x1 + relu and 1x1).
    EXPECT_EQ(fused.ops, (std::vector<std::string>{"fused[convolution+hardswish]", "fused[convolution+hardswish]",
                                                   "fused[mean+convolution+relu+convolution]",
                                                   "fused[mean+convolution+relu+convolution]",
                                                   "fused[add+clamp+div+mul+convolution+add]"}));
    // The fused mean sums in another order than the reduction kernel: equal within fp32 rounding.
    EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
    EXPECT_TRUE(Close(fused.out[0], b.ref(), 1e-4, 1e-4));
  }
}

// The gate over many channels (more than one workgroup of the pooling) and a batch of 2; over
// more than 1024 channels with a squeeze wider than the workgroup (W1's rows in several passes)
// and a pool of 7x7, which is wide enough for the three-kernel form (the squeezed vector once, in
// a kernel of its own); each case on both forms (force_route squeeze_excite), a biased first conv
// on the split one.
TEST(EpilogueFusion, SqueezeExciteWideAndBatched) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t B, C, S, H; const char* route; bool split; };
  for (Case k : {Case{2, 300, 20, 3, "", false}, Case{2, 300, 20, 3, "split", true}, Case{1, 1152, 300, 7, "", true},
                 Case{1, 1152, 300, 7, "fused", false}}) {
    const int64_t B = k.B, C = k.C, S = k.S, H = k.H;
    SCOPED_TRACE("C=" + std::to_string(C) + " S=" + std::to_string(S) + " route " + k.route);
    auto b1 = random_f32({S}, 48);
    auto x = random_f32({B, C, H, H}, 41), w1 = random_f32({S, C, 1, 1}, 42, -0.2f, 0.2f),
         w2 = random_f32({C, S, 1, 1}, 43, -0.5f, 0.5f), b2 = random_f32({C}, 44);
    auto build = [&](OpGraph& g) {
      auto& gb = g.gb;
      Id m = g.tensor(DType::Float32, {B, C, 1, 1}), h = g.tensor(DType::Float32, {B, S, 1, 1});
      Id o = g.output(DType::Float32, {B, C, 1, 1});
      gb.op("aten.mean.dim", {g.input(x), gb.int_list({2, 3}), gb.boolean(true), m});
      conv_call(g, m, g.constant(w1), k.split ? g.constant(b1) : gb.null(), {1, 1}, {0, 0}, 1, false, h);
      conv_call(g, h, g.constant(w2), g.constant(b2), {1, 1}, {0, 0}, 1, false, o);
    };
    std::map<std::string, std::string> routes;
    if (*k.route) routes["squeeze_excite"] = k.route;
    auto fused = load_graph(build, true, routes), plain = load_graph(build, false);
    // mean and two convs (a conv over K >= 256 of few tiles on the small tiles, in one dispatch).
    EXPECT_EQ(plain.ops.size(), 3u) << ::testing::PrintToString(plain.variants);
    const std::string op = "fused[mean+convolution+convolution]";
    if (k.split) {
      ASSERT_EQ(fused.ops, (std::vector<std::string>{op, op, op}));
      EXPECT_EQ(fused.variants, (std::vector<std::string>{"squeeze_excite_pool", "squeeze_excite_fc1", "squeeze_excite"}));
    } else {
      ASSERT_EQ(fused.ops, (std::vector<std::string>{op, op}));
      EXPECT_EQ(fused.variants, (std::vector<std::string>{"squeeze_excite_pool", "squeeze_excite"}));
    }
    EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
    auto xv = f64(x);
    std::vector<double> mv(B * C, 0.0);
    for (int64_t i = 0; i < B * C; ++i)
      for (int64_t j = 0; j < H * H; ++j) mv[i] += xv[i * H * H + j] / (H * H);
    ref::ConvArgs one;
    auto ref = ref::conv(ref::conv(ref_tensor({B, C, 1, 1}, mv), w1, k.split ? &b1 : nullptr, one), w2, &b2, one);
    EXPECT_TRUE(Close(fused.out[0], ref, 1e-4, 1e-4));
  }
}

// The pooled value also read elsewhere: the gate stays three kernels (the convs still take their
// epilogues).
TEST(EpilogueFusion, SqueezeExciteWithPooledValueUsedTwiceIsNotFused) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 8, 4, 4}, 45), w1 = random_f32({4, 8, 1, 1}, 46), w2 = random_f32({8, 4, 1, 1}, 47);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id m = g.output(DType::Float32, {1, 8, 1, 1}), h = g.tensor(DType::Float32, {1, 4, 1, 1});
    Id o = g.output(DType::Float32, {1, 8, 1, 1});
    gb.op("aten.mean.dim", {g.input(x), gb.int_list({2, 3}), gb.boolean(true), m});
    conv_call(g, m, g.constant(w1), gb.null(), {1, 1}, {0, 0}, 1, false, h);
    conv_call(g, h, g.constant(w2), gb.null(), {1, 1}, {0, 0}, 1, false, o);
  };
  EXPECT_EQ(load_graph(build, true).ops,
            (std::vector<std::string>{"aten.mean.dim", "aten.convolution.default", "aten.convolution.default"}));
}

// linear [B*T, K] -> view [B, T, N] -> + residual [B, T, N] -> gelu, as exports flatten around a
// linear: the linear takes the chain and the view yields its result (still copy-free).
TEST(EpilogueFusion, AcrossAContiguousViewTheLinearTakesTheChain) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({6, 8}, 48), w = random_f32({4, 8}, 49), r = random_f32({2, 3, 4}, 50);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id l = g.tensor(DType::Float32, {6, 4}), v = g.tensor(DType::Float32, {2, 3, 4}), a = g.tensor(DType::Float32, {2, 3, 4});
    Id o = g.output(DType::Float32, {2, 3, 4});
    gb.op("aten.linear.default", {g.input(x), g.constant(w), gb.null(), l});
    gb.op("aten.view_copy.default", {l, gb.int_list({2, 3, 4}), v});
    gb.op("aten.add.Tensor", {v, g.input(r), gb.int_(1), a});
    gb.op("aten.gelu.default", {a, gb.str("tanh"), o});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 3u);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[linear+add+gelu]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
  auto rv = f64(r);
  auto ref = map_ref(ref::linear(x, w, nullptr), [&](double v, size_t i) {
    double u = v + rv[i];
    return 0.5 * u * (1 + std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u)));
  });
  ref.shape = {2, 3, 4};
  EXPECT_TRUE(Close(fused.out[0], ref, 1e-4, 1e-4));
}

// Attention's scale as the Whisper export writes it: bmm -> view_copy (adds the batch dim) ->
// mul by a one-element tensor (written at load by prepack). The scalar is read whatever the
// view, so the bmm takes the multiply.
TEST(EpilogueFusion, AcrossAViewAOneElementOperandJoinsTheBmm) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 5, 8}, 60), b = random_f32({2, 8, 6}, 61);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id k = gb.constant_f32({}, {0.125f});
    Id scale = gb.tensor(DType::Float32, {});
    gb.op("et_vk.prepack.default", {k, scale});
    Id m = g.tensor(DType::Float32, {2, 5, 6}), v = g.tensor(DType::Float32, {1, 2, 5, 6});
    gb.op("aten.bmm.default", {g.input(a), g.input(b), m});
    gb.op("aten.view_copy.default", {m, gb.int_list({1, 2, 5, 6}), v});
    gb.op("aten.mul.Tensor", {v, scale, g.output(DType::Float32, {1, 2, 5, 6})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 2u);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[bmm+mul]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
  auto ref = map_ref(ref::matmul(a, b), [](double v, size_t) { return v * 0.125; });
  ref.shape = {1, 2, 5, 6};
  EXPECT_TRUE(Close(fused.out[0], ref, 1e-5, 1e-5));
}

// A transformer's residual as Whisper exports it: linear -> view_copy (adds the batch dim) ->
// clone -> add(x, .). The add joins the linear across both views.
TEST(EpilogueFusion, AcrossAViewAndACloneTheResidualAddJoinsTheLinear) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({7, 12}, 62), w = random_f32({12, 12}, 63), res = random_f32({1, 7, 12}, 64);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id l = g.tensor(DType::Float32, {7, 12}), v = g.tensor(DType::Float32, {1, 7, 12}), c = g.tensor(DType::Float32, {1, 7, 12});
    gb.op("aten.linear.default", {g.input(x), g.constant(w), gb.null(), l});
    gb.op("aten.view_copy.default", {l, gb.int_list({1, 7, 12}), v});
    gb.op("aten.clone.default", {v, gb.null(), c});
    gb.op("aten.add.Tensor", {g.input(res), c, gb.int_(1), g.output(DType::Float32, {1, 7, 12})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 2u);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[linear+add]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0], 2e-2));
  auto ref = map_ref(ref::linear(x, w, nullptr), [&](double v, size_t i) { return v + res.as<float>()[i]; });
  ref.shape = {1, 7, 12};
  EXPECT_TRUE(Close(fused.out[0], ref, 1e-5, 1e-5));
}

// The squeeze-excite op on a graph made in memory (its epilogue an expression, as the pass makes
// it) runs like the ops it stands for; its arguments are checked.
TEST(EpilogueFusion, SqueezeExciteOpRunsLikeTheOps) {
  ETW_REQUIRE_GPU();
  using Kind = format::VkExprOperand::Kind;
  auto x = random_f32({1, 6, 5, 5}, 51), w1 = random_f32({3, 6, 1, 1}, 52), b1 = random_f32({3}, 53),
       w2 = random_f32({6, 3, 1, 1}, 54);
  auto build = [&](IrChain& c, const HostTensor& first, const HostTensor& second, bool relu_bias) {
    format::VkExprTerm relu;
    relu.op = ops::code(ops::UnaryOp::Relu);
    relu.a = {Kind::Input, 0};
    relu.label = "relu";
    format::VkExpr e;
    e.terms = {relu};
    int32_t xi = c.input({1, 6, 5, 5});
    c.op("etwebgpu.squeeze_excite",
         {xi, c.constant(first.shape, first.data), relu_bias ? c.constant(b1.shape, b1.data) : c.null(),
          relu_bias ? c.expr(e) : c.null(), c.constant(second.shape, second.data), c.null(), c.null(), c.output({1, 6, 1, 1})});
  };
  IrChain c;
  build(c, w1, w2, true);
  auto out = run_ir(c.ir, {x})[0];
  auto xv = f64(x);
  std::vector<double> mv(6, 0.0);
  for (int64_t i = 0; i < 6 * 25; ++i) mv[i / 25] += xv[i] / 25;
  ref::ConvArgs one;
  auto h = map_ref(ref::conv(ref_tensor({1, 6, 1, 1}, mv), w1, &b1, one), [](double v, size_t) { return relu(v); });
  EXPECT_TRUE(Close(out, ref::conv(h, w2, nullptr, one), 1e-5, 1e-5));

  IrChain bad;
  build(bad, w2, w1, false);
  EXPECT_TRUE(has(load_error([&] { run_ir(bad.ir, {x}); }), "must be [S, 6, 1, 1]"));
}

}  // namespace
