// Conv prologues (src/ops/conv/conv_prologue.h): the elementwise call before a conv, over its
// input and per-channel operands, evaluated as the conv reads its input. On every conv route, the
// results are the unfused graph's; padding stays zero (DenseNet's BatchNorm and relu before a
// padded conv would give relu(t) there otherwise).
#include <algorithm>

#include "ops/elementwise/elementwise_ops.h"
#include "support/ir_chain.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

const std::vector<std::string> kRoutes = {"", "gemm", "gemm_splitk", "gemm_small", "gemm_large", "gemm_large_m64", "direct"};

Id conv(OpGraph& g, Id x, const HostTensor& w, const HostTensor* b, int64_t pad, Id out, bool transposed = false) {
  auto& gb = g.gb;
  gb.op("aten.convolution.default", {x, g.constant(w), b ? g.constant(*b) : gb.null(), gb.int_list({1, 1}), gb.int_list({pad, pad}),
                                      gb.int_list({1, 1}), gb.boolean(transposed), gb.int_list({0, 0}), gb.int_(1), out});
  return out;
}

// Loads `build` on every conv route with rewrites on and off: the fused run dispatches `want`
// (on the default route) and matches the plain one.
void expect_prologue(const std::function<void(OpGraph&)>& build, const std::vector<std::string>& want) {
  for (const std::string& route : kRoutes) {
    SCOPED_TRACE("route " + route);
    std::map<std::string, std::string> r;
    if (!route.empty()) r["conv"] = route;
    LoadedGraph fused = load_graph(build, true, r), plain = load_graph(build, false, r);
    if (route.empty()) {
      EXPECT_EQ(fused.ops, want);
    }
    ASSERT_EQ(fused.out.size(), plain.out.size());
    for (size_t k = 0; k < fused.out.size(); ++k) EXPECT_TRUE(Close(fused.out[k], plain.out[k], 1e-5, 1e-5)) << k;
  }
}

// Squeeze-excite's x * gate before the block's projection (MobileNetV3, EfficientNet).
TEST(OpConvPrologue, SqueezeExciteGateMultipliesTheInputAsTheConvReadsIt) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 8, 6, 8}, 81), gate = random_f32({1, 8, 1, 1}, 82, 0.f, 1.f);  // OW % 4 == 0: row4 tiles
  HostTensor w = random_f32({12, 8, 1, 1}, 83), b = random_f32({12}, 84);
  expect_prologue(
      [&](OpGraph& g) {
        Id y = g.tensor(DType::Float32, {1, 8, 6, 8});
        g.gb.op("aten.mul.Tensor", {g.input(x), g.input(gate), y});
        conv(g, y, w, &b, 0, g.output(DType::Float32, {1, 12, 6, 8}));
      },
      {"fused[mul+convolution]"});
}

// A gated projection of few tiles over a long K (MobileNetV3-small's 576 -> 96 at 7x7) keeps the
// split pair: the small-tile kernel would run the prologue once per four output channels.
TEST(OpConvPrologue, GatedProjectionOfFewTilesKeepsTheSplitNotTheSmallTiles) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 576, 7, 7}, 85), gate = random_f32({1, 576, 1, 1}, 86, 0.f, 1.f);
  HostTensor w = random_f32({96, 576, 1, 1}, 87, -0.1f, 0.1f);
  auto build = [&](OpGraph& g) {
    Id y = g.tensor(DType::Float32, {1, 576, 7, 7});
    g.gb.op("aten.mul.Tensor", {g.input(x), g.input(gate), y});
    conv(g, y, w, nullptr, 0, g.output(DType::Float32, {1, 96, 7, 7}));
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.variants, (std::vector<std::string>{"conv_gemm_splitk", "conv_splitk_reduce"}));
  EXPECT_EQ(plain.variants.back(), "conv_gemm_small");  // the same conv without the prologue
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
}

