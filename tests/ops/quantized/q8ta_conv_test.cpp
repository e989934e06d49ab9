// et_vk.q8ta_conv2d / q8ta_conv2d_pw / q8ta_conv2d_dw (static int8) against the fp64 reference
// (tests/reference/quantized/q8_conv_ref), with weights packed as ExecuTorch's Vulkan
// quantized_convolution pattern packs them. Outputs must equal the reference's int8 values; a
// one-step difference passes only where the reference's value before rounding lies within 1e-4 of
// a .5 tie (the kernel rounds in float32). Every case runs on the portable dot and, where the
// adapter has packed_4x8_integer_dot_product, on dot4I8Packed.
#include <cmath>
#include <optional>
#include <random>

#include "gpu/context.h"
#include "reference/quantized/q8_conv_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

const char* kConv = "et_vk.q8ta_conv2d.default";
const char* kPw = "et_vk.q8ta_conv2d_pw.default";
const char* kDw = "et_vk.q8ta_conv2d_dw.default";

HostTensor random_i8(std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t(DType::Int8, shape);
  std::mt19937_64 r(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(r() % 256) - 128);
  return t;
}

// A convolution with random weights in [-127, 127], scales and bias, and an output scale that
// spreads the results over the int8 range.
ref::Q8Conv make_conv(int64_t OC, int64_t ICg, int64_t KH, int64_t KW, int64_t groups, bool bias, uint64_t seed) {
  ref::Q8Conv c;
  c.OC = OC, c.ICg = ICg, c.KH = KH, c.KW = KW, c.groups = groups;
  std::mt19937_64 r(seed);
  c.w.resize(static_cast<size_t>(OC * ICg * KH * KW));
  for (auto& v : c.w) v = static_cast<int8_t>(static_cast<int>(r() % 255) - 127);
  auto s = random_f32({OC}, seed + 1, 0.004f, 0.01f);
  c.wscale.assign(s.as<float>(), s.as<float>() + OC);
  if (bias) {
    auto b = random_f32({OC}, seed + 2, -2.f, 2.f);
    c.bias.assign(b.as<float>(), b.as<float>() + OC);
  }
  c.iscale = 0.02;
  c.oscale = std::sqrt(double(ICg * KH * KW)) * 74 * 73 * 0.02 * 0.007 / 40;
  return c;
}

// What the op receives; tests that check errors change fields before running.
struct Args {
  std::string op;
  double iscale, oscale;
  int64_t izp, ozp, groups;
  DType wdtype = DType::Int8;
  std::vector<int64_t> wshape;
  std::vector<int8_t> w;
  std::vector<int32_t> sums;
  std::vector<float> scales, bias;
  std::vector<int64_t> ks, stride, padding, dilation;
  std::string act;
};

Args args_for(const ref::Q8Conv& c, const std::string& op) {
  Args a;
  a.op = op;
  a.iscale = c.iscale, a.oscale = c.oscale, a.izp = c.izp, a.ozp = c.ozp, a.groups = c.groups;
  const int64_t ocp = (c.OC + 3) / 4 * 4, K = c.KH * c.KW * c.ICg;
  if (op == kDw) {
    a.w = ref::pack_q8_dw_weights(c);
    a.wshape = {c.KH, c.KW, c.OC};
  } else {
    a.w = ref::pack_q8_conv_weights(c);
    a.wshape = {c.OC, (K + 3) / 4 * 4};
  }
  a.sums = ref::q8_weight_sums(c);
  a.scales = c.wscale;
  a.scales.resize(static_cast<size_t>(ocp), 0.f);  // padded as the exporter pads them
  if (!c.bias.empty()) {
    a.bias = c.bias;
    a.bias.resize(static_cast<size_t>(ocp), 0.f);
  }
  a.ks = {c.KH, c.KW}, a.stride = {c.sh, c.sw}, a.padding = {c.ph, c.pw}, a.dilation = {c.dh, c.dw};
  a.act = c.relu ? "relu" : "none";
  return a;
}

std::vector<int64_t> out_shape(const ref::Q8Conv& c, const std::vector<int64_t>& xs) {
  return {xs[0], c.OC, (xs[2] + 2 * c.ph - c.dh * (c.KH - 1) - 1) / c.sh + 1,
          (xs[3] + 2 * c.pw - c.dw * (c.KW - 1) - 1) / c.sw + 1};
}

