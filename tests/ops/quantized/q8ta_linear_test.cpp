// et_vk.q8ta_linear / q8ta_linear_gemv (int8 in and out) and et_vk.linear_q8ta_q8csw (float in and
// out) against fp64 references written from ExecuTorch's custom_ops_lib.py
// (tests/reference/quantized/q8_linear_ref.h). Int8 results must be identical, except where the
// exact value sits within 1e-3 of a rounding tie (float32 and fp64 may round it either way).
#include <cmath>
#include <random>

#include "gpu/context.h"
#include "reference/quantized/q8_linear_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::vector<int8_t> random_i8v(int64_t n, uint64_t seed, int lo = -128, int hi = 127) {
  std::mt19937_64 r(seed);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(lo + static_cast<int>(r() % (hi - lo + 1)));
  return v;
}
std::vector<float> random_pos(int64_t n, uint64_t seed, float lo, float hi) {
  auto t = random_f32({n}, seed, lo, hi);
  return std::vector<float>(t.as<float>(), t.as<float>() + n);
}
int64_t pad4(int64_t n) { return (n + 3) / 4 * 4; }

// One q8ta linear: weights [N, K], sums / scales / bias padded to 4 like the Vulkan quantizer.
struct Q8 {
  int64_t N, K;
  std::vector<int8_t> w;
  std::vector<int32_t> sums;
  std::vector<float> ws, bias;
  bool has_bias;
  double iscale = 0.05, oscale = 0.9;
  int64_t izp = 5, ozp = -3;
  std::string act = "none";
  std::string op = "et_vk.q8ta_linear.default";
  Q8(int64_t n, int64_t k, bool b, uint64_t seed) : N(n), K(k), has_bias(b) {
    w = random_i8v(N * K, seed, -127, 127);
    sums.assign(pad4(N), 0);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < K; ++j) sums[i] += w[i * K + j];
    ws = random_pos(pad4(N), seed + 1, 0.002f, 0.02f);
    if (b) bias = random_pos(pad4(N), seed + 2, -2.f, 2.f);
  }
  Id add(OpGraph& g, Id x, Id out) const {
    std::vector<uint8_t> wb(w.begin(), w.end());
    Id wi = g.gb.constant(DType::Int8, {N, K}, wb);
    Id si = g.gb.constant_i32({pad4(N)}, sums);
    Id sc = g.gb.constant_f32({pad4(N)}, ws);
    Id bi = has_bias ? g.gb.constant_f32({pad4(N)}, bias) : g.gb.null();
    g.gb.op(op, {x, g.gb.dbl(iscale), g.gb.int_(izp), wi, si, sc, g.gb.dbl(oscale), g.gb.int_(ozp), bi, g.gb.str(act), out});
    return out;
  }
  std::vector<double> prequant(const HostTensor& x) const {
    std::vector<int8_t> xv(x.as<int8_t>(), x.as<int8_t>() + x.numel());
    return ref::q8ta_linear_prequant(xv, x.numel() / K, K, iscale, izp, w, N, ws, has_bias ? &bias : nullptr, act == "relu", oscale);
  }
};

HostTensor random_i8(std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t(DType::Int8, shape);
  auto v = random_i8v(t.numel(), seed);
  std::copy(v.begin(), v.end(), t.as<int8_t>());
  return t;
}

struct Ran {
  HostTensor out;
  std::vector<std::string> variants;
};
Ran run_q8(const Q8& q, const HostTensor& x, const std::string& route = "") {
  OpGraph g;
  Id xi = g.input(x);
  auto os = x.shape;
  os.back() = q.N;
  q.add(g, xi, g.output(DType::Int8, os));
  LoadOptions o;
  if (!route.empty()) o.force_route["q8ta_linear"] = route;
  Ran r{g.run(o)[0], {}};
  r.variants = g.variants();
  return r;
}

// Int8 outputs equal to the reference's rounding, a tie within 1e-3 allowed either way.
::testing::AssertionResult SameInt8(const HostTensor& got, const std::vector<double>& pre, int64_t ozp) {
  if (got.dtype != DType::Int8 || got.numel() != static_cast<int64_t>(pre.size()))
    return ::testing::AssertionFailure() << "got " << got.numel() << " values, expected " << pre.size();
  int ties = 0;
  for (size_t i = 0; i < pre.size(); ++i) {
    int g = got.as<int8_t>()[i], e = ref::q8_requantize(pre[i], ozp);
    if (g == e) continue;
    double f = pre[i] - std::floor(pre[i]);
    if (std::abs(f - 0.5) < 1e-3 && std::abs(g - e) == 1) {
      ++ties;
      continue;
    }
    return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", expected " << e << " (value " << pre[i] << ")";
  }
  return ::testing::AssertionSuccess() << ties << " ties";
}

bool have_dot4() { return gpu::Context::get()->info().packed_dot4; }