// MobileNetV3's gate as exported: hardsigmoid written out as add of a lifted 0-d constant 3, two
// clamps and a div by a lifted 6, then x * gate, before the projection with a residual add. The
// one-element float constants (float32 or float64: the op computes in float32 either way) become
// their terms' scalars, so the group (x and the gate) is the conv's prologue. As inputs they would
// be three with the gate, past the prologue's two, and the group a dispatch of its own.
TEST(OpConvPrologue, LiftedScalarConstantsOfTheHardsigmoidGateAreInlined) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 8, 6, 8}, 91), s = random_f32({1, 8, 1, 1}, 92, -5.f, 5.f);
  HostTensor w = random_f32({8, 8, 1, 1}, 93), b = random_f32({8}, 94), res = random_f32({1, 8, 6, 8}, 95);
  for (DType ct : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(ct == DType::Float32 ? "float32 constants" : "float64 constants");
    auto build = [&](OpGraph& g) {
      auto& gb = g.gb;
      HostTensor three(ct, {}), six(ct, {});
      if (ct == DType::Float64) three.as<double>()[0] = 3.0, six.as<double>()[0] = 6.0;
      else three.as<float>()[0] = 3.f, six.as<float>()[0] = 6.f;
      const std::vector<int64_t> sd{1, 8, 1, 1}, xd{1, 8, 6, 8};
      Id t0 = g.tensor(DType::Float32, sd), t1 = g.tensor(DType::Float32, sd), t2 = g.tensor(DType::Float32, sd),
         t3 = g.tensor(DType::Float32, sd), y = g.tensor(DType::Float32, xd), c = g.tensor(DType::Float32, xd);
      gb.op("aten.add.Tensor", {g.input(s), g.constant(three), gb.int_(1), t0});
      gb.op("aten.clamp.default", {t0, gb.dbl(0.0), gb.null(), t1});
      gb.op("aten.clamp.default", {t1, gb.null(), gb.dbl(6.0), t2});
      gb.op("aten.div.Tensor", {t2, g.constant(six), t3});
      gb.op("aten.mul.Tensor", {g.input(x), t3, y});
      conv(g, y, w, &b, 0, c);
      gb.op("aten.add.Tensor", {c, g.input(res), gb.int_(1), g.output(DType::Float32, xd)});
    };
    LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
    EXPECT_EQ(fused.ops, std::vector<std::string>{"fused[add+clamp+clamp+div+mul+convolution+add]"});
    EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
  }
}

// DenseNet's norm and relu before a padded 3x3 conv, with a relu epilogue after it.
TEST(OpConvPrologue, BatchNormAndReluBeforeAPaddedConvKeepThePaddingZero) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 8, 5, 7}, 85), w = random_f32({4, 8, 3, 3}, 86);
  std::vector<HostTensor> stats;
  for (int k = 0; k < 4; ++k) stats.push_back(random_f32({8}, 87 + k, k == 3 ? 0.5f : -1.f, k == 3 ? 2.f : 1.f));
  expect_prologue(
      [&](OpGraph& g) {
        auto& gb = g.gb;
        Id bn = g.tensor(DType::Float32, {1, 8, 5, 7}), act = g.tensor(DType::Float32, {1, 8, 5, 7});
        Id c = g.tensor(DType::Float32, {1, 4, 5, 7});
        gb.op("aten._native_batch_norm_legit_no_training.default",
              {g.input(x), g.constant(stats[0]), g.constant(stats[1]), g.constant(stats[2]), g.constant(stats[3]), gb.dbl(0.1),
               gb.dbl(1e-5), gb.value_list({bn, g.tensor(DType::Float32, {0}), g.tensor(DType::Float32, {0})})});
        gb.op("aten.relu.default", {bn, act});
        conv(g, act, w, nullptr, 1, c);
        gb.op("aten.relu.default", {c, g.output(DType::Float32, {1, 4, 5, 7})});
      },
      {"fused[mul+add+relu+convolution+relu]"});
}

