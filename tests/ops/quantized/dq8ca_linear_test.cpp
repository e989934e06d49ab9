// torchao.choose_qparams_affine (per-row blocks, as ExecuTorch's 8da4w export emits it) and
// et_vk.linear_dq8ca_q4gsw against references written from torchao's quant_primitives.py and
// ExecuTorch's Vulkan packers (tests/reference/quantized/q8_linear_ref.h, q4_ref.h): scales and
// zero points bit-identical to torchao's float32 math, the linear within float accumulation error
// of the fake-quantized fp64 result.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "gpu/context.h"
#include "reference/norm/norm_ref.h"
#include "reference/quantized/q4_ref.h"
#include "reference/quantized/q8_linear_ref.h"
#include "reference/rope/rope_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

bool have_dot4() { return gpu::Context::get()->info().packed_dot4; }
std::vector<float> fvec(const HostTensor& t) { return std::vector<float>(t.as<float>(), t.as<float>() + t.numel()); }

struct Cq {
  std::string mapping = "ASYMMETRIC";
  int64_t qmin = -128, qmax = 127;
  std::optional<double> eps;
  bool keepdim = false;
  DType zp_type = DType::Int8;
  std::vector<int64_t> block;  // default [1, ..., 1, K]
};

struct CqOut {
  HostTensor scale, zp;
};

// scale / zero_point dims: input dims without the last (keepdim: last = 1).
std::vector<int64_t> qdims(std::vector<int64_t> d, bool keepdim) {
  if (keepdim) d.back() = 1;
  else d.pop_back();
  return d;
}

Id add_cq(OpGraph& g, Id x, const std::vector<int64_t>& xdims, const Cq& c, Id* scale, Id* zp, bool mark = true) {
  auto qd = qdims(xdims, c.keepdim);
  *scale = mark ? g.output(DType::Float32, qd) : g.tensor(DType::Float32, qd);
  *zp = mark ? g.output(c.zp_type, qd) : g.tensor(c.zp_type, qd);
  auto block = c.block;
  if (block.empty()) {
    block.assign(xdims.size(), 1);
    block.back() = xdims.back();
  }
  g.gb.op("torchao.choose_qparams_affine.default",
          {x, g.gb.str(c.mapping), g.gb.int_list(block), g.gb.null(), g.gb.int_(c.qmin), g.gb.int_(c.qmax),
           c.eps ? g.gb.dbl(*c.eps) : g.gb.null(), g.gb.null(), g.gb.null(), g.gb.boolean(c.keepdim),
           g.gb.value_list({*scale, *zp})});
  return *scale;
}

CqOut run_cq(const HostTensor& x, const Cq& c) {
  OpGraph g;
  Id xi = g.input(x);
  Id s, z;
  add_cq(g, xi, x.shape, c, &s, &z);
  auto out = g.run();
  return {out[0], out[1]};
}

std::vector<int32_t> zps(const HostTensor& t) {
  std::vector<int32_t> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.dtype == DType::Int8 ? t.as<int8_t>()[i] : t.as<int32_t>()[i];
  return v;
}

// Rows with different ranges: mixed signs, all positive, all negative, all zero, a single spike.
HostTensor rows_x(int64_t rows, int64_t K, uint64_t seed) {
  auto x = random_f32({rows, K}, seed, -3.f, 2.f);
  float* p = x.as<float>();
  for (int64_t k = 0; k < K; ++k) {
    if (rows > 1) p[1 * K + k] = std::abs(p[1 * K + k]) * 0.01f + 0.5f;  // all positive
    if (rows > 2) p[2 * K + k] = -std::abs(p[2 * K + k]) * 7.f - 1e-3f;   // all negative
    if (rows > 3) p[3 * K + k] = 0.f;                                     // all zero: scale = eps
    if (rows > 4) p[4 * K + k] = k == K / 2 ? 1e-6f : 0.f;                // tiny range: scale clamps at eps
  }
  return x;
}

::testing::AssertionResult SameBits(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], 4) != 0)
      return ::testing::AssertionFailure() << "scale " << i << ": got " << got[i] << ", expected " << want[i];
  return ::testing::AssertionSuccess();
}

TEST(OpChooseQparamsAffine, AsymmetricPerRowScalesAndZeroPointsAreTorchaosBitForBit) {
  ETW_REQUIRE_GPU();
  const int64_t rows = 7, K = 37;
  auto x = rows_x(rows, K, 1);
  auto got = run_cq(x, Cq{});
  ASSERT_EQ(got.scale.shape, (std::vector<int64_t>{rows}));
  std::vector<float> s;
  std::vector<int32_t> z;
  ref::choose_qparams_rows(fvec(x), rows, K, "ASYMMETRIC", -128, 127, FLT_EPSILON, &s, &z);
  EXPECT_TRUE(SameBits(fvec(got.scale), s));
  EXPECT_EQ(zps(got.zp), z);
  EXPECT_EQ(fvec(got.scale)[3], FLT_EPSILON);  // an all-zero row: torch.finfo(float32).eps, not NaN
  EXPECT_EQ(zps(got.zp)[3], -128);
  EXPECT_EQ(zps(got.zp)[1], -128);  // all positive: min is 0
  EXPECT_EQ(zps(got.zp)[2], 127);   // all negative: max is 0
}

TEST(OpChooseQparamsAffine, SymmetricKeepdimInt32ZeroPointAndExplicitEps) {
  ETW_REQUIRE_GPU();
  const int64_t K = 64;
  auto x = rows_x(6, K, 2);
  x.shape = {2, 3, K};
  Cq c;
  c.mapping = "SYMMETRIC";
  c.keepdim = true;
  c.zp_type = DType::Int32;
  c.qmin = -8;
  c.qmax = 7;
  c.eps = 1e-4;
  auto got = run_cq(x, c);
  ASSERT_EQ(got.scale.shape, (std::vector<int64_t>{2, 3, 1}));
  ASSERT_EQ(got.zp.shape, (std::vector<int64_t>{2, 3, 1}));
  std::vector<float> s;
  std::vector<int32_t> z;
  ref::choose_qparams_rows(fvec(x), 6, K, "SYMMETRIC", -8, 7, 1e-4, &s, &z);
  EXPECT_TRUE(SameBits(fvec(got.scale), s));
  EXPECT_EQ(zps(got.zp), z);
  EXPECT_EQ(fvec(got.scale)[3], static_cast<float>(1e-4));
}

TEST(OpChooseQparamsAffine, ManyRowsFillEveryZeroPointWord) {
  ETW_REQUIRE_GPU();
  const int64_t rows = 45, K = 2;  // 45 rows: 12 workgroups, the last with one row
  auto x = random_f32({1, rows, K}, 3, -1.f, 1.5f);
  auto got = run_cq(x, Cq{});
  std::vector<float> s;
  std::vector<int32_t> z;
  ref::choose_qparams_rows(fvec(x), rows, K, "ASYMMETRIC", -128, 127, FLT_EPSILON, &s, &z);
  EXPECT_TRUE(SameBits(fvec(got.scale), s));
  EXPECT_EQ(zps(got.zp), z);
}

