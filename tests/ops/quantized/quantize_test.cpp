// quantized_decomposed quantize / dequantize (per tensor, per channel, .tensor) and et_vk.q8ta_add /
// q8ta_relu against PyTorch's float32 reference (tests/reference/quantized/quantize_ref.h): int8
// results must be identical, float results identical too (the same float32 operations).
#include <cmath>
#include <limits>
#include <random>

#include "reference/quantized/quantize_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor random_i8(std::vector<int64_t> shape, uint64_t seed, int lo = -128, int hi = 127) {
  HostTensor t(DType::Int8, std::move(shape));
  std::mt19937_64 r(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<int8_t>()[i] = static_cast<int8_t>(lo + static_cast<int>(r() % (hi - lo + 1)));
  return t;
}

struct PerTensor {
  double scale;
  int64_t zp, qmin = -128, qmax = 127;
  DType qtype = DType::Int8;
};

HostTensor quantize(const HostTensor& x, const PerTensor& p, std::vector<int64_t> max_dims = {}) {
  OpGraph g;
  Id xi = g.input(x, max_dims, !max_dims.empty());
  Id o = g.output(p.qtype, max_dims.empty() ? x.shape : max_dims);
  g.gb.op("quantized_decomposed.quantize_per_tensor.default",
          {xi, g.gb.dbl(p.scale), g.gb.int_(p.zp), g.gb.int_(p.qmin), g.gb.int_(p.qmax), g.gb.null(), o});
  return g.run()[0];
}

HostTensor dequantize(const HostTensor& q, const PerTensor& p) {
  OpGraph g;
  Id xi = g.input(q);
  Id o = g.output(DType::Float32, q.shape);
  g.gb.op("quantized_decomposed.dequantize_per_tensor.default",
          {xi, g.gb.dbl(p.scale), g.gb.int_(p.zp), g.gb.int_(p.qmin), g.gb.int_(p.qmax), g.gb.null(), g.gb.null(), o});
  return g.run()[0];
}

// The load error of a quantize_per_tensor with these parameters.
std::string quantize_error(const PerTensor& p) {
  OpGraph g;
  Id xi = g.input(random_f32({8}, 1));
  Id o = g.output(p.qtype, {8});
  g.gb.op("quantized_decomposed.quantize_per_tensor.default",
          {xi, g.gb.dbl(p.scale), g.gb.int_(p.zp), g.gb.int_(p.qmin), g.gb.int_(p.qmax), g.gb.null(), o});
  return load_error([&] { g.run(); });
}

TEST(OpQuantize, PerTensorRoundsHalfToEvenLikePyTorch) {
  ETW_REQUIRE_GPU();
  // With scale 0.5, x = k * 0.25 lands exactly on halves: 0.25 -> 0.5 -> 0, 0.75 -> 1.5 -> 2, ...
  std::vector<float> v;
  for (int k = -21; k <= 21; ++k) v.push_back(0.25f * k);
  auto x = HostTensor::from(DType::Float32, {static_cast<int64_t>(v.size())}, v);
  PerTensor p{0.5, 3};
  EXPECT_TRUE(Close(quantize(x, p), ref::quantize_affine(x, {p.scale}, {p.zp}, 0, -128, 127, DType::Int8), 0, 0));
}

TEST(OpQuantize, PerTensorClampsToQuantRangeAndOddSizesWriteTheTailWord) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 7, 5}, 2, -4.f, 4.f);  // 105 elements: the last word holds one
  PerTensor p{0.01, -7, -100, 90};
  auto got = quantize(x, p);
  EXPECT_TRUE(Close(got, ref::quantize_affine(x, {p.scale}, {p.zp}, 0, p.qmin, p.qmax, DType::Int8), 0, 0));
  int lo = 0, hi = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    lo += got.as<int8_t>()[i] == -100;
    hi += got.as<int8_t>()[i] == 90;
  }
  EXPECT_GT(lo, 10);  // most values are outside [-0.93, 0.97]: clamped at both ends
  EXPECT_GT(hi, 10);
}

TEST(OpQuantize, PerTensorToUint8WithZeroPoint) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 33}, 3, -2.f, 2.f);
  PerTensor p{0.017, 128, 0, 255, DType::UInt8};
  EXPECT_TRUE(Close(quantize(x, p), ref::quantize_affine(x, {p.scale}, {p.zp}, 0, 0, 255, DType::UInt8), 0, 0));
}

