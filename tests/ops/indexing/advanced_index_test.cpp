// aten.index.Tensor and aten.index_put.default with PyTorch's advanced-indexing semantics (Null
// entries anywhere, broadcasting index tensors, adjacent vs non-adjacent placement, negative
// indices, accumulate with duplicates, boolean masks), and aten.copy_.default, against the fp64
// references of tests/reference/indexing/advanced_index_ref.h. Out-of-range indices are not
// tested here (their error reporting is still to come).
#include "reference/indexing/advanced_index_ref.h"
#include "reference/memory/memory_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

using ref::IndexList;

HostTensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) { return HostTensor::from<int64_t>(DType::Int64, shape, v); }
HostTensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) { return HostTensor::from<int32_t>(DType::Int32, shape, v); }
HostTensor bmask(std::vector<int64_t> shape, std::vector<int> v) {
  HostTensor t(DType::Bool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.data[i] = static_cast<uint8_t>(v[i] != 0);
  return t;
}

// An index tensor fed as a delegate input whose VkTensor dtype is Int64 (as in merged programs,
// where index tensors are the Program's int64 EValues), rather than the Int32 VkTensor OpGraph
// makes for int64 host data.
Id input_vk_i64(OpGraph& g, const HostTensor& t) {
  g.inputs.push_back(t);
  return g.gb.input(DType::Int64, t.shape, false, -1, DType::Int64, true);
}

// Builds [entries...] as a ValueList: a nullopt entry is a Null (full slice), others are inputs.
struct Indexed {
  IndexList ref;
  Id list = -1;
};
Indexed index_list(OpGraph& g, const IndexList& entries) {
  Indexed r{entries, -1};
  std::vector<Id> ids;
  for (const auto& e : entries) ids.push_back(e ? g.input(*e) : g.gb.null());
  r.list = g.gb.value_list(ids);
  return r;
}

HostTensor run_index(const HostTensor& x, const IndexList& entries) {
  OpGraph g;
  Id xi = g.input(x);
  auto ix = index_list(g, entries);
  auto shape = ref::index_shape(x.shape, entries);
  Id o = g.output(x.dtype, shape);
  g.gb.op("aten.index.Tensor", {xi, ix.list, o});
  return g.run()[0];
}

HostTensor run_put(const HostTensor& x, const IndexList& entries, const HostTensor& v, bool accumulate) {
  OpGraph g;
  Id xi = g.input(x);
  auto ix = index_list(g, entries);
  Id vi = g.input(v);
  Id o = g.output(x.dtype, x.shape);
  g.gb.op("aten.index_put.default", {xi, ix.list, vi, g.gb.boolean(accumulate), o});
  return g.run()[0];
}

// ------------------------------------------------------------------------------- index.Tensor

TEST(OpIdxAdvancedIndex, NonePrefixedIndexGathersAlongTheLastDimLikeAKvCacheRead) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 7}, 101);
  IndexList e = {std::nullopt, std::nullopt, i64({3}, {6, 0, 2})};  // x[:, :, idx]
  auto ref = ref::index_tensor(x, e);
  ASSERT_EQ(ref.shape, (std::vector<int64_t>{2, 3, 3}));
  EXPECT_TRUE(Close(run_index(x, e), ref, 0, 0));
}

TEST(OpIdxAdvancedIndex, NoneBetweenLeadingDimAndAdjacentIndexPairKeepsThePairInPlace) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 4, 5, 3}, 102);
  // x[:, i0, i1] with i0 [2,1] and i1 [3]: B = [2,3] replaces dims 1..2 -> [2, 2, 3, 3].
  IndexList e = {std::nullopt, i64({2, 1}, {3, 1}), i64({3}, {0, 4, 2})};
  auto ref = ref::index_tensor(x, e);
  ASSERT_EQ(ref.shape, (std::vector<int64_t>{2, 2, 3, 3}));
  EXPECT_TRUE(Close(run_index(x, e), ref, 0, 0));
}

