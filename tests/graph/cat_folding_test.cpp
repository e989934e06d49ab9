// graph/cat_folding.h: a channel shuffle of three groups pushed onto the cat's parts (one kernel
// per piece), ShuffleNet's of two as one etwebgpu.channel_shuffle, DenseNet's cats reading the cat
// before them; what must stay.
#include <gtest/gtest.h>

#include <functional>

#include "graph/cat_folding.h"
#include "support/ir_chain.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::graph;
using namespace etwebgpu::testing;
using format::VkValue;
using format::VkValueKind;

namespace {

using Chain = IrChain;

// A channel shuffle of three groups (cat of three parts, view to [1, 3, C/3, H, W], transpose,
// view back, split in halves; etwebgpu.channel_shuffle takes two parts only): each half becomes
// one kernel reading the three parts.
TEST(CatLayouts, AThreeGroupChannelShuffleBecomesOneKernelPerPiece) {
  ETW_REQUIRE_GPU();
  HostTensor a = random_f32({1, 4, 3, 5}, 31), b = random_f32({1, 4, 3, 5}, 32), c = random_f32({1, 4, 3, 5}, 35);
  auto build = [&](OpGraph& g) {
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id ai = g.input(a), bi = g.input(b), ci = g.input(c), cat = t({1, 12, 3, 5}), cl = t({1, 12, 3, 5});
    Id v5 = t({1, 3, 4, 3, 5}), p5 = t({1, 4, 3, 3, 5}), v4 = t({1, 12, 3, 5}), x2 = t({1, 6, 3, 5});
    Id x1 = g.output(DType::Float32, {1, 6, 3, 5}), r = g.output(DType::Float32, {1, 6, 3, 5});
    g.gb.op("aten.cat.default", {g.gb.value_list({ai, bi, ci}), g.gb.int_(1), cat});
    g.gb.op("aten.clone.default", {cat, g.gb.null(), cl});
    g.gb.op("aten.view_copy.default", {cl, g.gb.int_list({1, 3, 4, 3, 5}), v5});
    g.gb.op("aten.permute_copy.default", {v5, g.gb.int_list({0, 2, 1, 3, 4}), p5});
    g.gb.op("aten.view_copy.default", {p5, g.gb.int_list({1, 12, 3, 5}), v4});
    g.gb.op("aten.split_with_sizes_copy.default", {v4, g.gb.int_list({6, 6}), g.gb.int_(1), g.gb.value_list({x1, x2})});
    g.gb.op("aten.relu.default", {x2, r});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 7u);  // the cat's three parts, the permute, the split's two pieces, the relu
  ASSERT_EQ(fused.ops.size(), 3u);
  for (size_t k = 0; k < 2; ++k)
    EXPECT_TRUE(fused.ops[k].rfind("fused[view", 0) == 0 && has(fused.ops[k], "+permute+") && has(fused.ops[k], "+cat]"))
        << fused.ops[k];
  EXPECT_EQ(fused.ops[2], "aten.relu.default");
  // Shuffled channel 3i + g is part g's channel i; the first half is x1, the second relu'd.
  const int64_t hw = 15;
  for (int64_t ch = 0; ch < 12; ++ch)
    for (int64_t e = 0; e < hw; ++e) {
      const HostTensor& part = ch % 3 == 0 ? a : ch % 3 == 1 ? b : c;
      const float want = part.as<float>()[(ch / 3) * hw + e];
      const float got = ch < 6 ? fused.out[0].as<float>()[ch * hw + e] : fused.out[1].as<float>()[(ch - 6) * hw + e];
      EXPECT_EQ(got, ch < 6 ? want : std::max(want, 0.f)) << ch << "," << e;
    }
  for (size_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < plain.out[o].numel(); ++i) EXPECT_EQ(fused.out[o].as<float>()[i], plain.out[o].as<float>()[i]);
}

// The downsampling block: the shuffled tensor itself feeds two calls. One kernel makes it
// (etwebgpu.channel_shuffle, graph/cat_folding.h).
TEST(CatLayouts, AShuffleReadTwiceIsOneKernel) {
  ETW_REQUIRE_GPU();
  HostTensor a = random_f32({1, 4, 2, 3}, 33), b = random_f32({1, 4, 2, 3}, 34);
  auto build = [&](OpGraph& g) {
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id ai = g.input(a), bi = g.input(b), cat = t({1, 8, 2, 3}), v5 = t({1, 2, 4, 2, 3}), p5 = t({1, 4, 2, 2, 3});
    Id v4 = t({1, 8, 2, 3});
    g.gb.op("aten.cat.default", {g.gb.value_list({ai, bi}), g.gb.int_(-3), cat});
    g.gb.op("aten.view_copy.default", {cat, g.gb.int_list({1, 2, 4, 2, 3}), v5});
    g.gb.op("aten.permute_copy.default", {v5, g.gb.int_list({0, 2, 1, 3, 4}), p5});
    g.gb.op("aten.view_copy.default", {p5, g.gb.int_list({1, 8, 2, 3}), v4});
    g.gb.op("aten.relu.default", {v4, g.output(DType::Float32, {1, 8, 2, 3})});
    g.gb.op("aten.neg.default", {v4, g.output(DType::Float32, {1, 8, 2, 3})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"etwebgpu.channel_shuffle", "aten.relu.default", "aten.neg.default"}));
  for (int64_t ch = 0; ch < 8; ++ch)
    for (int64_t e = 0; e < 6; ++e) {
      const float want = (ch % 2 ? b : a).as<float>()[(ch / 2) * 6 + e];
      EXPECT_EQ(fused.out[1].as<float>()[ch * 6 + e], -want) << ch << "," << e;
    }
  for (int64_t i = 0; i < plain.out[0].numel(); ++i) EXPECT_EQ(fused.out[0].as<float>()[i], plain.out[0].as<float>()[i]);
}

// What stays: a slice of the cat dim (it cuts through parts), a reshape that mixes the parts with
// nothing after it to save, a part written before the chain's end, dynamic shapes, integer cats.
TEST(CatLayouts, LayoutsThatCutThroughPartsOrMoveNothingStay) {
  VkValue one, two, three;
  one.kind = two.kind = three.kind = VkValueKind::Int;
  one.int_val = 1, two.int_val = 2, three.int_val = 3;
  // cat([2, 3] x2, dim 1) -> permute -> then `tail`.
  auto chain = [&](const std::function<void(Chain&, int32_t, int32_t, int32_t)>& tail, format::VkDType dtype = format::VkDType::Float32) {
    Chain c;
    int32_t x = c.tensor({2, 3}, -1, dtype), y = c.tensor({2, 3}, -1, dtype), cat = c.tensor({2, 6}, -1, dtype);
    int32_t p = c.tensor({6, 2}, -1, dtype);
    c.op("aten.cat.default", {c.list({x, y}), c.add(one), cat});
    c.op("aten.permute_copy.default", {cat, c.ints({1, 0}), p});
    tail(c, p, x, y);
    return c;
  };
  auto out = [](Chain& c, std::vector<int64_t> d) {
    int32_t o = c.tensor(std::move(d));
    c.ir.output_ids.push_back(static_cast<uint32_t>(o));
    return o;
  };
  {  // the permute is pushed onto both parts
    Chain c = chain([&](Chain& c, int32_t p, int32_t, int32_t) { c.op("aten.relu.default", {p, out(c, {6, 2})}); });
    EXPECT_EQ(push_layouts_into_cats(c.ir, UseDef(c.ir), true), 1u);
    ASSERT_EQ(c.ir.chain.size(), 4u);  // two permutes, the cat, the relu
    EXPECT_EQ(c.ir.chain[2].name, "aten.cat.default");
    EXPECT_EQ(c.ir.values[c.ir.chain[2].args[1]].int_val, 0);  // the cat dim moved with the permute
  }
  {
    Chain c = chain([&](Chain& c, int32_t p, int32_t, int32_t) { c.op("aten.relu.default", {p, out(c, {6, 2})}); });
    EXPECT_EQ(push_layouts_into_cats(c.ir, UseDef(c.ir), false), 0u) << "dynamic shapes";
  }
  {
    Chain c = chain([&](Chain& c, int32_t p, int32_t, int32_t) { c.op("aten.relu.default", {p, out(c, {6, 2})}); },
                    format::VkDType::Int32);
    EXPECT_EQ(push_layouts_into_cats(c.ir, UseDef(c.ir), true), 0u) << "an integer cat: no kernel reads it in place";
  }
  {
    Chain c = chain([&](Chain& c, int32_t p, int32_t x, int32_t) {
      c.op("aten.copy_.default", {x, c.tensor({2, 3}), x});
      c.op("aten.relu.default", {p, out(c, {6, 2})});
    });
    EXPECT_EQ(push_layouts_into_cats(c.ir, UseDef(c.ir), true), 1u) << "written after the chain's end";
  }
  {  // a part written between the cat and the permute: the parts' values at the end are not the cat's
    Chain c;
    int32_t x = c.tensor({2, 3}), y = c.tensor({2, 3}), cat = c.tensor({2, 6}), p = c.tensor({6, 2});
    c.op("aten.cat.default", {c.list({x, y}), c.add(one), cat});
    c.op("aten.copy_.default", {y, c.tensor({2, 3}), y});
    c.op("aten.permute_copy.default", {cat, c.ints({1, 0}), p});
    c.op("aten.relu.default", {p, out(c, {6, 2})});
    EXPECT_EQ(push_layouts_into_cats(c.ir, UseDef(c.ir), true), 0u) << "part written in between";
  }
  {  // a slice of column 1 of the permuted [6, 2] is pushed; rows 1..3 cut the first part
    Chain c = chain([&](Chain& c, int32_t p, int32_t, int32_t) {
      c.op("aten.slice_copy.Tensor", {p, c.add(one), c.add(one), c.add(two), c.add(one), out(c, {6, 1})});
    });
    EXPECT_EQ(push_layouts_into_cats(c.ir, UseDef(c.ir), true), 1u) << "a slice of the other dim is pushed";
    Chain d;
    int32_t x = d.tensor({2, 3}), y = d.tensor({2, 3}), cat = d.tensor({2, 6}), p = d.tensor({6, 2});
    d.op("aten.cat.default", {d.list({x, y}), d.add(one), cat});
    d.op("aten.permute_copy.default", {cat, d.ints({1, 0}), p});
    VkValue zero;
    zero.kind = VkValueKind::Int;
    d.op("aten.slice_copy.Tensor", {p, d.add(zero), d.add(one), d.add(three), d.add(one), out(d, {2, 2})});
    EXPECT_EQ(push_layouts_into_cats(d.ir, UseDef(d.ir), true), 1u) << "the permute alone is still pushed";
    ASSERT_FALSE(d.ir.chain.empty());
    EXPECT_EQ(d.ir.chain.back().name, "aten.slice_copy.Tensor") << "the slice of the cat dim stays";
  }
  {  // only reshapes: nothing moves, nothing to save
    Chain c;
    int32_t x = c.tensor({2, 3}), y = c.tensor({2, 3}), cat = c.tensor({2, 6}), v = c.tensor({12});
    c.op("aten.cat.default", {c.list({x, y}), c.add(one), cat});
    c.op("aten.view_copy.default", {cat, c.ints({12}), v});
    c.op("aten.relu.default", {v, out(c, {12})});
    EXPECT_EQ(push_layouts_into_cats(c.ir, UseDef(c.ir), true), 0u) << "reshapes only";
  }
}

// A DenseNet block as torchvision writes it: layer l concatenates every feature so far (the first
// its input alone), then BatchNorm, relu and a conv add one feature. Each cat reads the one before
// it and the newest feature (one kernel, not a dispatch per part), the one-part cat is an alias,
// and the BatchNorm (ops/norm/batch_norm_affine.cpp) and relu become the conv's prologue
// (ops/conv/conv_prologue.h): two dispatches a layer.
TEST(CatPrefixes, DenseNetBlockCatsReadThePreviousCat) {
  ETW_REQUIRE_GPU();
  const int64_t kLayers = 4, kGrowth = 2;
  HostTensor x0 = random_f32({1, 3, 3, 3}, 41);
  std::vector<HostTensor> weights, stats;
  for (int64_t l = 0; l < kLayers; ++l) {
    const int64_t c = 3 + l * kGrowth;
    weights.push_back(random_f32({kGrowth, c, 1, 1}, 42 + l));
    for (int k = 0; k < 4; ++k) stats.push_back(random_f32({c}, 50 + 4 * l + k, k == 3 ? 0.5f : -1.f, k == 3 ? 2.f : 1.f));
  }
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    std::vector<Id> features{g.input(x0)};
    for (int64_t l = 0; l <= kLayers; ++l) {
      const int64_t c = 3 + l * kGrowth;
      const Id cat = l == kLayers ? g.output(DType::Float32, {1, c, 3, 3}) : g.tensor(DType::Float32, {1, c, 3, 3});
      gb.op("aten.cat.default", {gb.value_list(features), gb.int_(1), cat});
      if (l == kLayers) break;
      Id bn = g.tensor(DType::Float32, {1, c, 3, 3}), act = g.tensor(DType::Float32, {1, c, 3, 3});
      Id f = g.tensor(DType::Float32, {1, kGrowth, 3, 3});
      gb.op("aten._native_batch_norm_legit_no_training.default",
            {cat, g.constant(stats[4 * l]), g.constant(stats[4 * l + 1]), g.constant(stats[4 * l + 2]), g.constant(stats[4 * l + 3]),
             gb.dbl(0.1), gb.dbl(1e-5), gb.value_list({bn, g.tensor(DType::Float32, {0}), g.tensor(DType::Float32, {0})})});
      gb.op("aten.relu.default", {bn, act});
      gb.op("aten.convolution.default", {act, g.constant(weights[l]), gb.null(), gb.int_list({1, 1}), gb.int_list({0, 0}),
                                          gb.int_list({1, 1}), gb.boolean(false), gb.int_list({0, 0}), gb.int_(1), f});
      features.push_back(f);
    }
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  // The cats' parts (1, 2, 3, 4, 5), then BatchNorm, relu and conv per layer.
  EXPECT_EQ(plain.ops.size(), 15u + 3 * kLayers);
  std::vector<std::string> want;
  for (int64_t l = 0; l < kLayers; ++l) {
    if (l) want.push_back("fused[cat]");
    want.push_back("fused[mul+add+relu+convolution]");
  }
  want.push_back("fused[cat]");
  EXPECT_EQ(fused.ops, want);
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
}

// The parts must appear in a row, along the same dim, and hold at the later cat what the earlier
// one read; the earlier cat's output too.
TEST(CatPrefixes, ACatIsReadOnlyWhereItsPartsAreInARowAndUnchanged) {
  VkValue zero, one;
  zero.kind = one.kind = VkValueKind::Int;
  one.int_val = 1;
  struct Built {
    Chain c;
    int32_t x, a, b, d, e;
  };
  auto build = [&](std::vector<int> order, bool other_dim, bool write_part, bool write_cat) {
    Built r;
    Chain& c = r.c;
    r.a = c.tensor({2, 3}), r.b = c.tensor({2, 3}), r.d = c.tensor({2, 3});
    r.x = c.tensor({2, 6});
    c.op("aten.cat.default", {c.list({r.a, r.b}), c.add(one), r.x});
    if (write_part) c.op("aten.copy_.default", {r.b, c.tensor({2, 3}), r.b});
    if (write_cat) c.op("aten.copy_.default", {r.x, c.tensor({2, 6}), r.x});
    std::vector<int32_t> ids{r.a, r.b, r.d}, parts;
    for (int k : order) parts.push_back(ids[k]);
    r.e = other_dim ? c.tensor({6, 3}) : c.tensor({2, 9});
    c.op("aten.cat.default", {c.list(parts), c.add(other_dim ? zero : one), r.e});
    return r;
  };
  auto parts_of_last = [](Built& r) { return r.c.ir.values[r.c.ir.chain.back().args[0]].ids; };
  {
    Built r = build({2, 0, 1}, false, false, false);
    EXPECT_EQ(reuse_cat_prefixes(r.c.ir, UseDef(r.c.ir)), 1u);
    EXPECT_EQ(parts_of_last(r), (std::vector<int32_t>{r.d, r.x})) << "a run at the end";
  }
  {
    Built r = build({1, 0, 2}, false, false, false);
    EXPECT_EQ(reuse_cat_prefixes(r.c.ir, UseDef(r.c.ir)), 0u) << "the parts in another order";
  }
  {
    Built r = build({0, 2, 1}, false, false, false);
    EXPECT_EQ(reuse_cat_prefixes(r.c.ir, UseDef(r.c.ir)), 0u) << "not in a row";
  }
  {
    Built r = build({0, 1, 2}, true, false, false);
    EXPECT_EQ(reuse_cat_prefixes(r.c.ir, UseDef(r.c.ir)), 0u) << "along another dim";
  }
  {
    Built r = build({0, 1, 2}, false, true, false);
    EXPECT_EQ(reuse_cat_prefixes(r.c.ir, UseDef(r.c.ir)), 0u) << "a part written in between";
  }
  {
    Built r = build({0, 1, 2}, false, false, true);
    EXPECT_EQ(reuse_cat_prefixes(r.c.ir, UseDef(r.c.ir)), 0u) << "the earlier cat written in between";
  }
}

}  // namespace
