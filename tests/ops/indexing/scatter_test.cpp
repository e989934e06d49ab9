// scatter.src / scatter.value / scatter_add against fp64 references: negative dims, index
// smaller than self and src, repeated targets (last wins / summed in order), int and bool,
// empty index, 0-d tensors, shape errors, out-of-range indices, the KernelCall form.
#include "reference/indexing/scatter_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// A row-major int32 index tensor with values in [0, hi) (repeats likely when hi is small).
HostTensor index_of(std::vector<int64_t> shape, uint64_t seed, int32_t hi) { return random_i32(shape, seed, 0, hi - 1); }

HostTensor run_scatter(const std::string& op, const HostTensor& self, int64_t dim, const HostTensor& index,
                       const HostTensor* src, double value) {
  OpGraph g;
  Id s = g.input(self), ix = g.input(index);
  Id third = src ? g.input(*src) : g.gb.dbl(value);
  Id o = g.output(self.dtype, self.shape);
  g.gb.op(op, {s, g.gb.int_(dim), ix, third, o});
  return g.run()[0];
}

TEST(OpScatter, SrcWithIndexSmallerThanSelfAndSrcOnEveryDim) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({4, 5, 3}, 1), src = random_f32({3, 6, 3}, 2);
  for (int64_t dim : {0, 1, -1}) {
    int64_t ext = self.shape[(dim + 3) % 3];
    auto index = index_of({3, 4, 2}, 3 + dim, static_cast<int32_t>(ext));
    auto ref = ref::scatter(self, dim, index, &src, 0, false);
    EXPECT_TRUE(Close(run_scatter("aten.scatter.src", self, dim, index, &src, 0), ref, 0, 0)) << "dim " << dim;
  }
}

TEST(OpScatter, RepeatedTargetsKeepTheLastValueInIndexOrder) {
  ETW_REQUIRE_GPU();
  auto self = random_i32({2, 4}, 4, -9, 9);
  auto index = HostTensor::from<int32_t>(DType::Int32, {2, 3}, {1, 1, 1, 3, 0, 3});
  auto src = HostTensor::from<int32_t>(DType::Int32, {2, 3}, {10, 20, 30, 40, 50, 60});
  auto got = run_scatter("aten.scatter.src", self, 1, index, &src, 0);
  EXPECT_TRUE(Close(got, ref::scatter(self, 1, index, &src, 0, false), 0, 0));
  EXPECT_EQ(got.as<int32_t>()[1], 30);
}

TEST(OpScatter, ValueVariantCastsTheScalarToSelfsDtype) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({3, 4}, 5);
  auto index = index_of({2, 4}, 6, 3);
  EXPECT_TRUE(Close(run_scatter("aten.scatter.value", self, 0, index, nullptr, -2.5),
                    ref::scatter(self, 0, index, nullptr, -2.5, false), 0, 0));
  auto iself = random_i32({3, 4}, 7, -5, 5);
  EXPECT_TRUE(Close(run_scatter("aten.scatter.value", iself, -1, index, nullptr, 7.9),
                    ref::scatter(iself, -1, index, nullptr, 7.0, false), 0, 0));
}

TEST(OpScatterAdd, SumsRepeatedTargetsForFloatIntAndBool) {
  ETW_REQUIRE_GPU();
  auto index = index_of({5, 3}, 8, 2);  // many repeats along dim 0
  auto fself = random_f32({2, 4}, 9), fsrc = random_f32({6, 3}, 10);
  EXPECT_TRUE(Close(run_scatter("aten.scatter_add.default", fself, 0, index, &fsrc, 0),
                    ref::scatter(fself, 0, index, &fsrc, 0, true), 1e-6, 1e-6));
  auto iself = random_i32({2, 4}, 11, -100, 100), isrc = random_i32({5, 3}, 12, -100, 100);
  EXPECT_TRUE(Close(run_scatter("aten.scatter_add.default", iself, 0, index, &isrc, 0),
                    ref::scatter(iself, 0, index, &isrc, 0, true), 0, 0));
  auto bself = random_bool({2, 4}, 13), bsrc = random_bool({5, 3}, 14);
  EXPECT_TRUE(Close(run_scatter("aten.scatter_add.default", bself, 0, index, &bsrc, 0),
                    ref::scatter(bself, 0, index, &bsrc, 0, true), 0, 0));
}