TEST(OpIdxAdvancedIndex, TwoIndexTensorsBroadcastTwoByOneWithThree) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 5, 3}, 103);
  IndexList e = {i64({2, 1}, {0, 3}), i64({3}, {4, 1, 2})};  // x[i0, i1] -> [2, 3, 3]
  auto ref = ref::index_tensor(x, e);
  ASSERT_EQ(ref.shape, (std::vector<int64_t>{2, 3, 3}));
  EXPECT_TRUE(Close(run_index(x, e), ref, 0, 0));
}

TEST(OpIdxAdvancedIndex, NonAdjacentIndicesPutTheBroadcastDimsFirst) {
  ETW_REQUIRE_GPU();
  {
    auto x = random_f32({4, 3, 5}, 104);
    IndexList e = {i64({2}, {3, 0}), std::nullopt, i64({2}, {1, 4})};  // x[i, :, j] -> [2, 3]
    auto ref = ref::index_tensor(x, e);
    ASSERT_EQ(ref.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_TRUE(Close(run_index(x, e), ref, 0, 0));
  }
  {
    auto x = random_f32({2, 4, 3, 5}, 105);
    // x[:, i, :, j] with i [2,1], j [3]: B = [2,3] first, then dims 0 and 2 -> [2, 3, 2, 3].
    IndexList e = {std::nullopt, i64({2, 1}, {1, 2}), std::nullopt, i64({3}, {0, 4, 3})};
    auto ref = ref::index_tensor(x, e);
    ASSERT_EQ(ref.shape, (std::vector<int64_t>{2, 3, 2, 3}));
    EXPECT_TRUE(Close(run_index(x, e), ref, 0, 0));
  }
}

TEST(OpIdxAdvancedIndex, NegativeIndicesCountFromTheEnd) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 6}, 106);
  IndexList e = {std::nullopt, i64({4}, {-1, -6, 0, -3})};
  auto ref = ref::index_tensor(x, e);
  auto got = run_index(x, e);
  EXPECT_TRUE(Close(got, ref, 0, 0));
  // -1 is the last column, -6 the first.
  auto xv = x.to_f64();
  EXPECT_EQ(got.as<float>()[0], static_cast<float>(xv[5]));
  EXPECT_EQ(got.as<float>()[1], static_cast<float>(xv[0]));
}

TEST(OpIdxAdvancedIndex, Int32AndInt64IndexTensorsSelectTheSameElements) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 5, 4}, 107);
  std::vector<int64_t> iv = {4, -2, 0, 1};
  IndexList e = {std::nullopt, i64({4}, iv)};
  auto ref = ref::index_tensor(x, e);
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind == 0 ? "Int32 VkTensor, int32 data" : kind == 1 ? "Int32 VkTensor, int64 data" : "Int64 VkTensor");
    OpGraph g;
    Id xi = g.input(x);
    Id ii = kind == 0   ? g.input(i32({4}, {4, -2, 0, 1}))
            : kind == 1 ? g.input(i64({4}, iv))
                        : input_vk_i64(g, i64({4}, iv));
    Id o = g.output(DType::Float32, ref.shape);
    g.gb.op("aten.index.Tensor", {xi, g.gb.value_list({g.gb.null(), ii}), o});
    EXPECT_TRUE(Close(g.run()[0], ref, 0, 0));
  }
}

TEST(OpIdxAdvancedIndex, Int32SelfIsGatheredExactly) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({4, 3, 5}, 108, -100000, 100000);
  IndexList e = {i32({3}, {2, -1, 0}), std::nullopt, i32({3}, {4, 0, -2})};
  auto ref = ref::index_tensor(x, e);
  auto got = run_index(x, e);
  EXPECT_EQ(got.dtype, DType::Int32);
  EXPECT_TRUE(Close(got, ref));
}

TEST(OpIdxAdvancedIndex, OneElementIndexTensorKeepsASizeOneDim) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4, 5}, 109);
  IndexList e = {std::nullopt, i64({1}, {2})};  // x[:, [2]] -> [3, 1, 5]
  auto ref = ref::index_tensor(x, e);
  ASSERT_EQ(ref.shape, (std::vector<int64_t>{3, 1, 5}));
  EXPECT_TRUE(Close(run_index(x, e), ref, 0, 0));
}

