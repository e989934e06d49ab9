// aten.topk.default (values + int64 indices) against an fp64 reference (tests/reference/reduction/
// stats_ref), in both spellings (the out variant aten::topk.values has two outs).
#include <cmath>
#include <limits>

#include "etwebgpu/builder.h"
#include "reference/reduction/stats_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// topk [self, k, dim, largest, sorted, ValueList(values, indices)]
std::vector<HostTensor> run_topk(const HostTensor& x, int64_t k, int64_t dim, bool largest, bool sorted,
                                 std::vector<int64_t> out_shape) {
  OpGraph g;
  Id in = g.input(x);
  Id v = g.output(x.dtype == DType::Int32 ? DType::Int32 : DType::Float32, out_shape);
  Id i = g.output(DType::Int64, out_shape);
  g.gb.op("aten.topk.default", {in, g.gb.int_(k), g.gb.int_(dim), g.gb.boolean(largest), g.gb.boolean(sorted), g.gb.value_list({v, i})});
  return g.run();
}

TEST(OpTopk, LargestAndSmallestAlongInnerAndOuterDims) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 17, 4}, 800, -5, 5);
  for (bool largest : {true, false}) {
    for (int64_t dim : {1, -1, 0}) {
      int64_t len = x.shape[dim < 0 ? dim + 3 : dim];
      int64_t k = len > 3 ? 3 : 2;
      auto [v, i] = ref::topk(x, k, dim, largest);
      auto out = run_topk(x, k, dim, largest, true, v.shape);
      EXPECT_TRUE(Close(out[0], v, 0, 0)) << "largest " << largest << " dim " << dim;
      EXPECT_TRUE(Close(out[1], i, 0, 0)) << "largest " << largest << " dim " << dim;
    }
  }
}

TEST(OpTopk, TiesKeepIndexOrderAndNanIsTheLargest) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({4, 12}, 810, -2, 2);  // many ties
  for (bool largest : {true, false}) {
    auto [v, i] = ref::topk(x, 5, 1, largest);
    auto out = run_topk(x, 5, 1, largest, true, {4, 5});
    EXPECT_TRUE(Close(out[0], v, 0, 0)) << largest;
    EXPECT_TRUE(Close(out[1], i, 0, 0)) << largest;
  }
  auto f = HostTensor::from(DType::Float32, {7}, std::vector<float>{1.f, kNan, -0.f, 3.f, kNan, 0.f, 3.f});
  auto top = run_topk(f, 4, 0, true, true, {4});
  EXPECT_EQ(top[1].to_f64(), (std::vector<double>{1, 4, 3, 6}));
  auto bottom = run_topk(f, 7, 0, false, false, {7});
  EXPECT_EQ(bottom[1].to_f64(), (std::vector<double>{2, 5, 0, 3, 6, 1, 4})) << "-0 == 0 keep index order; NaN last";
}

TEST(OpTopk, KZeroGivesEmptyOutputsAndKPastTheDimFails) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 5}, 820);
  auto out = run_topk(x, 0, 1, true, true, {3, 0});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 0}));
  std::string e = load_error([&] { run_topk(x, 6, 1, true, true, {3, 6}); });
  EXPECT_TRUE(has(e, "aten.topk.default") && has(e, "larger than")) << e;
  e = load_error([&] { run_topk(x, 2, 2, true, true, {3, 2}); });
  EXPECT_TRUE(has(e, "aten.topk.default")) << e;
}

TEST(OpTopkKernelCall, TopkValuesPassesBothOutsAsOneList) {
  ETW_REQUIRE_GPU();
  auto xv = random_f32({2, 9}, 830, -3, 3);
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, {2, 9});
  auto v = p.tensor(DType::Float32, {2, 4}), i = p.tensor(DType::Int64, {2, 4});
  p.input(x);
  // topk.values(self, k, dim, largest, sorted, *, values, indices) -> (values, indices)
  p.kernel("aten::topk", "values", {x, p.int_(4), p.int_(-1), p.boolean(true), p.boolean(true), v, i}, 2);
  p.output(v);
  p.output(i);
  auto model = Model::load_bytes(p.serialize());
  for (const auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto out = model->run({xv});
  auto [rv, ri] = ref::topk(xv, 4, -1, true);
  EXPECT_TRUE(Close(out[0], rv, 0, 0));
  EXPECT_TRUE(Close(out[1], ri, 0, 0));
}

}  // namespace
