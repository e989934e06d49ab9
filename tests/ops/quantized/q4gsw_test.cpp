// et_vk.linear_q4gsw / et_vk.embedding_q4gsw / et_vk.linear_qcs4w against fp64 references
// (tests/reference/quantized), with weights packed as ExecuTorch's Vulkan quantizer packs them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "gpu/context.h"
#include "reference/norm/norm_ref.h"
#include "reference/quantized/q4_ref.h"
#include "reference/rope/rope_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::vector<int8_t> random_q4(int64_t n, uint64_t seed) {
  std::mt19937_64 r(seed);
  std::vector<int8_t> q(n);
  for (auto& v : q) v = static_cast<int8_t>(static_cast<int>(r() % 16) - 8);
  return q;
}
std::vector<float> random_scales(int64_t n, uint64_t seed) {
  auto t = random_f32({n}, seed, 0.01f, 0.2f);
  return std::vector<float>(t.as<float>(), t.as<float>() + n);
}

struct Lin {
  int64_t N, K, gs, kpad, npad;
  std::vector<int8_t> q;
  std::vector<float> scales, bias;
  bool has_bias;
  Lin(int64_t n, int64_t k, int64_t g, bool b, uint64_t seed)
      : N(n), K(k), gs(g), kpad((k + 7) / 8 * 8), npad((n + 7) / 8 * 8), has_bias(b) {
    q = random_q4(N * K, seed);
    scales = random_scales(((K + gs - 1) / gs) * npad, seed + 1);
    if (b) bias = random_scales(N, seed + 2);
  }
  Id add(OpGraph& g, Id x, Id out) const {
    auto packed = ref::pack_q4_linear(q, N, K, 8);
    Id w = g.gb.constant(DType::UInt8, {N, kpad / 2}, packed);
    Id s = g.gb.constant_f32({(K + gs - 1) / gs, npad}, scales);
    Id b = has_bias ? g.gb.constant_f32({N}, bias) : g.gb.null();
    g.gb.op("et_vk.linear_q4gsw.default", {x, w, s, g.gb.int_(gs), b, out});
    return out;
  }
  HostTensor ref(const HostTensor& x) const {
    return ref::linear_q4gsw(x, q, N, K, scales, npad, gs, has_bias ? &bias : nullptr);
  }
};

struct LinRun {
  HostTensor out;
  std::vector<std::string> variants;
};
LinRun run_lin_v(const Lin& l, const HostTensor& x, const std::string& route = "") {
  OpGraph g;
  Id xi = g.input(x);
  auto os = x.shape;
  os.back() = l.N;
  l.add(g, xi, g.output(DType::Float32, os));
  LoadOptions o;
  if (!route.empty()) o.force_route["linear_q4gsw"] = route;
  LinRun r{g.run(o)[0], {}};
  r.variants = g.variants();
  return r;
}
HostTensor run_lin(const Lin& l, const HostTensor& x, const std::string& route = "") { return run_lin_v(l, x, route).out; }

// The projection graphs below read x itself, or an RMSNorm of x (weight norm_weight(K) or none, eps
// 1e-5) that only they read (the input norm folds into the GEMV, ops/norm/input_norm.h) or that is
// also the graph's first output (it stays a kernel of its own: the control).
enum class Norm { None, Folds, Kept, FoldsUnweighted, KeptUnweighted };
HostTensor norm_weight(int64_t K) { return random_f32({K}, 140, 0.5f, 1.5f); }
Id normed_input(OpGraph& g, Id xi, const std::vector<int64_t>& shape, Norm n) {
  if (n == Norm::None) return xi;
  const bool kept = n == Norm::Kept || n == Norm::KeptUnweighted;
  const bool weighted = n == Norm::Folds || n == Norm::Kept;
  Id y = kept ? g.output(DType::Float32, shape) : g.tensor(DType::Float32, shape);
  g.gb.op("et_vk.rms_norm.default", {xi, weighted ? g.constant(norm_weight(shape.back())) : g.gb.null(), g.gb.dbl(1e-5), y});
  return y;
}
HostTensor normed_ref(const HostTensor& x, bool weighted) {
  const int64_t K = x.shape.back();
  return ref::rms_norm(x, weighted ? f64(norm_weight(K)) : std::vector<double>(static_cast<size_t>(K), 1.0), 1e-5);
}

TEST(OpQ4gswLinear, GemvOneTokenWithPaddedKAndNAndBias) {
  ETW_REQUIRE_GPU();
  Lin l(13, 36, 12, true, 1);  // K 36 packs to 40, N 13 scales padded to 16; K % 8 != 0: one weight at a time
  auto x = random_f32({1, 36}, 2);
  auto r = run_lin_v(l, x);
  EXPECT_TRUE(Close(r.out, l.ref(x), 1e-4, 1e-4));
  EXPECT_EQ(r.variants, std::vector<std::string>{"gemv"});
}

// 38 rows x 37 outputs: partial tiles on both edges of the 128x128 and 16x16 GEMMs, a partial
// block of gemv_rows outputs and its chunk forms: K 64 reads four words a step (group 32: one
// scale a chunk; 16 and 8: a scale per word), K 40 one word a step.
TEST(OpQ4gswLinear, EveryRouteAgreesWithTheReferenceOnPrefill) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t K, gs; bool bias; const char* route; const char* variant; };
  for (const Case& c : {Case{64, 16, false, "", "gemm_large"}, Case{64, 16, true, "gemv_rows", "gemv_rows"},
                        Case{64, 32, false, "gemv_rows", "gemv_rows"},                        Case{64, 8, true, "gemv_rows", "gemv_rows"}, Case{40, 8, false, "gemv_rows", "gemv_rows"},
                        Case{64, 32, false, "gemv", "gemv"},
                        Case{64, 16, false, "gemm_tiled", "gemm"}, Case{64, 32, true, "gemm", "gemm_large"},
                        Case{48, 12, true, "gemm_large", "gemm_large"}, Case{48, 12, false, "gemv", "gemv"}}) {
    Lin l(37, c.K, c.gs, c.bias, 3);
    auto x = random_f32({2, 19, c.K}, 4);
    auto r = run_lin_v(l, x, c.route);
    EXPECT_TRUE(Close(r.out, l.ref(x), 1e-4, 1e-4)) << c.route << " K " << c.K;
    EXPECT_EQ(r.variants, std::vector<std::string>{c.variant}) << c.route << " K " << c.K;
  }
}

TEST(OpQ4gswLinear, FewRowsTakeTheTiledGemmAndOddKCannotBeForcedLarge) {
  ETW_REQUIRE_GPU();
  Lin l(20, 64, 32, false, 5);
  auto x = random_f32({1, 7, 64}, 6);  // 7 rows: below the 32 the large tiles need
  auto r = run_lin_v(l, x);
  EXPECT_TRUE(Close(r.out, l.ref(x), 1e-4, 1e-4));
  EXPECT_EQ(r.variants, std::vector<std::string>{"gemm"});
  Lin odd(8, 36, 12, false, 7);
  std::string e = load_error([&] { run_lin(odd, random_f32({4, 36}, 8), "gemm_large"); });
  EXPECT_NE(e.find("\"gemm_large\" needs q4gsw weights, K % 8 == 0"), std::string::npos) << e;
  e = load_error([&] { run_lin(odd, random_f32({4, 36}, 8), "tiles"); });
  EXPECT_NE(e.find("must be \"gemv_rows\", \"gemv\", \"gemm\", \"gemm_tiled\" or \"gemm_large\", got \"tiles\""), std::string::npos) << e;
  e = load_error([&] { run_lin(odd, random_f32({1, 36}, 8), "gemv_rows"); });
  EXPECT_NE(e.find("\"gemv_rows\" needs q4gsw weights, K % 8 == 0 and group_size % 8 == 0"), std::string::npos) << e;
}

