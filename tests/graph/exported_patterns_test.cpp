// Load-time rewrites on patterns as ExecuTorch's Vulkan export writes them (taken from
// torchvision's MobileNetV3-small, where they made 260 dispatches per run): scalars lifted into
// tensors through et_vk.prepack -> _to_dim_order_copy -> clone (graph/constant_folding.h), the
// delegate's packed memory objects (graph/memory_plan.h, split_packed_memory_objects), and
// conv_with_clamp inside squeeze-excite. Each case proves the dispatch count with fusion on, and
// the result against the fp64 reference and the unfused run.
#include <cmath>
#include <functional>

#include "reference/conv/conv_ref.h"
#include "reference/matmul/matmul_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct Loaded {
  std::vector<HostTensor> out;
  std::vector<std::string> ops;  // per dispatch
};

Loaded load(const std::function<void(OpGraph&)>& build, bool fuse) {
  OpGraph g;
  build(g);
  LoadOptions o;
  o.fuse = fuse;
  Loaded r;
  r.out = g.run(o);
  Profile p;
  g.model()->run(g.inputs, &p);
  for (auto& d : p.dispatches) r.ops.push_back(d.op);
  return r;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

// A float32 scalar tensor the way the export lifts a Python number: an int32 constant, prepacked,
// converted, cloned.
Id lifted_scalar(OpGraph& g, int32_t value) {
  auto& gb = g.gb;
  Id k = gb.constant_i32({}, {value});
  Id packed = gb.tensor(DType::Int32, {});
  gb.op("et_vk.prepack.default", {k, packed});
  Id f = gb.tensor(DType::Float32, {});
  gb.op("dim_order_ops._to_dim_order_copy.default",
        {packed, gb.null(), gb.null(), gb.null(), gb.null(), gb.boolean(false), gb.int_list({}), f});
  Id c = gb.tensor(DType::Float32, {});
  gb.op("aten.clone.default", {f, gb.null(), c});
  return c;
}

void conv(OpGraph& g, Id x, Id w, Id b, int64_t pad, Id out) {
  auto& gb = g.gb;
  gb.op("aten.convolution.default", {x, w, b, gb.int_list({1, 1}), gb.int_list({pad, pad}), gb.int_list({1, 1}),
                                     gb.boolean(false), gb.int_list({0, 0}), gb.int_(1), out});
}

double hardswish(double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; }

// conv 3x3 -> hardswish as exported (add of a lifted 3, clamp min 0, clamp max 6, mul, div by a
// lifted 6) -> conv 1x1 (output). Memory objects as the delegate packs them: each object reused
// once its tensor died, so the div's output shares the conv output's object.
struct ExportedHardswish {
  HostTensor x = random_f32({1, 4, 6, 6}, 1, -4, 4), w = random_f32({8, 4, 3, 3}, 2, -0.5f, 0.5f),
             b = random_f32({8}, 3), w2 = random_f32({3, 8, 1, 1}, 4), b2 = random_f32({3}, 5);
  void build(OpGraph& g) const {
    auto& gb = g.gb;
    std::vector<int64_t> d{1, 8, 6, 6};
    Id c = gb.tensor(DType::Float32, d, 0);
    conv(g, g.input(x), g.constant(w), g.constant(b), 1, c);
    Id three = lifted_scalar(g, 3);
    Id a = gb.tensor(DType::Float32, d, 1);
    gb.op("aten.add.Tensor", {c, three, gb.int_(1), a});
    Id lo = gb.tensor(DType::Float32, d, 2);
    gb.op("aten.clamp.default", {a, gb.int_(0), gb.null(), lo});
    Id hi = gb.tensor(DType::Float32, d, 1);
    gb.op("aten.clamp.default", {lo, gb.null(), gb.int_(6), hi});
    Id m = gb.tensor(DType::Float32, d, 2);
    gb.op("aten.mul.Tensor", {c, hi, m});
    Id six = lifted_scalar(g, 6);
    Id h = gb.tensor(DType::Float32, d, 0);  // c's object: c died at the mul
    gb.op("aten.div.Tensor", {m, six, h});
    conv(g, h, g.constant(w2), g.constant(b2), 0, g.output(DType::Float32, {1, 3, 6, 6}));
  }
  HostTensor ref() const {
    ref::ConvArgs a;
    a.ph = a.pw = 1;
    HostTensor c = ref::conv(x, w, &b, a);
    std::vector<double> v = f64(c);
    for (auto& e : v) e = hardswish(e);
    HostTensor hs(DType::Float32, c.shape);
    for (size_t i = 0; i < v.size(); ++i) reinterpret_cast<float*>(hs.data.data())[i] = static_cast<float>(v[i]);
    return ref::conv(hs, w2, &b2, ref::ConvArgs{});
  }
};

TEST(ExportedPatterns, HardswishWithLiftedScalarsFusesIntoTheConvStore) {
  ETW_REQUIRE_GPU();
  ExportedHardswish p;
  auto build = [&](OpGraph& g) { p.build(g); };
  Loaded fused = load(build, true), plain = load(build, false);
  // Unfused: conv, 2 conversions, add, 2 clamps, mul, div, conv (the clones are copy-free views).
  EXPECT_EQ(plain.ops.size(), 9u) << joined(plain.ops);
  ASSERT_EQ(fused.ops.size(), 2u) << joined(fused.ops);
  EXPECT_EQ(fused.ops[0], "fused[convolution+add+clamp+clamp+mul+div]");
  EXPECT_TRUE(Close(fused.out[0], p.ref(), 1e-4, 1e-4));
  EXPECT_TRUE(Close(plain.out[0], p.ref(), 1e-4, 1e-4));
}

// The folded constants hold the converted values: float to int truncates toward zero, int to
// float is exact, and the conversion's consumer reads them.
TEST(ExportedPatterns, ConversionsOfConstantsFoldWithPyTorchValues) {
  ETW_REQUIRE_GPU();
  HostTensor xi = random_i32({2, 3}, 7, -5, 5);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id k = gb.constant_f32({3}, {1.7f, -1.7f, -0.5f});
    Id ki = gb.tensor(DType::Int32, {3});
    gb.op("aten._to_copy.default", {k, gb.null(), gb.null(), gb.null(), gb.null(), gb.boolean(false), gb.null(), ki});
    Id s = gb.tensor(DType::Int32, {2, 3});
    gb.op("aten.add.Tensor", {g.input(xi), ki, gb.int_(1), s});
    Id kf = gb.tensor(DType::Float32, {3});
    gb.op("dim_order_ops._to_dim_order_copy.default",
          {ki, gb.null(), gb.null(), gb.null(), gb.null(), gb.boolean(false), gb.null(), kf});
    Id sf = gb.tensor(DType::Float32, {2, 3});
    gb.op("dim_order_ops._to_dim_order_copy.default",
          {s, gb.null(), gb.null(), gb.null(), gb.null(), gb.boolean(false), gb.null(), sf});
    gb.op("aten.mul.Tensor", {sf, kf, g.output(DType::Float32, {2, 3})});
  };
  Loaded fused = load(build, true), plain = load(build, false);
  EXPECT_EQ(plain.ops.size(), 5u) << joined(plain.ops);
  EXPECT_EQ(fused.ops.size(), 3u) << joined(fused.ops) << ": both constant conversions fold";
  const int32_t* xs = reinterpret_cast<const int32_t*>(xi.data.data());
  const double k[3] = {1, -1, 0};  // trunc(1.7), trunc(-1.7), trunc(-0.5)
  std::vector<double> want(6);
  for (int i = 0; i < 6; ++i) want[i] = (xs[i] + k[i % 3]) * k[i % 3];
  EXPECT_TRUE(Close(fused.out[0], ref_tensor({2, 3}, want), 0, 0));
  EXPECT_TRUE(Close(plain.out[0], ref_tensor({2, 3}, want), 0, 0));
}