// The conv's weights, scales and bias as constants of `g`; returns the conv's Id arguments.
std::vector<Id> conv_call(OpGraph& g, const Args& a, Id x) {
  std::vector<uint8_t> wb(a.w.size());
  std::memcpy(wb.data(), a.w.data(), wb.size());
  Id w = a.wdtype == DType::Int8 ? g.gb.constant(DType::Int8, a.wshape, wb)
                                 : g.gb.constant_f32(a.wshape, std::vector<float>(a.w.begin(), a.w.end()));
  Id sums = g.gb.constant_i32({static_cast<int64_t>(a.sums.size())}, a.sums);
  Id sc = g.gb.constant_f32({static_cast<int64_t>(a.scales.size())}, a.scales);
  Id b = a.bias.empty() ? g.gb.null() : g.gb.constant_f32({static_cast<int64_t>(a.bias.size())}, a.bias);
  return {x, g.gb.dbl(a.iscale), g.gb.int_(a.izp), w, sums, sc, g.gb.dbl(a.oscale), g.gb.int_(a.ozp), b,
          g.gb.int_list(a.ks), g.gb.int_list(a.stride), g.gb.int_list(a.padding), g.gb.int_list(a.dilation),
          g.gb.int_(a.groups), g.gb.str(a.act)};
}

HostTensor run_args(const Args& a, const HostTensor& x, const std::vector<int64_t>& os, const std::string& route = "") {
  OpGraph g;
  auto args = conv_call(g, a, g.input(x));
  args.push_back(g.output(DType::Int8, os));
  g.gb.op(a.op, args);
  LoadOptions o;
  if (!route.empty()) o.force_route["q8ta_conv"] = route;
  return g.run(o)[0];
}

::testing::AssertionResult SameInt8(const HostTensor& got, const ref::Q8ConvResult& r) {
  if (got.dtype != DType::Int8) return ::testing::AssertionFailure() << "output dtype " << dtype_name(got.dtype);
  if (got.shape != r.q.shape)
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape) << " vs " << shape_str(r.q.shape);
  int bad = 0, ties = 0;
  std::string first;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const int a = got.as<int8_t>()[i], e = r.q.as<int8_t>()[i];
    if (a == e) continue;
    const double v = r.scaled[i];
    if (std::abs(a - e) == 1 && std::abs(v - std::floor(v) - 0.5) < 1e-4) {
      ++ties;
      continue;
    }
    if (bad++ < 5) first += " [" + std::to_string(i) + "] got " + std::to_string(a) + " want " + std::to_string(e) + " (" +
                            std::to_string(v) + ")";
  }
  if (bad) return ::testing::AssertionFailure() << bad << " of " << got.numel() << " differ:" << first;
  return ::testing::AssertionSuccess() << ties << " ties";
}

std::vector<std::string> routes() {
  std::vector<std::string> r{"portable"};
  if (gpu::Context::get()->info().packed_dot4) r.push_back("dot4");
  return r;
}

// Runs `c` on x through `op` on every route and checks each against the reference.
void check(const ref::Q8Conv& c, const HostTensor& x, const std::string& op) {
  auto r = ref::q8ta_conv2d(x, c);
  for (const auto& route : routes()) {
    SCOPED_TRACE("route " + route);
    EXPECT_TRUE(SameInt8(run_args(args_for(c, op), x, out_shape(c, x.shape), route), r));
  }
}

}  // namespace


TEST(OpQ8taConv2d, ThreeByThreeWithPaddingStrideAndDilationMatchesReference) {
  ETW_REQUIRE_GPU();
  auto c = make_conv(16, 8, 3, 3, 1, true, 1);
  c.sh = 2, c.sw = 1, c.ph = 2, c.pw = 1, c.dh = 2, c.dw = 1;
  c.izp = 5, c.ozp = -3;
  check(c, random_i8({1, 8, 13, 11}, 2), kConv);
}

TEST(OpQ8taConv2d, ThreeInputChannelsPadKAndSixOutputChannelsPadScales) {
  ETW_REQUIRE_GPU();
  auto c = make_conv(6, 3, 3, 3, 1, true, 3);  // K = 27 -> 28, scales / bias / sums padded to 8
  c.ph = c.pw = 1;
  c.izp = -7, c.ozp = 11, c.relu = true;
  check(c, random_i8({2, 3, 9, 9}, 4), kConv);  // 81 pixels a plane: element stores
}