// A residual add after the projection runs in the linear's store on every route.
TEST(OpQ4gswLinear, ResidualAddFusesIntoEveryRoute) {
  ETW_REQUIRE_GPU();
  Lin l(40, 64, 32, true, 9);
  for (auto [rows, route, variant] : {std::tuple<int64_t, const char*, const char*>{1, "", "gemv_rows"},
                                      {1, "gemv", "gemv"},
                                      {33, "", "gemm_large"},
                                      {33, "gemm_tiled", "gemm"}}) {
    auto x = random_f32({rows, 64}, 10), res = random_f32({rows, 40}, 11);
    auto build = [&](OpGraph& g) {
      Id xi = g.input(x), ri = g.input(res);
      Id y = g.tensor(DType::Float32, {rows, 40});
      l.add(g, xi, y);
      g.gb.op("aten.add.Tensor", {y, ri, g.gb.int_(1), g.output(DType::Float32, {rows, 40})});
    };
    std::map<std::string, std::string> routes;
    if (*route) routes["linear_q4gsw"] = route;
    auto fused = load_graph(build, true, routes), plain = load_graph(build, false, routes);
    EXPECT_TRUE(Close(plain.out[0], fused.out[0], 1e-5, 1e-5)) << route;
    EXPECT_EQ(fused.ops, std::vector<std::string>{"fused[linear_q4gsw+add]"}) << route;
    EXPECT_EQ(fused.variants, std::vector<std::string>{variant}) << route;
    auto ref = l.ref(x);
    for (int64_t i = 0; i < ref.numel(); ++i) ref.as<double>()[i] += res.as<float>()[i];  // the reference is float64
    EXPECT_TRUE(Close(fused.out[0], ref, 1e-4, 1e-4)) << route;
  }
}

// q, k and v as the export writes them: three linears of one activation, each through its own
// clone. At load they become one etwebgpu.linear_q4gsw_multi over stacked weights, bit-identical
// to the three linears, on every route.
TEST(OpQ4gswLinear, ProjectionsOfOneInputBecomeOneMultiOutputKernelOnEveryRoute) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t rows, K, gs; size_t outs; const char* variant; };
  for (const Case& c : {Case{1, 64, 32, 3, "gemv_rows"}, Case{5, 64, 32, 3, "gemm"}, Case{33, 64, 16, 3, "gemm_large"},
                        Case{1, 48, 12, 2, "gemv"}}) {
    std::vector<Lin> lins;
    for (size_t i = 0; i < c.outs; ++i) lins.emplace_back(i == 0 ? 40 : 12 + 4 * i, c.K, c.gs, false, 30 + i);
    auto x = random_f32({c.rows, c.K}, 40);
    auto build = [&](OpGraph& g) {
      Id xi = g.input(x);
      std::vector<Id> ys;
      for (const Lin& l : lins) {
        Id xc = g.tensor(DType::Float32, {c.rows, c.K});
        ys.push_back(g.tensor(DType::Float32, {c.rows, l.N}));
        g.gb.op("aten.clone.default", {xi, g.gb.null(), xc});
        l.add(g, xc, ys.back());
      }
      for (size_t i = 0; i < lins.size(); ++i)
        g.gb.op("aten.permute_copy.default", {ys[i], g.gb.int_list({1, 0}), g.output(DType::Float32, {lins[i].N, c.rows})});
    };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "etwebgpu.linear_q4gsw_multi"), 1) << c.variant;
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "et_vk.linear_q4gsw.default"), 0) << c.variant;
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), c.variant), 1) << c.variant;
    ASSERT_EQ(fused.out.size(), lins.size());
    for (size_t i = 0; i < lins.size(); ++i) {
      ASSERT_EQ(fused.out[i].numel(), plain.out[i].numel());
      EXPECT_EQ(std::memcmp(fused.out[i].data.data(), plain.out[i].data.data(), fused.out[i].data.size()), 0)
          << c.variant << " output " << i;
    }
  }
}

// A Llama MLP as the export writes it: gate and up of one activation (each through its own clone),
// silu(gate) * up (aten.silu, or the decomposed gate * sigmoid(gate)), then down. At load gate and
// up become one etwebgpu.linear_q4gsw_swiglu over their interleaved weights storing silu(gate) *
// up: two dispatches for one token instead of three. The GEMM routes store the pairs, then one
// elementwise kernel (three, as before).
HostTensor swiglu_ref(const HostTensor& g, const HostTensor& u) {
  const auto gv = g.to_f64(), uv = u.to_f64();
  HostTensor h(DType::Float64, g.shape);
  for (int64_t i = 0; i < g.numel(); ++i) h.as<double>()[i] = gv[i] / (1.0 + std::exp(-gv[i])) * uv[i];
  return h;
}

void build_mlp(OpGraph& g, const Lin& gate, const Lin& up, const Lin& down, const HostTensor& x, bool sigmoid_form, bool keep_product,
               Norm norm = Norm::None) {
  const int64_t rows = x.shape[0];
  Id xi = normed_input(g, g.input(x), x.shape, norm);
  Id xg = g.tensor(DType::Float32, x.shape), xu = g.tensor(DType::Float32, x.shape);
  Id gv = g.tensor(DType::Float32, {rows, gate.N}), uv = g.tensor(DType::Float32, {rows, up.N});
  g.gb.op("aten.clone.default", {xi, g.gb.null(), xg});
  gate.add(g, xg, gv);
  g.gb.op("aten.clone.default", {xi, g.gb.null(), xu});
  up.add(g, xu, uv);
  Id s = g.tensor(DType::Float32, {rows, gate.N});
  if (sigmoid_form) {
    Id sg = g.tensor(DType::Float32, {rows, gate.N});
    g.gb.op("aten.sigmoid.default", {gv, sg});
    g.gb.op("aten.mul.Tensor", {gv, sg, s});
  } else {
    g.gb.op("aten.silu.default", {gv, s});
  }
  Id h = keep_product ? g.output(DType::Float32, {rows, up.N}) : g.tensor(DType::Float32, {rows, up.N});
  g.gb.op("aten.mul.Tensor", {s, uv, h});
  down.add(g, h, g.output(DType::Float32, {rows, down.N}));
}

TEST(OpQ4gswLinear, GateAndUpPairIntoOneSwigluKernelOnEveryRoute) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t rows; bool sigmoid_form; const char* variant; const char* route; };
  for (const Case& c : {Case{1, false, "gemv_rows", ""}, Case{1, true, "gemv_rows", ""}, Case{5, true, "gemm", ""},
                        Case{33, false, "gemm_large", ""}, Case{1, false, "gemv", "gemv"}}) {
    const int64_t K = 64, F = 96;
    Lin gate(F, K, 32, false, 100), up(F, K, 32, false, 101), down(40, F, 32, false, 102);
    auto x = random_f32({c.rows, K}, 103, -2.f, 2.f);
    auto build = [&](OpGraph& g) { build_mlp(g, gate, up, down, x, c.sigmoid_form, false); };
    std::map<std::string, std::string> routes;
    if (*c.route) routes["linear_q4gsw"] = c.route;
    auto fused = load_graph(build, true, routes), plain = load_graph(build, false, routes);
    const std::string at = std::string(c.variant) + (c.sigmoid_form ? " sigmoid form" : " silu") + " rows " + std::to_string(c.rows);
    const bool in_gemv = std::string(c.variant) == "gemv_rows";
    // gemv_rows: the pair's GEMV storing h, and down's. Other routes: the pair's kernel storing the
    // products, swiglu_pairs, down's.
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "etwebgpu.linear_q4gsw_swiglu"), in_gemv ? 1 : 2) << at;
    EXPECT_EQ(fused.ops.size(), in_gemv ? 2u : 3u) << at;
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), c.variant), 2) << at;
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), "swiglu_pairs"), in_gemv ? 0 : 1) << at;
    auto want = down.ref(swiglu_ref(gate.ref(x), up.ref(x)));
    EXPECT_TRUE(Close(fused.out[0], want, 1e-4, 1e-4)) << at;
    EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5)) << at;
  }
  // One output an invocation cannot hold a (gate, up) pair: pinning it is an error naming why.
  Lin gate(96, 64, 32, false, 100), up(96, 64, 32, false, 101), down(40, 96, 32, false, 102);
  auto x = random_f32({1, 64}, 103);
  const std::string e = load_error([&] {
    load_graph([&](OpGraph& g) { build_mlp(g, gate, up, down, x, false, false); }, true, {{"q4_gemv_rows", "1x32"}});
  });
  EXPECT_NE(e.find("force_route q4_gemv_rows = \"1x32\": a SwiGLU or rotary pair needs two outputs an invocation"), std::string::npos) << e;
}