TEST(OpQuantize, DynamicShapeRerunsAtASmallerSize) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  auto x = random_f32({2, 9}, 4);
  Id xi = g.input(x, {4, 9}, true);
  Id o = g.output(DType::Int8, {4, 9});
  g.gb.op("quantized_decomposed.quantize_per_tensor.default",
          {xi, g.gb.dbl(0.02), g.gb.int_(1), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), o});
  auto big = random_f32({4, 9}, 5);
  g.inputs = {big};
  auto a = g.run()[0];
  EXPECT_TRUE(Close(a, ref::quantize_affine(big, {0.02}, {1}, 0, -128, 127, DType::Int8), 0, 0));
  auto b = g.rerun({x})[0];
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 9}));
  EXPECT_TRUE(Close(b, ref::quantize_affine(x, {0.02}, {1}, 0, -128, 127, DType::Int8), 0, 0));
}

TEST(OpDequantize, PerTensorInt8Uint8AndInt32) {
  ETW_REQUIRE_GPU();
  auto q = random_i8({5, 13}, 6);
  EXPECT_TRUE(Close(dequantize(q, {0.031, -5}), ref::dequantize_affine(q, {0.031}, {-5}, 0), 0, 0));
  HostTensor u(DType::UInt8, {17});
  for (int i = 0; i < 17; ++i) u.as<uint8_t>()[i] = static_cast<uint8_t>(i * 15);
  EXPECT_TRUE(Close(dequantize(u, {0.1, 128, 0, 255, DType::UInt8}), ref::dequantize_affine(u, {0.1}, {128}, 0), 0, 0));
  auto i32 = random_i32({9}, 7, -1000, 1000);
  EXPECT_TRUE(Close(dequantize(i32, {0.001, 3, -1000, 1000, DType::Int32}), ref::dequantize_affine(i32, {0.001}, {3}, 0), 0, 0));
}

// The ".tensor" spellings take scale and zero point as one-element tensors read at run time.
TEST(OpQuantize, TensorVariantsReadScaleAndZeroPointFromTensors) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({6, 10}, 8, -3.f, 3.f);
  OpGraph g;
  Id xi = g.input(x);
  Id s = g.input(HostTensor::from(DType::Float32, {1}, std::vector<float>{0.025f}));
  Id z = g.input(HostTensor::from(DType::Int32, {1}, std::vector<int32_t>{-3}));
  Id q = g.tensor(DType::Int8, {6, 10});
  Id o = g.output(DType::Float32, {6, 10});
  g.gb.op("quantized_decomposed.quantize_per_tensor.tensor", {xi, s, z, g.gb.int_(-128), g.gb.int_(127), g.gb.null(), q});
  g.gb.op("quantized_decomposed.dequantize_per_tensor.tensor",
          {q, s, z, g.gb.int_(-128), g.gb.int_(127), g.gb.null(), g.gb.null(), o});
  auto got = g.run()[0];
  // Per channel with one channel is the tensor form with the scale read as float32.
  auto qr = ref::quantize_affine(x, {0.025f}, {-3}, 0, -128, 127, DType::Int8);
  EXPECT_TRUE(Close(got, ref::dequantize_affine(qr, {0.025f}, {-3}, 0), 0, 0));
}

TEST(OpQuantize, PerChannelOnAMiddleAxisRoundTrips) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 5, 3, 4}, 9, -2.f, 2.f);
  std::vector<float> sc = {0.01f, 0.02f, 0.005f, 0.04f, 0.0123f};
  std::vector<int32_t> zp = {0, -3, 5, 10, -128};
  OpGraph g;
  Id xi = g.input(x);
  Id s = g.gb.constant_f32({5}, sc);
  Id z = g.gb.constant(DType::Int32, {5}, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(zp.data()),
                                                                reinterpret_cast<uint8_t*>(zp.data()) + 20));
  Id q = g.output(DType::Int8, x.shape);
  Id o = g.output(DType::Float32, x.shape);
  g.gb.op("quantized_decomposed.quantize_per_channel.default",
          {xi, s, z, g.gb.int_(1), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), q});
  g.gb.op("quantized_decomposed.dequantize_per_channel.default",
          {q, s, z, g.gb.int_(-3), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), g.gb.null(), o});
  auto out = g.run();
  std::vector<double> sd(sc.begin(), sc.end());
  std::vector<int64_t> zd(zp.begin(), zp.end());
  auto qr = ref::quantize_affine(x, sd, zd, 1, -128, 127, DType::Int8);
  EXPECT_TRUE(Close(out[0], qr, 0, 0));
  EXPECT_TRUE(Close(out[1], ref::dequantize_affine(qr, sd, zd, 1), 0, 0));
}

