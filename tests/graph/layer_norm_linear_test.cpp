// Layer norm fused into the linear that reads it (ops/matmul/layer_norm_linear.h): each case loads
// the same graph with fusion on and off and proves (a) the pair became one dispatch of the 64x64
// GEMM kernels, (b) the result matches the unfused graph and the fp64 reference, and (c) the
// patterns that must stay apart do.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "reference/matmul/matmul_ref.h"
#include "reference/norm/norm_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

using Loaded = LoadedGraph;

double gelu(double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }

// x [rows, K] -> layer_norm over K (affine when `affine`) -> linear [N, K] (+ bias) -> gelu when
// `act`; the layer norm's mean and rstd go to scratch tensors nothing reads.
struct PreNorm {
  int64_t rows, K, N;
  bool affine = true, bias = true, act = true;
  HostTensor x = random_f32({rows, K}, 1, -2, 3), nw = random_f32({K}, 2), nb = random_f32({K}, 3),
             w = random_f32({N, K}, 4, -0.2f, 0.2f), b = random_f32({N}, 5);
  void build(OpGraph& g, bool dynamic = false) const {
    auto& gb = g.gb;
    Id in = dynamic ? g.input(x, x.shape, true) : g.input(x);
    Id y = g.tensor(DType::Float32, {rows, K});
    Id mean = g.tensor(DType::Float32, {rows, 1}), rstd = g.tensor(DType::Float32, {rows, 1});
    gb.op("aten.native_layer_norm.default", {in, gb.int_list({K}), affine ? g.constant(nw) : gb.null(),
                                             affine ? g.constant(nb) : gb.null(), gb.dbl(1e-5),
                                             gb.value_list({y, mean, rstd})});
    Id l = act ? g.tensor(DType::Float32, {rows, N}) : g.output(DType::Float32, {rows, N});
    gb.op("aten.linear.default", {y, g.constant(w), bias ? g.constant(b) : gb.null(), l});
    if (act) gb.op("aten.gelu.default", {l, gb.str("none"), g.output(DType::Float32, {rows, N})});
  }
  HostTensor ref() const {
    auto y = affine ? ref::layer_norm(x, 1, f64(nw), f64(nb), 1e-5) : ref::layer_norm(x, 1, {}, {}, 1e-5);
    auto r = ref::linear(y, w, bias ? &b : nullptr);
    if (!act) return r;
    auto v = f64(r);
    for (auto& e : v) e = gelu(e);
    return ref_tensor(r.shape, v);
  }
};

TEST(LayerNormLinear, PreNormProjectionWithEpilogueIsOneDispatchMatchingUnfusedAndReference) {
  ETW_REQUIRE_GPU();
  // Rows that leave the last 64-row tile part-empty; K not a multiple of the 16-wide k tile.
  PreNorm c{.rows = 37, .K = 52, .N = 72};
  auto build = [&](OpGraph& g) { c.build(g); };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 3u);  // layer norm, linear, gelu
  EXPECT_EQ(fused.ops, std::vector<std::string>{"fused[layer_norm+linear+gelu]"});
  EXPECT_EQ(fused.variants, std::vector<std::string>{"gemm_small"});  // one 64x64 tile, a short K
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
  EXPECT_TRUE(Close(fused.out[0], c.ref(), 1e-4, 1e-4));
  // The 64x64 kernel and the 16x16 small tiles (sixteen invocations a row for the statistics)
  // normalise the same rows the same way.
  auto tile64 = load_graph(build, true, {{"matmul", "vec4"}});
  EXPECT_EQ(tile64.variants, std::vector<std::string>{"gemm_vec4"});
  EXPECT_TRUE(Close(tile64.out[0], c.ref(), 1e-4, 1e-4));
  auto tile16 = load_graph(build, true, {{"matmul", "small16"}});
  EXPECT_EQ(tile16.variants, std::vector<std::string>{"gemm_small16"});
  EXPECT_TRUE(Close(tile16.out[0], c.ref(), 1e-4, 1e-4));
}