// Gate and up stay apart (up keeps its epilogue) where up's epilogue is more than silu(gate) * up
// (here a residual add after the product).
TEST(OpQ4gswLinear, SwigluStaysWhenUpsEpilogueIsMoreThanTheProduct) {
  ETW_REQUIRE_GPU();
  const int64_t K = 64, F = 64;
  Lin gate(F, K, 32, false, 114), up(F, K, 32, false, 115), down(24, F, 32, false, 116);
  auto x = random_f32({1, K}, 117, -2.f, 2.f), r = random_f32({1, F}, 118);
  auto fused = load_graph(
      [&](OpGraph& g) {
        Id xi = g.input(x), ri = g.input(r);
        Id gv = g.tensor(DType::Float32, {1, F}), uv = g.tensor(DType::Float32, {1, F}), s = g.tensor(DType::Float32, {1, F});
        Id h = g.tensor(DType::Float32, {1, F}), h2 = g.tensor(DType::Float32, {1, F});
        gate.add(g, xi, gv);
        up.add(g, xi, uv);
        g.gb.op("aten.silu.default", {gv, s});
        g.gb.op("aten.mul.Tensor", {s, uv, h});
        g.gb.op("aten.add.Tensor", {h, ri, g.gb.int_(1), h2});
        down.add(g, h2, g.output(DType::Float32, {1, down.N}));
      },
      true);
  EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "etwebgpu.linear_q4gsw_swiglu"), 0);
  EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "fused[linear_q4gsw+silu+mul+add]"), 1);  // up's whole epilogue
  auto h = swiglu_ref(gate.ref(x), up.ref(x));
  for (int64_t i = 0; i < F; ++i) h.as<double>()[i] += r.as<float>()[i];
  EXPECT_TRUE(Close(fused.out[0], down.ref(h), 1e-4, 1e-4));
}

// Gate and up stay apart (up keeps its epilogue) where the product is read otherwise, here as a
// graph output, or where they cannot stack (a bias on gate).
TEST(OpQ4gswLinear, SwigluStaysWhenTheProductIsReadOtherwiseOrGateHasABias) {
  ETW_REQUIRE_GPU();
  const int64_t K = 64, F = 64;
  auto x = random_f32({1, K}, 110, -2.f, 2.f);
  for (bool keep_product : {true, false}) {
    Lin gate(F, K, 32, !keep_product, 111), up(F, K, 32, false, 112), down(24, F, 32, false, 113);
    auto fused = load_graph([&](OpGraph& g) { build_mlp(g, gate, up, down, x, false, keep_product); }, true);
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "etwebgpu.linear_q4gsw_swiglu"), 0) << keep_product;
    EXPECT_EQ(fused.ops.size(), 3u) << keep_product;
    auto h = swiglu_ref(gate.ref(x), up.ref(x));
    EXPECT_TRUE(Close(fused.out[keep_product ? 1 : 0], down.ref(h), 1e-4, 1e-4)) << keep_product;
  }
}

// The op called directly with interleaved weights: h on one row (gemv_rows) and on several (the
// pairs, then swiglu_pairs); a bad form, pairs not twice h, or weights of other rows are Format
// errors naming them.
TEST(OpQ4gswLinear, SwigluOpDirectCallStoresSiluOfGateTimesUp) {
  ETW_REQUIRE_GPU();
  const int64_t K = 64, F = 16;
  Lin gate(F, K, 32, false, 120), up(F, K, 32, false, 121);
  auto run = [&](const HostTensor& x, const char* form, int64_t pairs_width, int64_t weight_rows) {
    OpGraph g;
    Id xi = g.input(x);
    std::vector<int8_t> q(weight_rows * K, 0);
    std::vector<float> sc((K / 32) * 2 * F);
    for (int64_t j = 0; j < F && 2 * j + 1 < weight_rows; ++j)
      for (int64_t k = 0; k < K; ++k) {
        q[(2 * j) * K + k] = gate.q[j * K + k];
        q[(2 * j + 1) * K + k] = up.q[j * K + k];
      }
    for (int64_t gi = 0; gi < K / 32; ++gi)
      for (int64_t j = 0; j < F; ++j) {
        sc[gi * 2 * F + 2 * j] = gate.scales[gi * gate.npad + j];
        sc[gi * 2 * F + 2 * j + 1] = up.scales[gi * up.npad + j];
      }
    Id w = g.gb.constant(DType::UInt8, {weight_rows, K / 2}, ref::pack_q4_linear(q, weight_rows, K, 8));
    Id s = g.gb.constant_f32({K / 32, 2 * F}, sc);
    const int64_t rows = x.shape[0];
    Id h = g.output(DType::Float32, {rows, F}), pairs = g.tensor(DType::Float32, {rows, pairs_width});
    g.gb.op("etwebgpu.linear_q4gsw_swiglu", {xi, w, s, g.gb.int_(32), g.gb.str(form), g.gb.value_list({h, pairs})});
    return g.run();
  };
  for (int64_t rows : {1, 3}) {
    auto x = random_f32({rows, K}, 122, -2.f, 2.f);
    EXPECT_TRUE(Close(run(x, "silu", 2 * F, 2 * F)[0], swiglu_ref(gate.ref(x), up.ref(x)), 1e-4, 1e-4)) << rows;
  }
  auto x = random_f32({1, K}, 123);
  std::string e = load_error([&] { run(x, "tanh", 2 * F, 2 * F); });
  EXPECT_NE(e.find("the SwiGLU form must be \"silu\" or \"sigmoid\", got \"tanh\""), std::string::npos) << e;
  e = load_error([&] { run(x, "silu", 2 * F + 2, 2 * F); });
  EXPECT_NE(e.find("h [1, 16] and pairs [1, 34] must have one rank, pairs twice h's last dim"), std::string::npos) << e;
  e = load_error([&] { run(x, "silu", 2 * F, 2 * F - 2); });
  EXPECT_NE(e.find("weight has 30 rows, pairs needs 32"), std::string::npos) << e;
}

// A Llama attention's q, k and v as the recipe's export writes them: three projections of one
// input (each through its own clone), q and k split into heads [rows, H, D] by views (q through
// two), et_vk.apply_rotary_emb of both with tables [rows, D / 2]; v read on (here a graph output
// through a transpose, `q_out`: q read otherwise too; `cos_later`: cos negated by a call after the
// projections). At load the projections become one etwebgpu.linear_q4gsw_multi_rope storing q and k
// rotated.
struct Qkv {
  static constexpr int64_t K = 64, D = 8, Hq = 4, Hk = 2;
  Lin q{Hq * D, K, 32, false, 130}, k{Hk * D, K, 32, false, 131}, v{Hk * D, K, 32, false, 132};
  HostTensor x, cos, sin;
  explicit Qkv(int64_t rows)
      : x(random_f32({rows, K}, 133, -2.f, 2.f)), cos(random_f32({rows, D / 2}, 134)), sin(random_f32({rows, D / 2}, 135)) {}
  // slice_step > 0: cos and sin are rows kSliceAt .. of tables (graph inputs) taken by
  // aten.slice_copy.Tensor with that step (ExecuTorch's Llama slices freqs_cos / freqs_sin so).
  static constexpr int64_t kSliceAt = 5;
  void build(OpGraph& g, bool q_out, bool cos_later = false, Norm norm = Norm::None, int64_t slice_step = 0) const {
    const int64_t rows = x.shape[0];
    Id xi = g.input(x), fc = -1, fs = -1;
    if (slice_step == 0) {
      fc = g.input(cos);
      fs = g.input(sin);
    } else {
      for (const HostTensor* t : {&cos, &sin}) {
        // The table: the rows every slice_step-th from kSliceAt, other rows random.
        const int64_t table_rows = kSliceAt + rows * slice_step + 3;
        HostTensor full = random_f32({table_rows, D / 2}, t == &cos ? 136 : 137);
        const std::vector<double> v = f64(*t);
        for (int64_t m = 0; m < rows; ++m)
          for (int64_t i = 0; i < D / 2; ++i) full.as<float>()[(kSliceAt + m * slice_step) * (D / 2) + i] = static_cast<float>(v[m * (D / 2) + i]);
        Id sl = g.tensor(DType::Float32, {rows, D / 2});
        g.gb.op("aten.slice_copy.Tensor", {g.input(full), g.gb.int_(0), g.gb.int_(kSliceAt), g.gb.int_(kSliceAt + rows * slice_step),
                                           g.gb.int_(slice_step), sl});
        (t == &cos ? fc : fs) = sl;
      }
    }
    xi = normed_input(g, xi, x.shape, norm);
    std::vector<Id> ys;
    for (const Lin* l : {&q, &k, &v}) {
      Id xc = g.tensor(DType::Float32, x.shape);
      g.gb.op("aten.clone.default", {xi, g.gb.null(), xc});
      ys.push_back(q_out && l == &q ? g.output(DType::Float32, {rows, l->N}) : g.tensor(DType::Float32, {rows, l->N}));
      l->add(g, xc, ys.back());
    }
    if (cos_later) {
      Id neg = g.tensor(DType::Float32, cos.shape);
      g.gb.op("aten.neg.default", {fc, neg});
      fc = neg;
    }
    Id q1 = g.tensor(DType::Float32, {rows, Hq, D}), q2 = g.tensor(DType::Float32, {rows, Hq, D});
    Id k1 = g.tensor(DType::Float32, {rows, Hk, D});
    g.gb.op("aten.view_copy.default", {ys[0], g.gb.int_list({rows, Hq, D}), q1});
    g.gb.op("aten.view_copy.default", {q1, g.gb.int_list({rows, Hq, D}), q2});
    g.gb.op("aten.view_copy.default", {ys[1], g.gb.int_list({rows, Hk, D}), k1});
    Id qr = g.output(DType::Float32, {rows, Hq, D}), kr = g.output(DType::Float32, {rows, Hk, D});
    g.gb.op("et_vk.apply_rotary_emb.default", {q2, k1, fc, fs, g.gb.value_list({qr, kr})});
    g.gb.op("aten.permute_copy.default", {ys[2], g.gb.int_list({1, 0}), g.output(DType::Float32, {v.N, rows})});
  }
  // q and k rotated, v transposed, in fp64.
  std::vector<HostTensor> ref() const {
    const int64_t rows = x.shape[0];
    auto heads = [&](HostTensor t, int64_t h) {
      t.shape = {rows, h, D};
      return ref::rope_interleaved(t, cos, sin);
    };
    auto vr = v.ref(x);
    HostTensor vt(DType::Float64, {v.N, rows});
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t n = 0; n < v.N; ++n) vt.as<double>()[n * rows + m] = vr.as<double>()[m * v.N + n];
    return {heads(q.ref(x), Hq), heads(k.ref(x), Hk), vt};
  }
};