TEST(OpChooseQparamsAffine, OtherBlockSizesAndUnknownMappingsAreRefused) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 32}, 4);
  Cq c;
  c.block = {1, 16};
  auto e = load_error([&] { run_cq(x, c); });
  EXPECT_TRUE(has(e, "torchao.choose_qparams_affine.default") &&
              has(e, "block_size [1, 16] for input [2, 32]: only per-row blocks [1, ..., 1, K] with K > 1 are supported"))
      << e;
  c.block = {2, 32};
  e = load_error([&] { run_cq(x, c); });
  EXPECT_TRUE(has(e, "block_size [2, 32]")) << e;
  Cq m;
  m.mapping = "ASYM";
  e = load_error([&] { run_cq(x, m); });
  EXPECT_TRUE(has(e, "unknown mapping_type \"ASYM\"")) << e;
  Cq r;
  r.qmin = 5;
  r.qmax = 5;
  e = load_error([&] { run_cq(x, r); });
  EXPECT_TRUE(has(e, "quant_min 5 must be below quant_max 5")) << e;
  Cq w;
  w.qmin = 0;
  w.qmax = 255;
  e = load_error([&] { run_cq(x, w); });
  EXPECT_TRUE(has(e, "[quant_min, quant_max] = [0, 255] does not fit the zero_point dtype")) << e;
}

// ---------------------------------------------------------------- linear_dq8ca_q4gsw

struct Dq {
  int64_t N, K, gs, G, kpad, npad;
  std::vector<int8_t> q;
  std::vector<int32_t> sums;
  std::vector<float> ws;
  Dq(int64_t n, int64_t k, int64_t g, uint64_t seed) : N(n), K(k), gs(g), G(k / g), kpad((k + 7) / 8 * 8), npad((n + 7) / 8 * 8) {
    std::mt19937_64 r(seed);
    q.resize(N * K);
    for (auto& v : q) v = static_cast<int8_t>(static_cast<int>(r() % 16) - 8);
    sums.assign(G * npad, 0);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < K; ++j) sums[(j / gs) * npad + i] += q[i * K + j];
    auto t = random_f32({G * N}, seed + 1, 0.01f, 0.2f);
    ws.assign(t.as<float>(), t.as<float>() + G * N);
  }
  void add(OpGraph& g, Id x, Id sc, Id zp, Id out, std::vector<int64_t> wdims = {}) const {
    auto packed = ref::pack_q4_linear(q, N, K, 8);
    if (wdims.empty()) wdims = {N, kpad / 2};
    packed.resize(numel(wdims), 0x88);
    Id w = g.gb.constant(DType::UInt8, wdims, packed);
    Id s = g.gb.constant_i32({G, npad}, sums);
    Id c = g.gb.constant_f32({G, N}, ws);
    g.gb.op("et_vk.linear_dq8ca_q4gsw.default", {x, sc, zp, w, s, c, g.gb.int_(gs), g.gb.null(), out});
  }
  HostTensor ref(const HostTensor& x, const std::vector<float>& s, const std::vector<int32_t>& z) const {
    return ref::linear_dq8ca_q4gsw(x, s, z, q, N, K, ws, N, gs);
  }
};

// The op with per-row scales and zero points fed as inputs (rows = all dims but the last).
struct DqRun {
  HostTensor out;
  std::vector<std::string> variants;
};
DqRun run_dq(const Dq& d, const HostTensor& x, const std::vector<float>& s, const std::vector<int32_t>& z,
             const std::string& route = "") {
  OpGraph g;
  auto rd = qdims(x.shape, false);
  Id xi = g.input(x);
  Id si = g.input(HostTensor::from(DType::Float32, rd, s));
  std::vector<int8_t> z8(z.begin(), z.end());
  Id zi = g.input(HostTensor::from(DType::Int8, rd, z8));
  auto od = x.shape;
  od.back() = d.N;
  d.add(g, xi, si, zi, g.output(DType::Float32, od));
  LoadOptions o;
  if (!route.empty()) o.force_route["linear_dq8ca_q4gsw"] = route;
  DqRun r{g.run(o)[0], {}};
  r.variants = g.variants();
  return r;
}

void ref_qparams(const HostTensor& x, std::vector<float>* s, std::vector<int32_t>* z) {
  const int64_t K = x.shape.back();
  ref::choose_qparams_rows(fvec(x), x.numel() / K, K, "ASYMMETRIC", -128, 127, FLT_EPSILON, s, z);
}

// The op after choose_qparams_affine on x, with these routes pinned.
HostTensor run_dq_routes(const Dq& d, const HostTensor& x, const std::map<std::string, std::string>& routes) {
  OpGraph g;
  Id xi = g.input(x);
  Id sc, zp;
  add_cq(g, xi, x.shape, Cq{}, &sc, &zp, false);
  auto od = x.shape;
  od.back() = d.N;
  d.add(g, xi, sc, zp, g.output(DType::Float32, od));
  LoadOptions o;
  o.force_route = routes;
  return g.run(o)[0];
}

TEST(OpLinearDq8caQ4gsw, OneTokenMatchesFakeQuantReferenceOnEveryRoute) {
  ETW_REQUIRE_GPU();
  Dq d(20, 128, 32, 1);  // N 20: sums padded to 24
  auto x = random_f32({1, 1, 128}, 2, -2.f, 3.f);
  std::vector<float> s;
  std::vector<int32_t> z;
  ref_qparams(x, &s, &z);
  auto want = d.ref(x, s, z);
  auto r = run_dq(d, x, s, z);
  EXPECT_TRUE(Close(r.out, want, 1e-4, 1e-4));
  EXPECT_EQ(r.variants, (std::vector<std::string>{"gemv_rows"}));
  auto p = run_dq(d, x, s, z, "portable");
  EXPECT_TRUE(Close(p.out, want, 1e-4, 1e-4));
  EXPECT_EQ(p.variants, (std::vector<std::string>{"quantize", "portable"}));
  Dq odd(3, 45, 9, 2);
  std::string e = load_error([&] { run_dq(odd, random_f32({1, 45}, 3), {0.1f}, {0}, "gemv_rows"); });
  EXPECT_TRUE(has(e, "\"gemv_rows\" needs K and group_size multiples of 8")) << e;
  e = load_error([&] { run_dq(d, x, s, z, "fast"); });
  EXPECT_TRUE(has(e, "must be \"gemv_rows\", \"dot4\" or \"portable\", got \"fast\"")) << e;
  if (!have_dot4()) GTEST_SKIP() << "adapter without dot4I8Packed: the dot4 route is not available";
  auto q = run_dq(d, x, s, z, "dot4");
  EXPECT_TRUE(Close(q.out, want, 1e-4, 1e-4));
  EXPECT_EQ(q.variants, (std::vector<std::string>{"quantize", "dot4"}));
}