// What must stay a run-time conversion: a graph output, and a value an int32 cannot hold (the
// GPU kernel converts it as unfused runs do; constant evaluation leaves it too, since a copy-free
// clone hands it to an output).
TEST(ExportedPatterns, ConversionsThatMustStayAreNotFolded) {
  ETW_REQUIRE_GPU();
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id k = gb.constant_f32({2}, {2.5f, 3e9f});
    Id big = gb.tensor(DType::Int32, {2});
    gb.op("aten._to_copy.default", {k, gb.null(), gb.null(), gb.null(), gb.null(), gb.boolean(false), gb.null(), big});
    gb.op("aten.clone.default", {big, gb.null(), g.output(DType::Int32, {2})});
    gb.op("aten._to_copy.default", {k, gb.null(), gb.null(), gb.null(), gb.null(), gb.boolean(false), gb.null(),
                                    g.output(DType::Int32, {2})});
  };
  Loaded fused = load(build, true), plain = load(build, false);
  EXPECT_EQ(fused.ops, plain.ops);
  EXPECT_EQ(fused.out[0].data, plain.out[0].data);
  EXPECT_EQ(fused.out[1].data, plain.out[1].data);
  EXPECT_EQ(reinterpret_cast<const int32_t*>(fused.out[1].data.data())[0], 2);
}