TEST(OpQ4gswLinear, RotaryEmbeddingFoldsIntoTheQkvKernelOnEveryRoute) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t rows; const char* variant; const char* route; };
  for (const Case& c : {Case{1, "gemv_rows", ""}, Case{3, "gemv_rows", "gemv_rows"}, Case{5, "gemm", ""}, Case{33, "gemm_large", ""}}) {
    Qkv a(c.rows);
    std::map<std::string, std::string> routes;
    if (*c.route) routes["linear_q4gsw"] = c.route;
    auto fused = load_graph([&](OpGraph& g) { a.build(g, false); }, true, routes);
    auto plain = load_graph([&](OpGraph& g) { a.build(g, false); }, false, routes);
    const std::string at = std::string(c.variant) + " rows " + std::to_string(c.rows);
    const bool in_gemv = std::string(c.variant) == "gemv_rows";
    // gemv_rows rotates as it stores; the other routes store q and k, then rope_rows rotates them.
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "etwebgpu.linear_q4gsw_multi_rope"), in_gemv ? 1 : 2) << at;
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "et_vk.apply_rotary_emb.default"), 0) << at;
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), c.variant), 1) << at;
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), "rope_rows"), in_gemv ? 0 : 1) << at;
    auto want = a.ref();
    ASSERT_EQ(fused.out.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(Close(fused.out[i], want[i], 1e-4, 1e-4)) << at << " output " << i;
      EXPECT_TRUE(Close(fused.out[i], plain.out[i], 1e-5, 1e-5)) << at << " output " << i;
    }
  }
}

// ExecuTorch's Llama takes its RoPE tables' rows at the chunk's positions by slice_copy: the fused
// q/k/v kernel (gemv_rows on one row, rope_rows after the GEMM on five) reads the tables at those
// rows in place and the slices go; a slice of another step stays a dispatch. The reference's
// values and the unfused graph's either way.
TEST(OpQ4gswLinear, RopeTablesSlicedAtTheChunksRowsAreReadInPlace) {
  ETW_REQUIRE_GPU();
  for (int64_t rows : {1, 5})
    for (int64_t step : {1, 2}) {
      Qkv a(rows);
      auto fused = load_graph([&](OpGraph& g) { a.build(g, false, false, Norm::None, step); }, true);
      auto plain = load_graph([&](OpGraph& g) { a.build(g, false, false, Norm::None, step); }, false);
      const std::string at = "rows " + std::to_string(rows) + " step " + std::to_string(step);
      EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "aten.slice_copy.Tensor"), step == 1 ? 0 : 2) << at;
      EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "et_vk.apply_rotary_emb.default"), 0) << at;
      auto want = a.ref();
      ASSERT_EQ(fused.out.size(), 3u);
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(Close(fused.out[i], want[i], 1e-4, 1e-4)) << at << " output " << i;
        EXPECT_TRUE(Close(fused.out[i], plain.out[i], 1e-5, 1e-5)) << at << " output " << i;
      }
    }
}

// An RMSNorm whose output only a 4-bit linear reads (through the clone the export puts before each
// projection) is computed in that linear's GEMV on one row: the single linear, the SwiGLU pair and
// the q/k/v with rotary embeddings. Their outputs are the bits of the same graph with the norm's
// output also a graph output (the norm a kernel of its own), with and without a norm weight, on
// rows whose mean square is near eps too (x ~ 1e-3: eps must be added), with the row staged in
// workgroup memory (its squares summed as it is staged, then normalized in place) and read from
// memory (staged: each invocation's elements and norm weights read at once into registers, or
// by a loop before the sums and after). On three rows the norm runs as etwebgpu.rms_norm_deferred
// and the GEMMs read it.
TEST(OpQ4gswLinear, RmsNormFoldsIntoTheOneRowGemvOfEachHostBitForBit) {
  ETW_REQUIRE_GPU();
  const int64_t K = 64, F = 96;
  Lin lin(40, K, 32, true, 141), gate(F, K, 32, false, 100), up(F, K, 32, false, 101), down(40, F, 32, false, 102);
  struct Host {
    const char* name;
    std::function<void(OpGraph&, const HostTensor&, Norm)> build;
    std::function<std::vector<HostTensor>(const HostTensor&)> ref;  // from the normalized input
  };
  const Host hosts[] = {
      {"linear_q4gsw",
       [&](OpGraph& g, const HostTensor& x, Norm n) {
         Id y = normed_input(g, g.input(x), x.shape, n);  // the norm's output first
         lin.add(g, y, g.output(DType::Float32, {x.shape[0], lin.N}));
       },
       [&](const HostTensor& y) { return std::vector<HostTensor>{lin.ref(y)}; }},
      {"linear_q4gsw_swiglu", [&](OpGraph& g, const HostTensor& x, Norm n) { build_mlp(g, gate, up, down, x, false, false, n); },
       [&](const HostTensor& y) { return std::vector<HostTensor>{down.ref(swiglu_ref(gate.ref(y), up.ref(y)))}; }},
      {"linear_q4gsw_multi_rope",
       [&](OpGraph& g, const HostTensor& x, Norm n) {
         Qkv a(x.shape[0]);
         a.x = x;
         a.build(g, false, false, n);
       },
       [&](const HostTensor& y) {
         Qkv a(y.shape[0]);
         a.x = y;
         return a.ref();
       }},
  };
  for (const Host& h : hosts)
    for (int64_t rows : {1, 3})
      for (float scale : {2.f, 1e-3f})
        for (bool weighted : {true, false})
          for (const char* staged : {"registers", "loop", "global"}) {  // staged (read into registers or by a loop), or read from memory
          const std::string at = std::string(h.name) + " rows " + std::to_string(rows) + " |x| <= " + std::to_string(scale) +
                                 (weighted ? " weighted" : " unweighted") + " row " + staged;
          auto x = random_f32({rows, K}, 142, -scale, scale);
          const std::map<std::string, std::string> routes{{"q4_gemv_rows_x", std::string(staged) == "global" ? "global" : "shared"},
                                                          {"q4_gemv_rows_norm", std::string(staged) == "loop" ? "loop" : "registers"}};
          auto folded = load_graph([&](OpGraph& g) { h.build(g, x, weighted ? Norm::Folds : Norm::FoldsUnweighted); }, true, routes);
          auto kept = load_graph([&](OpGraph& g) { h.build(g, x, weighted ? Norm::Kept : Norm::KeptUnweighted); }, true, routes);
          auto normed = [](const std::string& v) { return v.size() > 5 && v.compare(v.size() - 5, 5, "_norm") == 0; };
          EXPECT_EQ(std::count_if(folded.variants.begin(), folded.variants.end(), normed), rows == 1 ? 1 : 0) << at;
          EXPECT_EQ(std::count(folded.ops.begin(), folded.ops.end(), "etwebgpu.rms_norm_deferred") > 0, rows > 1) << at;
          EXPECT_EQ(std::count(folded.ops.begin(), folded.ops.end(), "et_vk.rms_norm.default"), 0) << at;
          EXPECT_EQ(std::count_if(kept.variants.begin(), kept.variants.end(), normed), 0) << at;
          EXPECT_GT(std::count(kept.ops.begin(), kept.ops.end(), "et_vk.rms_norm.default"), 0) << at;
          const auto want = h.ref(normed_ref(x, weighted));
          ASSERT_EQ(folded.out.size(), want.size()) << at;
          ASSERT_EQ(kept.out.size(), want.size() + 1) << at;
          for (size_t i = 0; i < want.size(); ++i) {
            EXPECT_EQ(folded.out[i].data, kept.out[i + 1].data) << at << " output " << i;
            EXPECT_TRUE(Close(folded.out[i], want[i], 1e-4, 1e-4)) << at << " output " << i;
          }
        }
}