TEST(OpIdxAdvancedIndex, ZeroDimIndexTensorDropsTheIndexedDim) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4, 5}, 113);
  IndexList e = {std::nullopt, i64({}, {-2})};  // x[:, torch.tensor(-2)] -> [3, 5]
  auto ref = ref::index_tensor(x, e);
  ASSERT_EQ(ref.shape, (std::vector<int64_t>{3, 5}));
  EXPECT_TRUE(Close(run_index(x, e), ref, 0, 0));
}

TEST(OpIdxAdvancedIndex, BoolSelfIsGatheredAsBool) {
  ETW_REQUIRE_GPU();
  auto x = random_bool({4, 6}, 114);
  IndexList e = {i32({3, 1}, {3, 0, -1}), i32({2}, {5, 1})};
  auto got = run_index(x, e);
  EXPECT_EQ(got.dtype, DType::Bool);
  EXPECT_TRUE(Close(got, ref::index_tensor(x, e)));
}

TEST(OpIdxAdvancedIndex, EmptyIndexTensorGivesAnEmptyResult) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4}, 110);
  IndexList e = {i64({0}, {})};  // x[torch.empty(0, dtype=long)] -> [0, 4]
  auto ref = ref::index_tensor(x, e);
  ASSERT_EQ(ref.shape, (std::vector<int64_t>{0, 4}));
  auto got = run_index(x, e);
  EXPECT_EQ(got.shape, ref.shape);
  EXPECT_EQ(got.numel(), 0);
}

TEST(OpIdxAdvancedIndex, DynamicSelfAndIndexRerunWithSmallerShapes) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 8}, 111);
  auto ix = i64({4}, {7, -8, 3, 5});
  OpGraph g;
  Id xi = g.input(x, {2, 3, 8}, true);
  Id ii = g.input(ix, {4}, true);
  Id o = g.output(DType::Float32, {2, 3, 4});
  g.gb.op("aten.index.Tensor", {xi, g.gb.value_list({g.gb.null(), g.gb.null(), ii}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::index_tensor(x, {std::nullopt, std::nullopt, ix}), 0, 0));
  auto x2 = random_f32({1, 3, 5}, 112);
  auto ix2 = i64({2}, {-1, 1});
  auto got = g.rerun({x2, ix2});
  auto ref2 = ref::index_tensor(x2, {std::nullopt, std::nullopt, ix2});
  ASSERT_EQ(ref2.shape, (std::vector<int64_t>{1, 3, 2}));
  EXPECT_TRUE(Close(got[0], ref2, 0, 0));
}

TEST(OpIdxAdvancedIndex, ResultPast65535WorkgroupsIsGatheredCompletely) {
  ETW_REQUIRE_GPU();
  // 4 x 4194305 = 16777220 elements: 65537 workgroups of 256, so the grid folds into 2D.
  auto x = random_f32({4, 4194305}, 115);
  IndexList e = {i32({4}, {-1, 0, 2, 1})};
  EXPECT_TRUE(Close(run_index(x, e), ref::index_tensor(x, e), 0, 0));
}

// ------------------------------------------------------------------------------- index_put

TEST(OpIdxAdvancedPut, NonePrefixedPutWritesOnePositionOfAKvCache) {
  ETW_REQUIRE_GPU();
  // The exported KV-cache update: index_put(cache[1,2,S,D], [None, None, pos[1]], v[2,1,D]).
  auto cache = random_f32({1, 2, 6, 4}, 201);
  auto pos = i64({1}, {3});
  auto v = random_f32({2, 1, 4}, 202, 5.f, 6.f);
  IndexList e = {std::nullopt, std::nullopt, pos};
  auto ref = ref::index_put(cache, e, v, false);
  EXPECT_TRUE(Close(run_put(cache, e, v, false), ref, 0, 0));
}

TEST(OpIdxAdvancedPut, OverwriteAtTwoBroadcastIndexTensors) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 5}, 203);
  IndexList e = {i64({2, 1}, {0, -1}), i64({3}, {1, 4, 2})};  // 6 distinct elements
  auto v = random_f32({2, 3}, 204, 10.f, 11.f);
  EXPECT_TRUE(Close(run_put(x, e, v, false), ref::index_put(x, e, v, false), 0, 0));
}

