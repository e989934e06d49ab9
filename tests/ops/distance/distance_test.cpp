// aten._cdist_forward and aten._pdist_forward against fp64 references
// (tests/reference/distance), every p mode, in both spellings.
#include <cmath>
#include <limits>

#include "etwebgpu/builder.h"
#include "reference/distance/distance_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr double kInfP = std::numeric_limits<double>::infinity();

HostTensor run_cdist(const HostTensor& x1, const HostTensor& x2, double p, std::vector<int64_t> out_shape) {
  OpGraph g;
  Id a = g.input(x1), b = g.input(x2);
  Id o = g.output(DType::Float32, std::move(out_shape));
  g.gb.op("aten._cdist_forward.default", {a, b, g.gb.dbl(p), g.gb.null(), o});
  return g.run()[0];
}

HostTensor run_pdist(const HostTensor& x, double p, int64_t n_out) {
  OpGraph g;
  Id a = g.input(x);
  Id o = g.output(DType::Float32, {n_out});
  g.gb.op("aten._pdist_forward.default", {a, g.gb.dbl(p), o});
  return g.run()[0];
}

TEST(OpCdist, EveryPModeWithBroadcastBatchDims) {
  ETW_REQUIRE_GPU();
  auto x1 = random_f32({2, 1, 5, 7}, 1000, -3, 3);
  auto x2 = random_f32({3, 6, 7}, 1001, -3, 3);
  // Equal coordinates make p = 0 (count of differing coordinates) non-trivial.
  for (int k = 0; k < 7; k += 2) x2.as<float>()[k] = x1.as<float>()[k];
  for (double p : {2.0, 1.0, kInfP, 0.0, 3.0, 0.5}) {
    auto want = ref::cdist(x1, x2, p);
    EXPECT_TRUE(Close(run_cdist(x1, x2, p, want.shape), want, 1e-5, 1e-4)) << "p " << p;
  }
}

TEST(OpCdist, EmptyRowsAndZeroWidthRows) {
  ETW_REQUIRE_GPU();
  auto out = run_cdist(random_f32({0, 4}, 1010), random_f32({3, 4}, 1011), 2.0, {0, 3});
  EXPECT_EQ(out.shape, (std::vector<int64_t>{0, 3}));
  auto zero = run_cdist(HostTensor(DType::Float32, {2, 0}), HostTensor(DType::Float32, {3, 0}), 2.0, {2, 3});
  EXPECT_TRUE(Close(zero, ref_tensor({2, 3}, std::vector<double>(6, 0.0)), 0, 0));
}

TEST(OpCdist, BadArgumentsFailNamingTheOp) {
  ETW_REQUIRE_GPU();
  std::string e = load_error([] { run_cdist(random_f32({3, 4}, 1020), random_f32({3, 5}, 1021), 2.0, {3, 3}); });
  EXPECT_TRUE(has(e, "aten._cdist_forward.default") && has(e, "last dim")) << e;
  e = load_error([] { run_cdist(random_f32({3, 4}, 1022), random_f32({3, 4}, 1023), -1.0, {3, 3}); });
  EXPECT_TRUE(has(e, "aten._cdist_forward.default") && has(e, "non-negative")) << e;
  e = load_error([] { run_cdist(random_f32({2, 3, 4}, 1024), random_f32({3, 3, 4}, 1025), 2.0, {3, 3, 3}); });
  EXPECT_TRUE(has(e, "aten._cdist_forward.default") && has(e, "broadcast")) << e;
}

TEST(OpPdist, AllPairsInRowOrderForEveryPMode) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({9, 5}, 1030, -2, 2);
  for (int k = 0; k < 5; ++k) x.as<float>()[5 + k] = x.as<float>()[k];  // rows 0 and 1 equal: distance 0
  for (double p : {2.0, 1.0, kInfP, 0.0, 1.5}) {
    auto want = ref::pdist(x, p);
    EXPECT_TRUE(Close(run_pdist(x, p, 36), want, 1e-5, 1e-4)) << "p " << p;
  }
  EXPECT_EQ(run_pdist(random_f32({1, 3}, 1031), 2.0, 0).numel(), 0) << "one row has no pairs";
}

TEST(OpDistanceKernelCall, OutVariantsMapToTheSameKernels) {
  ETW_REQUIRE_GPU();
  auto av = random_f32({4, 3}, 1040), bv = random_f32({5, 3}, 1041);
  ProgramBuilder p;
  auto a = p.tensor(DType::Float32, {4, 3}), b = p.tensor(DType::Float32, {5, 3});
  auto c = p.tensor(DType::Float32, {4, 5}), d = p.tensor(DType::Float32, {6});
  p.input(a);
  p.input(b);
  p.kernel("aten::_cdist_forward", "out", {a, b, p.dbl(1.0), p.null(), c});
  p.kernel("aten::_pdist_forward", "out", {a, p.dbl(2.0), d});
  p.output(c);
  p.output(d);
  auto model = Model::load_bytes(p.serialize());
  for (const auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto out = model->run({av, bv});
  EXPECT_TRUE(Close(out[0], ref::cdist(av, bv, 1.0), 1e-5, 1e-4));
  EXPECT_TRUE(Close(out[1], ref::pdist(av, 2.0), 1e-5, 1e-4));
}

}  // namespace