TEST(OpScatterAdd, EmptyIndexCopiesSelfAndZeroDimTensorsWork) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({3, 2}, 15), src = random_f32({3, 2}, 16);
  auto empty = HostTensor(DType::Int32, {0, 2});
  EXPECT_TRUE(Close(run_scatter("aten.scatter_add.default", self, 0, empty, &src, 0), self, 0, 0));
  // An empty index skips PyTorch's shape checks, even with another rank.
  EXPECT_TRUE(Close(run_scatter("aten.scatter.src", self, 1, HostTensor(DType::Int32, {0}), &src, 0), self, 0, 0));
  auto s0 = HostTensor::from<float>(DType::Float32, {}, {1.5f}), v0 = HostTensor::from<float>(DType::Float32, {}, {2.0f});
  auto i0 = HostTensor::from<int32_t>(DType::Int32, {}, {0});
  auto got = run_scatter("aten.scatter_add.default", s0, 0, i0, &v0, 0);
  EXPECT_TRUE(Close(got, HostTensor::from<double>(DType::Float64, {}, {3.5}), 0, 0));
}

TEST(OpScatter, OutOfRangeIndicesRaiseAsPyTorchDoesNegativesIncluded) {
  ETW_REQUIRE_GPU();
  auto self = HostTensor::from<float>(DType::Float32, {4}, {1, 2, 3, 4});
  auto src = HostTensor::from<float>(DType::Float32, {3}, {10, 20, 30});
  for (int32_t bad : {4, -1}) {
    auto index = HostTensor::from<int32_t>(DType::Int32, {3}, {0, bad, 2});
    auto e = load_error([&] { run_scatter("aten.scatter.src", self, 0, index, &src, 0); });
    EXPECT_TRUE(has(e, "aten.scatter.src") && has(e, ("index " + std::to_string(bad)).c_str()) &&
                has(e, "out of bounds for dimension 0 with size 4"))
        << e;
  }
  auto e = load_error([&] {
    run_scatter("aten.scatter_add.default", self, 0, HostTensor::from<int32_t>(DType::Int32, {3}, {0, 1, 9}), &src, 0);
  });
  EXPECT_TRUE(has(e, "aten.scatter_add.default") && has(e, "index 9")) << e;
}

TEST(OpScatter, RankMismatchAndOversizedIndexAreErrorsNamingTheOp) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({3, 4}, 17), src = random_f32({3, 4}, 18);
  auto e1 = load_error([&] { run_scatter("aten.scatter.src", self, 0, index_of({3}, 1, 3), &src, 0); });
  EXPECT_TRUE(has(e1, "aten.scatter.src") && has(e1, "same number of dimensions")) << e1;
  auto e2 = load_error([&] { run_scatter("aten.scatter_add.default", self, 0, index_of({2, 5}, 1, 3), &src, 0); });
  EXPECT_TRUE(has(e2, "aten.scatter_add.default") && has(e2, "no larger than")) << e2;
  auto e3 = load_error([&] { run_scatter("aten.scatter.src", self, 0, random_f32({3, 4}, 1), &src, 0); });
  EXPECT_TRUE(has(e3, "index")) << e3;
}

TEST(OpScatter, KernelCallOutVariantsRunTheSameKernels) {
  ETW_REQUIRE_GPU();
  auto sv = random_f32({3, 4}, 19), srcv = random_f32({2, 4}, 20);
  auto iv = index_of({2, 4}, 21, 3);
  ProgramBuilder p;
  auto s = p.tensor(DType::Float32, {3, 4}), ix = p.tensor(DType::Int64, {2, 4}), src = p.tensor(DType::Float32, {2, 4});
  auto o1 = p.tensor(DType::Float32, {3, 4}), o2 = p.tensor(DType::Float32, {3, 4});
  p.input(s);
  p.input(ix);
  p.input(src);
  p.kernel("aten::scatter_add", "out", {s, p.int_(0), ix, src, o1});
  p.kernel("aten::scatter", "value_out", {o1, p.int_(0), ix, p.dbl(0.25), o2});
  p.output(o2);
  auto model = Model::load_bytes(p.serialize());
  HostTensor iv64(DType::Int64, {2, 4});
  for (int i = 0; i < 8; ++i) iv64.as<int64_t>()[i] = iv.as<int32_t>()[i];
  auto out = model->run({sv, iv64, srcv});
  auto added = ref::scatter(sv, 0, iv, &srcv, 0, true);
  EXPECT_TRUE(Close(out[0], ref::scatter(added, 0, iv, nullptr, 0.25, false), 1e-6, 1e-6));
}

}  // namespace