TEST(OpQ8taConv2d, WordAlignedPlanesOverSeveralTilesWriteWholeWords) {
  ETW_REQUIRE_GPU();
  auto c = make_conv(80, 24, 3, 3, 1, true, 5);  // 80 channels: two channel tiles, 144 pixels: three
  c.ph = c.pw = 1;
  c.izp = 3, c.ozp = 2;
  auto x = random_i8({1, 24, 12, 12}, 6);
  check(c, x, kConv);
}

TEST(OpQ8taConv2d, GroupedConvsWithFourAndEightChannelsPerGroup) {
  ETW_REQUIRE_GPU();
  auto c = make_conv(16, 4, 3, 3, 2, true, 7);  // 8 in, 16 out, 2 groups
  c.ph = c.pw = 1;
  c.izp = -20, c.ozp = 4;
  check(c, random_i8({1, 8, 7, 8}, 8), kConv);
  auto d = make_conv(16, 2, 3, 3, 4, false, 9);  // 8 in, 16 out, 4 groups
  d.sh = d.sw = 2;
  d.relu = true;
  check(d, random_i8({2, 8, 9, 10}, 10), kConv);
}

TEST(OpQ8taConv2d, ExtremeZeroPointsSaturateLikeQuantizePerTensor) {
  ETW_REQUIRE_GPU();
  auto c = make_conv(8, 5, 2, 2, 1, true, 11);
  c.izp = -128, c.ozp = 127;
  c.oscale /= 4;  // most values saturate
  check(c, random_i8({1, 5, 6, 7}, 12), kConv);
  c.izp = 127, c.ozp = -128, c.relu = true;
  check(c, random_i8({1, 5, 6, 7}, 13), kConv);
}

// A conv, then the three calls static-int8 exports keep ReLU6 as (MobileNetV2): dequantize with
// the conv's output parameters, hardtanh(0, 6), quantize with others.
void build_conv_relu6(OpGraph& g, const Args& a, const HostTensor& x, const std::vector<int64_t>& os) {
  Id xi = g.input(x);
  Id y = g.tensor(DType::Int8, os), f = g.tensor(DType::Float32, os), h = g.tensor(DType::Float32, os);
  Id o = g.output(DType::Int8, os);
  auto args = conv_call(g, a, xi);
  args.push_back(y);
  g.gb.op(a.op, args);
  g.gb.op("quantized_decomposed.dequantize_per_tensor.default",
          {y, g.gb.dbl(a.oscale), g.gb.int_(a.ozp), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), g.gb.null(), f});
  g.gb.op("aten.hardtanh.default", {f, g.gb.dbl(0.0), g.gb.dbl(6.0), h});
  g.gb.op("quantized_decomposed.quantize_per_tensor.default",
          {h, g.gb.dbl(a.oscale * 0.6), g.gb.int_(-128), g.gb.int_(-128), g.gb.int_(127), g.gb.null(), o});
}