// Where the GEMV's row is staged in workgroup memory (K up to 4096) its RMSNorm folds into GEMVs
// of up to 2048 workgroups (16 outputs a workgroup at these widths: N 32768), the norm's sums
// coming with the staging; a longer row (K 4104) folds up to 512 only (N 8192), every workgroup
// summing the row's squares from memory. A wider GEMV keeps the norm a kernel of its own (on an
// H100 the vocabulary head's 8016 workgroups cost 91 us more than the norm's dispatch unstaged).
// The staged row's norm read into registers fills all 16 of an invocation's slots at K 4096 and
// part of the last at 4000: the bits of the norm as a kernel of its own, and of the loop's reads.
TEST(OpQ4gswLinear, RmsNormInRegistersAtTheLongestStagedRowsHasTheNormKernelsBits) {
  ETW_REQUIRE_GPU();
  for (int64_t K : {4096, 4000}) {
    Lin l(40, K, 32, false, 172);
    auto x = random_f32({1, K}, 173);
    auto build = [&](Norm n) {
      return [&, n](OpGraph& g) {
        Id y = normed_input(g, g.input(x), x.shape, n);  // the norm's output first
        l.add(g, y, g.output(DType::Float32, {1, 40}));
      };
    };
    std::map<std::string, std::string> routes{{"q4_gemv_rows_x", "shared"}, {"q4_gemv_rows_norm", "registers"}};
    auto regs = load_graph(build(Norm::Folds), true, routes);
    routes["q4_gemv_rows_norm"] = "loop";
    auto loop = load_graph(build(Norm::Folds), true, routes);
    auto kept = load_graph(build(Norm::Kept), true, routes);
    const std::string at = "K " + std::to_string(K);
    EXPECT_EQ(regs.variants, std::vector<std::string>{"gemv_rows_norm"}) << at;
    EXPECT_EQ(regs.out[0].data, kept.out[1].data) << at;
    EXPECT_EQ(regs.out[0].data, loop.out[0].data) << at;
    EXPECT_TRUE(Close(regs.out[0], l.ref(normed_ref(x, true)), 1e-4, 1e-4)) << at;
  }
  Lin l(8, 64, 32, false, 174);
  auto x = random_f32({1, 64}, 175);
  const std::string e = load_error([&] {
    load_graph([&](OpGraph& g) {
      Id y = normed_input(g, g.input(x), x.shape, Norm::Folds);
      l.add(g, y, g.output(DType::Float32, {1, 8}));
    }, true, {{"q4_gemv_rows_norm", "vector"}});
  });
  EXPECT_NE(e.find("force_route q4_gemv_rows_norm must be \"registers\" or \"loop\", got \"vector\""), std::string::npos) << e;
}

TEST(OpQ4gswLinear, RmsNormStaysBeforeAGemvOfMoreWorkgroupsThanItPaysFor) {
  ETW_REQUIRE_GPU();
  for (auto [K, N, folds] : {std::tuple<int64_t, int64_t, bool>{64, 32768, true}, {64, 32784, false}, {4104, 8192, true},
                             {4104, 8208, false}}) {
    Lin wide(N, K, 32, false, 170);
    auto x = random_f32({1, K}, 171);
    auto r = load_graph([&](OpGraph& g) {
      Id y = normed_input(g, g.input(x), x.shape, Norm::Folds);
      wide.add(g, y, g.output(DType::Float32, {1, N}));
    }, true);
    const std::string at = "K " + std::to_string(K) + " N " + std::to_string(N);
    EXPECT_EQ(std::count(r.variants.begin(), r.variants.end(), "gemv_rows_norm"), folds ? 1 : 0) << at;
    EXPECT_EQ(std::count(r.ops.begin(), r.ops.end(), "et_vk.rms_norm.default"), folds ? 0 : 1) << at;
    EXPECT_TRUE(Close(r.out[0], wide.ref(normed_ref(x, true)), 1e-4, 1e-4)) << at;
  }
}

// An input-norm group (["rms_norm", x, weight, eps] after the linear's own arguments) that does not
// fit the linear's input is a Format error naming what is wrong.
TEST(OpQ4gswLinear, InputNormGroupsThatDoNotFitTheInputAreFormatErrors) {
  ETW_REQUIRE_GPU();
  Lin l(16, 64, 32, false, 160);
  auto run = [&](int64_t x_len, int64_t w_len, double eps) {
    OpGraph g;
    Id x = g.input(random_f32({1, x_len}, 161));
    Id y = g.tensor(DType::Float32, {1, 64});
    g.gb.op("aten.clone.default", {g.input(random_f32({1, 64}, 162)), g.gb.null(), y});
    Id w = g.gb.constant(DType::UInt8, {16, 32}, ref::pack_q4_linear(l.q, 16, 64, 8));
    Id s = g.gb.constant_f32({2, l.npad}, l.scales);
    g.gb.op("et_vk.linear_q4gsw.default", {y, w, s, g.gb.int_(32), g.gb.null(), g.gb.str("rms_norm"), x,
                                           g.constant(random_f32({w_len}, 163)), g.gb.dbl(eps), g.output(DType::Float32, {1, 16})});
    g.run();
  };
  EXPECT_NO_THROW(run(64, 64, 1e-5));
  std::string e = load_error([&] { run(64, 63, 1e-5); });
  EXPECT_NE(e.find("input norm's weight [63] does not hold one value per feature (64)"), std::string::npos) << e;
  e = load_error([&] { run(32, 64, 1e-5); });
  EXPECT_NE(e.find("input norm's input [1, 32] does not hold the rows of the input [1, 64]"), std::string::npos) << e;
  e = load_error([&] { run(64, 64, std::nan("")); });
  EXPECT_NE(e.find("input norm's eps must be finite and not negative"), std::string::npos) << e;
}

// The rotation stays a kernel of its own where the linear's q is read otherwise too (here a graph
// output), and where a table is written after the projections.
TEST(OpQ4gswLinear, RotaryStaysWhenQIsReadOtherwiseOrATableComesLater) {
  ETW_REQUIRE_GPU();
  Qkv a(1);
  auto fused = load_graph([&](OpGraph& g) { a.build(g, true); }, true);
  EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "etwebgpu.linear_q4gsw_multi"), 1);
  EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "et_vk.apply_rotary_emb.default"), 1);
  auto want = a.ref();
  EXPECT_TRUE(Close(fused.out[1], want[0], 1e-4, 1e-4));
  // The same with cos negated (aten.neg) after the projections.
  auto later_build = [&](OpGraph& g) { a.build(g, false, true); };
  auto later = load_graph(later_build, true), later_plain = load_graph(later_build, false);
  EXPECT_EQ(std::count(later.ops.begin(), later.ops.end(), "et_vk.apply_rotary_emb.default"), 1);
  EXPECT_EQ(std::count(later.ops.begin(), later.ops.end(), "etwebgpu.linear_q4gsw_multi"), 1);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(Close(later.out[i], later_plain.out[i], 1e-6, 1e-6)) << i;
}

