// aten._native_batch_norm_legit (.default and .no_stats): batch norm with batch statistics
// (training-mode batch norm, instance norm as exported) against an fp64 reference
// (tests/reference/norm/batch_stats_ref), in both spellings (three-out KernelCalls).
#include <cmath>

#include "etwebgpu/builder.h"
#include "reference/norm/batch_stats_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::vector<double> values(const HostTensor& t) { return t.to_f64(); }

TEST(OpBatchNormStats, NoStatsNormalizesEachChannelWithBatchStatistics) {
  ETW_REQUIRE_GPU();
  // Instance norm of a [2, 3, 5, 7] input is exported as this op on [1, 6, 5, 7].
  for (auto shape : {std::vector<int64_t>{1, 6, 5, 7}, std::vector<int64_t>{4, 3, 70}, std::vector<int64_t>{9, 2}}) {
    int64_t C = shape[1];
    auto x = random_f32(shape, 900 + C, -3, 5);
    auto wv = random_f32({C}, 910, 0.5f, 2), bv = random_f32({C}, 911, -1, 1);
    for (bool affine : {false, true}) {
      OpGraph g;
      Id xi = g.input(x);
      Id w = affine ? g.constant(wv) : g.gb.null(), b = affine ? g.constant(bv) : g.gb.null();
      Id o = g.output(DType::Float32, shape), sm = g.output(DType::Float32, {C}), si = g.output(DType::Float32, {C});
      g.gb.op("aten._native_batch_norm_legit.no_stats",
              {xi, w, b, g.gb.boolean(true), g.gb.dbl(0.1), g.gb.dbl(1e-5), g.gb.value_list({o, sm, si})});
      auto out = g.run();
      auto want = ref::batch_norm_train(x, affine ? values(wv) : std::vector<double>{}, affine ? values(bv) : std::vector<double>{},
                                        {}, {}, 0.1, 1e-5);
      EXPECT_TRUE(Close(out[0], want.out, 2e-5, 1e-4)) << shape_str(shape) << affine;
      EXPECT_TRUE(Close(out[1], want.save_mean, 1e-5, 1e-4)) << shape_str(shape);
      EXPECT_TRUE(Close(out[2], want.save_invstd, 1e-5, 1e-4)) << shape_str(shape);
    }
  }
}

TEST(OpBatchNormStats, TrainingUpdatesRunningStatsWithMomentumAndUnbiasedVariance) {
  ETW_REQUIRE_GPU();
  std::vector<int64_t> shape{3, 4, 6};
  auto x = random_f32(shape, 920, -2, 6);
  auto rm0 = random_f32({4}, 921, -1, 1), rv0 = random_f32({4}, 922, 0.5f, 2);
  OpGraph g;
  Id xi = g.input(x), rm = g.input(rm0), rv = g.input(rv0);
  Id o = g.output(DType::Float32, shape), sm = g.output(DType::Float32, {4}), si = g.output(DType::Float32, {4});
  Id rm_after = g.output(DType::Float32, {4}), rv_after = g.output(DType::Float32, {4});
  g.gb.op("aten._native_batch_norm_legit.default",
          {xi, g.gb.null(), g.gb.null(), rm, rv, g.gb.boolean(true), g.gb.dbl(0.3), g.gb.dbl(1e-3), g.gb.value_list({o, sm, si})});
  // Read the mutated running stats back through a later op.
  g.gb.op("aten.mul.Scalar", {rm, g.gb.dbl(1.0), rm_after});
  g.gb.op("aten.mul.Scalar", {rv, g.gb.dbl(1.0), rv_after});
  auto out = g.run();
  auto want = ref::batch_norm_train(x, {}, {}, values(rm0), values(rv0), 0.3, 1e-3);
  EXPECT_TRUE(Close(out[0], want.out, 2e-5, 1e-4));
  EXPECT_TRUE(Close(out[1], want.save_mean, 1e-5, 1e-4));
  EXPECT_TRUE(Close(out[2], want.save_invstd, 1e-5, 1e-4));
  EXPECT_TRUE(Close(out[3], ref_tensor({4}, want.running_mean), 1e-5, 1e-4));
  EXPECT_TRUE(Close(out[4], ref_tensor({4}, want.running_var), 1e-5, 1e-4));
}

TEST(OpBatchNormStats, EvaluationModeUsesRunningStatsAndEmptiesTheSavedOnes) {
  ETW_REQUIRE_GPU();
  std::vector<int64_t> shape{2, 3, 4};
  auto x = random_f32(shape, 930);
  auto rm0 = random_f32({3}, 931), rv0 = random_f32({3}, 932, 0.5f, 2);
  OpGraph g;
  Id xi = g.input(x);
  Id o = g.output(DType::Float32, shape), sm = g.output(DType::Float32, {0}), si = g.output(DType::Float32, {0});
  g.gb.op("aten._native_batch_norm_legit.default", {xi, g.gb.null(), g.gb.null(), g.constant(rm0), g.constant(rv0), g.gb.boolean(false),
                                                    g.gb.dbl(0.1), g.gb.dbl(1e-5), g.gb.value_list({o, sm, si})});
  auto out = g.run();
  auto xv = x.to_f64(), m = rm0.to_f64(), v = rv0.to_f64();
  std::vector<double> want(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    size_t c = (i / 4) % 3;
    want[i] = (xv[i] - m[c]) / std::sqrt(v[c] + 1e-5);
  }
  EXPECT_TRUE(Close(out[0], ref_tensor(shape, want), 1e-5, 1e-4));
  EXPECT_EQ(out[1].numel(), 0);
  std::string e = load_error([&] {
    OpGraph h;
    Id hx = h.input(x);
    Id ho = h.output(DType::Float32, shape), hm = h.output(DType::Float32, {3}), hs = h.output(DType::Float32, {3});
    h.gb.op("aten._native_batch_norm_legit.no_stats",
            {hx, h.gb.null(), h.gb.null(), h.gb.boolean(false), h.gb.dbl(0.1), h.gb.dbl(1e-5), h.gb.value_list({ho, hm, hs})});
    h.run();
  });
  EXPECT_TRUE(has(e, "aten._native_batch_norm_legit.no_stats") && has(e, "running_mean")) << e;
}

TEST(OpBatchNormStatsKernelCall, ThreeOutVariantsMapToTheSameKernels) {
  ETW_REQUIRE_GPU();
  std::vector<int64_t> shape{1, 4, 3, 3};
  auto xv = random_f32(shape, 940, -1, 3);
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, shape);
  auto o = p.tensor(DType::Float32, shape), sm = p.tensor(DType::Float32, {4}), si = p.tensor(DType::Float32, {4});
  p.input(x);
  // _native_batch_norm_legit.no_stats_out(input, weight, bias, training, momentum, eps, *, out, save_mean, save_invstd)
  p.kernel("aten::_native_batch_norm_legit", "no_stats_out",
           {x, p.null(), p.null(), p.boolean(true), p.dbl(0.1), p.dbl(1e-5), o, sm, si}, 3);
  p.output(o);
  p.output(si);
  auto model = Model::load_bytes(p.serialize());
  for (const auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto out = model->run({xv});
  auto want = ref::batch_norm_train(xv, {}, {}, {}, {}, 0.1, 1e-5);
  EXPECT_TRUE(Close(out[0], want.out, 2e-5, 1e-4));
  EXPECT_TRUE(Close(out[1], want.save_invstd, 1e-5, 1e-4));
}

}  // namespace
