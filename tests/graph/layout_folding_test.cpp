// graph/layout_folding.h: a permute pair that undoes itself (ExecuTorch's Llama recipe sends q, k
// and v to [B, H, S, D] and back), and slices, pads and expands that move nothing (timm's Swin),
// become clones that memory planning aliases; layouts that move anything, or whose bounds change at
// run time, stay.
#include <gtest/gtest.h>

#include <climits>
#include <functional>

#include "graph/layout_folding.h"
#include "support/ir_chain.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::graph;
using namespace etwebgpu::testing;
using format::VkValue;
using format::VkValueKind;

namespace {

using Chain = IrChain;

TEST(PermuteFolding, InversePairBecomesOneCloneOfTheFirstInput) {
  Chain c;
  int32_t x = c.tensor({1, 5, 4, 8}), mid = c.tensor({1, 4, 5, 8}), y = c.tensor({1, 5, 4, 8}), z = c.tensor({1, 5, 4, 8});
  c.ir.input_ids = {static_cast<uint32_t>(x)};
  c.ir.output_ids = {static_cast<uint32_t>(z)};
  c.op("aten.permute_copy.default", {x, c.ints({0, 2, 1, 3}), mid});
  c.op("aten.permute_copy.default", {mid, c.ints({0, -2, 1, 3}), y});  // negative dims normalize
  c.op("aten.relu.default", {y, z});
  EXPECT_EQ(fold_inverse_permutes(c.ir, UseDef(c.ir)), 1u);
  ASSERT_EQ(c.ir.chain.size(), 2u);
  EXPECT_EQ(c.ir.chain[0].name, "aten.clone.default");
  ASSERT_EQ(c.ir.chain[0].args.size(), 3u);
  EXPECT_EQ(c.ir.chain[0].args[0], x);
  EXPECT_EQ(c.ir.values[c.ir.chain[0].args[1]].kind, VkValueKind::Null);  // contiguous memory format
  EXPECT_EQ(c.ir.chain[0].args[2], y);
}

TEST(PermuteFolding, PairsThatDoNotCancelOrWhoseMiddleIsReadElsewhereStay) {
  {  // 3-cycles: applying the same rotation twice is not the identity
    Chain c;
    int32_t x = c.tensor({2, 3, 4}), mid = c.tensor({3, 4, 2}), y = c.tensor({4, 2, 3});
    c.op("aten.permute_copy.default", {x, c.ints({1, 2, 0}), mid});
    c.op("aten.permute_copy.default", {mid, c.ints({1, 2, 0}), y});
    EXPECT_EQ(fold_inverse_permutes(c.ir, UseDef(c.ir)), 0u);
    EXPECT_EQ(c.ir.chain.size(), 2u);
  }
  {  // the same rotation twice on a cube: the shapes match, the order does not
    Chain c;
    int32_t x = c.tensor({2, 2, 2}), mid = c.tensor({2, 2, 2}), y = c.tensor({2, 2, 2});
    c.op("aten.permute_copy.default", {x, c.ints({1, 2, 0}), mid});
    c.op("aten.permute_copy.default", {mid, c.ints({1, 2, 0}), y});
    EXPECT_EQ(fold_inverse_permutes(c.ir, UseDef(c.ir)), 0u);
  }
  {  // the middle tensor also feeds a relu
    Chain c;
    int32_t x = c.tensor({2, 3}), mid = c.tensor({3, 2}), y = c.tensor({2, 3}), r = c.tensor({3, 2});
    c.op("aten.permute_copy.default", {x, c.ints({1, 0}), mid});
    c.op("aten.relu.default", {mid, r});
    c.op("aten.permute_copy.default", {mid, c.ints({1, 0}), y});
    EXPECT_EQ(fold_inverse_permutes(c.ir, UseDef(c.ir)), 0u);
  }
  {  // the middle tensor is a graph output
    Chain c;
    int32_t x = c.tensor({2, 3}), mid = c.tensor({3, 2}), y = c.tensor({2, 3});
    c.ir.output_ids = {static_cast<uint32_t>(mid)};
    c.op("aten.permute_copy.default", {x, c.ints({1, 0}), mid});
    c.op("aten.permute_copy.default", {mid, c.ints({1, 0}), y});
    EXPECT_EQ(fold_inverse_permutes(c.ir, UseDef(c.ir)), 0u);
  }
  {  // x is written in between (an in-place copy_ into it): the second permute must read the old x
    Chain c;
    int32_t x = c.tensor({2, 3}), mid = c.tensor({3, 2}), y = c.tensor({2, 3}), src = c.tensor({2, 3});
    c.op("aten.permute_copy.default", {x, c.ints({1, 0}), mid});
    c.op("aten.copy_.default", {x, src, x});
    c.op("aten.permute_copy.default", {mid, c.ints({1, 0}), y});
    EXPECT_EQ(fold_inverse_permutes(c.ir, UseDef(c.ir)), 0u);
  }
}

// Through the real loader: the pair costs no dispatch and the output is the input, bit for bit.
TEST(PermuteFolding, LoadedPairDispatchesNothingAndKeepsTheValues) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 5, 4, 8}, 3);
  auto build = [&](OpGraph& g) {
    Id xi = g.input(x), mid = g.tensor(DType::Float32, {1, 4, 5, 8}), y = g.tensor(DType::Float32, {1, 5, 4, 8});
    Id o = g.output(DType::Float32, {1, 5, 4, 8});
    g.gb.op("aten.permute_copy.default", {xi, g.gb.int_list({0, 2, 1, 3}), mid});
    g.gb.op("aten.permute_copy.default", {mid, g.gb.int_list({0, 2, 1, 3}), y});
    g.gb.op("aten.relu.default", {y, o});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 3u);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"aten.relu.default"});
  ASSERT_EQ(fused.out[0].numel(), x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(fused.out[0].as<float>()[i], std::max(x.as<float>()[i], 0.f)) << i;
}