TEST(OpQ8taLinear, OneRowWithBiasAndZeroPointsIsExactOnBothRoutes) {
  ETW_REQUIRE_GPU();
  Q8 q(13, 36, true, 1);  // N 13: sums, scales and bias padded to 16; K 36: whole words
  auto x = random_i8({1, 36}, 2);
  auto pre = q.prequant(x);
  auto p = run_q8(q, x, "portable");
  EXPECT_TRUE(SameInt8(p.out, pre, q.ozp));
  EXPECT_EQ(p.variants, (std::vector<std::string>{"portable_split_k"}));
  if (!have_dot4()) GTEST_SKIP() << "adapter without dot4I8Packed: the dot4 route is not available";
  auto d = run_q8(q, x, "dot4");
  EXPECT_TRUE(SameInt8(d.out, pre, q.ozp));
  EXPECT_EQ(d.variants, (std::vector<std::string>{"dot4_split_k"}));
}

TEST(OpQ8taLinear, SeveralRowsOddKAndNWithReluReadBytesOneByOne) {
  ETW_REQUIRE_GPU();
  Q8 q(10, 19, false, 3);
  q.act = "relu";
  q.izp = -20;
  q.ozp = -128;
  q.oscale = 0.4;
  auto x = random_i8({2, 3, 19}, 4);  // 6 rows, 60 outputs; K 19 is not whole words
  auto pre = q.prequant(x);
  for (const char* route : {"portable", "dot4"}) {
    if (std::string(route) == "dot4" && !have_dot4()) continue;
    auto r = run_q8(q, x, route);
    ASSERT_EQ(r.out.shape, (std::vector<int64_t>{2, 3, 10}));
    EXPECT_TRUE(SameInt8(r.out, pre, q.ozp)) << route;
    int at_zp = 0;
    for (int64_t i = 0; i < r.out.numel(); ++i) at_zp += r.out.as<int8_t>()[i] == -128;
    EXPECT_GT(at_zp, 5) << "relu should clamp some outputs to the zero point";
  }
}

TEST(OpQ8taLinear, GemvOpOnOneTokenAndTailWordOfOddN) {
  ETW_REQUIRE_GPU();
  Q8 q(7, 64, true, 5);
  q.op = "et_vk.q8ta_linear_gemv.default";
  q.izp = 0;
  q.ozp = 17;
  q.oscale = 1.7;
  auto x = random_i8({1, 1, 64}, 6);
  auto pre = q.prequant(x);
  EXPECT_TRUE(SameInt8(run_q8(q, x, "portable").out, pre, q.ozp));
  if (!have_dot4()) GTEST_SKIP() << "adapter without dot4I8Packed: the dot4 route is not available";
  EXPECT_TRUE(SameInt8(run_q8(q, x, "dot4").out, pre, q.ozp));
}

TEST(OpQ8taLinear, ManyRowsSaturateAtBothEnds) {
  ETW_REQUIRE_GPU();
  Q8 q(33, 40, true, 7);
  q.oscale = 0.05;  // small output scale: many outputs clamp to -128 / 127
  auto x = random_i8({17, 40}, 8);
  auto pre = q.prequant(x);
  auto r = run_q8(q, x);
  EXPECT_TRUE(SameInt8(r.out, pre, q.ozp));
  int lo = 0, hi = 0;
  for (int64_t i = 0; i < r.out.numel(); ++i) {
    lo += r.out.as<int8_t>()[i] == -128;
    hi += r.out.as<int8_t>()[i] == 127;
  }
  EXPECT_GT(lo, 10);
  EXPECT_GT(hi, 10);
}

// 260 x 128 outputs = 8320 words: enough to fill the GPU one invocation per word (below 8192 words
// the split-K kernel is taken, as the tests above do).
TEST(OpQ8taLinear, ManyOutputWordsTakeThePerWordKernelOnBothRoutes) {
  ETW_REQUIRE_GPU();
  Q8 q(128, 40, true, 11);
  q.izp = 3;
  q.ozp = -5;
  auto x = random_i8({260, 40}, 12);
  auto pre = q.prequant(x);
  for (const char* route : {"portable", "dot4"}) {
    if (std::string(route) == "dot4" && !have_dot4()) continue;
    auto r = run_q8(q, x, route);
    EXPECT_TRUE(SameInt8(r.out, pre, q.ozp)) << route;
    EXPECT_EQ(r.variants, (std::vector<std::string>{route})) << route;
  }
}

std::string q8_error(const std::function<void(Q8&)>& edit, std::vector<int64_t> wshape = {}) {
  Q8 q(8, 16, true, 9);
  edit(q);
  OpGraph g;
  Id x = g.input(random_i8({2, 16}, 10));
  Id out = g.output(DType::Int8, {2, 8});
  if (wshape.empty()) {
    q.add(g, x, out);
  } else {
    Id wi = g.gb.constant(DType::Int8, wshape, std::vector<uint8_t>(numel(wshape), 1));
    g.gb.op(q.op, {x, g.gb.dbl(q.iscale), g.gb.int_(q.izp), wi, g.gb.constant_i32({8}, std::vector<int32_t>(8, 16)),
                   g.gb.constant_f32({8}, q.ws), g.gb.dbl(q.oscale), g.gb.int_(q.ozp), g.gb.null(), g.gb.str(q.act), out});
  }
  return load_error([&] { g.run(); });
}

