// masked_fill, masked_scatter, and the data-dependent-shape ops masked_select, nonzero,
// repeat_interleave (output size read back once per run) against fp64 references: broadcasting,
// NaN and -0.0, empty and all-true masks, several blocks, dynamic reruns, a consumer after the
// readback, errors, the KernelCall form.
#include <cmath>
#include <limits>

#include "reference/indexing/scatter_ref.h"
#include "reference/memory/view_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor bools(std::vector<int64_t> shape, std::vector<uint8_t> v) { return HostTensor::from<uint8_t>(DType::Bool, shape, v); }

TEST(OpMaskedFill, BroadcastMaskFillsFloatIntAndBoolWithTheCastValue) {
  ETW_REQUIRE_GPU();
  auto mask = random_bool({3, 1, 5}, 1);
  auto f = random_f32({2, 3, 4, 5}, 2);
  for (double v : {-1.5, std::numeric_limits<double>::infinity(), std::nan("")}) {
    OpGraph g;
    Id s = g.input(f), m = g.input(mask);
    Id o = g.output(DType::Float32, f.shape);
    g.gb.op("aten.masked_fill.Scalar", {s, m, g.gb.dbl(v), o});
    EXPECT_TRUE(CloseNan(g.run()[0], ref::masked_fill(f, mask, v), 0, 0)) << v;
  }
  auto i = random_i32({3, 4, 5}, 3, -9, 9);
  OpGraph g;
  Id s = g.input(i), m = g.input(mask);
  Id o = g.output(DType::Int32, i.shape);
  g.gb.op("aten.masked_fill.Scalar", {s, m, g.gb.dbl(7.8), o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::masked_fill(i, mask, 7), 0, 0));
}

TEST(OpMaskedFill, NonBoolMaskNonBroadcastingMaskAndAnIntValuePastInt32AreErrors) {
  ETW_REQUIRE_GPU();
  auto build = [](HostTensor mask) {
    OpGraph g;
    Id s = g.input(random_f32({3, 4}, 1)), m = g.input(mask);
    Id o = g.output(DType::Float32, {3, 4});
    g.gb.op("aten.masked_fill.Scalar", {s, m, g.gb.dbl(0), o});
    return load_error([&] { g.run(); });
  };
  auto e1 = build(random_i32({3, 4}, 1, 0, 1));
  EXPECT_TRUE(has(e1, "aten.masked_fill.Scalar") && has(e1, "bool")) << e1;
  auto e2 = build(random_bool({2, 4}, 1));
  EXPECT_TRUE(has(e2, "does not broadcast with self")) << e2;
  // A fill value past int32 into an int32 tensor (PyTorch's cast would wrap it).
  OpGraph g;
  Id s = g.input(random_i32({3, 4}, 2, -9, 9)), m = g.input(random_bool({3, 4}, 1));
  Id o = g.output(DType::Int32, {3, 4});
  g.gb.op("aten.masked_fill.Scalar", {s, m, g.gb.dbl(-3e9), o});
  auto e3 = load_error([&] { g.run(); });
  EXPECT_TRUE(has(e3, "value -3000000000") && has(e3, "does not fit an int32 tensor")) << e3;
}

TEST(OpMaskedFill, ALargerMaskExpandsSelfLikeTheFunctionalForm) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({4, 1}, 17), mask = random_bool({2, 4, 3}, 18);
  OpGraph g;
  Id s = g.input(self), m = g.input(mask);
  Id o = g.output(DType::Float32, {2, 4, 3});
  g.gb.op("aten.masked_fill.Scalar", {s, m, g.gb.dbl(9.0), o});
  auto want = ref::masked_fill(ref::broadcast_to(self, {2, 4, 3}), mask, 9.0);
  EXPECT_TRUE(CloseNan(g.run()[0], want, 0, 0));
}

TEST(OpMaskedScatter, TakesSourceElementsInOrderAcrossSeveralBlocks) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({3, 700}, 4), mask = random_bool({700}, 5), src = random_f32({3000}, 6);
  OpGraph g;
  Id s = g.input(self), m = g.input(mask), r = g.input(src);
  Id o = g.output(DType::Float32, {3, 700});
  g.gb.op("aten.masked_scatter.default", {s, m, r, o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::masked_scatter(self, mask, src), 0, 0));
}

