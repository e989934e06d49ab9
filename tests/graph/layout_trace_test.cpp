// graph::trace_layouts (graph/layout_trace.h): every layout op the tracer knows gives, for each
// output element, the flat index of the source element PyTorch's op copies there (checked
// against maps written out by hand), chains compose, and malformed arguments give nullopt.
#include <cstring>
#include <functional>

#include <gtest/gtest.h>

#include "graph/layout_trace.h"
#include "support/ir_chain.h"

using namespace etwebgpu;
using namespace etwebgpu::graph;
using namespace etwebgpu::testing;
using format::VkValue;
using format::VkValueKind;

namespace {

int32_t integer(IrChain& c, int64_t v) {
  VkValue x;
  x.kind = VkValueKind::Int;
  x.int_val = v;
  return c.add(x);
}

int32_t indices(IrChain& c, std::vector<int64_t> v) {
  std::vector<uint8_t> bytes(v.size() * 8);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return c.constant({static_cast<int64_t>(v.size())}, bytes, format::VkDType::Int64);
}

std::optional<std::vector<int64_t>> trace(IrChain& c, int32_t src) {
  std::vector<const format::VkOpCall*> calls;
  for (const auto& call : c.ir.chain) calls.push_back(&call);
  return trace_layouts(c.ir, src, calls);
}

TEST(LayoutTrace, EachOpMapsItsOutputToTheSourceElementsPyTorchCopies) {
  {  // permute [2, 3, 4] by (2, 0, 1): out[k, i, j] = x[i, j, k]
    IrChain c;
    int32_t x = c.tensor({2, 3, 4}), y = c.tensor({4, 2, 3});
    c.op("aten.permute_copy.default", {x, c.ints({2, 0, -2}), y});
    std::vector<int64_t> want;
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j) want.push_back((i * 3 + j) * 4 + k);
    EXPECT_EQ(trace(c, x), want);
  }
  {  // slice dim 1 of [2, 7] from -6 by 2: columns 1, 3, 5
    IrChain c;
    int32_t x = c.tensor({2, 7}), y = c.tensor({2, 3});
    c.op("aten.slice_copy.Tensor", {x, integer(c, 1), integer(c, -6), c.null(), integer(c, 2), y});
    EXPECT_EQ(trace(c, x), (std::vector<int64_t>{1, 3, 5, 8, 10, 12}));
  }
  {  // select index -1 of dim 0 of [3, 2]
    IrChain c;
    int32_t x = c.tensor({3, 2}), y = c.tensor({2});
    c.op("aten.select_copy.int", {x, integer(c, 0), integer(c, -1), y});
    EXPECT_EQ(trace(c, x), (std::vector<int64_t>{4, 5}));
  }
  {  // index_select rows 2, 0, 2 (negative -1 = 2) of [3, 2]
    IrChain c;
    int32_t x = c.tensor({3, 2}), y = c.tensor({3, 2});
    c.op("aten.index_select.default", {x, integer(c, 0), indices(c, {2, 0, -1}), y});
    EXPECT_EQ(trace(c, x), (std::vector<int64_t>{4, 5, 0, 1, 4, 5}));
  }
  {  // expand [2, 1] to [2, 2, 3] (a new leading dim, a broadcast one)
    IrChain c;
    int32_t x = c.tensor({2, 1}), y = c.tensor({2, 2, 3});
    c.op("aten.expand_copy.default", {x, c.ints({2, -1, 3}), c.boolean(false), y});
    EXPECT_EQ(trace(c, x), (std::vector<int64_t>{0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1}));
  }
}

// Swin's roll by one along H and W of [1, 2, 2, 1] (index_select twice) then a transpose through
// views: the composition is each map applied in turn.
TEST(LayoutTrace, ChainsComposeThroughViews) {
  IrChain c;
  int32_t x = c.tensor({1, 2, 2, 1}), a = c.tensor({1, 2, 2, 1}), b = c.tensor({1, 2, 2, 1}), v = c.tensor({2, 2});
  int32_t t = c.tensor({2, 2});
  c.op("aten.index_select.default", {x, integer(c, 1), indices(c, {1, 0}), a});
  c.op("aten.index_select.default", {a, integer(c, 2), indices(c, {1, 0}), b});
  c.op("aten.view_copy.default", {b, c.ints({2, 2}), v});
  c.op("aten.permute_copy.default", {v, c.ints({1, 0}), t});
  // b[h][w] = x[1-h][1-w]; t[i][j] = b[j][i]
  EXPECT_EQ(trace(c, x), (std::vector<int64_t>{3, 1, 2, 0}));
}

TEST(LayoutTrace, ArgumentsThatDoNotFitTheDimsGiveNothing) {
  {
    IrChain c;
    int32_t x = c.tensor({2, 3}), y = c.tensor({3, 2});
    c.op("aten.permute_copy.default", {x, c.ints({1, 1}), y});  // not a permutation
    EXPECT_FALSE(trace(c, x));
  }
  {
    IrChain c;
    int32_t x = c.tensor({3, 2}), y = c.tensor({1, 2});
    c.op("aten.index_select.default", {x, integer(c, 0), indices(c, {3}), y});  // out of range
    EXPECT_FALSE(trace(c, x));
  }
  {
    IrChain c;
    int32_t x = c.tensor({2, 7}), y = c.tensor({2, 4});  // the slice gives 3 columns, not 4
    c.op("aten.slice_copy.Tensor", {x, integer(c, 1), integer(c, -6), c.null(), integer(c, 2), y});
    EXPECT_FALSE(trace(c, x));
  }
  {
    IrChain c;
    int32_t x = c.tensor({3, 2}), idx = c.input({2}), y = c.tensor({2, 2});
    c.op("aten.index_select.default", {x, integer(c, 0), idx, y});  // an index fed each run
    EXPECT_FALSE(is_traceable_layout(c.ir, c.ir.chain[0]));
  }
}

}  // namespace