// A vocabulary-wide 8da4w head (N >= 65536), with the row's parameters given and chosen in the kernel.
TEST(OpLinearDq8caQ4gsw, VocabularyWideHeadMatchesTheReference) {
  ETW_REQUIRE_GPU();
  Dq d(65536 + 200, 64, 32, 52);
  auto x = rows_x(2, 64, 53);
  std::vector<float> s;
  std::vector<int32_t> z;
  ref_qparams(x, &s, &z);
  auto r = run_dq(d, x, s, z);
  EXPECT_EQ(r.variants, std::vector<std::string>{"gemv_rows"});
  EXPECT_TRUE(Close(r.out, d.ref(x, s, z), 1e-4, 1e-4));
  OpGraph g;
  Id xi = g.input(x);
  Id sc, zp;
  add_cq(g, xi, x.shape, Cq{}, &sc, &zp, false);
  d.add(g, xi, sc, zp, g.output(DType::Float32, {2, d.N}));
  EXPECT_TRUE(Close(g.run()[0], d.ref(x, s, z), 1e-4, 1e-4));
  EXPECT_EQ(g.variants(), std::vector<std::string>{"gemv_rows_qparams"});
}

TEST(OpLinearDq8caQ4gsw, SeveralRowsWithOddKAndOddGroupSize) {
  ETW_REQUIRE_GPU();
  Dq d(7, 45, 9, 3);  // K 45 packs to 48; groups of 9 straddle the weight words
  auto x = random_f32({5, 45}, 4, -1.f, 1.f);
  std::vector<float> s;
  std::vector<int32_t> z;
  ref_qparams(x, &s, &z);
  z[1] = -128;  // zero points at both ends of the range
  z[2] = 127;
  auto want = d.ref(x, s, z);
  for (const char* route : {"portable", "dot4"}) {
    if (std::string(route) == "dot4" && !have_dot4()) continue;
    EXPECT_TRUE(Close(run_dq(d, x, s, z, route).out, want, 1e-4, 1e-4)) << route;
  }
}

TEST(OpLinearDq8caQ4gsw, ValuesPastTheScaleRangeClampToInt8) {
  ETW_REQUIRE_GPU();
  Dq d(9, 64, 16, 5);
  auto x = random_f32({3, 64}, 6, -4.f, 4.f);
  std::vector<float> s(3, 0.01f);  // |x| / s up to 400: clamped to [-128, 127]
  std::vector<int32_t> z{0, 30, -50};
  EXPECT_TRUE(Close(run_dq(d, x, s, z).out, d.ref(x, s, z), 1e-4, 1e-4));
}

// The 8da4w pattern as exported: choose_qparams_affine on the activations, then the linear.
TEST(OpLinearDq8caQ4gsw, ChainedAfterChooseQparamsLikeThe8da4wExport) {
  ETW_REQUIRE_GPU();
  Dq d(12, 64, 32, 7);
  auto x = rows_x(5, 64, 8);  // includes an all-zero row: output 0, not NaN
  x.shape = {1, 5, 64};
  OpGraph g;
  Id xi = g.input(x);
  Id s, z;
  add_cq(g, xi, x.shape, Cq{}, &s, &z, false);
  d.add(g, xi, s, z, g.output(DType::Float32, {1, 5, 12}));
  auto out = g.run()[0];
  std::vector<float> rs;
  std::vector<int32_t> rz;
  ref_qparams(x, &rs, &rz);
  EXPECT_TRUE(Close(out, d.ref(x, rs, rz), 1e-4, 1e-4));
  for (int n = 0; n < 12; ++n) EXPECT_EQ(out.as<float>()[3 * 12 + n], 0.f);
}

// The export's form: choose_qparams_affine and the linear each read their own clone of the
// activations, and a residual add follows. At load the three kernels (and the add) become one
// (etwebgpu.linear_dq8ca_q4gsw_qparams with an epilogue), bit-identical to the unfused run.
// `norm`: the activations are first an RMSNorm of x (weight norm_w, eps 1e-5) that only the
// 8da4w calls read (1), or whose output is also the graph's first output (2).
void build_8da4w(OpGraph& g, const Dq& d, const HostTensor& x, const HostTensor& res, const Cq& c, bool keep_scale, int norm = 0,
                 const HostTensor* norm_w = nullptr) {
  Id xi = g.input(x), ri = g.input(res);
  if (norm) {
    Id y = norm == 2 ? g.output(DType::Float32, x.shape) : g.tensor(DType::Float32, x.shape);
    g.gb.op("et_vk.rms_norm.default", {xi, g.constant(*norm_w), g.gb.dbl(1e-5), y});
    xi = y;
  }
  Id a = g.tensor(DType::Float32, x.shape), b = g.tensor(DType::Float32, x.shape);
  g.gb.op("aten.clone.default", {xi, g.gb.null(), a});
  Id s, z;
  add_cq(g, a, x.shape, c, &s, &z, false);
  if (keep_scale) g.mark_output(s);
  g.gb.op("aten.clone.default", {xi, g.gb.null(), b});
  auto od = x.shape;
  od.back() = d.N;
  Id y = g.tensor(DType::Float32, od);
  d.add(g, b, s, z, y);
  g.gb.op("aten.add.Tensor", {y, ri, g.gb.int_(1), g.output(DType::Float32, od)});
}

TEST(OpLinearDq8caQ4gsw, ChooseQparamsFoldsIntoTheLinearBitForBit) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t N, K, gs; const char* mapping; };
  // K 64: chunks of four words (group 32: a scale a chunk; 16: a scale a word); K 40: one word a
  // step. N 20: the last workgroup's block of outputs is partial.
  for (const Case& c : {Case{20, 64, 32, "ASYMMETRIC"}, Case{20, 40, 8, "ASYMMETRIC"}, Case{9, 64, 16, "SYMMETRIC"}}) {
    Dq d(c.N, c.K, c.gs, 12);
    auto x = rows_x(5, c.K, 13);
    auto res = random_f32({5, c.N}, 14);
    Cq q;
    q.mapping = c.mapping;
    auto build = [&](OpGraph& g) { build_8da4w(g, d, x, res, q, false); };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    EXPECT_EQ(fused.ops, std::vector<std::string>{"fused[linear_dq8ca_q4gsw+add]"}) << " K " << c.K;
    EXPECT_EQ(fused.variants, std::vector<std::string>{"gemv_rows_qparams"});
    EXPECT_EQ(plain.ops.size(), 3u);  // choose_qparams, the linear, the add (clones alias)
    EXPECT_TRUE(SameBits(fvec(fused.out[0]), fvec(plain.out[0]))) << " K " << c.K << " " << c.mapping;
    std::vector<float> rs;
    std::vector<int32_t> rz;
    ref::choose_qparams_rows(fvec(x), 5, c.K, c.mapping, -128, 127, FLT_EPSILON, &rs, &rz);
    auto want = d.ref(x, rs, rz);
    for (int64_t i = 0; i < want.numel(); ++i) want.as<double>()[i] += res.as<float>()[i];
    EXPECT_TRUE(Close(fused.out[0], want, 1e-4, 1e-4)) << " K " << c.K;
  }
}

