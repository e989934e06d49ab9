// aten.clamp.Tensor (tensor bounds, 3-way broadcasting) and aten.glu.default against fp64
// references (tests/reference/elementwise/math_ref), in both spellings.
#include <cmath>
#include <limits>

#include "etwebgpu/builder.h"
#include "reference/elementwise/math_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// clamp.Tensor [self, min?, max?, out]
HostTensor run_clamp(const HostTensor& x, const HostTensor* lo, const HostTensor* hi, DType out_t,
                     std::vector<int64_t> out_shape) {
  OpGraph g;
  Id xi = g.input(x);
  Id li = lo ? g.input(*lo) : g.gb.null();
  Id hi_id = hi ? g.input(*hi) : g.gb.null();
  Id o = g.output(out_t, std::move(out_shape));
  g.gb.op("aten.clamp.Tensor", {xi, li, hi_id, o});
  return g.run()[0];
}

TEST(OpClampTensor, BroadcastsAllThreeOperandsAndMinAboveMaxGivesMax) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 1, 7}, 700, -3, 3);
  auto lo = random_f32({4, 1}, 701, -2, 0);
  auto hi = random_f32({7}, 702, -0.5f, 2);  // some hi < lo: the result is hi there
  auto want = ref::clamp_tensor(x, &lo, &hi);
  EXPECT_TRUE(CloseNan(run_clamp(x, &lo, &hi, DType::Float32, want.shape), want, 0, 0));
}

TEST(OpClampTensor, OneSidedBoundsAndNanInAnyOperandGivesNan) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({5, 6}, 710, -3, 3);
  x.as<float>()[2] = kNan;
  auto lo = random_f32({5, 6}, 711, -1, 1);
  lo.as<float>()[9] = kNan;
  auto hi = random_f32({6}, 712, -1, 1);
  hi.as<float>()[4] = kNan;
  EXPECT_TRUE(CloseNan(run_clamp(x, &lo, nullptr, DType::Float32, {5, 6}), ref::clamp_tensor(x, &lo, nullptr), 0, 0));
  EXPECT_TRUE(CloseNan(run_clamp(x, nullptr, &hi, DType::Float32, {5, 6}), ref::clamp_tensor(x, nullptr, &hi), 0, 0));
  EXPECT_TRUE(CloseNan(run_clamp(x, &lo, &hi, DType::Float32, {5, 6}), ref::clamp_tensor(x, &lo, &hi), 0, 0));
}

TEST(OpClampTensor, IntTensorsStayIntAndIntBoundsPromoteIntoAFloatOutput) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({4, 9}, 720, -100, 100);
  auto lo = random_i32({9}, 721, -50, 0), hi = random_i32({4, 1}, 722, 0, 50);
  auto want = ref::clamp_tensor(x, &lo, &hi);
  HostTensor wi(DType::Int32, want.shape);
  for (int64_t i = 0; i < want.numel(); ++i) wi.as<int32_t>()[i] = static_cast<int32_t>(want.as<double>()[i]);
  EXPECT_TRUE(CloseNan(run_clamp(x, &lo, &hi, DType::Int32, {4, 9}), wi, 0, 0));
  auto xf = random_f32({4, 9}, 723, -80, 80);
  EXPECT_TRUE(CloseNan(run_clamp(xf, &lo, &hi, DType::Float32, {4, 9}), ref::clamp_tensor(xf, &lo, &hi), 0, 0));
}

TEST(OpClampTensor, BadArgumentsFailAtLoadNamingTheOp) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3}, 730);
  std::string e = load_error([&] { run_clamp(x, nullptr, nullptr, DType::Float32, {3}); });
  EXPECT_TRUE(has(e, "aten.clamp.Tensor") && has(e, "min and max")) << e;
  auto lo = random_f32({3}, 731);
  e = load_error([&] { run_clamp(random_i32({3}, 732, 0, 5), &lo, nullptr, DType::Int32, {3}); });
  EXPECT_TRUE(has(e, "aten.clamp.Tensor") && has(e, "min")) << e;
  auto bad = random_f32({4}, 733);
  e = load_error([&] { run_clamp(x, &bad, nullptr, DType::Float32, {3}); });
  EXPECT_TRUE(has(e, "aten.clamp.Tensor") && has(e, "broadcast")) << e;
}

HostTensor run_glu(const HostTensor& x, int64_t dim, std::vector<int64_t> out_shape) {
  OpGraph g;
  Id xi = g.input(x);
  Id o = g.output(DType::Float32, std::move(out_shape));
  g.gb.op("aten.glu.default", {xi, g.gb.int_(dim), o});
  return g.run()[0];
}

TEST(OpGlu, HalvesAnyDimIncludingNegativeOnes) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4, 5, 6}, 740, -8, 8);
  x.as<float>()[0] = kNan;
  EXPECT_TRUE(CloseNan(run_glu(x, -1, {3, 4, 5, 3}), ref::glu(x, -1), 1e-6, 1e-5));
  EXPECT_TRUE(CloseNan(run_glu(x, 1, {3, 2, 5, 6}), ref::glu(x, 1), 1e-6, 1e-5));
  auto y = random_f32({2, 3, 1}, 741, -8, 8);  // outermost dim of size 2: one element per half
  EXPECT_TRUE(CloseNan(run_glu(y, -3, {1, 3, 1}), ref::glu(y, -3), 1e-6, 1e-5));
}

TEST(OpGlu, OddHalvingDimensionFailsNamingTheOp) {
  ETW_REQUIRE_GPU();
  std::string e = load_error([] { run_glu(random_f32({3, 4}, 750), 0, {1, 4}); });
  EXPECT_TRUE(has(e, "aten.glu.default") && has(e, "even")) << e;
}

TEST(OpClampGluKernelCall, OutVariantsMapToTheSameKernels) {
  ETW_REQUIRE_GPU();
  auto xv = random_f32({2, 8}, 760, -4, 4), lv = random_f32({8}, 761, -1, 0);
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, {2, 8}), lo = p.tensor(DType::Float32, {8});
  auto c = p.tensor(DType::Float32, {2, 8}), gl = p.tensor(DType::Float32, {2, 4});
  p.input(x);
  p.input(lo);
  p.kernel("aten::clamp", "Tensor_out", {x, lo, p.null(), c});
  p.kernel("aten::glu", "out", {x, p.int_(-1), gl});
  p.output(c);
  p.output(gl);
  auto model = Model::load_bytes(p.serialize());
  for (const auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto out = model->run({xv, lv});
  EXPECT_TRUE(CloseNan(out[0], ref::clamp_tensor(xv, &lv, nullptr), 0, 0));
  EXPECT_TRUE(CloseNan(out[1], ref::glu(xv, -1), 1e-6, 1e-5));
}

}  // namespace