TEST(OpIdxAdvancedPut, NonAdjacentPutTakesValuesInBroadcastDimsFirstLayout) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4, 5}, 205);
  IndexList e = {i64({2}, {2, 0}), std::nullopt, i64({2}, {-1, 1})};  // x[i, :, j] is [2, 4]
  auto v = random_f32({2, 4}, 206, 10.f, 11.f);
  EXPECT_TRUE(Close(run_put(x, e, v, false), ref::index_put(x, e, v, false), 0, 0));
}

TEST(OpIdxAdvancedPut, ValuesBroadcastOverTheIndexedShape) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 3, 5}, 207);
  IndexList e = {std::nullopt, i64({2}, {2, 0})};  // x[:, idx] is [4, 2, 5]
  for (std::vector<int64_t> vs : {std::vector<int64_t>{1}, {5}, {2, 1}, {4, 1, 5}}) {
    SCOPED_TRACE(::testing::PrintToString(vs));
    auto v = random_f32(vs, 208, 10.f, 11.f);
    EXPECT_TRUE(Close(run_put(x, e, v, false), ref::index_put(x, e, v, false), 0, 0));
  }
}

TEST(OpIdxAdvancedPut, AccumulateSumsDuplicateIndicesForFloat) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({5, 3}, 209);
  IndexList e = {i64({6}, {1, 3, 1, 1, -2, 0})};  // row 1 three times, row 3 twice (3 and -2)
  auto v = random_f32({6, 3}, 210);
  auto ref = ref::index_put(x, e, v, true);
  EXPECT_TRUE(Close(run_put(x, e, v, true), ref, 1e-6, 1e-6));
  // Overwriting would not sum: the reference must differ there, so the test can fail.
  EXPECT_FALSE(Close(ref::index_put(x, e, v, false), ref, 1e-6, 1e-6));
}

TEST(OpIdxAdvancedPut, AccumulateSumsDuplicateIndicesForInt32) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({4, 2, 3}, 211, -1000, 1000);
  IndexList e = {i32({2, 2}, {0, 2, 2, -4}), std::nullopt, i32({1}, {1})};  // (0,:,1) and (2,:,1) twice each
  auto v = random_i32({2, 2, 2}, 212, -50, 50);
  auto got = run_put(x, e, v, true);
  EXPECT_EQ(got.dtype, DType::Int32);
  EXPECT_TRUE(Close(got, ref::index_put(x, e, v, true)));
}

TEST(OpIdxAdvancedPut, Int32SelfOverwriteWithInt64VkIndices) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({3, 6}, 213, -1000, 1000);
  auto ix = i64({3}, {5, -6, 2});
  auto v = random_i32({3, 3}, 214, 5000, 6000);
  IndexList e = {std::nullopt, ix};
  OpGraph g;
  Id xi = g.input(x);
  Id ii = input_vk_i64(g, ix);
  Id vi = g.input(v);
  Id o = g.output(DType::Int32, x.shape);
  g.gb.op("aten.index_put.default", {xi, g.gb.value_list({g.gb.null(), ii}), vi, g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref::index_put(x, e, v, false)));
}

TEST(OpIdxAdvancedPut, AccumulateOnBoolSelfIsLogicalOr) {
  ETW_REQUIRE_GPU();
  auto x = bmask({2, 4}, {1, 0, 0, 0, 0, 1, 0, 0});
  IndexList e = {std::nullopt, i32({5}, {0, 2, 2, 3, -3})};  // column 2 twice, -3 is column 1
  auto v = bmask({2, 5}, {0, 1, 0, 0, 1, 0, 0, 1, 1, 0});
  auto got = run_put(x, e, v, true);
  EXPECT_EQ(got.dtype, DType::Bool);
  EXPECT_TRUE(Close(got, ref::index_put(x, e, v, true)));
}

TEST(OpIdxAdvancedPut, BoolMaskPutWithAOneElementValue) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4}, 215);
  auto m = random_bool({3, 4}, 216);
  auto v = HostTensor::from<float>(DType::Float32, {1}, {7.5f});
  IndexList e = {m};
  auto ref = ref::index_put(x, e, v, false);
  EXPECT_TRUE(Close(run_put(x, e, v, false), ref, 0, 0));
}

