// embedding, index_select, gather, index.Tensor against fp64 references: negative indices
// (index.Tensor), int32/int64 indices, broadcasting index tensors, dynamic shapes and error paths.
// Out-of-range and negative indices that PyTorch rejects: tests/reliability/index_error_test.cpp.
#include "reference/indexing/indexing_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) { return HostTensor::from<int64_t>(DType::Int64, shape, v); }
HostTensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) { return HostTensor::from<int32_t>(DType::Int32, shape, v); }

TEST(OpIdxEmbedding, RowsForInt64Indices) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({11, 7}, 1);
  auto ix = i64({2, 3}, {0, 10, 9, 4, 4, 0});
  OpGraph g;
  Id wt = g.constant(w);
  Id x = g.input(ix);
  auto ref = ref::embedding(w, ix);
  Id o = g.output(DType::Float32, ref.shape);
  g.gb.op("aten.embedding.default", {wt, x, g.gb.int_(-1), g.gb.boolean(false), g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref, 0, 0));
}

TEST(OpIdxEmbedding, DynamicIndicesAndBadWeightRank) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({9, 5}, 3);
  auto ix = random_i32({1, 6}, 4, 0, 8);
  OpGraph g;
  Id wt = g.constant(w);
  Id x = g.input(ix, {1, 6}, true);
  Id o = g.output(DType::Float32, {1, 6, 5});
  g.gb.op("aten.embedding.default", {wt, x, g.gb.int_(-1), g.gb.boolean(false), g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref::embedding(w, ix), 0, 0));
  auto ix2 = random_i32({1, 2}, 5, 0, 8);
  EXPECT_TRUE(Close(g.rerun({ix2})[0], ref::embedding(w, ix2), 0, 0));

  OpGraph bad;
  Id w3 = bad.constant(random_f32({2, 3, 4}, 6));
  Id y = bad.input(i32({2}, {0, 1}));
  Id p = bad.output(DType::Float32, {2, 4});
  bad.gb.op("aten.embedding.default", {w3, y, bad.gb.int_(-1), bad.gb.boolean(false), bad.gb.boolean(false), p});
  EXPECT_NE(load_error([&] { bad.run(); }).find("2-D"), std::string::npos);
}

TEST(OpIdxEmbedding, LargeOutputPast65535WorkgroupsIsCorrect) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({37, 1024}, 7);
  auto ix = random_i32({16400}, 8, 0, 36);  // 16.8M outputs > 65535 workgroups of 256
  OpGraph g;
  Id wt = g.constant(w);
  Id x = g.input(ix);
  Id o = g.output(DType::Float32, {16400, 1024});
  g.gb.op("aten.embedding.default", {wt, x, g.gb.int_(-1), g.gb.boolean(false), g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref::embedding(w, ix), 0, 0));
}

TEST(OpIdxIndexSelect, MiddleDimInt32DataAndScalarIndex) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({3, 5, 4}, 9, -1000, 1000);
  auto ix = i32({4}, {4, 0, 3, 2});
  OpGraph g;
  Id x = g.input(a), y = g.input(ix);
  auto ref = ref::index_select(a, 1, ix);
  Id o = g.output(DType::Int32, ref.shape);
  g.gb.op("aten.index_select.default", {x, g.gb.int_(-2), y, o});
  EXPECT_TRUE(Close(g.run()[0], ref));

  auto f = random_f32({6, 3}, 10);
  auto s = i32({}, {5});
  OpGraph g2;
  Id x2 = g2.input(f), y2 = g2.input(s);
  auto ref2 = ref::index_select(f, 0, s);
  ASSERT_EQ(ref2.shape, (std::vector<int64_t>{1, 3}));
  Id o2 = g2.output(DType::Float32, ref2.shape);
  g2.gb.op("aten.index_select.default", {x2, g2.gb.int_(0), y2, o2});
  EXPECT_TRUE(Close(g2.run()[0], ref2, 0, 0));
}

TEST(OpIdxIndexSelect, TwoDimIndexAndFloatIndexFail) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4}, 11);
  {
    OpGraph g;
    Id x = g.input(a), y = g.input(i32({2, 2}, {0, 1, 2, 0}));
    Id o = g.output(DType::Float32, {3, 4});
    g.gb.op("aten.index_select.default", {x, g.gb.int_(1), y, o});
    EXPECT_NE(load_error([&] { g.run(); }).find("0-D or 1-D"), std::string::npos);
  }
  {
    OpGraph g;
    Id x = g.input(a), y = g.input(random_f32({2}, 1));
    Id o = g.output(DType::Float32, {3, 2});
    g.gb.op("aten.index_select.default", {x, g.gb.int_(1), y, o});
    std::string e = load_error([&] { g.run(); });
    EXPECT_NE(e.find("index has dtype f32"), std::string::npos) << e;
  }
}