// ExecuTorch's int8 linear exports dequantize prepacked weights per output channel without zero points.
TEST(OpDequantize, PerChannelWithoutZeroPointsOnPrepackedWeights) {
  ETW_REQUIRE_GPU();
  auto w = random_i8({6, 10}, 10, -127, 127);
  std::vector<float> sc = {0.5f, 0.25f, 0.125f, 1.f, 0.01f, 0.3f};
  OpGraph g;
  Id wc = g.gb.constant(DType::Int8, w.shape, w.data);
  Id wp = g.tensor(DType::Int8, w.shape);
  g.gb.op("et_vk.prepack.default", {wc, wp});
  Id s = g.gb.constant_f32({6}, sc);
  Id o = g.output(DType::Float32, w.shape);
  g.gb.op("quantized_decomposed.dequantize_per_channel.default",
          {wp, s, g.gb.null(), g.gb.int_(0), g.gb.int_(-127), g.gb.int_(127), g.gb.null(), g.gb.null(), o});
  auto got = g.run()[0];
  EXPECT_TRUE(Close(got, ref::dequantize_affine(w, std::vector<double>(sc.begin(), sc.end()), std::vector<int64_t>(6, 0), 0), 0, 0));
}

TEST(OpQuantize, BadScaleZeroPointOrRangeIsAFormatErrorNamingTheValue) {
  ETW_REQUIRE_GPU();
  for (double s : {0.0, -0.5, std::numeric_limits<double>::infinity(), std::nan(""), 1e-60}) {
    auto e = quantize_error({s, 0});
    EXPECT_TRUE(has(e, "Format error") && has(e, "quantize_per_tensor") && has(e, "is not a positive finite number")) << e;
  }
  EXPECT_TRUE(has(quantize_error({-0.5, 0}), "scale -0.5 is not a positive finite number"));
  EXPECT_TRUE(has(quantize_error({0.1, 128}), "zero_point 128 is outside [-128, 127]")) << quantize_error({0.1, 128});
  EXPECT_TRUE(has(quantize_error({0.1, 0, 5, -5}), "quant_min 5 / quant_max -5 is not a range inside the i8 range [-128, 127]"));
  EXPECT_TRUE(has(quantize_error({0.1, 0, -129, 127}), "quant_min -129 / quant_max 127"));
  EXPECT_TRUE(has(quantize_error({0.1, 0, 0, 256, DType::UInt8}), "inside the u8 range [0, 255]"));
}

TEST(OpQuantize, PerChannelConstantWithAZeroScaleOrWrongCountIsAFormatError) {
  ETW_REQUIRE_GPU();
  auto err = [](std::vector<float> sc) {
    OpGraph g;
    Id xi = g.input(random_f32({2, 3}, 1));
    Id s = g.gb.constant_f32({static_cast<int64_t>(sc.size())}, sc);
    Id z = g.gb.constant(DType::Int32, {static_cast<int64_t>(sc.size())}, std::vector<uint8_t>(sc.size() * 4, 0));
    Id q = g.output(DType::Int8, {2, 3});
    g.gb.op("quantized_decomposed.quantize_per_channel.default",
            {xi, s, z, g.gb.int_(1), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), q});
    return load_error([&] { g.run(); });
  };
  auto e = err({0.1f, 0.f, 0.2f});
  EXPECT_NE(e.find("scale 0 (channel 1) is not a positive finite number"), std::string::npos) << e;
  e = err({0.1f, 0.2f});
  EXPECT_NE(e.find("do not hold one value per channel of dim 1 of [2, 3]"), std::string::npos) << e;
}

