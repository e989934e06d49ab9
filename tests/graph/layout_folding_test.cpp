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
TEST(IdentityLayouts, SlicesPadsExpandsAndOnePartCatsThatMoveNothingBecomeClones) {
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
  {
    Chain c;  // DenseNet's first layer: the cat of its input alone
    int32_t x = c.tensor({1, 4, 3, 3}), y = c.tensor({1, 4, 3, 3});
    c.op("aten.cat.default", {c.list({x}), c.ints({1}), y});
    cases.push_back({"cat of one tensor", std::move(c), 1});
  }
  {
    Chain c;
    int32_t x = c.tensor({1, 2, 3, 3}), y = c.tensor({1, 4, 3, 3});
    c.op("aten.cat.default", {c.list({x, x}), c.ints({1}), y});
    cases.push_back({"cat of one tensor twice", std::move(c), 0});
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

// Swin's shifted window partition, through the real loader: a roll by one along H and W
// (index_select twice, constant indices), then view -> permute -> view into windows of 2 x 2,
// then a relu. The three copies become one index_select of whole rows (C = 4 stays last), and the
// output is the unfused run's bit for bit. A transpose of the last dim with a slice after it
// becomes one element gather.
TEST(LayoutChains, SwinRollAndWindowPartitionBecomeOneRowGather) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({1, 4, 4, 4}, 21);
  HostTensor roll(DType::Int64, {4});
  for (int64_t i = 0; i < 4; ++i) roll.as<int64_t>()[i] = (i + 1) % 4;
  auto build = [&](OpGraph& g) {
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id xi = g.input(x), r = g.constant(roll), a = t({1, 4, 4, 4}), b = t({1, 4, 4, 4}), v6 = t({1, 2, 2, 2, 2, 4});
    Id p6 = t({1, 2, 2, 2, 2, 4}), w = t({16, 4}), o = g.output(DType::Float32, {16, 4});
    g.gb.op("aten.index_select.default", {xi, g.gb.int_(1), r, a});
    g.gb.op("aten.index_select.default", {a, g.gb.int_(2), r, b});
    g.gb.op("aten.view_copy.default", {b, g.gb.int_list({1, 2, 2, 2, 2, 4}), v6});
    g.gb.op("aten.permute_copy.default", {v6, g.gb.int_list({0, 1, 3, 2, 4, 5}), p6});
    g.gb.op("aten.view_copy.default", {p6, g.gb.int_list({16, 4}), w});
    g.gb.op("aten.relu.default", {w, o});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 4u);  // two index_selects, the permute, the relu (views cost nothing)
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.index_select.default", "aten.relu.default"}));
  ASSERT_EQ(fused.out[0].numel(), plain.out[0].numel());
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(fused.out[0].as<float>()[i], plain.out[0].as<float>()[i]) << i;
  // A spot check of the map itself: window (0, 0) row 0 is the rolled (1, 1) pixel.
  for (int64_t ch = 0; ch < 4; ++ch) EXPECT_EQ(plain.out[0].as<float>()[ch], std::max(x.as<float>()[(1 * 4 + 1) * 4 + ch], 0.f));
}

TEST(LayoutChains, AChainThatMovesTheLastDimBecomesOneElementGather) {
  ETW_REQUIRE_GPU();
  HostTensor x = random_f32({3, 8}, 22);
  // The chains end in graph outputs: an elementwise consumer would read them through a view
  // itself (graph/fusion.h).
  auto build = [&](OpGraph& g) {
    Id xi = g.input(x), tr = g.tensor(DType::Float32, {8, 3});
    g.gb.op("aten.permute_copy.default", {xi, g.gb.int_list({1, 0}), tr});
    g.gb.op("aten.slice_copy.Tensor", {tr, g.gb.int_(0), g.gb.int_(1), g.gb.null(), g.gb.int_(2), g.output(DType::Float32, {4, 3})});
  };
  auto fused = load_graph(build, true);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.index_select.default"}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(fused.out[0].as<float>()[i * 3 + j], x.as<float>()[j * 8 + 1 + 2 * i]) << i << "," << j;
  // Rows as long as the source's that start on a source row but run down a column: elements.
  HostTensor sq = random_f32({3, 3}, 23);
  HostTensor pick(DType::Int64, {2});
  pick.as<int64_t>()[0] = pick.as<int64_t>()[1] = 0;
  auto column = load_graph(
      [&](OpGraph& g) {
        Id xi = g.input(sq), tr = g.tensor(DType::Float32, {3, 3});
        g.gb.op("aten.permute_copy.default", {xi, g.gb.int_list({1, 0}), tr});
        g.gb.op("aten.index_select.default", {tr, g.gb.int_(0), g.constant(pick), g.output(DType::Float32, {2, 3})});
      },
      true);
  EXPECT_EQ(column.ops, (std::vector<std::string>{"aten.index_select.default"}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(column.out[0].as<float>()[i * 3 + j], sq.as<float>()[j * 3]) << i << "," << j;
}

// One copy is left as it is; an intermediate read twice, or a source written before the chain's
// end, keeps the chain.
TEST(LayoutChains, ChainsThatCannotCollapseStay) {
  auto chain = [](bool second_reader, bool written) {
    Chain c;
    int32_t x = c.tensor({2, 3}), a = c.tensor({3, 2}), b = c.tensor({1, 2});
    c.op("aten.permute_copy.default", {x, c.ints({1, 0}), a});
    if (second_reader) c.op("aten.relu.default", {a, c.tensor({3, 2})});
    if (written) c.op("aten.copy_.default", {x, c.tensor({2, 3}), x});
    VkValue zero, one, two;
    zero.kind = one.kind = two.kind = VkValueKind::Int;
    one.int_val = 1, two.int_val = 2;
    c.op("aten.slice_copy.Tensor", {a, c.add(zero), c.add(one), c.add(two), c.add(one), b});
    return c;
  };
  {
    Chain c = chain(false, false);
    EXPECT_EQ(collapse_layout_chains(c.ir, UseDef(c.ir), true), 1u);
  }
  {
    Chain c = chain(false, false);
    EXPECT_EQ(collapse_layout_chains(c.ir, UseDef(c.ir), false), 0u) << "dynamic shapes";
  }
  {
    Chain c = chain(true, false);
    EXPECT_EQ(collapse_layout_chains(c.ir, UseDef(c.ir), true), 0u) << "second reader";
  }
  {
    Chain c = chain(false, true);
    EXPECT_EQ(collapse_layout_chains(c.ir, UseDef(c.ir), true), 0u) << "source written in between";
  }
  {
    Chain c;
    int32_t x = c.tensor({2, 3}), a = c.tensor({3, 2});
    c.op("aten.permute_copy.default", {x, c.ints({1, 0}), a});
    EXPECT_EQ(collapse_layout_chains(c.ir, UseDef(c.ir), true), 0u) << "one copy";
  }
}

// Swin's window partition after norm1 (a permute of whole rows) and its reverse after the
// projection: the permutes move before the LayerNorm and the linear, which then meet the linear
// after the LayerNorm (one kernel) and the residual add (its epilogue).
TEST(RowLayouts, WindowPartitionAndReverseMoveBeforeTheLayerNormAndTheProjection) {
  ETW_REQUIRE_GPU();
  const int64_t C = 8;
  HostTensor x = random_f32({1, 4, 4, C}, 71), w = random_f32({C}, 72), b = random_f32({C}, 73);
  HostTensor wq = random_f32({C, C}, 74), wp = random_f32({C, C}, 75);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id xi = g.input(x), ln = t({1, 4, 4, C}), v6 = t({1, 2, 2, 2, 2, C}), p6 = t({1, 2, 2, 2, 2, C}), win = t({4, 4, C});
    gb.op("aten.native_layer_norm.default", {xi, gb.int_list({C}), g.constant(w), g.constant(b), gb.dbl(1e-5),
                                             gb.value_list({ln, t({1, 4, 4, 1}), t({1, 4, 4, 1})})});
    gb.op("aten.view_copy.default", {ln, gb.int_list({1, 2, 2, 2, 2, C}), v6});
    gb.op("aten.permute_copy.default", {v6, gb.int_list({0, 1, 3, 2, 4, 5}), p6});
    gb.op("aten.view_copy.default", {p6, gb.int_list({4, 4, C}), win});
    Id q = t({4, 4, C}), pr = t({4, 4, C}), r6 = t({1, 2, 2, 2, 2, C}), rp = t({1, 2, 2, 2, 2, C}), back = t({1, 4, 4, C});
    gb.op("aten.linear.default", {win, g.constant(wq), gb.null(), q});
    gb.op("aten.linear.default", {q, g.constant(wp), gb.null(), pr});
    gb.op("aten.view_copy.default", {pr, gb.int_list({1, 2, 2, 2, 2, C}), r6});
    gb.op("aten.permute_copy.default", {r6, gb.int_list({0, 1, 3, 2, 4, 5}), rp});
    gb.op("aten.view_copy.default", {rp, gb.int_list({1, 4, 4, C}), back});
    gb.op("aten.add.Tensor", {xi, back, gb.int_(1), g.output(DType::Float32, {1, 4, 4, C})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 6u);  // LayerNorm, permute, two linears, permute, add
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.permute_copy.default", "etwebgpu.layer_norm_linear",
                                                 "aten.permute_copy.default", "fused[linear+add]"}));
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
}

// What stays: a linear that widens its rows (the permute would move more data before it), a
// gather that repeats rows, a LayerNorm whose statistics are read, dynamic shapes.
TEST(RowLayouts, LayoutsThatAddRowsOrMoveMoreDataStayAfterTheOp) {
  VkValue zero;
  zero.kind = VkValueKind::Int;
  auto rows = [](Chain& c, int64_t n) { return c.constant({n}, std::vector<uint8_t>(static_cast<size_t>(4 * n)), format::VkDType::Int32); };
  {
    Chain c;
    int32_t x = c.tensor({3, 4}), w = c.tensor({4, 4}), y = c.tensor({3, 4}), o = c.tensor({4, 4});
    c.op("aten.linear.default", {x, w, c.null(), y});
    c.op("aten.index_select.default", {y, c.add(zero), rows(c, 4), o});
    c.op("aten.relu.default", {o, c.output({4, 4})});
    EXPECT_EQ(move_row_layouts_before_rowwise(c.ir, UseDef(c.ir), true), 0u) << "a gather that repeats rows";
  }
  {
    Chain c;
    int32_t x = c.tensor({4, 4}), w = c.tensor({4, 4}), y = c.tensor({4, 4}), o = c.tensor({4, 4});
    c.op("aten.linear.default", {x, w, c.null(), y});
    c.op("aten.permute_copy.default", {y, c.ints({1, 0}), o});
    c.op("aten.relu.default", {o, c.output({4, 4})});
    EXPECT_EQ(move_row_layouts_before_rowwise(c.ir, UseDef(c.ir), true), 0u) << "a transpose moves the last dim";
  }
  {
    Chain c;
    int32_t x = c.tensor({3, 8}), w = c.tensor({4, 8}), y = c.tensor({3, 4}), o = c.tensor({3, 4});
    c.op("aten.linear.default", {x, w, c.null(), y});
    c.op("aten.index_select.default", {y, c.add(zero), rows(c, 3), o});
    c.op("aten.relu.default", {o, c.output({3, 4})});
    EXPECT_EQ(move_row_layouts_before_rowwise(c.ir, UseDef(c.ir), true), 0u) << "rows of 8 before, 4 after";
    EXPECT_EQ(move_row_layouts_before_rowwise(c.ir, UseDef(c.ir), false), 0u) << "dynamic shapes";
  }
  {
    Chain c;
    int32_t x = c.tensor({3, 4}), w = c.tensor({4, 4}), y = c.tensor({3, 4}), o = c.tensor({3, 4});
    c.op("aten.linear.default", {x, w, c.null(), y});
    c.op("aten.index_select.default", {y, c.add(zero), rows(c, 3), o});
    c.op("aten.relu.default", {o, c.output({3, 4})});
    EXPECT_EQ(move_row_layouts_before_rowwise(c.ir, UseDef(c.ir), true), 1u) << "a permutation of rows of 4";
    ASSERT_EQ(c.ir.chain.size(), 3u);
    EXPECT_EQ(c.ir.chain[0].name, "aten.index_select.default");
    EXPECT_EQ(c.ir.chain[1].name, "aten.linear.default");
  }
  {
    Chain c;
    int32_t x = c.tensor({3, 4}), y = c.tensor({3, 4}), m = c.output({3, 1}), o = c.tensor({3, 4});
    c.op("aten.native_layer_norm.default", {x, c.ints({4}), c.null(), c.null(), c.null(), c.list({y, m, c.tensor({3, 1})})});
    c.op("aten.index_select.default", {y, c.add(zero), rows(c, 3), o});
    c.op("aten.relu.default", {o, c.output({3, 4})});
    EXPECT_EQ(move_row_layouts_before_rowwise(c.ir, UseDef(c.ir), true), 0u) << "the LayerNorm's mean is a graph output";
  }
}

}  // namespace