// Every spelling of a slice, pad or expand that keeps each element where it was folds; one that
// moves or drops anything does not.
TEST(IdentityLayouts, SlicesPadsAndExpandsThatMoveNothingBecomeClones) {
  auto slice = [](std::function<int32_t(Chain&)> start, std::function<int32_t(Chain&)> end, std::function<int32_t(Chain&)> step,
                  int64_t dim = 1, std::vector<int64_t> out_dims = {2, 6, 4}) {
    Chain c;
    int32_t x = c.tensor({2, 6, 4}), y = c.tensor(out_dims), d = c.add([&] {
      VkValue v;
      v.kind = VkValueKind::Int;
      v.int_val = dim;
      return v;
    }());
    int32_t a = start(c), b = end(c), s = step(c);
    c.op("aten.slice_copy.Tensor", {x, d, a, b, s, y});
    return c;
  };
  auto num = [](int64_t n) {
    return [n](Chain& c) {
      VkValue v;
      v.kind = VkValueKind::Int;
      v.int_val = n;
      return c.add(v);
    };
  };
  auto none = [](Chain& c) { return c.null(); };
  auto sym = [](Chain& c) {
    VkValue v;
    v.kind = VkValueKind::SymInt;
    return c.add(v);
  };
  struct Case {
    const char* what;
    Chain c;
    size_t folds;
  };
  std::vector<Case> cases;
  cases.push_back({"[:]", slice(none, none, none), 1});
  cases.push_back({"[0:INT64_MAX:1]", slice(num(0), num(INT64_MAX), num(1)), 1});
  cases.push_back({"[-6:6]", slice(num(-6), num(6), none), 1});
  cases.push_back({"[-100:100] (clamped)", slice(num(-100), num(100), none), 1});
  cases.push_back({"negative dim", slice(num(0), num(6), num(1), -2), 1});
  cases.push_back({"[1:] drops one", slice(num(1), none, none, 1, {2, 5, 4}), 0});
  cases.push_back({"[:-1] drops one", slice(none, num(-1), none, 1, {2, 5, 4}), 0});
  cases.push_back({"[::2]", slice(none, none, num(2), 1, {2, 3, 4}), 0});
  cases.push_back({"step 2 where the dims agree", slice(none, none, num(2), 0, {2, 6, 4}), 0});
  cases.push_back({"SymInt end", slice(num(0), sym, none), 0});
  cases.push_back({"dim out of range", slice(none, none, none, 3), 0});
  {
    Chain c;
    int32_t x = c.tensor({1, 8, 8, 3}), y = c.tensor({1, 8, 8, 3});
    c.op("aten.constant_pad_nd.default", {x, c.ints({0, 0, 0, 0, 0, 0}), c.null(), y});
    cases.push_back({"zero pad", std::move(c), 1});
  }
  {
    Chain c;
    int32_t x = c.tensor({1, 8, 8, 3}), y = c.tensor({1, 8, 8, 3});
    c.op("aten.constant_pad_nd.default", {x, c.ints({0, 0, 1, -1}), c.null(), y});  // pads one side, crops the other
    cases.push_back({"shifting pad", std::move(c), 0});
  }
  {
    Chain c;
    int32_t x = c.tensor({2, 1, 3}), y = c.tensor({2, 1, 3});
    c.op("aten.expand_copy.default", {x, c.ints({-1, 1, 3}), c.boolean(false), y});
    cases.push_back({"expand to its own shape", std::move(c), 1});
  }
  {
    Chain c;
    int32_t x = c.tensor({2, 1, 3}), y = c.tensor({2, 4, 3});
    c.op("aten.expand_copy.default", {x, c.ints({2, 4, 3}), c.boolean(false), y});
    cases.push_back({"expand that broadcasts", std::move(c), 0});
  }
  {
    Chain c;  // serialized dims agree but the size list asks for more: left to the builder's error
    int32_t x = c.tensor({2, 1, 3}), y = c.tensor({2, 1, 3});
    c.op("aten.expand_copy.default", {x, c.ints({2, 4, 3}), c.boolean(false), y});
    cases.push_back({"expand whose sizes disagree", std::move(c), 0});
  }
  for (auto& k : cases) {
    const std::string before = k.c.ir.chain[0].name;
    EXPECT_EQ(fold_identity_layouts(k.c.ir, true), k.folds) << k.what;
    EXPECT_EQ(k.c.ir.chain[0].name, k.folds ? "aten.clone.default" : before) << k.what;
    if (k.folds) {
      const auto& args = k.c.ir.chain[0].args;
      ASSERT_EQ(args.size(), 3u) << k.what;
      EXPECT_EQ(k.c.ir.values[args[1]].kind, VkValueKind::Null) << k.what;
    }
  }
  // A program with a dynamic input keeps every layout: serialized dims are only bounds there.
  Chain c = slice(none, none, none);
  EXPECT_EQ(fold_identity_layouts(c.ir, false), 0u);
}

