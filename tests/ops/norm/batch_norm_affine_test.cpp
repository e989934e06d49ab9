// An inference BatchNorm no fold took becomes its per-channel affine x * s + t at load
// (src/ops/norm/batch_norm_affine.cpp), which fuses with the activation after it and into a conv
// before it; against the fp64 reference of the BatchNorm.
#include <algorithm>
#include <cmath>

#include "reference/matmul/matmul_ref.h"
#include "reference/norm/norm_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct Bn {
  int64_t C;
  HostTensor gamma, beta, mean, var;
  explicit Bn(int64_t c)
      : C(c), gamma(random_f32({c}, 61, 0.5f, 2.f)), beta(random_f32({c}, 62)), mean(random_f32({c}, 63)),
        var(random_f32({c}, 64, 0.2f, 2.f)) {}
  // x -> BatchNorm -> out; `read_stats`: the statistics are graph outputs (read).
  void call(OpGraph& g, Id x, Id out, bool constant_weight = true, bool read_stats = false) const {
    Id s1 = read_stats ? g.output(DType::Float32, {0}) : g.tensor(DType::Float32, {0});
    Id s2 = read_stats ? g.output(DType::Float32, {0}) : g.tensor(DType::Float32, {0});
    g.gb.op("aten._native_batch_norm_legit_no_training.default",
            {x, constant_weight ? g.constant(gamma) : g.input(gamma), g.constant(beta), g.constant(mean), g.constant(var),
             g.gb.dbl(0.1), g.gb.dbl(1e-5), g.gb.value_list({out, s1, s2})});
  }
  HostTensor ref(const HostTensor& x, bool relu) const {
    auto v = [](const HostTensor& t) { return t.to_f64(); };
    HostTensor y = ref::batch_norm(x, v(mean), v(var), v(gamma), v(beta), 1e-5);
    if (relu)
      for (int64_t i = 0; i < y.numel(); ++i) y.as<double>()[i] = std::max(y.as<double>()[i], 0.0);
    return y;
  }
};

// DenseNet's norm after a cat, then relu: one kernel, for 4-D and 2-D inputs.
TEST(OpBatchNormAffine, BatchNormThenReluIsOneKernel) {
  ETW_REQUIRE_GPU();
  for (auto shape : {std::vector<int64_t>{1, 6, 5, 7}, std::vector<int64_t>{9, 6}}) {
    Bn bn(6);
    HostTensor x = random_f32(shape, 65, -3, 3);
    auto build = [&](OpGraph& g) {
      Id y = g.tensor(DType::Float32, shape);
      bn.call(g, g.input(x), y);
      g.gb.op("aten.relu.default", {y, g.output(DType::Float32, shape)});
    };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    EXPECT_EQ(fused.ops, (std::vector<std::string>{"fused[mul+add+relu]"})) << shape_str(shape);
    EXPECT_EQ(plain.ops.size(), 2u);
    EXPECT_TRUE(Close(fused.out[0], bn.ref(x, true), 1e-5, 1e-5)) << shape_str(shape);
  }
}

// A BatchNorm after a conv the export left unfolded, then relu: the conv's epilogue.
TEST(OpBatchNormAffine, BatchNormAfterAConvBecomesItsEpilogue) {
  ETW_REQUIRE_GPU();
  Bn bn(4);
  HostTensor x = random_f32({1, 3, 6, 6}, 66), w = random_f32({4, 3, 1, 1}, 67);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id c = g.tensor(DType::Float32, {1, 4, 6, 6}), y = g.tensor(DType::Float32, {1, 4, 6, 6});
    gb.op("aten.convolution.default", {g.input(x), g.constant(w), gb.null(), gb.int_list({1, 1}), gb.int_list({0, 0}),
                                       gb.int_list({1, 1}), gb.boolean(false), gb.int_list({0, 0}), gb.int_(1), c});
    bn.call(g, c, y);
    gb.op("aten.relu.default", {y, g.output(DType::Float32, {1, 4, 6, 6})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"fused[convolution+mul+add+relu]"}));
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
}

// LeViT's head: BatchNorm1d, a clone, then a linear of constant weights. The affine folds into the
// linear's weights and bias: one dispatch. With the BatchNorm's output also a graph output, it is
// a kernel of its own.
TEST(OpBatchNormAffine, BatchNormBeforeALinearFoldsIntoItsWeights) {
  ETW_REQUIRE_GPU();
  Bn bn(6);
  HostTensor x = random_f32({3, 6}, 69), w = random_f32({5, 6}, 70), b = random_f32({5}, 71);
  for (bool escapes : {false, true}) {
    auto build = [&](OpGraph& g) {
      Id y = escapes ? g.output(DType::Float32, {3, 6}) : g.tensor(DType::Float32, {3, 6}), c = g.tensor(DType::Float32, {3, 6});
      bn.call(g, g.input(x), y);
      g.gb.op("aten.clone.default", {y, g.gb.null(), c});
      g.gb.op("aten.linear.default", {c, g.constant(w), g.constant(b), g.output(DType::Float32, {3, 5})});
    };
    auto fused = load_graph(build, true);
    const std::vector<std::string> want =
        escapes ? std::vector<std::string>{"fused[mul+add]", "aten.linear.default"} : std::vector<std::string>{"aten.linear.default"};
    EXPECT_EQ(fused.ops, want) << escapes;
    HostTensor normed = bn.ref(x, false);
    HostTensor nf(DType::Float32, {3, 6});
    for (int64_t i = 0; i < nf.numel(); ++i) nf.as<float>()[i] = static_cast<float>(normed.as<double>()[i]);
    EXPECT_TRUE(Close(fused.out[escapes ? 1 : 0], ref::linear(nf, w, &b), 1e-5, 1e-5)) << escapes;
  }
}

// Statistics someone reads, or a weight that is no constant: the BatchNorm kernel runs.
TEST(OpBatchNormAffine, BatchNormStaysWhenItsStatisticsAreReadOrItsWeightIsAnInput) {
  ETW_REQUIRE_GPU();
  Bn bn(5);
  HostTensor x = random_f32({2, 5, 3}, 68);
  for (bool stats : {true, false}) {
    auto fused = load_graph([&](OpGraph& g) { bn.call(g, g.input(x), g.output(DType::Float32, {2, 5, 3}), stats, stats); }, true);
    EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten._native_batch_norm_legit_no_training.default"})) << stats;
    EXPECT_TRUE(Close(fused.out[0], bn.ref(x, false), 1e-5, 1e-5)) << stats;
  }
}

}  // namespace