// A prepacked constant that an operator then writes in place (a KV cache starting from the
// file's data) holds run-time data: its copies are not folded.
TEST(ExportedPatterns, ATensorWrittenInPlaceIsNotFolded) {
  ETW_REQUIRE_GPU();
  HostTensor val = random_f32({1, 2, 1, 2}, 21), ones = random_f32({1, 4, 1, 2}, 22, 1.f, 1.f);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id k = gb.constant_f32({1, 4, 1, 2}, std::vector<float>(8, 0.5f));
    Id cache = gb.tensor(DType::Float32, {1, 4, 1, 2});
    gb.op("et_vk.prepack.default", {k, cache});
    Id start = gb.symint(1);
    gb.op("update_cache.default", {g.input(val), cache, start, gb.tensor(DType::Float32, {1})});
    Id copy = gb.tensor(DType::Float32, {1, 4, 1, 2});
    gb.op("aten.clone.default", {cache, gb.null(), copy});
    gb.op("aten.mul.Tensor", {copy, g.input(ones), g.output(DType::Float32, {1, 4, 1, 2})});
  };
  Loaded fused = load(build, true);
  const float* o = reinterpret_cast<const float*>(fused.out[0].data.data());
  const float* v = reinterpret_cast<const float*>(val.data.data());
  std::vector<float> want{0.5f, 0.5f, v[0], v[1], v[2], v[3], 0.5f, 0.5f};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(o[i], want[i]) << i;
}

// mean -> conv_with_clamp (ReLU as clamp(0, inf)) -> conv -> hardsigmoid as exported -> mul:
// the squeeze-excite kernels take the ReLU as the first conv's epilogue.
TEST(ExportedPatterns, SqueezeExciteWithConvWithClampFuses) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 16, 5, 5}, 11), w1 = random_f32({4, 16, 1, 1}, 12), b1 = random_f32({4}, 13),
             w2 = random_f32({16, 4, 1, 1}, 14), b2 = random_f32({16}, 15);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id xi = g.input(x);
    Id m = gb.tensor(DType::Float32, {1, 16, 1, 1});
    gb.op("aten.mean.dim", {xi, gb.int_list({-1, -2}), gb.boolean(true), gb.null(), m});
    Id s = gb.tensor(DType::Float32, {1, 4, 1, 1});
    gb.op("et_vk.conv_with_clamp.default", {m, g.constant(w1), g.constant(b1), gb.int_list({1, 1}), gb.int_list({0, 0}),
                                            gb.int_list({1, 1}), gb.boolean(false), gb.int_list({0, 0}), gb.int_(1),
                                            gb.dbl(0.0), gb.null(), s});
    Id e = gb.tensor(DType::Float32, {1, 16, 1, 1});
    conv(g, s, g.constant(w2), g.constant(b2), 0, e);
    Id a = gb.tensor(DType::Float32, {1, 16, 1, 1});
    gb.op("aten.add.Tensor", {e, lifted_scalar(g, 3), gb.int_(1), a});
    Id lo = gb.tensor(DType::Float32, {1, 16, 1, 1});
    gb.op("aten.clamp.default", {a, gb.int_(0), gb.null(), lo});
    Id hi = gb.tensor(DType::Float32, {1, 16, 1, 1});
    gb.op("aten.clamp.default", {lo, gb.null(), gb.int_(6), hi});
    Id gate = gb.tensor(DType::Float32, {1, 16, 1, 1});
    gb.op("aten.div.Tensor", {hi, lifted_scalar(g, 6), gate});
    gb.op("aten.mul.Tensor", {gate, xi, g.output(DType::Float32, {1, 16, 5, 5})});
  };
  Loaded fused = load(build, true), plain = load(build, false);
  ASSERT_EQ(fused.ops.size(), 3u) << joined(fused.ops) << ": pooling, gate, gate * x";
  EXPECT_EQ(fused.ops[0], "fused[mean+convolution+clamp+convolution]");
  EXPECT_EQ(fused.ops[1], "fused[mean+convolution+clamp+convolution]");
  // fp64 reference.
  std::vector<double> xv = f64(x), w1v = f64(w1), b1v = f64(b1), w2v = f64(w2), b2v = f64(b2), want(xv.size());
  double mean[16], sq[4];
  for (int c = 0; c < 16; ++c) {
    mean[c] = 0;
    for (int i = 0; i < 25; ++i) mean[c] += xv[c * 25 + i] / 25;
  }
  for (int s = 0; s < 4; ++s) {
    sq[s] = b1v[s];
    for (int c = 0; c < 16; ++c) sq[s] += w1v[s * 16 + c] * mean[c];
    sq[s] = std::max(sq[s], 0.0);
  }
  for (int c = 0; c < 16; ++c) {
    double e = b2v[c];
    for (int s = 0; s < 4; ++s) e += w2v[c * 4 + s] * sq[s];
    double gate = std::min(std::max(e + 3, 0.0), 6.0) / 6;
    for (int i = 0; i < 25; ++i) want[c * 25 + i] = gate * xv[c * 25 + i];
  }
  EXPECT_TRUE(Close(fused.out[0], ref_tensor({1, 16, 5, 5}, want), 1e-5, 1e-5));
  EXPECT_TRUE(Close(plain.out[0], ref_tensor({1, 16, 5, 5}, want), 1e-5, 1e-5));
}