// As the exporter writes a 3-D input's pre-norm projection: layer_norm [1, S, K] -> squeeze_copy
// -> clone -> linear on [S, K]. The views stay (they alias x); the norm joins the linear.
TEST(LayerNormLinear, AcrossSqueezeAndCloneAsExportedForA3dInput) {
  ETW_REQUIRE_GPU();
  PreNorm c{.rows = 45, .K = 40, .N = 24, .act = false};
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    HostTensor x3 = c.x;
    x3.shape = {1, 45, 40};
    Id in = g.input(x3);
    Id y = g.tensor(DType::Float32, {1, 45, 40});
    Id mean = g.tensor(DType::Float32, {1, 45, 1}), rstd = g.tensor(DType::Float32, {1, 45, 1});
    gb.op("aten.native_layer_norm.default", {in, gb.int_list({40}), g.constant(c.nw), g.constant(c.nb), gb.dbl(1e-5),
                                             gb.value_list({y, mean, rstd})});
    Id sq = g.tensor(DType::Float32, {45, 40}), cl = g.tensor(DType::Float32, {45, 40});
    gb.op("aten.squeeze_copy.dims", {y, gb.int_list({0}), sq});
    gb.op("aten.clone.default", {sq, gb.null(), cl});
    gb.op("aten.linear.default", {cl, g.constant(c.w), g.constant(c.b), g.output(DType::Float32, {45, 24})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"etwebgpu.layer_norm_linear"});
  EXPECT_EQ(fused.out[0].shape, (std::vector<int64_t>{45, 24}));
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
  EXPECT_TRUE(Close(fused.out[0], c.ref(), 1e-4, 1e-4));
}

TEST(LayerNormLinear, WithoutAffineBiasOrEpilogue) {
  ETW_REQUIRE_GPU();
  PreNorm c{.rows = 70, .K = 64, .N = 20, .affine = false, .bias = false, .act = false};
  auto build = [&](OpGraph& g) { c.build(g); };
  auto fused = load_graph(build, true);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"etwebgpu.layer_norm_linear"});
  EXPECT_TRUE(Close(fused.out[0], c.ref(), 1e-4, 1e-4));
}

TEST(LayerNormLinear, LongRowsSplitKAndNormaliseEachRangeWithWholeRowStatistics) {
  ETW_REQUIRE_GPU();
  // One output tile over K = 1,024: the split-K route, each K range normalised with the whole
  // row's mean and rstd; rows offset far from zero so a per-range statistic would be visibly wrong.
  PreNorm c{.rows = 9, .K = 1024, .N = 40, .act = false};
  c.x = random_f32({9, 1024}, 6, 40, 44);
  auto build = [&](OpGraph& g) { c.build(g); };
  auto fused = load_graph(build, true);
  EXPECT_EQ(fused.variants, (std::vector<std::string>{"gemm_vec4_splitk", "gemm_splitk_reduce"}));
  EXPECT_TRUE(Close(fused.out[0], c.ref(), 2e-4, 2e-4));
  // Forcing "vec4" runs it unsplit; forcing the large tiles keeps the default 64x64 routes (the
  // only ones with the norm).
  auto whole = load_graph(build, true, {{"matmul", "vec4"}});
  EXPECT_EQ(whole.variants, std::vector<std::string>{"gemm_vec4"});
  EXPECT_TRUE(Close(whole.out[0], c.ref(), 2e-4, 2e-4));
  EXPECT_EQ(load_graph(build, true, {{"matmul", "large"}}).variants, fused.variants);
}

TEST(LayerNormLinear, PatternsThatMustStayApart) {
  ETW_REQUIRE_GPU();
  auto has_norm = [](const Loaded& l) {
    return std::find(l.ops.begin(), l.ops.end(), "aten.native_layer_norm.default") != l.ops.end();
  };
  {  // dynamic shapes: the route is not known at load
    PreNorm c{.rows = 12, .K = 16, .N = 8};
    auto l = load_graph([&](OpGraph& g) { c.build(g, true); }, true);
    EXPECT_TRUE(has_norm(l));
    EXPECT_TRUE(Close(l.out[0], c.ref(), 1e-4, 1e-4));
  }
  {  // one row: the GEMV route serves it better
    PreNorm c{.rows = 1, .K = 16, .N = 8};
    EXPECT_TRUE(has_norm(load_graph([&](OpGraph& g) { c.build(g); }, true)));
  }
  {  // K not a multiple of 4: no vec4 loads
    PreNorm c{.rows = 5, .K = 18, .N = 8};
    EXPECT_TRUE(has_norm(load_graph([&](OpGraph& g) { c.build(g); }, true)));
  }
  {  // many 64x64 tiles: each would recompute its rows' statistics; the norm keeps its own dispatch
    PreNorm c{.rows = 1100, .K = 16, .N = 960, .act = false};
    EXPECT_TRUE(has_norm(load_graph([&](OpGraph& g) { c.build(g); }, true)));
  }
  {  // a GEMM big enough for the large tiles keeps them
    PreNorm c{.rows = 1024, .K = 512, .N = 2048, .act = false};
    EXPECT_TRUE(has_norm(load_graph([&](OpGraph& g) { c.build(g); }, true)));
  }
  {  // the normalised tensor also read elsewhere, and the statistics kept as outputs
    PreNorm c{.rows = 6, .K = 16, .N = 16, .act = false};
    for (int variant = 0; variant < 2; ++variant) {
      auto build = [&](OpGraph& g) {
        auto& gb = g.gb;
        Id y = variant == 0 ? g.tensor(DType::Float32, {6, 16}) : g.output(DType::Float32, {6, 16});
        Id mean = variant == 1 ? g.output(DType::Float32, {6, 1}) : g.tensor(DType::Float32, {6, 1});
        Id rstd = g.tensor(DType::Float32, {6, 1});
        gb.op("aten.native_layer_norm.default", {g.input(c.x), gb.int_list({16}), g.constant(c.nw), g.constant(c.nb),
                                                 gb.dbl(1e-5), gb.value_list({y, mean, rstd})});
        Id l = g.output(DType::Float32, {6, 16});
        gb.op("aten.linear.default", {y, g.constant(c.w), g.constant(c.b), l});
        if (variant == 0) gb.op("aten.add.Tensor", {y, l, gb.int_(1), g.output(DType::Float32, {6, 16})});
      };
      auto l = load_graph(build, true);
      EXPECT_TRUE(has_norm(l)) << variant;
      EXPECT_TRUE(Close(l.out[variant == 0 ? 0 : 2], c.ref(), 1e-4, 1e-4)) << variant;
    }
  }
}

