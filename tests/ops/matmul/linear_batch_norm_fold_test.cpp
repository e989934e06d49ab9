// The BatchNorm after a linear folded into the linear's weights at load
// (src/ops/matmul/linear_batch_norm_fold.cpp), against fp64 references of the unfused ops.
#include <algorithm>

#include "reference/matmul/matmul_ref.h"
#include "reference/norm/norm_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr int64_t kRows = 49, kIn = 32, kOut = 24;

struct LinBn {
  HostTensor x = random_f32({1, kRows, kIn}, 1), w = random_f32({kOut, kIn}, 2), b = random_f32({kOut}, 3);
  HostTensor gamma = random_f32({kOut}, 4), beta = random_f32({kOut}, 5), mean = random_f32({kOut}, 6);
  HostTensor var = random_f32({kOut}, 7, 0.2f, 2.f);
  bool bias = true, affine = true;
  // LeViT's form: the linear's [1, M, C] flattened to [M, C], the BatchNorm, and back. view: the
  // flatten and the reshape back; without, a [M, K] input's linear feeds the BatchNorm directly.
  // y_out / w_input: the linear's output a graph output too / its weight a graph input.
  void build(OpGraph& g, bool view, bool y_out = false, bool w_input = false) const {
    const HostTensor xin = view ? x : HostTensor::from(DType::Float32, {kRows, kIn}, std::vector<float>(x.as<float>(), x.as<float>() + x.numel()));
    Id xi = g.input(xin);
    Id wi = w_input ? g.input(w) : g.constant(w);
    std::vector<int64_t> yd = view ? std::vector<int64_t>{1, kRows, kOut} : std::vector<int64_t>{kRows, kOut};
    Id y = y_out ? g.output(DType::Float32, yd) : g.tensor(DType::Float32, yd);
    g.gb.op("aten.linear.default", {xi, wi, bias ? g.constant(b) : g.gb.null(), y});
    Id f = y;
    if (view) {
      f = g.tensor(DType::Float32, {kRows, kOut});
      g.gb.op("aten.view_copy.default", {y, g.gb.int_list({kRows, kOut}), f});
    }
    Id o = view ? g.tensor(DType::Float32, {kRows, kOut}) : g.output(DType::Float32, {kRows, kOut});
    Id s1 = g.tensor(DType::Float32, {0}), s2 = g.tensor(DType::Float32, {0});
    g.gb.op("aten._native_batch_norm_legit_no_training.default",
            {f, affine ? g.constant(gamma) : g.gb.null(), affine ? g.constant(beta) : g.gb.null(), g.constant(mean), g.constant(var),
             g.gb.dbl(0.1), g.gb.dbl(1e-5), g.gb.value_list({o, s1, s2})});
    if (view) g.gb.op("aten.view_copy.default", {o, g.gb.int_list({1, kRows, kOut}), g.output(DType::Float32, {1, kRows, kOut})});
  }
  HostTensor ref() const {
    auto y = ref::linear(x, w, bias ? &b : nullptr);
    y.shape = {kRows, kOut};
    auto v = [](const HostTensor& t) { return t.to_f64(); };
    return ref::batch_norm(y, v(mean), v(var), affine ? v(gamma) : std::vector<double>{}, affine ? v(beta) : std::vector<double>{}, 1e-5);
  }
};

// With the flatten and reshape (LeViT) and without; with a bias and affine parameters, and with
// neither: one linear dispatch, the BatchNorm gone, the values as the two ops give them.
TEST(OpLinearBatchNorm, BatchNormAfterALinearFoldsIntoItsWeights) {
  ETW_REQUIRE_GPU();
  for (bool view : {true, false})
    for (bool full : {true, false}) {
      LinBn c;
      c.bias = c.affine = full;
      auto fused = load_graph([&](OpGraph& g) { c.build(g, view); }, true);
      const std::string at = std::string(view ? "view" : "direct") + (full ? " affine with bias" : " plain");
      EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "aten._native_batch_norm_legit_no_training.default"), 0) << at;
      EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "aten.linear.default"), 1) << at;
      auto want = c.ref();
      want.shape = fused.out[0].shape;
      EXPECT_TRUE(Close(fused.out[0], want, 1e-4, 1e-4)) << at;
    }
}