HostTensor q8ta(const HostTensor& a, const HostTensor* b, std::vector<double> p) {
  OpGraph g;
  Id ai = g.input(a);
  Id o = g.output(DType::Int8, a.shape);
  if (b) {
    Id bi = g.input(*b);
    g.gb.op("et_vk.q8ta_add.default", {ai, bi, g.gb.dbl(p[0]), g.gb.int_(static_cast<int64_t>(p[1])), g.gb.dbl(p[2]),
                                       g.gb.int_(static_cast<int64_t>(p[3])), g.gb.dbl(p[4]),
                                       g.gb.int_(static_cast<int64_t>(p[5])), g.gb.dbl(p[6]), o});
  } else {
    g.gb.op("et_vk.q8ta_relu.default", {ai, g.gb.dbl(p[0]), g.gb.int_(static_cast<int64_t>(p[1])), g.gb.dbl(p[2]),
                                        g.gb.int_(static_cast<int64_t>(p[3])), o});
  }
  return g.run()[0];
}

TEST(OpQ8ta, AddWithZeroPointsAndAlphaMatchesTheReferenceExactly) {
  ETW_REQUIRE_GPU();
  auto a = random_i8({2, 3, 7, 5}, 11), b = random_i8({2, 3, 7, 5}, 12);
  for (double alpha : {1.0, 0.5, -2.0}) {
    auto got = q8ta(a, &b, {0.05, 3, 0.1, -7, 0.08, -2, alpha});
    EXPECT_TRUE(Close(got, ref::q8ta_elementwise(a, 0.05, 3, &b, 0.1, -7, 0.08, -2, alpha), 0, 0)) << "alpha " << alpha;
  }
}

// After a relu the exported output zero point is -128: negatives clamp there.
TEST(OpQ8ta, ReluRequantizesWithItsOwnParameters) {
  ETW_REQUIRE_GPU();
  auto a = random_i8({37}, 13);
  auto got = q8ta(a, nullptr, {0.02, 10, 0.015, -128});
  EXPECT_TRUE(Close(got, ref::q8ta_elementwise(a, 0.02, 10, nullptr, 0, 0, 0.015, -128, 1.0), 0, 0));
  for (int64_t i = 0; i < 37; ++i)
    if (a.as<int8_t>()[i] <= 10) {
      EXPECT_EQ(got.as<int8_t>()[i], -128);
    }
}

TEST(OpQ8ta, AddOfDifferentShapesOrBadOutputScaleIsRefused) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id a = g.input(random_i8({4, 8}, 1));
  Id b = g.input(random_i8({1, 8}, 2));
  Id o = g.output(DType::Int8, {4, 8});
  g.gb.op("et_vk.q8ta_add.default", {a, b, g.gb.dbl(0.1), g.gb.int_(0), g.gb.dbl(0.1), g.gb.int_(0), g.gb.dbl(0.1),
                                     g.gb.int_(0), g.gb.dbl(1.0), o});
  auto e = load_error([&] { g.run(); });
  EXPECT_NE(e.find("inputs [4, 8] and [1, 8] differ in shape"), std::string::npos) << e;
  OpGraph h;
  Id x = h.input(random_i8({8}, 1));
  Id y = h.output(DType::Int8, {8});
  h.gb.op("et_vk.q8ta_relu.default", {x, h.gb.dbl(0.1), h.gb.int_(0), h.gb.dbl(-1.0), h.gb.int_(0), y});
  e = load_error([&] { h.run(); });
  EXPECT_NE(e.find("output_scale -1 is not a positive finite number"), std::string::npos) << e;
}

}  // namespace

namespace {

// dequantize -> activation -> quantize, the way static-int8 exports keep ReLU6 (MobileNetV2).
// Returns the dequantized float tensor.
Id build_requant_chain(OpGraph& g, const HostTensor& q, const std::string& act, double s1, int64_t z1, double s2,
                       int64_t z2) {
  Id x = g.input(q);
  Id f = g.tensor(DType::Float32, q.shape), h = g.tensor(DType::Float32, q.shape);
  Id o = g.output(DType::Int8, q.shape);
  g.gb.op("quantized_decomposed.dequantize_per_tensor.default",
          {x, g.gb.dbl(s1), g.gb.int_(z1), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), g.gb.null(), f});
  if (act == "relu") g.gb.op("aten.relu.default", {f, h});
  else if (act == "clamp") g.gb.op("aten.clamp.default", {f, g.gb.dbl(-0.5), g.gb.null(), h});
  else g.gb.op("aten.hardtanh.default", {f, g.gb.dbl(0.0), g.gb.dbl(6.0), h});
  g.gb.op("quantized_decomposed.quantize_per_tensor.default",
          {h, g.gb.dbl(s2), g.gb.int_(z2), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), o});
  return f;
}