TEST(OpIdxGather, AlongEachDimWithSmallerIndexShape) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({4, 5, 3}, 12);
  for (int64_t d = -3; d < 3; ++d) {
    int64_t dd = d < 0 ? d + 3 : d;
    std::vector<int64_t> is{3, 4, 2};
    auto ix = random_i32(is, 13 + d, 0, static_cast<int32_t>(a.shape[dd]) - 1);
    OpGraph g;
    Id x = g.input(a), y = g.input(ix);
    Id o = g.output(DType::Float32, is);
    g.gb.op("aten.gather.default", {x, g.gb.int_(d), y, g.gb.boolean(false), o});
    EXPECT_TRUE(Close(g.run()[0], ref::gather(a, d, ix), 0, 0)) << "dim " << d;
  }
}

TEST(OpIdxGather, IndexLargerThanSelfOutsideDimFails) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({2, 3}, 14)), y = g.input(random_i32({3, 3}, 15, 0, 2));
  Id o = g.output(DType::Float32, {3, 3});
  g.gb.op("aten.gather.default", {x, g.gb.int_(1), y, g.gb.boolean(false), o});
  EXPECT_NE(load_error([&] { g.run(); }).find("larger than self"), std::string::npos);
}

TEST(OpIdxIndex, SingleAndBroadcastLeadingIndexTensors) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({5, 4, 3}, 16);
  {
    auto i0 = i32({2, 3}, {0, 4, -1, 2, 2, -5});
    OpGraph g;
    Id x = g.input(a), y = g.input(i0);
    auto ref = ref::index_leading(a, {i0});
    Id o = g.output(DType::Float32, ref.shape);
    g.gb.op("aten.index.Tensor", {x, g.gb.value_list({y, g.gb.null()}), o});
    EXPECT_TRUE(Close(g.run()[0], ref, 0, 0));
  }
  {
    auto i0 = i64({3, 1}, {1, -1, 3}), i1 = i32({2}, {3, -4});
    OpGraph g;
    Id x = g.input(a), y0 = g.input(i0), y1 = g.input(i1);
    auto ref = ref::index_leading(a, {i0, i1});
    ASSERT_EQ(ref.shape, (std::vector<int64_t>{3, 2, 3}));
    Id o = g.output(DType::Float32, ref.shape);
    g.gb.op("aten.index.Tensor", {x, g.gb.value_list({y0, y1}), o});
    EXPECT_TRUE(Close(g.run()[0], ref, 0, 0));
  }
}

TEST(OpIdxIndex, AllDimsIndexedOnInt32DataAndDynamicIndex) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({4, 6}, 17, -500, 500);
  auto i0 = random_i32({5}, 18, -4, 3), i1 = random_i32({5}, 19, -6, 5);
  OpGraph g;
  Id x = g.input(a), y0 = g.input(i0, {5}, true), y1 = g.input(i1, {5}, true);
  Id o = g.output(DType::Int32, {5});
  g.gb.op("aten.index.Tensor", {x, g.gb.value_list({y0, y1}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::index_leading(a, {i0, i1})));
  auto j0 = random_i32({2}, 20, -4, 3), j1 = random_i32({2}, 21, -6, 5);
  EXPECT_TRUE(Close(g.rerun({a, j0, j1})[0], ref::index_leading(a, {j0, j1})));
}

// A Null before the index (x[:, idx]) is supported since advanced_index.cpp (see
// tests/ops/indexing/advanced_index_test.cpp); a boolean mask still gives a data-dependent shape.
TEST(OpIdxIndex, BoolMaskIsRejected) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4}, 22);
  OpGraph g;
  Id x = g.input(a), y = g.input(random_bool({3}, 1));
  Id o = g.output(DType::Float32, {3, 4});
  g.gb.op("aten.index.Tensor", {x, g.gb.value_list({y}), o});
  EXPECT_NE(load_error([&] { g.run(); }).find("boolean mask"), std::string::npos);
}

}  // namespace
