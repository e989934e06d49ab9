// graph::view_through (graph/layout_view.h) without a GPU: each layout call's output as an affine
// view of the tensor a chain starts from, PyTorch's bounds rules, and the calls it must refuse.
// The fusion tests (view_fusion_test.cpp) run these views against the unfused kernels.
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "etwebgpu/tensor.h"
#include "graph/layout_view.h"
#include "support/ir_chain.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
using etwebgpu::graph::contiguous_view;
using etwebgpu::graph::view_through;

namespace {

struct View {
  int64_t offset;
  std::vector<int64_t> dims, strides;
};

::testing::AssertionResult Is(const std::optional<format::VkExprView>& v, const View& want) {
  if (!v) return ::testing::AssertionFailure() << "refused";
  if (v->offset != want.offset || v->dims != want.dims || v->strides != want.strides)
    return ::testing::AssertionFailure() << "offset " << v->offset << " dims " << shape_str(v->dims) << " strides "
                                         << shape_str(v->strides);
  return ::testing::AssertionSuccess();
}

int32_t int_value(IrChain& c, int64_t v) {
  format::VkValue x;
  x.kind = format::VkValueKind::Int;
  x.int_val = v;
  return c.add(x);
}

// One call over a fresh tensor `in`: its view from the contiguous one.
std::optional<format::VkExprView> one(const std::vector<int64_t>& in, const std::string& op,
                                      const std::function<std::vector<int32_t>(IrChain&)>& args,
                                      const std::vector<int64_t>& out) {
  IrChain c;
  int32_t x = c.tensor(in);
  std::vector<int32_t> a{x};
  for (int32_t v : args(c)) a.push_back(v);
  a.push_back(c.tensor(out));
  c.op(op, a);
  return view_through(c.ir, c.ir.chain[0], contiguous_view(in));
}

TEST(LayoutView, SliceBoundsWrapAndClampLikePyTorch) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  auto slice = [&](int64_t start, int64_t end, int64_t step, std::vector<int64_t> out) {
    return one({3, 7}, "aten.slice_copy.Tensor", [&](IrChain& c) {
      return std::vector<int32_t>{int_value(c, -1), int_value(c, start), int_value(c, end), int_value(c, step)};
    }, out);
  };
  EXPECT_TRUE(Is(slice(-100, 100, 2, {3, 4}), {0, {3, 4}, {7, 2}}));  // both bounds clamp
  EXPECT_TRUE(Is(slice(-3, big, 1, {3, 3}), {4, {3, 3}, {7, 1}}));    // start wraps once
  EXPECT_TRUE(Is(slice(2, -2, 3, {3, 1}), {2, {3, 1}, {7, 3}}));       // end wraps: [2, 5) by 3
  EXPECT_TRUE(Is(slice(5, 2, 1, {3, 0}), {5, {3, 0}, {7, 1}}));        // end before start: empty
  EXPECT_FALSE(slice(0, 7, 0, {3, 7}));                                // step 0: the builder's error
  EXPECT_FALSE(slice(0, 7, 1, {3, 6}));                                // not the serialized output
  // None bounds and step; a dim given as an integral Double.
  auto none = one({4, 5}, "aten.slice_copy.Tensor", [](IrChain& c) {
    format::VkValue d;
    d.kind = format::VkValueKind::Double;
    d.double_val = 0.0;
    return std::vector<int32_t>{c.add(d), c.null(), c.null(), c.null()};
  }, {4, 5});
  EXPECT_TRUE(Is(none, {0, {4, 5}, {5, 1}}));
}