TEST(OpMaskedSelect, BroadcastSelfAndMaskGiveARuntimeLengthThatFeedsTheNextOp) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({4, 1, 300}, 7), mask = random_bool({5, 300}, 8);
  auto ref = ref::masked_select(self, mask);
  OpGraph g;
  Id s = g.input(self), m = g.input(mask);
  Id sel = g.tensor(DType::Float32, {6000});
  g.gb.op("aten.masked_select.default", {s, m, sel});
  // A consumer after the readback sees the live length.
  Id neg = g.output(DType::Float32, {6000});
  g.gb.op("aten.neg.default", {sel, neg});
  Id direct = g.output(DType::Float32, {6000});
  g.gb.op("aten.alias_copy.default", {sel, direct});
  auto out = g.run();
  EXPECT_TRUE(CloseNan(out[1], ref, 0, 0));
  ASSERT_EQ(out[0].shape, ref.shape);
  auto rv = ref.to_f64();
  for (size_t i = 0; i < rv.size(); ++i) ASSERT_EQ(out[0].as<float>()[i], static_cast<float>(-rv[i])) << i;
}

TEST(OpMaskedSelect, AllFalseGivesEmptyAndRerunWithNewDataChangesTheLength) {
  ETW_REQUIRE_GPU();
  auto self = random_i32({40}, 9, -5, 5);
  OpGraph g;
  Id s = g.input(self), m = g.input(bools({40}, std::vector<uint8_t>(40, 0)));
  Id o = g.output(DType::Int32, {40});
  g.gb.op("aten.masked_select.default", {s, m, o});
  EXPECT_EQ(g.run()[0].shape, (std::vector<int64_t>{0}));
  auto mask = random_bool({40}, 10);
  EXPECT_TRUE(CloseNan(g.rerun({self, mask})[0], ref::masked_select(self, mask), 0, 0));
  auto all = bools({40}, std::vector<uint8_t>(40, 1));
  EXPECT_TRUE(CloseNan(g.rerun({self, all})[0], self, 0, 0));
}

TEST(OpNonzero, CoordinatesInRowMajorOrderWithNaNCountedAndNegativeZeroNot) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({3, 4, 50}, 11, -1, 1);
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Int64, {600, 3});
  g.gb.op("aten.nonzero.default", {in, o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::nonzero(x), 0, 0));
  auto f = HostTensor::from<float>(DType::Float32, {2, 3}, {0.f, -0.f, std::nanf(""), 1e-30f, 0.f, -INFINITY});
  OpGraph g2;
  Id in2 = g2.input(f);
  Id o2 = g2.output(DType::Int64, {6, 2});
  g2.gb.op("aten.nonzero.default", {in2, o2});
  auto got = g2.run()[0];
  EXPECT_TRUE(CloseNan(got, ref::nonzero(f), 0, 0));
  EXPECT_EQ(got.shape, (std::vector<int64_t>{3, 2}));
}

TEST(OpNonzero, ZeroDimAndBoolInputs) {
  ETW_REQUIRE_GPU();
  auto b = random_bool({7, 9}, 12);
  OpGraph g;
  Id in = g.input(b);
  Id o = g.output(DType::Int64, {63, 2});
  g.gb.op("aten.nonzero.default", {in, o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::nonzero(b), 0, 0));
  OpGraph g0;
  Id s = g0.input(HostTensor::from<float>(DType::Float32, {}, {2.f}));
  Id o0 = g0.output(DType::Int64, {1, 0});
  g0.gb.op("aten.nonzero.default", {s, o0});
  EXPECT_EQ(g0.run()[0].shape, (std::vector<int64_t>{1, 0}));
}

TEST(OpNonzero, MoreBlocksThan65535WorkgroupsFoldTheGrid) {
  ETW_REQUIRE_GPU();
  const int64_t n = 65537 * 256;  // one block per workgroup: the grid folds into 2-D
  HostTensor x(DType::Int32, {n});
  for (int64_t i : {int64_t{3}, int64_t{65535 * 256 + 7}, n - 1}) x.as<int32_t>()[i] = -2;
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Int64, {8, 1});
  g.gb.op("aten.nonzero.default", {in, o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::nonzero(x), 0, 0));
}

