// graph::fold_inverse_permutes: a permute pair that undoes itself (ExecuTorch's Llama recipe sends
// q, k and v to [B, H, S, D] and back) becomes one clone that memory planning aliases; pairs that
// do not cancel, or whose middle tensor someone else reads, stay.
#include <gtest/gtest.h>

#include "graph/permute_folding.h"
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

}  // namespace