// A file may name the fused op itself: it runs like the pair, and its arguments are checked.
TEST(LayerNormLinear, HandWrittenCallRunsLikeThePairAndBadArgumentsFailAtLoad) {
  ETW_REQUIRE_GPU();
  PreNorm c{.rows = 10, .K = 32, .N = 12, .act = false};
  OpGraph g;
  Id o = g.output(DType::Float32, {10, 12});
  g.gb.op("etwebgpu.layer_norm_linear", {g.input(c.x), g.constant(c.nw), g.constant(c.nb), g.gb.dbl(1e-5),
                                         g.constant(c.w), g.constant(c.b), o});
  EXPECT_TRUE(Close(g.run()[0], c.ref(), 1e-4, 1e-4));

  auto bad = [&](HostTensor nw, HostTensor w, std::vector<int64_t> xd) {
    return load_error([&] {
      OpGraph b;
      Id bo = b.output(DType::Float32, {xd[0], w.shape[0]});
      b.gb.op("etwebgpu.layer_norm_linear", {b.input(random_f32(xd, 7)), b.constant(nw), b.gb.null(), b.gb.dbl(1e-5),
                                             b.constant(w), b.gb.null(), bo});
      b.run();
    });
  };
  auto e = bad(random_f32({31}, 8), c.w, {10, 32});
  EXPECT_TRUE(has(e, "norm weight")) << e;
  e = bad(random_f32({30}, 8), random_f32({12, 30}, 9), {10, 30});
  EXPECT_TRUE(has(e, "in_features % 4")) << e;
  e = bad(c.nw, c.w, {10, 36});
  EXPECT_TRUE(has(e, "disagree")) << e;
}

