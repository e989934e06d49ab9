// graph::UseDef, the one index and legality check of the load-time rewrites (no GPU): which calls
// name, read and write each value (ValueList members and in-place writes included), which values
// are pinned, and the checks every pass makes with it: one reader, nothing writing in between
// (storage shared through a delegate memory object included), a group replaceable by one call.
#include <gtest/gtest.h>

#include "graph/use_def.h"
#include "support/ir_chain.h"

using namespace etwebgpu;
using namespace etwebgpu::graph;
using namespace etwebgpu::testing;

namespace {

TEST(UseDef, IndexesMentionsReadersAndWritersThroughValueListsAndInPlaceWrites) {
  IrChain c;
  int32_t x = c.input({4}), a = c.tensor({4}), b = c.tensor({4}), cache = c.tensor({8}), o = c.output({4});
  int32_t pair = c.list({a, b});
  c.op("aten.split_with_sizes_copy.default", {x, c.ints({2, 2}), c.ints({0}), pair});  // 0: writes a and b
  c.op("aten.add.Tensor", {a, b, c.null(), o});                                       // 1
  c.op("update_cache.default", {a, cache, c.null(), o});                              // 2: writes cache in place
  const UseDef ix(c.ir);
  EXPECT_EQ(ix.mentions(a), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(ix.readers(a), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(ix.writers(b), (std::vector<size_t>{0}));
  EXPECT_EQ(ix.producer(b), 0u);
  EXPECT_EQ(ix.writers(cache), (std::vector<size_t>{2}));
  EXPECT_EQ(ix.producer(cache), UseDef::npos);  // written in place, not produced
  EXPECT_TRUE(ix.pinned(cache));
  EXPECT_TRUE(ix.pinned(x));
  EXPECT_TRUE(ix.pinned(o));
  EXPECT_FALSE(ix.pinned(a));
  EXPECT_TRUE(ix.mentions(pair).empty());  // not a tensor
  EXPECT_EQ(ix.sole_reader(b, 0), 1u);
  EXPECT_EQ(ix.sole_reader(a), UseDef::npos);  // two readers
  EXPECT_EQ(ix.sole_reader(b, 1), UseDef::npos);  // not its writer
}

TEST(UseDef, SoleReaderRefusesPinnedAndTwiceWrittenValues) {
  IrChain c;
  int32_t x = c.input({4}), t = c.output({4}), u = c.tensor({4}), v = c.tensor({4}), o = c.output({4});
  c.op("aten.relu.default", {x, t});  // 0: t is a graph output
  c.op("aten.neg.default", {t, u});   // 1
  c.op("aten.neg.default", {x, u});   // 2: u written twice
  c.op("aten.add.Tensor", {u, t, c.null(), v});
  c.op("aten.relu.default", {v, o});
  const UseDef ix(c.ir);
  EXPECT_EQ(ix.sole_reader(t), UseDef::npos);
  EXPECT_EQ(ix.producer(u), UseDef::npos);
  EXPECT_EQ(ix.sole_reader(u), UseDef::npos);
  EXPECT_EQ(ix.sole_reader(v), 4u);
  EXPECT_FALSE(ix.unused(v));
}

TEST(UseDef, UnchangedBetweenSeesWritesOfSharedStorageButNotReads) {
  IrChain c;
  int32_t x = c.input({4}), p = c.tensor({4}, 7), q = c.tensor({4}, 7), r = c.tensor({4}), o = c.output({4});
  c.op("aten.relu.default", {x, p});         // 0
  c.op("aten.neg.default", {p, r});          // 1: reads p
  c.op("aten.relu.default", {x, q});         // 2: writes q, which shares p's memory object 7
  c.op("aten.add.Tensor", {p, r, c.null(), o});
  const UseDef ix(c.ir);
  EXPECT_TRUE(ix.share_memory(p, q));
  EXPECT_TRUE(ix.unchanged_between(p, 0, 2));  // only a reader in between
  EXPECT_FALSE(ix.unchanged_between(p, 0, 3));  // q's write lands in p's storage
  EXPECT_TRUE(ix.unchanged_between(p, 0, 3, {2}));  // unless that call is one of the group
  EXPECT_TRUE(ix.writes(2, p));
  EXPECT_FALSE(ix.writes(1, p));
}

TEST(UseDef, CanReplaceNeedsInternalIntermediatesAndSteadyInputs) {
  IrChain c;
  int32_t x = c.input({4}), y = c.input({4}), a = c.tensor({4}), b = c.tensor({4}), o = c.output({4});
  int32_t other = c.output({4});
  c.op("aten.relu.default", {x, a});                     // 0
  c.op("aten.copy_.default", {y, x, c.boolean(false), y});  // 1: writes y in place
  c.op("aten.mul.Tensor", {a, y, b});                    // 2
  c.op("aten.neg.default", {b, o});                      // 3
  c.op("aten.neg.default", {a, other});                  // 4: reads a after the group
  const UseDef ix(c.ir);
  // {2, 3} reads y after the write: steady, and b stays inside.
  EXPECT_TRUE(ix.can_replace({2, 3}, {a, y}));
  // {0, 2, 3}: a is also read by call 4.
  EXPECT_FALSE(ix.can_replace({0, 2, 3}, {x, y}));
  // Reading y at 0 and 3 as one call at 3 would see call 1's write.
  IrChain d;
  int32_t x2 = d.input({4}), y2 = d.input({4}), a2 = d.tensor({4}), o2 = d.output({4});
  d.op("aten.add.Tensor", {x2, y2, d.null(), a2});          // 0
  d.op("aten.copy_.default", {y2, x2, d.boolean(false), y2});  // 1
  d.op("aten.neg.default", {a2, o2});                       // 2
  const UseDef id(d.ir);
  EXPECT_FALSE(id.can_replace({0, 2}, {x2, y2}));
  EXPECT_TRUE(id.can_replace({0, 2}, {x2}));
}

}  // namespace