// Through the real loader (timm's Swin block shape): the zero pad and the full slices cost no
// dispatch, and the output is the input's relu bit for bit.
TEST(IdentityLayouts, LoadedSwinPadAndSlicesDispatchNothing) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 14, 14, 8}, 5);
  auto build = [&](OpGraph& g) {
    Id xi = g.input(x), p = g.tensor(DType::Float32, {1, 14, 14, 8}), s1 = g.tensor(DType::Float32, {1, 14, 14, 8});
    Id s2 = g.tensor(DType::Float32, {1, 14, 14, 8});
    Id o = g.output(DType::Float32, {1, 14, 14, 8});
    g.gb.op("aten.constant_pad_nd.default", {xi, g.gb.int_list({0, 0, 0, 0, 0, 0}), g.gb.dbl(0.0), p});
    g.gb.op("aten.slice_copy.Tensor", {p, g.gb.int_(1), g.gb.int_(0), g.gb.int_(14), g.gb.int_(1), s1});
    g.gb.op("aten.slice_copy.Tensor", {s1, g.gb.int_(2), g.gb.int_(0), g.gb.int_(INT64_MAX), g.gb.int_(1), s2});
    g.gb.op("aten.relu.default", {s2, o});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 4u);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"aten.relu.default"});
  ASSERT_EQ(fused.out[0].numel(), x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(fused.out[0].as<float>()[i], std::max(x.as<float>()[i], 0.f)) << i;
}

}  // namespace