// GPT-2's pre-norm projections as exported: layer_norm [1, S, K] -> view_copy [S, K] -> addmm(bias,
// ., mat2 [K, N]) (its Conv1D), with and without a residual add after it: one call (the view
// stays, a copy-free alias of x), matching the unfused graph and the reference, on the small-tile
// kernel and pinned to the 64x64 one. With mat2 a constant (as exported) the addmm is first a
// linear by its transpose (addmm_as_linear), so etwebgpu.layer_norm_linear; with a computed mat2,
// etwebgpu.layer_norm_addmm, and an addmm whose N is no multiple of 4 keeps the norm's own
// dispatch. A hand-written call with a bad mat2 fails at load naming it.
TEST(LayerNormLinear, PreNormAddmmAsGpt2ExportsItIsOneCall) {
  ETW_REQUIRE_GPU();
  for (bool const_w : {true, false})
  for (int64_t N : {72, 70}) {
    for (bool residual : {false, true}) {
      const int64_t S = 37, K = 52;
      auto x = random_f32({1, S, K}, 11, -2, 3), nw = random_f32({K}, 12), nb = random_f32({K}, 13),
           w = random_f32({K, N}, 14, -0.2f, 0.2f), b = random_f32({N}, 15), r = random_f32({S, N}, 16);
      auto build = [&](OpGraph& g) {
        auto& gb = g.gb;
        Id y = g.tensor(DType::Float32, {1, S, K});
        Id mean = g.tensor(DType::Float32, {1, S, 1}), rstd = g.tensor(DType::Float32, {1, S, 1});
        gb.op("aten.native_layer_norm.default", {g.input(x), gb.int_list({K}), g.constant(nw), g.constant(nb),
                                                 gb.dbl(1e-5), gb.value_list({y, mean, rstd})});
        Id v = g.tensor(DType::Float32, {S, K});
        gb.op("aten.view_copy.default", {y, gb.int_list({S, K}), v});
        Id l = residual ? g.tensor(DType::Float32, {S, N}) : g.output(DType::Float32, {S, N});
        gb.op("aten.addmm.default", {g.constant(b), v, const_w ? g.constant(w) : g.input(w), gb.dbl(1.0), gb.dbl(1.0), l});
        if (residual) gb.op("aten.add.Tensor", {l, g.input(r), gb.int_(1), g.output(DType::Float32, {S, N})});
      };
      HostTensor x2 = x;
      x2.shape = {S, K};
      std::vector<double> wt(static_cast<size_t>(K * N));
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n) wt[n * K + k] = w.as<float>()[k * N + n];
      HostTensor wt32(DType::Float32, {N, K});
      for (size_t e = 0; e < wt.size(); ++e) wt32.as<float>()[e] = static_cast<float>(wt[e]);
      auto ref = ref::linear(ref::layer_norm(x2, 1, f64(nw), f64(nb), 1e-5), wt32, &b);
      if (residual)
        for (int64_t e = 0; e < ref.numel(); ++e) ref.as<double>()[e] += r.as<float>()[e];
      auto fused = load_graph(build, true), plain = load_graph(build, false);
      SCOPED_TRACE("N=" + std::to_string(N) + " residual=" + std::to_string(residual) + " const_w=" + std::to_string(const_w));
      bool norm_kept = std::find(fused.ops.begin(), fused.ops.end(), "aten.native_layer_norm.default") != fused.ops.end();
      EXPECT_EQ(norm_kept, !const_w && N % 4 != 0);
      if (const_w) {
        EXPECT_EQ(fused.ops, std::vector<std::string>{residual ? "fused[layer_norm+linear+add]" : "etwebgpu.layer_norm_linear"});
      } else if (N % 4 == 0) {
        EXPECT_EQ(fused.ops, std::vector<std::string>{residual ? "fused[layer_norm+addmm+add]" : "etwebgpu.layer_norm_addmm"});
      }
      if (!norm_kept) {
        EXPECT_EQ(fused.variants, std::vector<std::string>{"gemm_small"});
        auto tile64 = load_graph(build, true, {{"matmul", "vec4"}});
        EXPECT_EQ(tile64.variants, std::vector<std::string>{"gemm_vec4"});
        EXPECT_TRUE(Close(tile64.out[0], ref, 1e-4, 1e-4));
      }
      EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
      EXPECT_TRUE(Close(fused.out[0], ref, 1e-4, 1e-4));
    }
  }
  // Written by hand: runs like the pair.
  {
    auto x = random_f32({10, 32}, 20, -2, 3), nw = random_f32({32}, 21), nb = random_f32({32}, 22),
         w = random_f32({32, 12}, 23, -0.2f, 0.2f), b = random_f32({12}, 24);
    HostTensor wt(DType::Float32, {12, 32});
    for (int64_t k = 0; k < 32; ++k)
      for (int64_t n = 0; n < 12; ++n) wt.as<float>()[n * 32 + k] = w.as<float>()[k * 12 + n];
    auto ref = ref::linear(ref::layer_norm(x, 1, f64(nw), f64(nb), 1e-5), wt, &b);
    for (int64_t e = 0; e < ref.numel(); ++e) ref.as<double>()[e] = 0.5 * ref.as<double>()[e] + b.as<float>()[e % 12];  // 0.5 (xW + b) + b = 0.5 xW + 1.5 b
    OpGraph g;
    Id o = g.output(DType::Float32, {10, 12});
    g.gb.op("etwebgpu.layer_norm_addmm", {g.input(x), g.constant(nw), g.constant(nb), g.gb.dbl(1e-5), g.constant(b),
                                          g.constant(w), g.gb.dbl(1.5), g.gb.dbl(0.5), o});
    EXPECT_TRUE(Close(g.run()[0], ref, 1e-4, 1e-4));
  }
  auto e = load_error([&] {
    OpGraph b;
    Id bo = b.output(DType::Float32, {10, 30});
    b.gb.op("etwebgpu.layer_norm_addmm", {b.input(random_f32({10, 32}, 17)), b.gb.null(), b.gb.null(), b.gb.dbl(1e-5),
                                          b.constant(random_f32({30}, 18)), b.constant(random_f32({32, 30}, 19)),
                                          b.gb.dbl(1.0), b.gb.dbl(1.0), bo});
    b.run();
  });
  EXPECT_TRUE(has(e, "out_features % 4")) << e;
}

}  // namespace