// gemv_rows' 8da4w sums taken in integers from the row quantized once into workgroup memory
// (force_route dq8ca_gemv_rows "dot4" / "portable", the default for K <= 8192) have the bits of
// the float sums of each invocation's own quantization ("float"): chunks of four words with a
// scale each (group 32) and a scale a word (16), one word a step (K 40), K 2048; rows with zero
// points at both ends and clamped values; the parameters given (the op) and chosen in the kernel
// (the export's chain). Bad pins are errors naming the limit.
TEST(OpLinearDq8caQ4gsw, GemvRowsIntegerSumsFromWorkgroupMemoryHaveTheFloatSumsBits) {
  ETW_REQUIRE_GPU();
  struct Case { int64_t N, K, gs; };
  for (const Case& c : {Case{20, 64, 32}, Case{9, 64, 16}, Case{20, 40, 8}, Case{37, 2048, 32}}) {
    Dq d(c.N, c.K, c.gs, 160);
    auto x = rows_x(5, c.K, 161);
    std::vector<float> s;
    std::vector<int32_t> z;
    ref_qparams(x, &s, &z);
    z[1] = -128;
    z[2] = 127;
    s[0] *= 0.25f;  // row 0's extremes clamp at -128 / 127
    auto res = random_f32({5, c.N}, 162);
    const std::string at = "K " + std::to_string(c.K) + " gs " + std::to_string(c.gs);
    std::map<std::string, LoadedGraph> op, chain;
    for (const char* sums : {"float", "portable", "dot4"}) {
      if (std::string(sums) == "dot4" && !have_dot4()) continue;
      // The float sums read the scales from memory, the integer sums from workgroup memory.
      const std::map<std::string, std::string> routes{{"linear_dq8ca_q4gsw", "gemv_rows"}, {"dq8ca_gemv_rows", sums},
                                                      {"q4_gemv_rows_sc", std::string(sums) == "float" ? "global" : "shared"}};
      op.emplace(sums, load_graph([&](OpGraph& g) {
        auto rd = qdims(x.shape, false);
        Id xi = g.input(x);
        Id si = g.input(HostTensor::from(DType::Float32, rd, s));
        std::vector<int8_t> z8(z.begin(), z.end());
        Id zi = g.input(HostTensor::from(DType::Int8, rd, z8));
        d.add(g, xi, si, zi, g.output(DType::Float32, {5, c.N}));
      }, true, routes));
      chain.emplace(sums, load_graph([&](OpGraph& g) { build_8da4w(g, d, x, res, Cq{}, false); }, true, routes));
      EXPECT_EQ(chain.at(sums).variants, std::vector<std::string>{"gemv_rows_qparams"}) << at;
    }
    EXPECT_TRUE(Close(op.at("float").out[0], d.ref(x, s, z), 1e-4, 1e-4)) << at;
    for (const char* sums : {"portable", "dot4"}) {
      if (!op.count(sums)) continue;
      EXPECT_TRUE(SameBits(fvec(op.at(sums).out[0]), fvec(op.at("float").out[0]))) << at << " " << sums;
      EXPECT_TRUE(SameBits(fvec(chain.at(sums).out[0]), fvec(chain.at("float").out[0]))) << at << " " << sums;
    }
  }
  Dq d(8, 64, 32, 163);
  auto x = rows_x(1, 64, 164);
  std::string e = load_error([&] { run_dq_routes(d, x, {{"dq8ca_gemv_rows", "fast"}}); });
  EXPECT_TRUE(has(e, "force_route dq8ca_gemv_rows must be \"dot4\", \"portable\" or \"float\", got \"fast\"")) << e;
  Dq wide(8, 8200, 8, 165);
  e = load_error([&] { run_dq_routes(wide, random_f32({1, 8200}, 166), {{"dq8ca_gemv_rows", "portable"}}); });
  EXPECT_TRUE(has(e, "force_route dq8ca_gemv_rows = \"portable\" needs K <= 8192, got 8200")) << e;
}

// The RMSNorm before an 8da4w linear (with its residual-add epilogue) is computed in the one-row
// GEMV that chooses the activation parameters (ops/norm/input_norm.h): the same bits as the graph
// whose norm output is also a graph output (the norm a kernel of its own), on one row, with the
// normalized float row staged in workgroup memory or read from memory; on 5 rows
// (gemv_rows over the norm's output) and 40 (the large GEMM) the norm runs as
// etwebgpu.rms_norm_deferred.
TEST(OpLinearDq8caQ4gsw, RmsNormFoldsIntoTheOneRowGemvBitForBit) {
  ETW_REQUIRE_GPU();
  Dq d(20, 64, 32, 150);
  const auto w = random_f32({64}, 151, 0.5f, 1.5f);
  for (int64_t rows : {1, 5, 40})
    for (const char* staged : {"shared", "global"}) {  // the float row staged beside the quantized one, or read from memory
    auto x = rows_x(rows, 64, 152);
    auto res = random_f32({rows, 20}, 153);
    const std::map<std::string, std::string> routes{{"q4_gemv_rows_x", staged}};
    auto folded = load_graph([&](OpGraph& g) { build_8da4w(g, d, x, res, Cq{}, false, 1, &w); }, true, routes);
    auto kept = load_graph([&](OpGraph& g) { build_8da4w(g, d, x, res, Cq{}, false, 2, &w); }, true, routes);
    const std::string at = "rows " + std::to_string(rows) + " row " + staged;
    EXPECT_EQ(std::count(folded.variants.begin(), folded.variants.end(), "gemv_rows_qparams_norm"), rows == 1 ? 1 : 0) << at;
    EXPECT_EQ(std::count(folded.ops.begin(), folded.ops.end(), "etwebgpu.rms_norm_deferred") > 0, rows > 1) << at;
    EXPECT_EQ(std::count(kept.variants.begin(), kept.variants.end(), "gemv_rows_qparams_norm"), 0) << at;
    ASSERT_EQ(folded.out.size(), 1u);
    ASSERT_EQ(kept.out.size(), 2u);
    EXPECT_TRUE(SameBits(fvec(folded.out[0]), fvec(kept.out[1]))) << at;
    auto y = ref::rms_norm(x, f64(w), 1e-5);
    HostTensor yf(DType::Float32, y.shape);
    for (int64_t i = 0; i < y.numel(); ++i) yf.as<float>()[i] = static_cast<float>(y.as<double>()[i]);
    std::vector<float> rs;
    std::vector<int32_t> rz;
    ref_qparams(yf, &rs, &rz);
    auto want = d.ref(yf, rs, rz);
    for (int64_t i = 0; i < want.numel(); ++i) want.as<double>()[i] += res.as<float>()[i];
    EXPECT_TRUE(Close(folded.out[0], want, 2e-3, 2e-3)) << at;
  }
}