// What stays before the conv: an operand of one value per pixel, a call whose output is also read
// elsewhere, a transposed conv.
TEST(OpConvPrologue, PerPixelOperandsSecondReadersAndTransposedConvsKeepTheCall) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 4, 5, 5}, 91), y = random_f32({1, 4, 5, 5}, 92), gate = random_f32({1, 4, 1, 1}, 93);
  HostTensor w = random_f32({3, 4, 1, 1}, 94), wt = random_f32({4, 3, 1, 1}, 95);
  auto fused_ops = [](const std::function<void(OpGraph&)>& build) { return load_graph(build, true).ops; };
  EXPECT_EQ(fused_ops([&](OpGraph& g) {
              Id m = g.tensor(DType::Float32, {1, 4, 5, 5});
              g.gb.op("aten.mul.Tensor", {g.input(x), g.input(y), m});
              conv(g, m, w, nullptr, 0, g.output(DType::Float32, {1, 3, 5, 5}));
            }),
            (std::vector<std::string>{"aten.mul.Tensor", "aten.convolution.default"}));
  EXPECT_EQ(fused_ops([&](OpGraph& g) {
              Id m = g.output(DType::Float32, {1, 4, 5, 5});
              g.gb.op("aten.mul.Tensor", {g.input(x), g.input(gate), m});
              conv(g, m, w, nullptr, 0, g.output(DType::Float32, {1, 3, 5, 5}));
            }),
            (std::vector<std::string>{"aten.mul.Tensor", "aten.convolution.default"}));
  EXPECT_EQ(fused_ops([&](OpGraph& g) {
              Id m = g.tensor(DType::Float32, {1, 4, 5, 5});
              g.gb.op("aten.mul.Tensor", {g.input(x), g.input(gate), m});
              conv(g, m, wt, nullptr, 0, g.output(DType::Float32, {1, 3, 5, 5}), true);
            }),
            (std::vector<std::string>{"aten.mul.Tensor", "aten.convolution.default"}));
}

// A prologue no pass would make is refused by name: an operand of neither one value per channel
// nor one value, or a transposed conv.
TEST(OpConvPrologue, MalformedProloguesAreFormatErrorsNamingTheOp) {
  ETW_REQUIRE_GPU();
  using Kind = format::VkExprOperand::Kind;
  auto attempt = [](bool transposed, std::vector<int64_t> operand) {
    IrChain c;
    int32_t x = c.input({1, 4, 3, 3}), s = c.input(operand), w = c.input(transposed ? std::vector<int64_t>{4, 2, 1, 1}
                                                                                      : std::vector<int64_t>{2, 4, 1, 1});
    format::VkExpr e;
    format::VkExprTerm t;
    t.binary = true;
    t.op = ops::code(ops::BinaryOp::Mul);
    t.a = {Kind::Input, 0};
    t.b = {Kind::Input, 1};
    t.c[0] = 1.f;
    t.label = "mul";
    e.terms = {t};
    e.views.assign(2, std::nullopt);
    e.on_input = true;
    format::VkValue one;
    one.kind = format::VkValueKind::Int;
    one.int_val = 1;
    c.op("aten.convolution.default", {x, w, c.null(), c.ints({1, 1}), c.ints({0, 0}), c.ints({1, 1}), c.boolean(transposed),
                                      c.ints({0, 0}), c.add(one), c.expr(e), s, c.output({1, 2, 3, 3})});
    std::vector<HostTensor> in{random_f32({1, 4, 3, 3}, 96), random_f32(operand, 97),
                               random_f32(transposed ? std::vector<int64_t>{4, 2, 1, 1} : std::vector<int64_t>{2, 4, 1, 1}, 98)};
    try {
      run_ir(c.ir, in);
      return std::string("loaded");
    } catch (const Error& err) {
      return std::string(err.what());
    }
  };
  const std::string per_pixel = attempt(false, {1, 4, 3, 3});
  EXPECT_NE(per_pixel.find("aten.convolution.default"), std::string::npos) << per_pixel;
  EXPECT_NE(per_pixel.find("neither one value per input channel"), std::string::npos) << per_pixel;
  const std::string transposed = attempt(true, {4});
  EXPECT_NE(transposed.find("transposed convolution takes no prologue"), std::string::npos) << transposed;
}

// A depthwise conv reads its prologue as the other kernels do (its input channel is its output
// channel).
TEST(OpConvPrologue, DepthwiseConvTakesTheGate) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 8, 7, 9}, 140), gate = random_f32({1, 8, 1, 1}, 141, 0.f, 1.f);
  HostTensor w = random_f32({8, 1, 3, 3}, 142), b = random_f32({8}, 143);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id y = g.tensor(DType::Float32, {1, 8, 7, 9});
    gb.op("aten.mul.Tensor", {g.input(x), g.input(gate), y});
    gb.op("aten.convolution.default", {y, g.constant(w), g.constant(b), gb.int_list({1, 1}), gb.int_list({1, 1}), gb.int_list({1, 1}),
                                        gb.boolean(false), gb.int_list({0, 0}), gb.int_(8), g.output(DType::Float32, {1, 8, 7, 9})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"fused[mul+convolution]"});
  EXPECT_EQ(fused.variants, std::vector<std::string>{"conv_depthwise"});
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
}

}  // namespace