TEST(OpQ8taLinear, BadQuantizationArgumentsAreFormatErrorsNamingTheValue) {
  ETW_REQUIRE_GPU();
  auto e = q8_error([](Q8& q) { q.oscale = 0; });
  EXPECT_TRUE(has(e, "et_vk.q8ta_linear.default") && has(e, "output_scale must be finite and positive, got 0")) << e;
  e = q8_error([](Q8& q) { q.iscale = -0.5; });
  EXPECT_TRUE(has(e, "input_scale must be finite and positive, got -0.5")) << e;
  e = q8_error([](Q8& q) { q.iscale = INFINITY; });
  EXPECT_TRUE(has(e, "input_scale must be finite and positive, got inf")) << e;
  e = q8_error([](Q8& q) { q.izp = 128; });
  EXPECT_TRUE(has(e, "input_zero_point 128 is outside [-128, 127]")) << e;
  e = q8_error([](Q8& q) { q.ozp = -129; });
  EXPECT_TRUE(has(e, "output_zero_point -129 is outside [-128, 127]")) << e;
  e = q8_error([](Q8& q) { q.act = "gelu"; });
  EXPECT_TRUE(has(e, "activation must be \"none\" or \"relu\", got \"gelu\"")) << e;
  e = q8_error([](Q8& q) { q.ws[3] = 0; });
  EXPECT_TRUE(has(e, "weight_scales[3] must be finite and positive, got 0")) << e;
  e = q8_error([](Q8& q) { q.sums[5] += 1; });
  EXPECT_TRUE(has(e, "weight_sums[5] = ") && has(e, "but the weights' row sums to")) << e;
  e = q8_error([](Q8&) {}, {8, 15});
  EXPECT_TRUE(has(e, "weights must be [8, 16], got [8, 15]")) << e;
}

TEST(OpQ8taLinear, UnknownForcedRouteIsRejected) {
  ETW_REQUIRE_GPU();
  Q8 q(4, 8, false, 11);
  auto x = random_i8({1, 8}, 12);
  auto e = load_error([&] { run_q8(q, x, "tiled"); });
  EXPECT_TRUE(has(e, "force_route q8ta_linear must be \"dot4\" or \"portable\", got \"tiled\"")) << e;
}

// linear_q8ta_q8csw: ExecuTorch's reference leaves the input unquantized.
HostTensor run_csw(const Q8& q, const HostTensor& x, double iscale = 0.1, int64_t izp = 0) {
  OpGraph g;
  Id xi = g.input(x);
  auto os = x.shape;
  os.back() = q.N;
  Id out = g.output(DType::Float32, os);
  std::vector<uint8_t> wb(q.w.begin(), q.w.end());
  Id bi = q.has_bias ? g.gb.constant_f32({pad4(q.N)}, q.bias) : g.gb.null();
  g.gb.op("et_vk.linear_q8ta_q8csw.default",
          {xi, g.gb.dbl(iscale), g.gb.int_(izp), g.gb.constant(DType::Int8, {q.N, q.K}, wb),
           g.gb.constant_i32({pad4(q.N)}, q.sums), g.gb.constant_f32({pad4(q.N)}, q.ws), bi, out});
  return g.run()[0];
}

TEST(OpLinearQ8taQ8csw, FloatInputTimesChannelScaledInt8WeightsPlusBias) {
  ETW_REQUIRE_GPU();
  Q8 q(11, 23, true, 13);
  auto x = random_f32({3, 23}, 14, -3.f, 3.f);
  EXPECT_TRUE(Close(run_csw(q, x), ref::linear_q8csw(x, q.w, q.N, q.K, q.ws, &q.bias), 1e-5, 1e-5));
  Q8 nb(5, 8, false, 15);
  auto x1 = random_f32({1, 1, 8}, 16);
  EXPECT_TRUE(Close(run_csw(nb, x1, 0.02, -4), ref::linear_q8csw(x1, nb.w, nb.N, nb.K, nb.ws, nullptr), 1e-5, 1e-5));
}

TEST(OpLinearQ8taQ8csw, BadInputZeroPointAndWeightSumsAreFormatErrors) {
  ETW_REQUIRE_GPU();
  Q8 q(4, 8, false, 17);
  auto x = random_f32({1, 8}, 18);
  auto e = load_error([&] { run_csw(q, x, 0.1, 300); });
  EXPECT_TRUE(has(e, "et_vk.linear_q8ta_q8csw.default") && has(e, "input_zero_point 300 is outside [-128, 127]")) << e;
  e = load_error([&] { run_csw(q, x, std::nan(""), 0); });
  EXPECT_TRUE(has(e, "input_scale must be finite and positive, got nan")) << e;
  q.sums[0] -= 2;
  e = load_error([&] { run_csw(q, x); });
  EXPECT_TRUE(has(e, "weight_sums[0] = ")) << e;
}

}  // namespace