TEST(OpIdxAdvancedPut, BoolMaskOverRowsPutWithRowShapedValues) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({5, 3}, 217);
  auto m = bmask({5}, {1, 0, 1, 1, 0});  // x[m] is [3, 3]; values [3] go to every selected row
  auto v = random_f32({3}, 218, 10.f, 11.f);
  IndexList e = {m};
  EXPECT_TRUE(Close(run_put(x, e, v, false), ref::index_put(x, e, v, false), 0, 0));
}

TEST(OpIdxAdvancedPut, BoolMaskAfterNoneAccumulatesIntoSelectedColumns) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({2, 5, 3}, 219, -100, 100);
  auto m = bmask({5}, {0, 1, 1, 0, 1});  // x[:, m] is [2, 3, 3]
  auto v = random_i32({3}, 220, 1, 9);
  IndexList e = {std::nullopt, m};
  EXPECT_TRUE(Close(run_put(x, e, v, true), ref::index_put(x, e, v, true)));
}

TEST(OpIdxAdvancedPut, AllFalseMaskLeavesSelfUnchanged) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3}, 221);
  auto m = bmask({2, 3}, {0, 0, 0, 0, 0, 0});
  auto v = HostTensor::from<float>(DType::Float32, {1}, {9.f});
  auto got = run_put(x, {m}, v, false);
  EXPECT_TRUE(Close(got, ref::index_put(x, {m}, v, false), 0, 0));
  EXPECT_TRUE(Close(got, x, 0, 0));
}

TEST(OpIdxAdvancedPut, OneElementIndexWritesOneRow) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 3}, 222);
  IndexList e = {i64({1}, {-3})};
  auto v = random_f32({1, 3}, 223, 10.f, 11.f);
  EXPECT_TRUE(Close(run_put(x, e, v, false), ref::index_put(x, e, v, false), 0, 0));
}

TEST(OpIdxAdvancedPut, EmptyIndexTensorLeavesSelfUnchanged) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 3}, 224);
  IndexList e = {i64({0}, {})};
  auto v = random_f32({3}, 225, 10.f, 11.f);  // broadcasts to the empty [0, 3] selection
  auto ref = ref::index_put(x, e, v, false);
  EXPECT_TRUE(Close(run_put(x, e, v, false), ref, 0, 0));
}

TEST(OpIdxAdvancedPut, DynamicCacheAndPositionsRerunWithSmallerShapes) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 8}, 226);
  auto ix = i64({2}, {6, 1});
  auto v = random_f32({2, 3, 2}, 227, 10.f, 11.f);
  OpGraph g;
  Id xi = g.input(x, {2, 3, 8}, true);
  Id ii = g.input(ix, {2}, true);
  Id vi = g.input(v, {2, 3, 2}, true);
  Id o = g.output(DType::Float32, {2, 3, 8});
  g.gb.op("aten.index_put.default", {xi, g.gb.value_list({g.gb.null(), g.gb.null(), ii}), vi, g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref::index_put(x, {std::nullopt, std::nullopt, ix}, v, false), 0, 0));
  auto x2 = random_f32({1, 3, 5}, 228);
  auto ix2 = i64({1}, {-2});
  auto v2 = random_f32({1, 3, 1}, 229, 10.f, 11.f);
  auto got = g.rerun({x2, ix2, v2});
  EXPECT_TRUE(Close(got[0], ref::index_put(x2, {std::nullopt, std::nullopt, ix2}, v2, false), 0, 0));
}

// ------------------------------------------------------------------------------- error paths

TEST(OpIdxAdvancedErrors, BoolMaskInIndexTensorIsRefusedAsDataDependent) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 4}, 301)), m = g.input(random_bool({3}, 302));
  Id o = g.output(DType::Float32, {3, 4});
  g.gb.op("aten.index.Tensor", {x, g.gb.value_list({m}), o});
  auto msg = load_error([&] { g.run(); });
  EXPECT_TRUE(has(msg, "boolean mask")) << msg;
  EXPECT_TRUE(has(msg, "data-dependent")) << msg;
}