// Conv + ReLU6 chain: one dispatch (etwebgpu.q8ta_conv2d*_clamp) at load, bit-identical to the four
// kernels run apart, on each conv kind; the fused op called directly gives the same, and its bad
// clamp arguments are Format errors.
TEST(OpQ8taConv2dClamp, ReluSixChainFoldsIntoTheConvBitIdentically) {
  ETW_REQUIRE_GPU();
  struct Case { const char* op; const char* fused; ref::Q8Conv c; std::vector<int64_t> xs; };
  auto general = make_conv(8, 3, 3, 3, 1, true, 40);
  general.ph = general.pw = 1;
  auto pw = make_conv(12, 16, 1, 1, 1, true, 41);
  pw.izp = 5, pw.ozp = -9;
  auto dw = make_conv(8, 1, 3, 3, 8, false, 42);
  dw.ph = dw.pw = 1, dw.sh = dw.sw = 2;
  for (const Case& k : {Case{kConv, "etwebgpu.q8ta_conv2d_clamp", general, {1, 3, 9, 8}},
                        Case{kPw, "etwebgpu.q8ta_conv2d_pw_clamp", pw, {2, 16, 5, 7}},
                        Case{kDw, "etwebgpu.q8ta_conv2d_dw_clamp", dw, {1, 8, 9, 9}}}) {
    SCOPED_TRACE(k.op);
    Args a = args_for(k.c, k.op);
    auto x = random_i8(k.xs, 43);
    auto os = out_shape(k.c, k.xs);
    auto build = [&](OpGraph& g) { build_conv_relu6(g, a, x, os); };
    auto fused = load_graph(build, true);
    auto apart = load_graph(build, false);
    EXPECT_EQ(fused.ops, std::vector<std::string>{k.fused});
    EXPECT_EQ(apart.ops.size(), 4u);
    EXPECT_TRUE(Close(fused.out[0], apart.out[0], 0, 0));
    auto direct = [&](double lo, double hi) {
      OpGraph g;
      auto args = conv_call(g, a, g.input(x));
      for (Id v : {g.gb.dbl(a.oscale), g.gb.int_(a.ozp), g.gb.dbl(lo), g.gb.dbl(hi), g.gb.dbl(a.oscale * 0.6),
                   g.gb.int_(-128), g.gb.int_(-128), g.gb.int_(127), g.output(DType::Int8, os)})
        args.push_back(v);
      g.gb.op(k.fused, args);
      return g.run()[0];
    };
    EXPECT_TRUE(Close(direct(0.0, 6.0), apart.out[0], 0, 0));
    auto e = load_error([&] { direct(6.0, 0.0); });
    EXPECT_TRUE(has(e, "clamp bounds 6, 0")) << e;
  }
}

TEST(OpQ8taConv2dPw, PointwiseBatchTwoWithAndWithoutBias) {
  ETW_REQUIRE_GPU();
  auto c = make_conv(12, 20, 1, 1, 1, true, 14);
  c.izp = 9, c.ozp = -1;
  check(c, random_i8({2, 20, 7, 6}, 15), kPw);
  auto d = make_conv(32, 16, 1, 1, 1, false, 16);
  d.relu = true;
  check(d, random_i8({1, 16, 8, 8}, 17), kPw);
}

TEST(OpQ8taConv2dDw, DepthwiseWithStrideDilationAndBatchTwo) {
  ETW_REQUIRE_GPU();
  auto c = make_conv(8, 1, 3, 3, 8, true, 18);
  c.sh = c.sw = 2, c.ph = c.pw = 2, c.dh = c.dw = 2;
  c.izp = -3, c.ozp = 6, c.relu = true;
  check(c, random_i8({2, 8, 11, 9}, 19), kDw);
  auto d = make_conv(12, 1, 5, 3, 12, false, 20);
  d.ph = 2, d.pw = 1;
  d.izp = 100, d.ozp = -50;
  check(d, random_i8({1, 12, 7, 7}, 21), kDw);
}

TEST(OpQ8taConv2d, EachRouteDispatchesItsVariant) {
  ETW_REQUIRE_GPU();
  auto words = make_conv(8, 4, 3, 3, 1, true, 22);
  words.ph = words.pw = 1;
  for (const auto& route : routes()) {
    for (auto [xs, want] : {std::pair<std::vector<int64_t>, std::string>{{1, 4, 8, 8}, "gemm_words_"},
                            {{1, 4, 7, 7}, "gemm_elems_"}}) {
      auto xi = random_i8(xs, 24);
      auto r = ref::q8ta_conv2d(xi, words);
      auto lg = load_graph(
          [&](OpGraph& g) {
            Args a = args_for(words, kConv);
            Id in = g.input(xi);
            Id out = g.output(DType::Int8, out_shape(words, xs));
            std::vector<uint8_t> wb(a.w.size());
            std::memcpy(wb.data(), a.w.data(), wb.size());
            g.gb.op(kConv, {in, g.gb.dbl(a.iscale), g.gb.int_(a.izp), g.gb.constant(DType::Int8, a.wshape, wb),
                            g.gb.constant_i32({8}, a.sums), g.gb.constant_f32({8}, a.scales), g.gb.dbl(a.oscale),
                            g.gb.int_(a.ozp), g.gb.constant_f32({8}, a.bias), g.gb.int_list(a.ks), g.gb.int_list(a.stride),
                            g.gb.int_list(a.padding), g.gb.int_list(a.dilation), g.gb.int_(1), g.gb.str(a.act), out});
          },
          true, {{"q8ta_conv", route}});
      EXPECT_TRUE(SameInt8(lg.out[0], r));
      ASSERT_EQ(lg.variants.size(), 1u);
      EXPECT_EQ(lg.variants[0], want + route);
    }
  }
}