// A prefill chunk (32 rows and more) of the fused linear takes the large 4-bit GEMM over its rows
// fake-quantized as torchao computes them (dequant_rows: (x_q - zp) * scale); fewer rows, or the
// route pinned to gemv_rows, stay on the per-row kernel. The rows include all-positive,
// all-negative, all-zero and tiny-range ones (scale clamped at eps).
TEST(OpLinearDq8caQ4gsw, ManyRowsTakeTheLargeGemmOverFakeQuantizedRows) {
  ETW_REQUIRE_GPU();
  Dq d(20, 64, 32, 140);
  for (int64_t rows : {31, 40, 130}) {
    auto x = rows_x(rows, 64, 141);
    auto res = random_f32({rows, 20}, 142);
    auto build = [&](OpGraph& g) { build_8da4w(g, d, x, res, Cq{}, false); };
    auto fused = load_graph(build, true), pinned = load_graph(build, true, {{"linear_dq8ca_q4gsw", "gemv_rows"}});
    const bool gemm = rows >= 32;
    const std::vector<std::string> want_variants =
        gemm ? std::vector<std::string>{"dequant_rows", "gemm_large"} : std::vector<std::string>{"gemv_rows_qparams"};
    EXPECT_EQ(fused.variants, want_variants) << rows;
    EXPECT_EQ(pinned.variants, std::vector<std::string>{"gemv_rows_qparams"}) << rows;
    std::vector<float> rs;
    std::vector<int32_t> rz;
    ref_qparams(x, &rs, &rz);
    auto want = d.ref(x, rs, rz);
    for (int64_t i = 0; i < want.numel(); ++i) want.as<double>()[i] += res.as<float>()[i];
    EXPECT_TRUE(Close(fused.out[0], want, 1e-4, 1e-4)) << rows;
    EXPECT_TRUE(Close(pinned.out[0], want, 1e-4, 1e-4)) << rows;
  }
}

// An 8da4w Llama MLP as the export writes it: each of gate, up and down quantizes its input with
// choose_qparams_affine on a clone; silu(gate) * up in between. At load gate and up become one
// kernel choosing their parameters and storing silu(gate) * up; down chooses its own: two
// dispatches, bit-identical to the unfused kernels (the product with the elementwise kernels'
// operations). A prefill chunk: the pairs through the large GEMM, then swiglu_pairs.
TEST(OpLinearDq8caQ4gsw, GateAndUpPairIntoOneSwigluKernelChoosingItsParameters) {
  ETW_REQUIRE_GPU();
  for (auto [sigmoid_form, rows] : {std::pair<bool, int64_t>{false, 2}, {true, 2}, {false, 40}}) {
    const int64_t K = 64, F = 96;
    Dq gate(F, K, 32, 130), up(F, K, 32, 131), down(24, F, 32, 132);
    auto x = random_f32({rows, K}, 133, -2.f, 2.f);
    auto quantized = [](OpGraph& g, const Dq& d, Id in, std::vector<int64_t> dims, Id out) {
      Id a = g.tensor(DType::Float32, dims), b = g.tensor(DType::Float32, dims);
      g.gb.op("aten.clone.default", {in, g.gb.null(), a});
      Id s, z;
      add_cq(g, a, dims, Cq{}, &s, &z, false);
      g.gb.op("aten.clone.default", {in, g.gb.null(), b});
      d.add(g, b, s, z, out);
    };
    auto build = [&](OpGraph& g) {
      Id xi = g.input(x);
      Id gv = g.tensor(DType::Float32, {rows, F}), uv = g.tensor(DType::Float32, {rows, F});
      quantized(g, gate, xi, x.shape, gv);
      quantized(g, up, xi, x.shape, uv);
      Id s = g.tensor(DType::Float32, {rows, F}), h = g.tensor(DType::Float32, {rows, F});
      if (sigmoid_form) {
        Id sg = g.tensor(DType::Float32, {rows, F});
        g.gb.op("aten.sigmoid.default", {gv, sg});
        g.gb.op("aten.mul.Tensor", {gv, sg, s});
      } else {
        g.gb.op("aten.silu.default", {gv, s});
      }
      g.gb.op("aten.mul.Tensor", {s, uv, h});
      quantized(g, down, h, {rows, F}, g.output(DType::Float32, {rows, down.N}));
    };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    if (rows < 32) {
      EXPECT_EQ(fused.ops, (std::vector<std::string>{"etwebgpu.linear_dq8ca_q4gsw_qparams_swiglu", "etwebgpu.linear_dq8ca_q4gsw_qparams"}))
          << sigmoid_form;
      EXPECT_TRUE(SameBits(fvec(fused.out[0]), fvec(plain.out[0]))) << sigmoid_form;
    } else {
      EXPECT_EQ(fused.variants, (std::vector<std::string>{"dequant_rows", "gemm_large", "swiglu_pairs", "dequant_rows", "gemm_large"}));
    }
    // Against the float reference of each step (float32 between the steps, as the kernels store).
    auto step = [](const Dq& d, const HostTensor& in) {
      std::vector<float> rs;
      std::vector<int32_t> rz;
      ref_qparams(in, &rs, &rz);
      auto o = d.ref(in, rs, rz);
      std::vector<float> f(o.numel());
      for (int64_t i = 0; i < o.numel(); ++i) f[i] = static_cast<float>(o.as<double>()[i]);
      return HostTensor::from<float>(DType::Float32, o.shape, f);
    };
    auto g32 = step(gate, x), u32 = step(up, x);
    std::vector<float> h(g32.numel());
    for (int64_t i = 0; i < g32.numel(); ++i) {
      const float a = g32.as<float>()[i];
      h[i] = a / (1.0f + std::exp(-a)) * u32.as<float>()[i];
    }
    auto h32 = HostTensor::from<float>(DType::Float32, g32.shape, h);
    std::vector<float> rs;
    std::vector<int32_t> rz;
    ref_qparams(h32, &rs, &rz);
    EXPECT_TRUE(Close(fused.out[0], down.ref(h32, rs, rz), 1e-2, 1e-2)) << sigmoid_form << " rows " << rows;
  }
}