// The op called directly: q and k rotated on one row and on several; tables of another row count
// are an InvalidArgument error at run time; odd widths, rotated outputs that are not the
// linear's split into heads and tables of two shapes are Format errors naming them.
TEST(OpQ4gswLinear, MultiRopeOpDirectCallRotatesQAndK) {
  ETW_REQUIRE_GPU();
  auto run = [&](const Qkv& a, std::vector<int64_t> widths, std::vector<int64_t> qrot, std::vector<int64_t> sin_shape,
                 int64_t table_rows) {
    OpGraph g;
    const int64_t rows = a.x.shape[0];
    Id xi = g.input(a.x);
    std::vector<int8_t> q(a.q.q);
    q.insert(q.end(), a.k.q.begin(), a.k.q.end());
    q.insert(q.end(), a.v.q.begin(), a.v.q.end());
    const int64_t N = a.q.N + a.k.N + a.v.N;
    std::vector<float> sc(2 * N);
    for (int64_t gi = 0; gi < 2; ++gi) {
      int64_t n0 = 0;
      for (const Lin* l : {&a.q, &a.k, &a.v}) {
        for (int64_t n = 0; n < l->N; ++n) sc[gi * N + n0 + n] = l->scales[gi * l->npad + n];
        n0 += l->N;
      }
    }
    Id w = g.gb.constant(DType::UInt8, {N, Qkv::K / 2}, ref::pack_q4_linear(q, N, Qkv::K, 8));
    Id s = g.gb.constant_f32({2, N}, sc);
    Id fc = g.input(random_f32({table_rows, Qkv::D / 2}, 134)), fs = g.input(random_f32(sin_shape, 135));
    std::vector<Id> outs;
    for (int64_t wd : widths) outs.push_back(g.output(DType::Float32, {rows, wd}));
    outs.push_back(g.output(DType::Float32, qrot));
    outs.push_back(g.output(DType::Float32, {rows, Qkv::Hk, Qkv::D}));
    g.gb.op("etwebgpu.linear_q4gsw_multi_rope",
            {xi, w, s, g.gb.int_(32), g.gb.int_list(widths), fc, fs, g.gb.null(), g.gb.null(), g.gb.value_list(outs)});
    return g.run();
  };
  for (int64_t rows : {1, 3}) {
    Qkv a(rows);
    auto out = run(a, {Qkv::Hq * Qkv::D, Qkv::Hk * Qkv::D, Qkv::Hk * Qkv::D}, {rows, Qkv::Hq, Qkv::D}, {rows, Qkv::D / 2}, rows);
    auto want = a.ref();
    EXPECT_TRUE(Close(out[3], want[0], 1e-4, 1e-4)) << rows;
    EXPECT_TRUE(Close(out[4], want[1], 1e-4, 1e-4)) << rows;
  }
  Qkv a(1);
  const std::vector<int64_t> widths{32, 16, 16};
  std::string e = load_error([&] { run(a, widths, {1, 4, 8}, {2, 4}, 2); });
  EXPECT_NE(e.find("freqs_cos and freqs_sin rows [0, 2) of [2, 4] must hold one row per input row (1)"), std::string::npos) << e;
  e = load_error([&] { run(a, {32, 16, 15}, {1, 4, 8}, {1, 4}, 1); });
  EXPECT_NE(e.find("the widths must be even (whole pairs), got 15"), std::string::npos) << e;
  e = load_error([&] { run(a, widths, {1, 8, 4}, {1, 4}, 1); });
  EXPECT_NE(e.find("q [1, 8, 4] must be the linear's [1, 32] split into heads of freqs_cos's head_dim 8"), std::string::npos) << e;
  e = load_error([&] { run(a, widths, {1, 4, 8}, {1, 3}, 1); });
  EXPECT_NE(e.find("freqs_cos [1, 4] and freqs_sin [1, 3] must be one [S, head_dim / 2] shape"), std::string::npos) << e;
}

// q, k and v reading one tensor directly (no clones between): all three become one kernel (the
// calls of the group itself read the input between the first and the last).
// Linears of one row x, each reading x itself, their outputs transposed into the graph's outputs
// (so that the linears' own outputs are no graph outputs).
void build_projections(OpGraph& g, const HostTensor& x, const std::vector<const Lin*>& lins) {
  Id xi = g.input(x);
  std::vector<Id> ys;
  for (const Lin* l : lins) {
    ys.push_back(g.tensor(DType::Float32, {1, l->N}));
    l->add(g, xi, ys.back());
  }
  for (size_t i = 0; i < ys.size(); ++i)
    g.gb.op("aten.permute_copy.default", {ys[i], g.gb.int_list({1, 0}), g.output(DType::Float32, {lins[i]->N, 1})});
}

TEST(OpQ4gswLinear, ProjectionsReadingOneTensorDirectlyBecomeOneKernel) {
  ETW_REQUIRE_GPU();
  Lin a(32, 64, 32, false, 150), b(16, 64, 32, false, 151), c(16, 64, 32, false, 152);
  auto x = random_f32({1, 64}, 153);
  auto fused = load_graph([&](OpGraph& g) { build_projections(g, x, {&a, &b, &c}); }, true);
  EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "etwebgpu.linear_q4gsw_multi"), 1);
  EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "et_vk.linear_q4gsw.default"), 0);
  const Lin* ls[] = {&a, &b, &c};
  for (size_t i = 0; i < 3; ++i) {
    auto want = ls[i]->ref(x);
    want.shape = {ls[i]->N, 1};  // one row: its transpose holds the same values
    EXPECT_TRUE(Close(fused.out[i], want, 1e-4, 1e-4)) << i;
  }
}

TEST(OpQ4gswLinear, ProjectionsWithABiasOrAnotherGroupSizeStaySeparate) {
  ETW_REQUIRE_GPU();
  Lin a(16, 64, 32, false, 50), b(16, 64, 32, true, 51), c(16, 64, 16, false, 52);
  auto x = random_f32({1, 64}, 53);
  auto fused = load_graph([&](OpGraph& g) { build_projections(g, x, {&a, &b, &c}); }, true);
  EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "et_vk.linear_q4gsw.default"), 3);
}

// The rewrite's op called directly: outputs split by the widths, and widths that do not add up
// to the stacked weight's rows are a Format error.
TEST(OpQ4gswLinear, MultiOpDirectCallSplitsTheStackedOutputs) {
  ETW_REQUIRE_GPU();
  Lin l(24, 32, 32, false, 60);  // one [24, 32] linear read as outputs of 16 and 8
  auto x = random_f32({3, 32}, 61);
  auto run = [&](std::vector<int64_t> widths) {
    OpGraph g;
    Id xi = g.input(x);
    auto packed = ref::pack_q4_linear(l.q, l.N, l.K, 8);
    Id w = g.gb.constant(DType::UInt8, {l.N, l.kpad / 2}, packed);
    Id s = g.gb.constant_f32({1, l.npad}, l.scales);
    Id o0 = g.output(DType::Float32, {3, widths[0]}), o1 = g.output(DType::Float32, {3, widths[1]});
    g.gb.op("etwebgpu.linear_q4gsw_multi", {xi, w, s, g.gb.int_(32), g.gb.int_list(widths), g.gb.value_list({o0, o1})});
    return g.run();
  };
  auto out = run({16, 8});
  auto ref = l.ref(x);
  HostTensor r0(DType::Float64, {3, 16}), r1(DType::Float64, {3, 8});
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t n = 0; n < 24; ++n)
      (n < 16 ? r0.as<double>()[m * 16 + n] : r1.as<double>()[m * 8 + n - 16]) = ref.as<double>()[m * 24 + n];
  EXPECT_TRUE(Close(out[0], r0, 1e-4, 1e-4));
  EXPECT_TRUE(Close(out[1], r1, 1e-4, 1e-4));
  std::string e = load_error([&] { run({16, 4}); });
  EXPECT_NE(e.find("weight has 24 rows, the widths add up to 20"), std::string::npos) << e;
}

// A vocabulary-wide head (N >= 65536, past 4,096 workgroups of 16 outputs; the last one partial).
TEST(OpQ4gswLinear, VocabularyWideHeadMatchesTheReference) {
  ETW_REQUIRE_GPU();
  Lin l(65536 + 200, 64, 32, false, 50);
  auto x = random_f32({1, 64}, 51);
  auto r = run_lin_v(l, x);
  EXPECT_EQ(r.variants, std::vector<std::string>{"gemv_rows"});
  EXPECT_TRUE(Close(r.out, l.ref(x), 1e-4, 1e-4));
}

// gemv_rows' sums by subgroup (where the device has them) and by a tree in workgroup memory
// (force_route reduce = workgroup) agree with the reference, for q4gsw and the 8da4w row ranges.
TEST(OpQ4gswLinear, GemvRowsReducesBySubgroupAndByWorkgroupTree) {
  ETW_REQUIRE_GPU();
  Lin l(37, 2048, 32, true, 60);  // 64 chunks of 32 weights: every one of the 64 lanes along K has a share
  auto x = random_f32({1, 2048}, 61);
  for (const char* reduce : {"workgroup", "subgroup"}) {
    if (std::string(reduce) == "subgroup" && !gpu::Context::get()->info().subgroups) continue;
    OpGraph g;
    Id xi = g.input(x);
    l.add(g, xi, g.output(DType::Float32, {1, 37}));
    LoadOptions o;
    o.force_route["reduce"] = reduce;
    EXPECT_TRUE(Close(g.run(o)[0], l.ref(x), 1e-4, 1e-4)) << reduce;
  }
  OpGraph g;
  Id xi = g.input(x);
  l.add(g, xi, g.output(DType::Float32, {1, 37}));
  LoadOptions o;
  o.force_route["reduce"] = "lanes";
  std::string e = load_error([&] { g.run(o); });
  EXPECT_NE(e.find("force_route reduce must be \"workgroup\" or \"subgroup\", got \"lanes\""), std::string::npos) << e;
}