// GPT-2's MLP as transformers exports it: addmm by a constant [K, N] weight (its Conv1D), a view
// to [1, T, N], then gelu_new written out, whose four numbers are float32 scalar tensors written at
// load by et_vk.prepack. The prepacked scalars fold to literals, so the chain has no operand but
// the GEMM's output and joins it: one dispatch (four scalar bindings would exceed what a GEMM's
// epilogue binds, and the chain ran as a dispatch of its own).
TEST(ExportedPatterns, Gpt2GeluWithPrepackedScalarsJoinsTheGemm) {
  ETW_REQUIRE_GPU();
  const int64_t T = 8, K = 16, N = 32;
  HostTensor x = random_f32({T, K}, 31), w = random_f32({K, N}, 32), b = random_f32({N}, 33);
  const float c_half = 0.5f, c_cube = 0.044715f, c_sqrt = static_cast<float>(std::sqrt(2 / M_PI)), c_one = 1.f;
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    auto packed = [&](float v) {
      Id out = gb.tensor(DType::Float32, {});
      gb.op("et_vk.prepack.default", {gb.constant_f32({}, {v}), out});
      return out;
    };
    Id bias = gb.tensor(DType::Float32, {N});
    gb.op("et_vk.prepack.default", {g.constant(b), bias});
    std::vector<int64_t> d{1, T, N};
    Id mm = gb.tensor(DType::Float32, {T, N}), v = gb.tensor(DType::Float32, d);
    gb.op("aten.addmm.default", {bias, g.input(x), g.constant(w), gb.int_(1), gb.int_(1), mm});
    gb.op("aten.view_copy.default", {mm, gb.int_list(d), v});
    Id half = gb.tensor(DType::Float32, d), cube = gb.tensor(DType::Float32, d), k3 = gb.tensor(DType::Float32, d),
       inner = gb.tensor(DType::Float32, d), arg = gb.tensor(DType::Float32, d), th = gb.tensor(DType::Float32, d),
       onep = gb.tensor(DType::Float32, d);
    gb.op("aten.mul.Tensor", {v, packed(c_half), half});
    gb.op("aten.pow.Tensor_Scalar", {v, gb.dbl(3), cube});
    gb.op("aten.mul.Tensor", {cube, packed(c_cube), k3});
    gb.op("aten.add.Tensor", {v, k3, gb.int_(1), inner});
    gb.op("aten.mul.Tensor", {inner, packed(c_sqrt), arg});
    gb.op("aten.tanh.default", {arg, th});
    gb.op("aten.add.Tensor", {th, packed(c_one), gb.int_(1), onep});
    gb.op("aten.mul.Tensor", {half, onep, g.output(DType::Float32, d)});
  };
  Loaded fused = load(build, true), plain = load(build, false);
  ASSERT_EQ(fused.ops.size(), 1u) << joined(fused.ops);
  EXPECT_EQ(fused.ops[0], "fused[linear+mul+pow+mul+add+mul+tanh+add+mul]");
  std::vector<double> bv = f64(b), want(T * N);
  HostTensor ref = ref::matmul(x, w);
  for (int64_t i = 0; i < T * N; ++i) {
    double u = ref.as<double>()[i] + bv[i % N];
    want[i] = 0.5 * u * (1 + std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u)));
  }
  EXPECT_TRUE(Close(fused.out[0], ref_tensor({1, T, N}, want), 1e-4, 1e-4));
  EXPECT_TRUE(Close(plain.out[0], ref_tensor({1, T, N}, want), 1e-4, 1e-4));
}

}  // namespace