// The BatchNorm is not folded where the linear's output is read otherwise (here a graph output)
// or the weight is not a constant (a graph input): it becomes its per-channel affine
// (ops/norm/batch_norm_affine.cpp), a kernel of its own. The results are the same.
TEST(OpLinearBatchNorm, BatchNormStaysWhenTheLinearOutputIsReadOtherwiseOrTheWeightIsAnInput) {
  ETW_REQUIRE_GPU();
  LinBn c;
  for (bool y_out : {true, false}) {
    auto fused = load_graph([&](OpGraph& g) { c.build(g, true, y_out, !y_out); }, true);
    EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.linear.default", "fused[mul+add]"})) << y_out;
    auto want = c.ref();
    want.shape = {1, kRows, kOut};
    EXPECT_TRUE(Close(fused.out[y_out ? 1 : 0], want, 1e-4, 1e-4)) << y_out;
  }
}

// LeViT's export: bmm(x [1, M, K], W^T [1, K, C] constant) -> squeeze -> clone -> BatchNorm ->
// view -> + residual. The bmm becomes a linear with the BatchNorm folded in, early enough that
// the residual add becomes its epilogue: one dispatch for the four ops.
TEST(OpLinearBatchNorm, LevitBmmByAConstantFoldsItsBatchNormAndTakesTheResidualAdd) {
  ETW_REQUIRE_GPU();
  LinBn c;
  HostTensor wt(DType::Float32, {1, kIn, kOut});
  for (int64_t k = 0; k < kIn; ++k)
    for (int64_t o = 0; o < kOut; ++o) wt.as<float>()[k * kOut + o] = c.w.as<float>()[o * kIn + k];
  HostTensor res = random_f32({1, kRows, kOut}, 8);
  auto fused = load_graph(
      [&](OpGraph& g) {
        Id xi = g.input(c.x), ri = g.input(res), y = g.tensor(DType::Float32, {1, kRows, kOut});
        g.gb.op("aten.bmm.default", {xi, g.constant(wt), y});
        Id sq = g.tensor(DType::Float32, {kRows, kOut}), cl = g.tensor(DType::Float32, {kRows, kOut});
        g.gb.op("aten.squeeze_copy.dims", {y, g.gb.int_list({0}), sq});
        g.gb.op("aten.clone.default", {sq, g.gb.null(), cl});
        Id o = g.tensor(DType::Float32, {kRows, kOut}), s1 = g.tensor(DType::Float32, {0}), s2 = g.tensor(DType::Float32, {0});
        g.gb.op("aten._native_batch_norm_legit_no_training.default",
                {cl, g.constant(c.gamma), g.constant(c.beta), g.constant(c.mean), g.constant(c.var), g.gb.dbl(0.1), g.gb.dbl(1e-5),
                 g.gb.value_list({o, s1, s2})});
        Id v = g.tensor(DType::Float32, {1, kRows, kOut});
        g.gb.op("aten.view_copy.default", {o, g.gb.int_list({1, kRows, kOut}), v});
        g.gb.op("aten.add.Tensor", {ri, v, g.gb.int_(1), g.output(DType::Float32, {1, kRows, kOut})});
      },
      true);
  EXPECT_EQ(fused.ops.size(), 1u) << "the bmm, BatchNorm and add as one linear";
  c.bias = false;
  auto want = c.ref();
  for (int64_t i = 0; i < want.numel(); ++i) want.as<double>()[i] += res.as<float>()[i];
  want.shape = fused.out[0].shape;
  EXPECT_TRUE(Close(fused.out[0], want, 1e-4, 1e-4));
}

}  // namespace
