// Out-of-range indices raise as in PyTorch instead of returning zeros: embedding, index_select,
// gather and et_vk.embedding_q4gsw reject negative and too-large indices, index.Tensor accepts
// [-size, size) and rejects the rest. The error names the op, the bad index and the valid range;
// the model stays usable.
#include "reference/indexing/indexing_ref.h"
#include "reference/quantized/q4_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) { return HostTensor::from<int32_t>(DType::Int32, shape, v); }
HostTensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) { return HostTensor::from<int64_t>(DType::Int64, shape, v); }

// The InvalidArgument message a run throws ("" when it throws nothing; a failure when another kind).
template <class F>
std::string run_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

struct EmbeddingGraph {
  OpGraph g;
  HostTensor w = random_f32({4, 3}, 2);
  explicit EmbeddingGraph(const HostTensor& idx) {
    Id wt = g.constant(w);
    Id x = g.input(idx);
    auto os = idx.shape;
    os.push_back(3);
    Id o = g.output(DType::Float32, os);
    g.gb.op("aten.embedding.default", {wt, x, g.gb.int_(-1), g.gb.boolean(false), g.gb.boolean(false), o});
  }
};

TEST(IndexErrors, EmbeddingIndexPastTheTableRaisesNamingOpIndexAndRange) {
  ETW_REQUIRE_GPU();
  EmbeddingGraph e(i32({2}, {1, 9}));
  const std::string msg = run_error([&] { e.g.run(); });
  EXPECT_NE(msg.find("aten.embedding.default (node 0): index 9 is out of bounds for dimension 0 with size 4 "
                     "(valid indices are 0..3)"),
            std::string::npos)
      << msg;
}

TEST(IndexErrors, EmbeddingNegativeInt64IndexRaisesLikePyTorch) {
  ETW_REQUIRE_GPU();
  EmbeddingGraph e(i64({3}, {0, -1, 2}));
  const std::string msg = run_error([&] { e.g.run(); });
  EXPECT_NE(msg.find("index -1 is out of bounds for dimension 0 with size 4"), std::string::npos) << msg;
}

TEST(IndexErrors, ModelStaysUsableAndReportsAgainAfterAnIndexError) {
  ETW_REQUIRE_GPU();
  EmbeddingGraph e(i32({2}, {1, 4}));
  EXPECT_NE(run_error([&] { e.g.run(); }).find("index 4 is out"), std::string::npos);
  const auto good = i32({2}, {3, 0});
  EXPECT_TRUE(Close(e.g.rerun({good})[0], ref::embedding(e.w, good), 0, 0));
  EXPECT_TRUE(Close(e.g.rerun({good})[0], ref::embedding(e.w, good), 0, 0));  // no stale report
  EXPECT_NE(run_error([&] { e.g.rerun({i32({2}, {-7, 0})}); }).find("index -7 is out"), std::string::npos);
}

TEST(IndexErrors, IndexSelectRejectsNegativeAndTooLargeIndicesInItsDim) {
  ETW_REQUIRE_GPU();
  for (int32_t bad : {5, -1}) {
    OpGraph g;
    Id x = g.input(random_f32({2, 5, 3}, 3)), y = g.input(i32({3}, {0, bad, 4}));
    Id o = g.output(DType::Float32, {2, 3, 3});
    g.gb.op("aten.index_select.default", {x, g.gb.int_(-2), y, o});
    const std::string msg = run_error([&] { g.run(); });
    EXPECT_NE(msg.find("aten.index_select.default (node 0): index " + std::to_string(bad) +
                       " is out of bounds for dimension 1 with size 5 (valid indices are 0..4)"),
              std::string::npos)
        << msg;
  }
}

TEST(IndexErrors, GatherRejectsNegativeAndTooLargeIndices) {
  ETW_REQUIRE_GPU();
  for (int32_t bad : {3, -1}) {
    OpGraph g;
    Id x = g.input(random_f32({2, 3}, 4)), y = g.input(i32({2, 2}, {0, 1, 2, bad}));
    Id o = g.output(DType::Float32, {2, 2});
    g.gb.op("aten.gather.default", {x, g.gb.int_(1), y, g.gb.boolean(false), o});
    const std::string msg = run_error([&] { g.run(); });
    EXPECT_NE(msg.find("aten.gather.default (node 0): index " + std::to_string(bad) +
                       " is out of bounds for dimension 1 with size 3"),
              std::string::npos)
        << msg;
  }
}

TEST(IndexErrors, IndexTensorWrapsNegativesOnceAndRejectsBeyondMinusSize) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({5, 4}, 5);
  auto ok = i32({3}, {-5, 4, -1});
  OpGraph g;
  Id x = g.input(a), y = g.input(ok);
  Id o = g.output(DType::Float32, {3, 4});
  g.gb.op("aten.index.Tensor", {x, g.gb.value_list({y}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::index_leading(a, {ok}), 0, 0));
  for (int32_t bad : {-6, 5}) {
    const std::string msg = run_error([&] { g.rerun({a, i32({3}, {0, bad, 1})}); });
    EXPECT_NE(msg.find("aten.index.Tensor (node 0): index " + std::to_string(bad) +
                       " is out of bounds for dimension 0 with size 5 (valid indices are -5..4)"),
              std::string::npos)
        << msg;
  }
}

TEST(IndexErrors, IndexTensorNamesTheDimensionOfTheBadIndexTensor) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 4, 2}, 6)), y0 = g.input(i32({2}, {0, 2})), y1 = g.input(i32({2}, {3, 4}));
  Id o = g.output(DType::Float32, {2, 2});
  g.gb.op("aten.index.Tensor", {x, g.gb.value_list({y0, y1}), o});
  const std::string msg = run_error([&] { g.run(); });
  EXPECT_NE(msg.find("index 4 is out of bounds for dimension 1 with size 4"), std::string::npos) << msg;
}

TEST(IndexErrors, QuantizedEmbeddingRejectsRowsOutsideTheTable) {
  ETW_REQUIRE_GPU();
  const int64_t V = 3, D = 8;
  std::vector<int8_t> q(V * D, 1);
  for (int32_t bad : {3, -1}) {
    OpGraph g;
    Id w = g.gb.constant(DType::UInt8, {V, D / 2}, ref::pack_q4_embedding(q, V, D));
    Id s = g.gb.constant_f32({1}, {0.5f});
    Id i = g.input(i32({2}, {bad, 0}));
    g.gb.op("et_vk.embedding_q4gsw.default", {w, s, g.gb.int_(D), i, g.gb.boolean(false), g.output(DType::Float32, {2, D})});
    const std::string msg = run_error([&] { g.run(); });
    EXPECT_NE(msg.find("et_vk.embedding_q4gsw.default (node 0): index " + std::to_string(bad) +
                       " is out of bounds for dimension 0 with size 3 (valid indices are 0..2)"),
              std::string::npos)
        << msg;
  }
}

TEST(IndexErrors, EmptyIndexedDimensionSaysNoIndexIsValid) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({2, 3}, 7), {2, 3}, true), y = g.input(i32({1}, {0}));
  Id o = g.output(DType::Float32, {1, 3});
  g.gb.op("aten.index_select.default", {x, g.gb.int_(0), y, o});
  EXPECT_EQ(g.run()[0].shape, (std::vector<int64_t>{1, 3}));
  const std::string msg = run_error([&] { g.rerun({HostTensor(DType::Float32, {0, 3}), i32({1}, {0})}); });
  EXPECT_NE(msg.find("index 0 is out of bounds for dimension 0 with size 0 (the dimension is empty, no index is valid)"),
            std::string::npos)
      << msg;
}

}  // namespace