TEST(OpIdxAdvancedErrors, MoreThanFourIndexTensorsAreRefused) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({2, 2, 2, 2, 2}, 303));
  std::vector<Id> ids;
  for (int k = 0; k < 5; ++k) ids.push_back(g.input(i32({1}, {1})));
  Id o = g.output(DType::Float32, {1});
  g.gb.op("aten.index.Tensor", {x, g.gb.value_list(ids), o});
  auto msg = load_error([&] { g.run(); });
  EXPECT_TRUE(has(msg, "5 index tensors")) << msg;
  EXPECT_TRUE(has(msg, "at most 4")) << msg;
}

TEST(OpIdxAdvancedErrors, IndexTensorsThatDoNotBroadcastAreRefused) {
  ETW_REQUIRE_GPU();
  for (bool put : {false, true}) {
    SCOPED_TRACE(put ? "index_put" : "index.Tensor");
    OpGraph g;
    Id x = g.input(random_f32({4, 5}, 304));
    Id a = g.input(i32({2}, {0, 1})), b = g.input(i32({3}, {0, 1, 2}));
    Id o = g.output(DType::Float32, put ? std::vector<int64_t>{4, 5} : std::vector<int64_t>{3});
    if (put)
      g.gb.op("aten.index_put.default", {x, g.gb.value_list({a, b}), g.input(random_f32({1}, 305)), g.gb.boolean(false), o});
    else
      g.gb.op("aten.index.Tensor", {x, g.gb.value_list({a, b}), o});
    auto msg = load_error([&] { g.run(); });
    EXPECT_TRUE(has(msg, "index tensors do not broadcast")) << msg;
  }
}

TEST(OpIdxAdvancedErrors, ValuesThatDoNotBroadcastToTheIndexedShapeAreRefused) {
  ETW_REQUIRE_GPU();
  {
    OpGraph g;
    Id x = g.input(random_f32({4, 5}, 306)), i = g.input(i32({2}, {0, 3}));
    Id v = g.input(random_f32({3, 5}, 307));  // x[i] is [2, 5]
    Id o = g.output(DType::Float32, {4, 5});
    g.gb.op("aten.index_put.default", {x, g.gb.value_list({i}), v, g.gb.boolean(false), o});
    auto msg = load_error([&] { g.run(); });
    EXPECT_TRUE(has(msg, "values [3, 5]") || has(msg, "values [3,5]")) << msg;
    EXPECT_TRUE(has(msg, "cannot be broadcast")) << msg;
  }
  {
    OpGraph g;  // mask put: values [4] against rows of 3
    Id x = g.input(random_f32({5, 3}, 308)), m = g.input(bmask({5}, {1, 0, 1, 0, 0}));
    Id v = g.input(random_f32({4}, 309));
    Id o = g.output(DType::Float32, {5, 3});
    g.gb.op("aten.index_put.default", {x, g.gb.value_list({m}), v, g.gb.boolean(false), o});
    auto msg = load_error([&] { g.run(); });
    EXPECT_TRUE(has(msg, "cannot be broadcast")) << msg;
  }
}

TEST(OpIdxAdvancedErrors, TooManyIndicesForTheRankAreRefused) {
  ETW_REQUIRE_GPU();
  {
    OpGraph g;
    Id x = g.input(random_f32({3, 4}, 310));
    Id a = g.input(i32({1}, {0}));
    Id o = g.output(DType::Float32, {1});
    g.gb.op("aten.index.Tensor", {x, g.gb.value_list({a, g.gb.null(), a}), o});
    auto msg = load_error([&] { g.run(); });
    EXPECT_TRUE(has(msg, "too many indices")) << msg;
  }
  {
    OpGraph g;  // a rank-2 mask after a None on a rank-2 self uses 3 dims
    Id x = g.input(random_f32({3, 4}, 311)), m = g.input(random_bool({4, 2}, 312));
    Id o = g.output(DType::Float32, {3, 4});
    g.gb.op("aten.index_put.default", {x, g.gb.value_list({g.gb.null(), m}), g.input(random_f32({1}, 313)),
                                       g.gb.boolean(false), o});
    auto msg = load_error([&] { g.run(); });
    EXPECT_TRUE(has(msg, "too many indices")) << msg;
  }
}