// The 8da4w pair called directly with interleaved weights, sums and scales: h on two rows (the
// per-row kernel) against the fake-quant reference of gate and up.
TEST(OpLinearDq8caQ4gsw, QparamsSwigluOpDirectCallStoresSiluOfGateTimesUp) {
  ETW_REQUIRE_GPU();
  const int64_t K = 64, F = 16;
  Dq gate(F, K, 32, 150), up(F, K, 32, 151);
  auto x = rows_x(2, K, 152);
  std::vector<int8_t> q(2 * F * K);
  std::vector<int32_t> sums(gate.G * 2 * F);
  std::vector<float> ws(gate.G * 2 * F);
  for (int64_t j = 0; j < F; ++j) {
    for (int64_t k = 0; k < K; ++k) {
      q[(2 * j) * K + k] = gate.q[j * K + k];
      q[(2 * j + 1) * K + k] = up.q[j * K + k];
    }
    for (int64_t gi = 0; gi < gate.G; ++gi) {
      sums[gi * 2 * F + 2 * j] = gate.sums[gi * gate.npad + j];
      sums[gi * 2 * F + 2 * j + 1] = up.sums[gi * up.npad + j];
      ws[gi * 2 * F + 2 * j] = gate.ws[gi * F + j];
      ws[gi * 2 * F + 2 * j + 1] = up.ws[gi * F + j];
    }
  }
  OpGraph g;
  Id xi = g.input(x);
  Id h = g.output(DType::Float32, {2, F}), pairs = g.tensor(DType::Float32, {2, 2 * F});
  g.gb.op("etwebgpu.linear_dq8ca_q4gsw_qparams_swiglu",
          {xi, g.gb.str("ASYMMETRIC"), g.gb.int_list({1, K}), g.gb.null(), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), g.gb.null(),
           g.gb.null(), g.gb.boolean(false), g.gb.constant(DType::UInt8, {2 * F, K / 2}, ref::pack_q4_linear(q, 2 * F, K, 8)),
           g.gb.constant_i32({gate.G, 2 * F}, sums), g.gb.constant_f32({gate.G, 2 * F}, ws), g.gb.int_(32), g.gb.null(), g.gb.str("silu"),
           g.gb.value_list({h, pairs})});
  auto out = g.run();
  std::vector<float> rs;
  std::vector<int32_t> rz;
  ref_qparams(x, &rs, &rz);
  auto gr = gate.ref(x, rs, rz), ur = up.ref(x, rs, rz);
  HostTensor want(DType::Float64, {2, F});
  for (int64_t i = 0; i < 2 * F; ++i) {
    const double a = gr.as<double>()[i];
    want.as<double>()[i] = a / (1.0 + std::exp(-a)) * ur.as<double>()[i];
  }
  EXPECT_TRUE(Close(out[0], want, 1e-4, 1e-4));
}

// Shapes gemv_rows does not take (groups of 9), and a route pinned to the unfused kernels, keep
// the three kernels.
TEST(OpLinearDq8caQ4gsw, OddGroupsAndPinnedRoutesKeepChooseQparams) {
  ETW_REQUIRE_GPU();
  auto res = random_f32({5, 20}, 14);
  Dq odd(20, 45, 9, 12);
  auto xo = rows_x(5, 45, 13);
  auto r = load_graph([&](OpGraph& g) { build_8da4w(g, odd, xo, res, Cq{}, false); }, true);
  EXPECT_EQ(std::count(r.ops.begin(), r.ops.end(), "torchao.choose_qparams_affine.default"), 1);
  Dq d(20, 64, 32, 12);
  auto x = rows_x(5, 64, 13);
  r = load_graph([&](OpGraph& g) { build_8da4w(g, d, x, res, Cq{}, false); }, true, {{"linear_dq8ca_q4gsw", "portable"}});
  EXPECT_EQ(std::count(r.ops.begin(), r.ops.end(), "torchao.choose_qparams_affine.default"), 1);
  EXPECT_EQ(std::count(r.variants.begin(), r.variants.end(), "portable"), 1);
}

// q, k and v as the 8da4w export writes them: three choose_qparams + linear pairs, each call on
// its own clone of one activation. At load they become one
// etwebgpu.linear_dq8ca_q4gsw_qparams_multi over stacked weights, bit-identical to the unfused run.
TEST(OpLinearDq8caQ4gsw, ProjectionsOfOneInputBecomeOneMultiOutputKernel) {
  ETW_REQUIRE_GPU();
  // Three rows: the per-row kernel, bit-identical; 40 (a prefill chunk): dequant_rows and the large
  // GEMM, against the fake-quant reference.
  for (auto [outs, rows] : {std::pair<size_t, int64_t>{3, 3}, {2, 3}, {3, 40}}) {
    std::vector<Dq> ds;
    for (size_t i = 0; i < outs; ++i) ds.emplace_back(i == 0 ? 40 : 12 + 4 * i, 64, 32, 30 + i);
    auto x = rows_x(rows, 64, 40);
    auto build = [&](OpGraph& g) {
      Id xi = g.input(x);
      std::vector<Id> ys;
      for (const Dq& d : ds) {
        Id a = g.tensor(DType::Float32, x.shape), b = g.tensor(DType::Float32, x.shape);
        g.gb.op("aten.clone.default", {xi, g.gb.null(), a});
        Id s, z;
        add_cq(g, a, x.shape, Cq{}, &s, &z, false);
        g.gb.op("aten.clone.default", {xi, g.gb.null(), b});
        ys.push_back(g.tensor(DType::Float32, {rows, d.N}));
        d.add(g, b, s, z, ys.back());
      }
      for (size_t i = 0; i < ds.size(); ++i)
        g.gb.op("aten.permute_copy.default", {ys[i], g.gb.int_list({1, 0}), g.output(DType::Float32, {ds[i].N, rows})});
    };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    const std::string at = std::to_string(outs) + " outputs, " + std::to_string(rows) + " rows";
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "torchao.choose_qparams_affine.default"), 0) << at;
    ASSERT_EQ(fused.out.size(), ds.size());
    if (rows < 32) {
      EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "etwebgpu.linear_dq8ca_q4gsw_qparams_multi"), 1) << at;
      EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), "gemv_rows_qparams_multi"), 1) << at;
      for (size_t i = 0; i < ds.size(); ++i) EXPECT_TRUE(SameBits(fvec(fused.out[i]), fvec(plain.out[i]))) << at << " output " << i;
      continue;
    }
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), "dequant_rows"), 1) << at;
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), "gemm_large"), 1) << at;
    std::vector<float> rs;
    std::vector<int32_t> rz;
    ref_qparams(x, &rs, &rz);
    for (size_t i = 0; i < ds.size(); ++i) {
      auto want = ds[i].ref(x, rs, rz);
      HostTensor t(DType::Float64, {ds[i].N, rows});  // permuted
      for (int64_t m = 0; m < rows; ++m)
        for (int64_t n = 0; n < ds[i].N; ++n) t.as<double>()[n * rows + m] = want.as<double>()[m * ds[i].N + n];
      EXPECT_TRUE(Close(fused.out[i], t, 1e-4, 1e-4)) << at << " output " << i;
    }
  }
}