// Every workgroup layout of gemv_rows (outputs per invocation x invocations along K; the route
// sweep pins them with force_route q4_gemv_rows), with the row and the scales read from memory or
// staged in workgroup memory (q4_gemv_rows_x, q4_gemv_rows_sc), agrees with the reference, on a K of one word a step, one of
// fewer chunks than lanes and one of several chunks a lane, with both reductions; an unknown
// layout is an error.
TEST(OpQ4gswLinear, EveryGemvRowsLayoutMatchesTheReference) {
  ETW_REQUIRE_GPU();
  for (int64_t K : {40, 256, 2048}) {  // 40: one word a step, a row of 10 vec4s
    Lin l(37, K, 32, true, 62);
    auto x = random_f32({1, K}, 63);
    for (const char* layout : {"1x64", "2x64", "4x64", "1x32", "2x32", "4x32"})
      for (const char* reduce : {"workgroup", "subgroup"})
        for (const char* staging : {"global", "shared"})
          for (const char* scales : {"global", "shared"}) {
            if (std::string(reduce) == "subgroup" && !gpu::Context::get()->info().subgroups) continue;
            // What the pinned staging needs (the kernel's fixed 7 KiB besides), where it fits.
            const int64_t per = 256 / (layout[2] == '6' ? 64 : 32) * (layout[0] - '0');
            const int64_t bytes = 7168 + (std::string(staging) == "shared" ? (K / 4 + 7) / 8 * 8 * 16 : 0) +
                                  (std::string(scales) == "shared" ? per * ((K + 31) / 32) * 4 : 0);
            if (bytes > gpu::Context::get()->info().max_workgroup_storage) continue;
            OpGraph g;
            Id xi = g.input(x);
            l.add(g, xi, g.output(DType::Float32, {1, 37}));
            LoadOptions o;
            o.force_route["q4_gemv_rows"] = layout;
            o.force_route["reduce"] = reduce;
            o.force_route["q4_gemv_rows_x"] = staging;
            o.force_route["q4_gemv_rows_sc"] = scales;
            EXPECT_TRUE(Close(g.run(o)[0], l.ref(x), 1e-4, 1e-4)) << K << " " << layout << " " << reduce << " " << staging << " " << scales;
          }
  }
  Lin l(8, 64, 32, false, 64);
  OpGraph g;
  Id xi = g.input(random_f32({1, 64}, 65));
  l.add(g, xi, g.output(DType::Float32, {1, 8}));
  LoadOptions o;
  o.force_route["q4_gemv_rows"] = "8x16";
  std::string e = load_error([&] { g.run(o); });
  EXPECT_NE(e.find("force_route q4_gemv_rows must be \"1x64\", \"2x64\", \"4x64\", \"1x32\", \"2x32\" or \"4x32\""), std::string::npos) << e;
  o.force_route = {{"q4_gemv_rows_sc", "local"}};
  e = load_error([&] { g.run(o); });
  EXPECT_NE(e.find("force_route q4_gemv_rows_sc must be \"shared\" or \"global\", got \"local\""), std::string::npos) << e;
  // A row past the device's workgroup memory cannot be pinned there.
  const int64_t Kbig = (gpu::Context::get()->info().max_workgroup_storage / 16 + 8) * 4;
  Lin big(8, Kbig, 32, false, 66);
  OpGraph gb;
  Id xb = gb.input(random_f32({1, Kbig}, 67));
  big.add(gb, xb, gb.output(DType::Float32, {1, 8}));
  o.force_route = {{"q4_gemv_rows_x", "shared"}};
  e = load_error([&] { gb.run(o); });
  EXPECT_NE(e.find("bytes of workgroup memory, the device has"), std::string::npos) << e;
}

// gemv_rows requests an invocation's next step of chunks before it sums the one it holds (depth 1,
// the default) or each step its own (depth 0; force_route q4_gemv_rows_pre): both give the
// reference's values and the same bits, with the scales queued beside the chunks (group 32 and
// 64: one scale a chunk), staged in workgroup memory, or read a word at a time (group 16; one word
// a chunk, K 4040, whose last step is partial), and where an invocation has one step (K 40); an
// unknown depth is an error.
TEST(OpQ4gswLinear, EveryPrefetchDepthHasTheSameBits) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t K, gs; const char* layout; const char* scales; };
  for (const Case& c : {Case{4096, 32, "2x32", "global"}, Case{4096, 64, "4x32", "global"}, Case{4096, 32, "2x64", "shared"},
                        Case{4096, 16, "2x32", "global"}, Case{4040, 8, "2x32", "global"}, Case{40, 8, "4x64", "global"}}) {
    Lin l(37, c.K, c.gs, true, 68);
    auto x = random_f32({1, c.K}, 69);
    const std::string at = "K " + std::to_string(c.K) + " gs " + std::to_string(c.gs) + " " + c.layout + " scales " + c.scales;
    std::optional<HostTensor> first;
    for (const char* pre : {"0", "1"}) {
      OpGraph g;
      Id xi = g.input(x);
      l.add(g, xi, g.output(DType::Float32, {1, 37}));
      LoadOptions o;
      o.force_route = {{"q4_gemv_rows", c.layout}, {"q4_gemv_rows_pre", pre}, {"q4_gemv_rows_sc", c.scales}};
      auto out = g.run(o)[0];
      EXPECT_TRUE(Close(out, l.ref(x), 1e-4, 1e-4)) << at << " depth " << pre;
      if (!first) first = out;
      else EXPECT_EQ(std::memcmp(out.as<float>(), first->as<float>(), 37 * sizeof(float)), 0) << at << " depth " << pre;
    }
  }
  Lin l(8, 64, 32, false, 70);
  OpGraph g;
  Id xi = g.input(random_f32({1, 64}, 71));
  l.add(g, xi, g.output(DType::Float32, {1, 8}));
  LoadOptions o;
  o.force_route["q4_gemv_rows_pre"] = "2";
  std::string e = load_error([&] { g.run(o); });
  EXPECT_NE(e.find("force_route q4_gemv_rows_pre must be \"0\" or \"1\", got \"2\""), std::string::npos) << e;
}

TEST(OpQ4gswLinear, DynamicTokensPrefillThenSingleToken) {
  ETW_REQUIRE_GPU();
  Lin l(24, 32, 32, true, 5);
  OpGraph g;
  auto x = random_f32({1, 9, 32}, 6);
  Id xi = g.input(x, {1, 9, 32}, true);
  l.add(g, xi, g.output(DType::Float32, {1, 9, 24}));
  EXPECT_TRUE(Close(g.run()[0], l.ref(x), 1e-4, 1e-4));
  auto x1 = random_f32({1, 1, 32}, 7);
  auto out = g.rerun({x1});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 1, 24}));
  EXPECT_TRUE(Close(out[0], l.ref(x1), 1e-4, 1e-4));
}

// Packed weights are bound as raw bytes, so the binding limit applies to those bytes, not to one
// word per element (the Llama-3.2-1B output head, [128256, 1024] bytes, on a 128 MiB device).
TEST(OpQ4gswLinear, PackedWeightOverAQuarterOfTheBindingLimitLoads) {
  ETW_REQUIRE_GPU();
  const uint64_t lim = gpu::Context::get()->info().max_storage_binding;
  if (lim > (256ull << 20)) GTEST_SKIP() << "binding limit " << lim << " B: a weight past a quarter of it is too large for a test";
  const int64_t K = 4096, N = static_cast<int64_t>(lim / 4 / (K / 2)) + 8;  // N * K/2 bytes > lim / 4
  Lin l(N, K, 32, false, 9);
  auto x = random_f32({1, K}, 10);
  EXPECT_TRUE(Close(run_lin(l, x), l.ref(x), 1e-4, 1e-4));
}