// ---------------------------------------------------------------- errors

namespace {
// The Format error a load of `a` throws: its message after the op's name.
std::string load_failure(const Args& a, std::vector<int64_t> xs = {1, 8, 6, 6}, std::vector<int64_t> os = {}) {
  if (os.empty()) os = {xs[0], 8, xs[2], xs[3]};
  try {
    run_args(a, random_i8(xs, 1), os);
  } catch (const Error& e) {
    std::string m = e.what();
    if (e.kind() != ErrorKind::Format) return "not a Format error: " + m;
    const std::string head = std::string("Format error: ") + a.op + " (node ";
    if (m.rfind(head, 0) != 0) return "unexpected prefix: " + m;
    return m.substr(m.find("): ") + 3);
  }
  return "no error";
}
Args good(const char* op = kConv) {
  auto c = make_conv(8, 8, 3, 3, 1, true, 30);
  c.ph = c.pw = 1;
  if (op == std::string(kDw)) {
    c = make_conv(8, 1, 3, 3, 8, true, 30);
    c.ph = c.pw = 1;
  }
  if (op == std::string(kPw)) c = make_conv(8, 8, 1, 1, 1, true, 30);
  return args_for(c, op);
}
}  // namespace

TEST(OpQ8taConv2dErrors, TheValidBaselineLoads) {
  ETW_REQUIRE_GPU();
  EXPECT_EQ(load_failure(good()), "no error");
  EXPECT_EQ(load_failure(good(kDw)), "no error");
  EXPECT_EQ(load_failure(good(kPw)), "no error");
}

TEST(OpQ8taConv2dErrors, ScalesMustBePositiveAndFinite) {
  ETW_REQUIRE_GPU();
  Args a = good();
  a.iscale = 0;
  EXPECT_EQ(load_failure(a), "input_scale must be positive and finite, got 0");
  a = good();
  a.oscale = -0.5;
  EXPECT_EQ(load_failure(a), "output_scale must be positive and finite, got -0.5");
  a = good();
  a.oscale = INFINITY;
  EXPECT_EQ(load_failure(a), "output_scale must be positive and finite, got inf");
  a = good();
  a.scales[3] = 0;
  EXPECT_EQ(load_failure(a), "weight_scales[3] must be positive and finite, got 0");
}

TEST(OpQ8taConv2dErrors, ZeroPointsOutsideInt8AreRejected) {
  ETW_REQUIRE_GPU();
  Args a = good();
  a.izp = 128;
  EXPECT_EQ(load_failure(a), "input_zero_point must be in [-128, 127], got 128");
  a = good();
  a.ozp = -129;
  EXPECT_EQ(load_failure(a), "output_zero_point must be in [-128, 127], got -129");
}

TEST(OpQ8taConv2dErrors, WeightShapesMustMatchThePackedLayouts) {
  ETW_REQUIRE_GPU();
  Args a = good();
  a.wshape = {8, 76};
  a.w.resize(8 * 76);
  EXPECT_EQ(load_failure(a), "weights must be [OC, K_pad] = [8, 72] (K = 3*3*8), got [8, 76]");
  a = good(kDw);
  a.wshape = {8, 3, 3};
  EXPECT_EQ(load_failure(a), "weights must be [KH, KW, OC] = [3, 3, 8], got [8, 3, 3]");
  a = good(kPw);
  a.ks = {3, 3};
  EXPECT_EQ(load_failure(a), "pointwise needs a 1x1 kernel, got 3x3");
}

TEST(OpQ8taConv2dErrors, PerChannelTensorsShorterThanOutputChannelsAreRejected) {
  ETW_REQUIRE_GPU();
  Args a = good();
  a.scales.resize(6);
  EXPECT_EQ(load_failure(a), "weight_scales must be 1-D with at least OC = 8 values, got [6]");
  a = good();
  a.bias.resize(7);
  EXPECT_EQ(load_failure(a), "bias must be 1-D with at least OC = 8 values, got [7]");
  a = good();
  a.sums.resize(4);
  EXPECT_EQ(load_failure(a), "weight_sums must be 1-D with at least OC = 8 values, got [4]");
}