TEST(OpIdxAdvancedErrors, MaskThatDoesNotMatchTheIndexedDimsIsRefused) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 4}, 316)), m = g.input(random_bool({3, 3}, 317));
  Id o = g.output(DType::Float32, {3, 4});
  g.gb.op("aten.index_put.default", {x, g.gb.value_list({m}), g.input(random_f32({1}, 318)), g.gb.boolean(false), o});
  auto msg = load_error([&] { g.run(); });
  EXPECT_TRUE(has(msg, "mask")) << msg;
  EXPECT_TRUE(has(msg, "does not match")) << msg;
}

TEST(OpIdxAdvancedErrors, MaskCombinedWithAnotherIndexTensorIsRefused) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 4}, 319)), m = g.input(random_bool({3}, 320)), i = g.input(i32({1}, {0}));
  Id o = g.output(DType::Float32, {3, 4});
  g.gb.op("aten.index_put.default", {x, g.gb.value_list({m, i}), g.input(random_f32({1}, 321)), g.gb.boolean(false), o});
  auto msg = load_error([&] { g.run(); });
  EXPECT_TRUE(has(msg, "boolean mask index combined with other index tensors")) << msg;
}

// x[mask] = v with one value row per selected element is valid PyTorch, but the count is only known
// on the GPU: refused as Unsupported (not InvalidArgument), naming what is supported.
TEST(OpIdxAdvancedErrors, MaskPutWithOneValueRowPerSelectedElementIsUnsupported) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({4, 3}, 322)), m = g.input(bmask({4}, {1, 0, 0, 1}));
  Id v = g.input(random_f32({2, 3}, 323));  // exactly the 2 selected rows
  Id o = g.output(DType::Float32, {4, 3});
  g.gb.op("aten.index_put.default", {x, g.gb.value_list({m}), v, g.gb.boolean(false), o});
  ErrorKind kind = ErrorKind::Internal;
  std::string msg;
  try {
    g.run();
  } catch (const Error& e) {
    kind = e.kind();
    msg = e.what();
  }
  EXPECT_EQ(kind, ErrorKind::Unsupported) << msg;
  EXPECT_TRUE(has(msg, "only values broadcast over the count are supported")) << msg;
}

TEST(OpIdxAdvancedErrors, FloatIndexTensorIsRefused) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 4}, 314)), i = g.input(random_f32({2}, 315));
  Id o = g.output(DType::Float32, {2, 4});
  g.gb.op("aten.index.Tensor", {x, g.gb.value_list({i}), o});
  auto msg = load_error([&] { g.run(); });
  EXPECT_TRUE(has(msg, "indices must be int32, int64 or bool")) << msg;
  EXPECT_TRUE(has(msg, "got f32")) << msg;
}

// ------------------------------------------------------------------------------- copy_

// t = clone(x); copy_(t, src); outputs t.
HostTensor run_copy(const HostTensor& x, const HostTensor& src) {
  OpGraph g;
  Id xi = g.input(x), si = g.input(src);
  Id t = g.output(x.dtype, x.shape);
  g.gb.op("aten.clone.default", {xi, g.gb.null(), t});
  g.gb.op("aten.copy_.default", {t, si, g.gb.boolean(false), t});
  return g.run()[0];
}

TEST(OpIdxAdvancedCopy, SameShapeCopyOverwritesSelf) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4}, 401), src = random_f32({3, 4}, 402, 5.f, 6.f);
  EXPECT_TRUE(Close(run_copy(x, src), ref::expand(src, {3, 4}), 0, 0));
}

TEST(OpIdxAdvancedCopy, OneRowSrcBroadcastsIntoEveryRowOfSelf) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4}, 403), src = random_f32({1, 4}, 404, 5.f, 6.f);
  EXPECT_TRUE(Close(run_copy(x, src), ref::expand(src, {3, 4}), 0, 0));
  auto xi = random_i32({2, 3, 4}, 405, -9, 9), si = random_i32({4}, 406, 100, 200);
  EXPECT_TRUE(Close(run_copy(xi, si), ref::expand(si, {2, 3, 4})));
}

TEST(OpIdxAdvancedCopy, SrcThatDoesNotBroadcastIsRefused) {
  ETW_REQUIRE_GPU();
  auto msg = load_error([&] { run_copy(random_f32({3, 4}, 407), random_f32({2, 4}, 408)); });
  EXPECT_TRUE(has(msg, "cannot be broadcast to self")) << msg;
}

}  // namespace