// An 8da4w attention's q, k and v as the recipe's export writes them (each projection through
// choose_qparams_affine on its own clone of the input), q and k split into heads by views and
// rotated by et_vk.apply_rotary_emb: at load one
// etwebgpu.linear_dq8ca_q4gsw_qparams_multi_rope storing q and k rotated. Three rows: the per-row
// kernel rotating as it stores; 40: dequant_rows, the large GEMM, then rope_rows.
TEST(OpLinearDq8caQ4gsw, RotaryEmbeddingFoldsIntoTheQkvKernelChoosingItsParameters) {
  ETW_REQUIRE_GPU();
  constexpr int64_t K = 64, D = 8, Hq = 4, Hk = 2;
  for (int64_t rows : {3, 40}) {
    std::vector<Dq> ds;
    ds.emplace_back(Hq * D, K, 32, 140);
    ds.emplace_back(Hk * D, K, 32, 141);
    ds.emplace_back(Hk * D, K, 32, 142);
    auto x = rows_x(rows, K, 143);
    auto cos = random_f32({rows, D / 2}, 144), sin = random_f32({rows, D / 2}, 145);
    auto build = [&](OpGraph& g) {
      Id xi = g.input(x), fc = g.input(cos), fs = g.input(sin);
      std::vector<Id> ys;
      for (const Dq& d : ds) {
        Id a = g.tensor(DType::Float32, x.shape), b = g.tensor(DType::Float32, x.shape);
        g.gb.op("aten.clone.default", {xi, g.gb.null(), a});
        Id sc, zp;
        add_cq(g, a, x.shape, Cq{}, &sc, &zp, false);
        g.gb.op("aten.clone.default", {xi, g.gb.null(), b});
        ys.push_back(g.tensor(DType::Float32, {rows, d.N}));
        d.add(g, b, sc, zp, ys.back());
      }
      Id q1 = g.tensor(DType::Float32, {rows, Hq, D}), k1 = g.tensor(DType::Float32, {rows, Hk, D});
      g.gb.op("aten.view_copy.default", {ys[0], g.gb.int_list({rows, Hq, D}), q1});
      g.gb.op("aten.view_copy.default", {ys[1], g.gb.int_list({rows, Hk, D}), k1});
      Id qr = g.output(DType::Float32, {rows, Hq, D}), kr = g.output(DType::Float32, {rows, Hk, D});
      g.gb.op("et_vk.apply_rotary_emb.default", {q1, k1, fc, fs, g.gb.value_list({qr, kr})});
      g.gb.op("aten.permute_copy.default", {ys[2], g.gb.int_list({1, 0}), g.output(DType::Float32, {ds[2].N, rows})});
    };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    const std::string at = std::to_string(rows) + " rows";
    const bool in_gemv = rows < 32;
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "et_vk.apply_rotary_emb.default"), 0) << at;
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "torchao.choose_qparams_affine.default"), 0) << at;
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), in_gemv ? "gemv_rows_qparams_multi" : "gemm_large"), 1) << at;
    EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), "rope_rows"), in_gemv ? 0 : 1) << at;
    // The kernel and v's transpose; dequant_rows, the GEMM, rope_rows and the transpose.
    EXPECT_EQ(fused.ops.size(), in_gemv ? 2u : 4u) << at;
    std::vector<float> rs;
    std::vector<int32_t> rz;
    ref_qparams(x, &rs, &rz);
    auto heads = [&](HostTensor t, int64_t h) {
      t.shape = {rows, h, D};
      return ref::rope_interleaved(t, cos, sin);
    };
    ASSERT_EQ(fused.out.size(), 3u);
    EXPECT_TRUE(Close(fused.out[0], heads(ds[0].ref(x, rs, rz), Hq), 1e-4, 1e-4)) << at;
    EXPECT_TRUE(Close(fused.out[1], heads(ds[1].ref(x, rs, rz), Hk), 1e-4, 1e-4)) << at;
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(Close(fused.out[i], plain.out[i], 1e-5, 1e-5)) << at << " output " << i;
  }
}

TEST(OpLinearDq8caQ4gsw, ScalesSomeoneElseReadsKeepTheUnfusedKernels) {
  ETW_REQUIRE_GPU();
  Dq d(8, 32, 16, 15);
  auto x = rows_x(3, 32, 16);
  auto res = random_f32({3, 8}, 17);
  auto fused = load_graph([&](OpGraph& g) { build_8da4w(g, d, x, res, Cq{}, true); }, true);
  EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "torchao.choose_qparams_affine.default"), 1) << "scales are a graph output";
  EXPECT_EQ(std::count(fused.variants.begin(), fused.variants.end(), "gemv_rows"), 1);
}

// The rewrite's op called directly: its own argument checks.
TEST(OpLinearDq8caQ4gsw, QparamsOpDirectCallMatchesTheReferenceAndRefusesOddGroups) {
  ETW_REQUIRE_GPU();
  auto call = [](const Dq& d, const HostTensor& x, const Cq& c, const std::string& route = "") {
    OpGraph g;
    Id xi = g.input(x);
    auto packed = ref::pack_q4_linear(d.q, d.N, d.K, 8);
    auto od = x.shape;
    od.back() = d.N;
    std::vector<int64_t> block(x.shape.size(), 1);
    block.back() = d.K;
    g.gb.op("etwebgpu.linear_dq8ca_q4gsw_qparams",
            {xi, g.gb.str(c.mapping), g.gb.int_list(block), g.gb.null(), g.gb.int_(c.qmin), g.gb.int_(c.qmax), g.gb.null(),
             g.gb.null(), g.gb.null(), g.gb.boolean(false), g.gb.constant(DType::UInt8, {d.N, d.kpad / 2}, packed),
             g.gb.constant_i32({d.G, d.npad}, d.sums), g.gb.constant_f32({d.G, d.N}, d.ws), g.gb.int_(d.gs), g.gb.null(),
             g.output(DType::Float32, od)});
    LoadOptions o;
    if (!route.empty()) o.force_route["linear_dq8ca_q4gsw"] = route;
    return g.run(o)[0];
  };
  Dq d(11, 64, 32, 18);
  auto x = rows_x(4, 64, 19);
  std::vector<float> s;
  std::vector<int32_t> z;
  ref_qparams(x, &s, &z);
  EXPECT_TRUE(Close(call(d, x, Cq{}), d.ref(x, s, z), 1e-4, 1e-4));
  Dq wide(2, 12296, 8, 20);  // past the 12288 activations the old kernel's workgroup memory held
  auto xw = rows_x(1, 12296, 21);
  ref_qparams(xw, &s, &z);
  EXPECT_TRUE(Close(call(wide, xw, Cq{}), wide.ref(xw, s, z), 1e-4, 1e-4));
  Dq odd(3, 45, 9, 22);
  std::string e = load_error([&] { call(odd, random_f32({1, 45}, 23), Cq{}); });
  EXPECT_TRUE(has(e, "K = 45 and group_size = 9: the kernel that chooses its own activation parameters needs both multiples of 8")) << e;
  Cq bad;
  bad.qmin = 0;
  bad.qmax = 255;
  e = load_error([&] { call(d, x, bad); });
  EXPECT_TRUE(has(e, "etwebgpu.linear_dq8ca_q4gsw_qparams") && has(e, "does not fit the zero_point dtype")) << e;
}