TEST(OpNonzero, WrongOutputShapeIsAnError) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id in = g.input(random_f32({3, 4}, 1));
  Id o = g.output(DType::Int64, {12, 3});
  g.gb.op("aten.nonzero.default", {in, o});
  auto e = load_error([&] { g.run(); });
  EXPECT_TRUE(has(e, "aten.nonzero.default") && has(e, "must be [n, 2]")) << e;
}

TEST(OpRepeatInterleave, RepeatsIncludingZerosGiveIndicesAndOutputSizeIsChecked) {
  ETW_REQUIRE_GPU();
  auto reps = random_i32({300}, 13, 0, 3);
  reps.as<int32_t>()[0] = 0;
  auto ref = ref::repeat_interleave(reps);
  OpGraph g;
  Id r = g.input(reps);
  Id o = g.output(DType::Int64, {900});
  g.gb.op("aten.repeat_interleave.Tensor", {r, g.gb.null(), o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref, 0, 0));
  OpGraph g2;
  Id r2 = g2.input(reps);
  Id o2 = g2.output(DType::Int64, {900});
  g2.gb.op("aten.repeat_interleave.Tensor", {r2, g2.gb.int_(ref.shape[0] + 1), o2});
  auto e = load_error([&] { g2.run(); });
  EXPECT_TRUE(has(e, "aten.repeat_interleave.Tensor") && has(e, "differs from sum(repeats)")) << e;
}

TEST(OpRepeatInterleave, CountBeyondTheExportedBoundIsAnError) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id r = g.input(HostTensor::from<int32_t>(DType::Int32, {3}, {2, 2, 2}));
  Id o = g.output(DType::Int64, {5});
  g.gb.op("aten.repeat_interleave.Tensor", {r, g.gb.null(), o});
  auto e = load_error([&] { g.run(); });
  EXPECT_TRUE(has(e, "beyond its exported bound")) << e;
}

TEST(OpNonzero, ProfileListsTheDispatchesOfEverySegmentInOrder) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({6, 7}, 16);
  OpGraph g;
  Id in = g.input(x);
  Id nz = g.tensor(DType::Int64, {42, 2});
  g.gb.op("aten.nonzero.default", {in, nz});
  Id o = g.output(DType::Int64, {2, 42});
  // A dispatch after the readback segment (a view, even an identity permute, would now share
  // nz's buffer and move nothing): a transpose.
  g.gb.op("aten.permute_copy.default", {nz, g.gb.int_list({1, 0}), o});
  g.run();
  Profile prof;
  auto out = g.model()->run({x}, &prof);
  HostTensor coords = ref::nonzero(x);
  ASSERT_EQ(coords.shape.size(), 2u);
  int64_t k = coords.shape[0];
  std::vector<double> v = f64(coords), tv(static_cast<size_t>(2 * k));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < 2; ++j) tv[j * k + i] = v[i * 2 + j];
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, k}));
  EXPECT_EQ(f64(out[0]), tv);
  std::vector<std::string> seen;
  for (auto& d : prof.dispatches) seen.push_back(d.op + "|" + d.variant);
  std::vector<std::string> want = {"aten.nonzero.default|count", "aten.nonzero.default|scan", "aten.nonzero.default|write",
                                   "aten.permute_copy.default|permute"};
  EXPECT_EQ(seen, want);
}

TEST(OpMaskedKernelCall, MaskedFillAndNonzeroOutVariantsRunAsTheirOps) {
  ETW_REQUIRE_GPU();
  auto xv = random_f32({4, 5}, 14);
  auto mv = random_bool({5}, 15);
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, {4, 5}), m = p.tensor(DType::Bool, {5});
  auto f = p.tensor(DType::Float32, {4, 5}), nz = p.tensor(DType::Int64, {20, 2}, true);
  p.input(x);
  p.input(m);
  p.kernel("aten::masked_fill", "Scalar_out", {x, m, p.dbl(0.0), f});
  p.kernel("aten::nonzero", "out", {f, nz});
  p.output(nz);
  auto model = Model::load_bytes(p.serialize());
  auto out = model->run({xv, mv});
  EXPECT_TRUE(CloseNan(out[0], ref::nonzero(ref::masked_fill(xv, mv, 0.0)), 0, 0));
}

}  // namespace