TEST(OpQ8taConv2dErrors, WeightSumsDisagreeingWithTheWeightsNameTheChannel) {
  ETW_REQUIRE_GPU();
  Args a = good();
  int32_t s = a.sums[5];
  a.sums[5] += 1;
  EXPECT_EQ(load_failure(a), "weight_sums[5] is " + std::to_string(s + 1) + ", the weights of channel 5 sum to " +
                                 std::to_string(s));
  a = good(kDw);
  s = a.sums[2];
  a.sums[2] -= 3;
  EXPECT_EQ(load_failure(a), "weight_sums[2] is " + std::to_string(s - 3) + ", the weights of channel 2 sum to " +
                                 std::to_string(s));
}

TEST(OpQ8taConv2dErrors, WrongDtypesActivationAndGroupsAreRejected) {
  ETW_REQUIRE_GPU();
  Args a = good();
  a.wdtype = DType::Float32;
  EXPECT_EQ(load_failure(a), "weights must be i8, got f32");
  a = good();
  a.act = "gelu";
  EXPECT_EQ(load_failure(a), "activation must be \"relu\" or \"none\", got \"gelu\"");
  a = good();
  a.groups = 3;
  EXPECT_EQ(load_failure(a), "groups 3 must divide the input channels 8 and the output channels 8");
  a = good(kDw);
  a.groups = 4;
  a.w.assign(3 * 3 * 8, 0);  // (sums are not reached)
  EXPECT_EQ(load_failure(a), "depthwise needs groups == in channels == out channels, got groups 4, 8 in, 8 out");
}

TEST(OpQ8taConv2dErrors, UnknownForcedRouteIsRejected) {
  ETW_REQUIRE_GPU();
  Args a = good();
  std::string m = load_error([&] { run_args(a, random_i8({1, 8, 6, 6}, 1), {1, 8, 6, 6}, "fast"); });
  EXPECT_TRUE(has(m, "force_route q8ta_conv must be \"dot4\" or \"portable\", got \"fast\"")) << m;
}

// Few output tiles over a long K (576 k values, 98 pixels): K is split into ranges whose int32
// sums add up in scratch, the finalize kernel requantizes and clears it; a second and third run
// on the same model give the same exact result (the scratch starts every run at zero).
TEST(OpQ8taConv2d, LongKWithFewTilesSplitsKExactlyAndRunsRepeatably) {
  ETW_REQUIRE_GPU();
  auto c = make_conv(22, 64, 3, 3, 1, true, 40);  // OC 22: scales, bias and sums padded to 24
  c.ph = c.pw = 1;
  c.izp = 7, c.ozp = -9, c.relu = true;
  auto x = random_i8({2, 64, 7, 7}, 41);
  auto r = ref::q8ta_conv2d(x, c);
  for (const auto& route : routes()) {
    SCOPED_TRACE("route " + route);
    Args a = args_for(c, kConv);
    auto lg = load_graph(
        [&](OpGraph& g) {
          Id in = g.input(x);
          Id out = g.output(DType::Int8, out_shape(c, x.shape));
          std::vector<uint8_t> wb(a.w.size());
          std::memcpy(wb.data(), a.w.data(), wb.size());
          g.gb.op(kConv, {in, g.gb.dbl(a.iscale), g.gb.int_(a.izp), g.gb.constant(DType::Int8, a.wshape, wb),
                          g.gb.constant_i32({24}, a.sums), g.gb.constant_f32({24}, a.scales), g.gb.dbl(a.oscale),
                          g.gb.int_(a.ozp), g.gb.constant_f32({24}, a.bias), g.gb.int_list(a.ks), g.gb.int_list(a.stride),
                          g.gb.int_list(a.padding), g.gb.int_list(a.dilation), g.gb.int_(1), g.gb.str(a.act), out});
        },
        true, {{"q8ta_conv", route}});
    EXPECT_TRUE(SameInt8(lg.out[0], r));
    EXPECT_EQ(lg.variants, (std::vector<std::string>{"gemm_split_" + route, "split_finalize"}));
    EXPECT_TRUE(SameInt8(lg.g->rerun({x})[0], r));
  }
}