// The multi-output op called directly: one [24, 64] 8da4w linear read as outputs of 16 and 8;
// widths that do not add up to the weight's rows are a Format error naming them.
TEST(OpLinearDq8caQ4gsw, QparamsMultiOpDirectCallSplitsTheStackedOutputs) {
  ETW_REQUIRE_GPU();
  Dq d(24, 64, 32, 70);
  auto x = rows_x(3, 64, 71);
  auto run = [&](std::vector<int64_t> widths) {
    OpGraph g;
    Id xi = g.input(x);
    auto packed = ref::pack_q4_linear(d.q, d.N, d.K, 8);
    Id o0 = g.output(DType::Float32, {3, widths[0]}), o1 = g.output(DType::Float32, {3, widths[1]});
    g.gb.op("etwebgpu.linear_dq8ca_q4gsw_qparams_multi",
            {xi, g.gb.str("ASYMMETRIC"), g.gb.int_list({1, 64}), g.gb.null(), g.gb.int_(-128), g.gb.int_(127), g.gb.null(),
             g.gb.null(), g.gb.null(), g.gb.boolean(false), g.gb.constant(DType::UInt8, {d.N, d.kpad / 2}, packed),
             g.gb.constant_i32({d.G, d.npad}, d.sums), g.gb.constant_f32({d.G, d.N}, d.ws), g.gb.int_(d.gs), g.gb.null(),
             g.gb.int_list(widths), g.gb.value_list({o0, o1})});
    return g.run();
  };
  auto out = run({16, 8});
  std::vector<float> s;
  std::vector<int32_t> z;
  ref_qparams(x, &s, &z);
  auto ref = d.ref(x, s, z);
  HostTensor r0(DType::Float64, {3, 16}), r1(DType::Float64, {3, 8});
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t n = 0; n < 24; ++n)
      (n < 16 ? r0.as<double>()[m * 16 + n] : r1.as<double>()[m * 8 + n - 16]) = ref.as<double>()[m * 24 + n];
  EXPECT_TRUE(Close(out[0], r0, 1e-4, 1e-4));
  EXPECT_TRUE(Close(out[1], r1, 1e-4, 1e-4));
  std::string e = load_error([&] { run({16, 4}); });
  EXPECT_TRUE(has(e, "etwebgpu.linear_dq8ca_q4gsw_qparams_multi") && has(e, "weights must be [20, 32]")) << e;
}

// The rotary form called directly: one [24, 64] linear read as q (16 = 2 heads of 8) and k (8 = 1
// head), rotated on three rows against the reference; outputs missing the rotated pair and an
// argument count off by one are Format errors.
TEST(OpLinearDq8caQ4gsw, QparamsMultiRopeOpDirectCallRotatesQAndK) {
  ETW_REQUIRE_GPU();
  Dq d(24, 64, 32, 72);
  auto x = rows_x(3, 64, 73);
  auto cos = random_f32({3, 4}, 74), sin = random_f32({3, 4}, 75);
  auto run = [&](bool rotated_outputs, bool extra_arg) {
    OpGraph g;
    Id xi = g.input(x), fc = g.input(cos), fs = g.input(sin);
    auto packed = ref::pack_q4_linear(d.q, d.N, d.K, 8);
    std::vector<Id> outs = {g.output(DType::Float32, {3, 16}), g.output(DType::Float32, {3, 8})};
    if (rotated_outputs) {
      outs.push_back(g.output(DType::Float32, {3, 2, 8}));
      outs.push_back(g.output(DType::Float32, {3, 1, 8}));
    }
    std::vector<Id> args = {xi, g.gb.str("ASYMMETRIC"), g.gb.int_list({1, 64}), g.gb.null(), g.gb.int_(-128), g.gb.int_(127),
                            g.gb.null(), g.gb.null(), g.gb.null(), g.gb.boolean(false),
                            g.gb.constant(DType::UInt8, {d.N, d.kpad / 2}, packed), g.gb.constant_i32({d.G, d.npad}, d.sums),
                            g.gb.constant_f32({d.G, d.N}, d.ws), g.gb.int_(d.gs), g.gb.null(), g.gb.int_list({16, 8}), fc, fs,
                            g.gb.null(), g.gb.null()};
    if (extra_arg) args.push_back(g.gb.null());
    args.push_back(g.gb.value_list(outs));
    g.gb.op("etwebgpu.linear_dq8ca_q4gsw_qparams_multi_rope", args);
    return g.run();
  };
  auto out = run(true, false);
  std::vector<float> s;
  std::vector<int32_t> z;
  ref_qparams(x, &s, &z);
  auto ref = d.ref(x, s, z);
  HostTensor q(DType::Float64, {3, 2, 8}), k(DType::Float64, {3, 1, 8});
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t n = 0; n < 24; ++n)
      (n < 16 ? q.as<double>()[m * 16 + n] : k.as<double>()[m * 8 + n - 16]) = ref.as<double>()[m * 24 + n];
  EXPECT_TRUE(Close(out[2], ref::rope_interleaved(q, cos, sin), 1e-4, 1e-4));
  EXPECT_TRUE(Close(out[3], ref::rope_interleaved(k, cos, sin), 1e-4, 1e-4));
  std::string e = load_error([&] { run(false, false); });
  EXPECT_TRUE(has(e, "expects 2 or 3 widths and as many outputs plus the rotated q and k, got 2 and 2")) << e;
  e = load_error([&] { run(true, true); });
  EXPECT_TRUE(has(e, "expects 21 arguments, got 22")) << e;
}

std::string dq_error(Dq d, int64_t gs_arg, std::vector<int64_t> wdims = {}) {
  OpGraph g;
  auto x = random_f32({2, d.K}, 9);
  Id xi = g.input(x);
  Id si = g.input(HostTensor::from(DType::Float32, {2}, std::vector<float>{0.1f, 0.1f}));
  Id zi = g.input(HostTensor::from(DType::Int8, {2}, std::vector<int8_t>{0, 0}));
  d.gs = gs_arg;
  d.add(g, xi, si, zi, g.output(DType::Float32, {2, d.N}), wdims);
  return load_error([&] { g.run(); });
}

TEST(OpLinearDq8caQ4gsw, BadGroupSizeWeightsSumsAndScalesAreFormatErrors) {
  ETW_REQUIRE_GPU();
  Dq d(8, 32, 16, 11);
  auto e = dq_error(d, 5);
  EXPECT_TRUE(has(e, "et_vk.linear_dq8ca_q4gsw.default") && has(e, "group_size 5 does not divide K = 32")) << e;
  e = dq_error(d, 16, {8, 15});
  EXPECT_TRUE(has(e, "weights must be [8, 16] (K = 32 padded to 8, two per byte), got [8, 15]")) << e;
  Dq bad_sum = d;
  bad_sum.sums[1 * bad_sum.npad + 3] += 1;
  e = dq_error(bad_sum, 16);
  EXPECT_TRUE(has(e, "weight_sums[1, 3] = ") && has(e, "but the weights of that group sum to")) << e;
  Dq bad_scale = d;
  bad_scale.ws[5] = -1.f;
  e = dq_error(bad_scale, 16);
  EXPECT_TRUE(has(e, "weight_scales[0, 5] must be finite and positive, got -1")) << e;
  bad_scale.ws[5] = NAN;
  e = dq_error(bad_scale, 16);
  EXPECT_TRUE(has(e, "weight_scales[0, 5] must be finite and positive, got nan")) << e;
}

}  // namespace