TEST(LayoutView, SelectNarrowExpandFlipAndTransposeMoveOffsetAndStrides) {
  auto ints = [](std::vector<int64_t> v) {
    return [v](IrChain& c) {
      std::vector<int32_t> r;
      for (int64_t x : v) r.push_back(int_value(c, x));
      return r;
    };
  };
  EXPECT_TRUE(Is(one({3, 5}, "aten.select_copy.int", ints({1, -1}), {3}), {4, {3}, {5}}));
  EXPECT_FALSE(one({3, 5}, "aten.select_copy.int", ints({1, 5}), {3}));  // out of range: PyTorch raises
  EXPECT_TRUE(Is(one({3, 5}, "aten.narrow_copy.default", ints({1, -4, 2}), {3, 2}), {1, {3, 2}, {5, 1}}));
  EXPECT_TRUE(Is(one({3, 1}, "aten.expand_copy.default",
                     [](IrChain& c) { return std::vector<int32_t>{c.ints({2, -1, 4}), c.boolean(false)}; }, {2, 3, 4}),
                 {0, {2, 3, 4}, {0, 1, 0}}));
  EXPECT_FALSE(one({3, 2}, "aten.expand_copy.default",
                   [](IrChain& c) { return std::vector<int32_t>{c.ints({3, 4}), c.boolean(false)}; }, {3, 4}));
  EXPECT_TRUE(Is(one({4, 3}, "aten.flip.default", [](IrChain& c) { return std::vector<int32_t>{c.ints({0})}; }, {4, 3}),
                 {9, {4, 3}, {-3, 1}}));
  EXPECT_TRUE(Is(one({2, 3, 4}, "aten.transpose_copy.int", ints({0, -1}), {4, 3, 2}), {0, {4, 3, 2}, {1, 4, 12}}));
  EXPECT_TRUE(Is(one({2, 3}, "aten.t_copy.default", ints({}), {3, 2}), {0, {3, 2}, {1, 3}}));
  EXPECT_FALSE(one({2, 3, 4}, "aten.t_copy.default", ints({}), {4, 3, 2}));  // t() takes at most 2 dims
}

// permute -> slice -> squeeze -> reshape -> unsqueeze compose into one view; a reshape the strides
// cannot express, a SymInt argument, or a call with the wrong argument count is refused.
TEST(LayoutView, ChainsComposeAndWhatIsNotAnAffineMapIsRefused) {
  IrChain c;
  int32_t x = c.tensor({3, 4, 6});
  int32_t p = c.tensor({6, 3, 4}), s = c.tensor({1, 3, 4}), q = c.tensor({3, 4}), v = c.tensor({12}), u = c.tensor({12, 1});
  c.op("aten.permute_copy.default", {x, c.ints({2, 0, 1}), p});
  c.op("aten.slice_copy.Tensor", {p, int_value(c, 0), int_value(c, 4), int_value(c, 5), int_value(c, 1), s});
  c.op("aten.squeeze_copy.dims", {s, c.ints({0}), q});
  c.op("aten.view_copy.default", {q, c.ints({-1}), v});
  c.op("aten.unsqueeze_copy.default", {v, int_value(c, -1), u});
  std::optional<format::VkExprView> at = contiguous_view({3, 4, 6});
  const std::vector<View> want = {
      {0, {6, 3, 4}, {1, 24, 6}}, {4, {1, 3, 4}, {1, 24, 6}}, {4, {3, 4}, {24, 6}}, {4, {12}, {6}}, {4, {12, 1}, {6, 0}}};
  for (size_t k = 0; k < want.size(); ++k) {
    at = view_through(c.ir, c.ir.chain[k], *at);
    ASSERT_TRUE(Is(at, want[k])) << c.ir.chain[k].name;
  }
  // [6, 3, 4] permuted from [3, 4, 6] cannot be read as [72] by strides.
  EXPECT_FALSE(view_through(c.ir, format::VkOpCall{0, "aten.view_copy.default", {p, c.ints({72}), c.tensor({72})}},
                            *view_through(c.ir, c.ir.chain[0], contiguous_view({3, 4, 6}))));
  format::VkValue sym;
  sym.kind = format::VkValueKind::SymInt;
  sym.int_val = 5;
  const int32_t end = c.add(sym);
  EXPECT_FALSE(view_through(c.ir, format::VkOpCall{0, "aten.slice_copy.Tensor", {x, int_value(c, 2), int_value(c, 0), end,
                                                                                 int_value(c, 1), c.tensor({3, 4, 5})}},
                            contiguous_view({3, 4, 6})));
  EXPECT_FALSE(view_through(c.ir, format::VkOpCall{0, "aten.permute_copy.default", {x, p}}, contiguous_view({3, 4, 6})));
  EXPECT_FALSE(view_through(c.ir, format::VkOpCall{0, "aten.clone.default", {x, int_value(c, 1), c.tensor({3, 4, 6})}},
                            contiguous_view({3, 4, 6})));  // a memory format
}

}  // namespace