// The three calls become one etwebgpu.q8ta_clamp dispatch at load, bit-identical to the three
// kernels run apart (fusion off) and to PyTorch's float32 reference.
TEST(OpQ8taClamp, DequantizeActivationQuantizeFuseIntoOneExactKernel) {
  ETW_REQUIRE_GPU();
  auto q = random_i8({2, 8, 9, 7}, 21);
  for (const char* act : {"hardtanh", "relu", "clamp"}) {
    SCOPED_TRACE(act);
    auto build = [&](OpGraph& g) { build_requant_chain(g, q, act, 0.05, -3, 0.05, -100); };
    auto fused = load_graph(build, true);
    auto apart = load_graph(build, false);
    EXPECT_EQ(fused.ops, (std::vector<std::string>{"etwebgpu.q8ta_clamp"}));
    EXPECT_EQ(apart.ops.size(), 3u);
    EXPECT_TRUE(Close(fused.out[0], apart.out[0], 0, 0));
    auto f = ref::dequantize_affine(q, {0.05}, {-3}, 0);
    const double lo = std::string(act) == "clamp" ? -0.5 : 0.0, hi = std::string(act) == "hardtanh" ? 6.0 : 1e30;
    for (int64_t i = 0; i < f.numel(); ++i)
      f.as<float>()[i] = std::min(std::max(f.as<float>()[i], static_cast<float>(lo)), static_cast<float>(hi));
    EXPECT_TRUE(Close(fused.out[0], ref::quantize_affine(f, {0.05}, {-100}, 0, -128, 127, DType::Int8), 0, 0));
  }
}

// A float tensor of the chain that something else reads (here the graph output) stays: no fusion.
TEST(OpQ8taClamp, ChainWhoseFloatTensorIsAlsoAnOutputIsLeftApart) {
  ETW_REQUIRE_GPU();
  auto q = random_i8({33}, 22);
  auto r = load_graph(
      [&](OpGraph& g) {
        g.mark_output(build_requant_chain(g, q, "hardtanh", 0.1, 0, 0.1, 0));
      },
      true);
  EXPECT_EQ(r.ops.size(), 3u);
}

// The op the rewrite makes, called directly: the same result as the chain; bad bounds or scales are
// Format errors naming them (a .pte may hold the internal op too).
TEST(OpQ8taClamp, DirectCallMatchesTheChainAndRefusesBadArguments) {
  ETW_REQUIRE_GPU();
  auto q = random_i8({4, 11}, 23);
  auto direct = [&](double lo, double hi, double s2) {
    OpGraph g;
    Id x = g.input(q);
    Id o = g.output(DType::Int8, q.shape);
    g.gb.op("etwebgpu.q8ta_clamp", {x, g.gb.dbl(0.05), g.gb.int_(-3), g.gb.dbl(lo), g.gb.dbl(hi), g.gb.dbl(s2),
                                    g.gb.int_(-100), g.gb.int_(-128), g.gb.int_(127), o});
    return g.run()[0];
  };
  auto chain = load_graph([&](OpGraph& g) { build_requant_chain(g, q, "hardtanh", 0.05, -3, 0.05, -100); }, false);
  EXPECT_TRUE(Close(direct(0.0, 6.0, 0.05), chain.out[0], 0, 0));
  auto e = load_error([&] { direct(6.0, 0.0, 0.05); });
  EXPECT_TRUE(has(e, "Format error") && has(e, "clamp bounds 6, 0")) << e;
  e = load_error([&] { direct(0.0, 6.0, 0.0); });
  EXPECT_TRUE(has(e, "output scale 0 is not a positive finite number")) << e;
}

}  // namespace