TEST(OpQ4gswLinear, ScaleGroupsNotCoveringKAreRejected) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({1, 32}, 1));
  Id w = g.gb.constant(DType::UInt8, {8, 16}, std::vector<uint8_t>(128, 0x88));
  Id s = g.gb.constant_f32({1, 8}, std::vector<float>(8, 1.f));
  g.gb.op("et_vk.linear_q4gsw.default", {x, w, s, g.gb.int_(16), g.gb.null(), g.output(DType::Float32, {1, 8})});
  try {
    g.run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not cover K"), std::string::npos) << e.what();
  }
}

TEST(OpQ4gswLinear, NonConstantWeightIsRejected) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({1, 16}, 1));
  Id w = g.input(HostTensor(DType::UInt8, {4, 8}));
  Id s = g.gb.constant_f32({1, 8}, std::vector<float>(8, 1.f));
  g.gb.op("et_vk.linear_q4gsw.default", {x, w, s, g.gb.int_(16), g.gb.null(), g.output(DType::Float32, {1, 4})});
  EXPECT_THROW(g.run(), Error);
}

HostTensor run_emb(const std::vector<uint8_t>& packed, int64_t V, int64_t D, const std::vector<float>& sc,
                   std::vector<int64_t> sshape, int64_t gs, const HostTensor& idx, bool linear) {
  OpGraph g;
  Id w = g.gb.constant(DType::UInt8, {V, D / 2}, packed);
  Id s = g.gb.constant_f32(sshape, sc);
  Id i = g.input(idx);
  auto os = idx.shape;
  os.push_back(D);
  g.gb.op("et_vk.embedding_q4gsw.default", {w, s, g.gb.int_(gs), i, g.gb.boolean(linear), g.output(DType::Float32, os)});
  return g.run()[0];
}

TEST(OpQ4gswEmbedding, GroupScalesWithEmbeddingPacking) {
  ETW_REQUIRE_GPU();
  int64_t V = 11, D = 24, gs = 8;
  auto q = random_q4(V * D, 10);
  auto sc = random_scales(V * (D / gs), 11);
  auto idx = random_i32({2, 5}, 12, 0, 10);
  EXPECT_TRUE(Close(run_emb(ref::pack_q4_embedding(q, V, D), V, D, sc, {V, D / gs}, gs, idx, false),
                    ref::embedding_q4gsw(q, V, D, sc, gs, false, idx), 1e-6, 1e-6));
}

TEST(OpQ4gswEmbedding, LinearWeightPackingSwapsNibbles) {
  ETW_REQUIRE_GPU();
  int64_t V = 7, D = 16, gs = 16;
  auto q = random_q4(V * D, 13);
  auto sc = random_scales(V, 14);
  auto idx = random_i32({9}, 15, 0, 6);
  EXPECT_TRUE(Close(run_emb(ref::pack_q4_linear(q, V, D, 2), V, D, sc, {V, 1}, gs, idx, true),
                    ref::embedding_q4gsw(q, V, D, sc, gs, false, idx), 1e-6, 1e-6));
}

TEST(OpQ4gswEmbedding, SingleScaleForTheWholeTable) {
  ETW_REQUIRE_GPU();
  int64_t V = 5, D = 6;
  auto q = random_q4(V * D, 16);
  std::vector<float> sc{0.37f};
  auto idx = random_i32({4}, 17, 0, 4);
  EXPECT_TRUE(Close(run_emb(ref::pack_q4_embedding(q, V, D), V, D, sc, {1}, 6, idx, false),
                    ref::embedding_q4gsw(q, V, D, sc, 6, true, idx), 1e-6, 1e-6));
}

TEST(OpQ4gswEmbedding, LargeOutputPast65535WorkgroupsIsCorrect) {
  ETW_REQUIRE_GPU();
  int64_t V = 3, D = 2048, gs = 64;
  auto q = random_q4(V * D, 18);
  auto sc = random_scales(V * (D / gs), 19);
  auto idx = random_i32({8193}, 20, 0, 2);  // 8193 * 2048 outputs > 65535 * 256
  EXPECT_TRUE(Close(run_emb(ref::pack_q4_embedding(q, V, D), V, D, sc, {V, D / gs}, gs, idx, false),
                    ref::embedding_q4gsw(q, V, D, sc, gs, false, idx), 1e-6, 1e-6));
}

TEST(OpQ4gswEmbedding, ScalesNotMatchingGroupsAreRejected) {
  ETW_REQUIRE_GPU();
  auto q = random_q4(4 * 8, 21);
  EXPECT_THROW(run_emb(ref::pack_q4_embedding(q, 4, 8), 4, 8, std::vector<float>(12, 1.f), {4, 3}, 4,
                       random_i32({2}, 22, 0, 3), false),
               Error);
}

struct Qcs {
  int64_t N, K;
  std::vector<int8_t> q;
  std::vector<float> scales;
  Qcs(int64_t n, int64_t k, uint64_t seed) : N(n), K(k), q(random_q4(n * k, seed)), scales(random_scales(n, seed + 1)) {}
  void add(OpGraph& g, Id x, Id out) const {
    Id w = g.gb.constant(DType::UInt8, {N, (K + 1) / 2}, ref::pack_q4_channelwise(q, N, K));
    Id s = g.gb.constant_f32({N}, scales);
    g.gb.op("et_vk.linear_qcs4w.default", {x, w, s, out});
  }
  HostTensor ref(const HostTensor& x) const { return ref::linear_qcs4w(x, q, N, K, scales); }
};

HostTensor run_qcs(const Qcs& l, const HostTensor& x, const std::string& route = "") {
  OpGraph g;
  Id xi = g.input(x);
  auto os = x.shape;
  os.back() = l.N;
  l.add(g, xi, g.output(DType::Float32, os));
  LoadOptions o;
  if (!route.empty()) o.force_route["linear_qcs4w"] = route;
  return g.run(o)[0];
}

TEST(OpQcs4wLinear, GemvOneTokenWithOddKReadsTheHighNibbleFirst) {
  ETW_REQUIRE_GPU();
  Qcs l(13, 37, 30);  // K 37 packs into 19 bytes per row, the last low nibble padding
  auto x = random_f32({1, 37}, 31);
  EXPECT_TRUE(Close(run_qcs(l, x), l.ref(x), 1e-4, 1e-4));
}

TEST(OpQcs4wLinear, TiledGemmAndGemvAgreeOnPrefill) {
  ETW_REQUIRE_GPU();
  Qcs l(21, 48, 32);
  auto x = random_f32({2, 17, 48}, 33);
  auto ref = l.ref(x);
  EXPECT_TRUE(Close(run_qcs(l, x), ref, 1e-4, 1e-4));
  EXPECT_TRUE(Close(run_qcs(l, x, "gemv"), ref, 1e-4, 1e-4));
  EXPECT_TRUE(Close(run_qcs(l, x, "gemm"), ref, 1e-4, 1e-4));
}

TEST(OpQcs4wLinear, DynamicTokensPrefillThenSingleToken) {
  ETW_REQUIRE_GPU();
  Qcs l(16, 24, 34);
  OpGraph g;
  auto x = random_f32({1, 7, 24}, 35);
  Id xi = g.input(x, {1, 7, 24}, true);
  l.add(g, xi, g.output(DType::Float32, {1, 7, 16}));
  EXPECT_TRUE(Close(g.run()[0], l.ref(x), 1e-4, 1e-4));
  auto x1 = random_f32({1, 1, 24}, 36);
  auto out = g.rerun({x1});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 1, 16}));
  EXPECT_TRUE(Close(out[0], l.ref(x1), 1e-4, 1e-4));
}

TEST(OpQcs4wLinear, ScalesNotOnePerOutputAreRejected) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({1, 16}, 1));
  Id w = g.gb.constant(DType::UInt8, {8, 8}, std::vector<uint8_t>(64, 0x88));
  Id s = g.gb.constant_f32({4}, std::vector<float>(4, 1.f));
  g.gb.op("et_vk.linear_qcs4w.default", {x, w, s, g.output(DType::Float32, {1, 8})});
  try {
    g.run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scales must be [8]"), std::string::npos) << e.what();
  }
}

TEST(OpQcs4wLinear, WeightNotPackingKIsRejected) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({1, 16}, 1));
  Id w = g.gb.constant(DType::UInt8, {8, 4}, std::vector<uint8_t>(32, 0x88));
  Id s = g.gb.constant_f32({8}, std::vector<float>(8, 1.f));
  g.gb.op("et_vk.linear_qcs4w.default", {x, w, s, g.output(DType::Float32, {1, 8})});
  try {
    g.run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input channels"), std::string::npos) << e.what();
  }
}

}  // namespace
