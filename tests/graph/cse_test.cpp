// graph::eliminate_common_subexpressions on hand-made chains (no GPU): equal pure calls merge and
// their readers are renamed (ValueLists included); calls with side effects, program state,
// tensors written twice, graph outputs and delegate memory objects in use stay as they are.
#include <gtest/gtest.h>

#include "graph/cse.h"
#include "support/ir_chain.h"

using namespace etwebgpu;
using namespace etwebgpu::graph;
using format::VkDType;
using format::VkValue;
using format::VkValueKind;

namespace {

using Chain = etwebgpu::testing::IrChain;

TEST(CseIr, EqualCallMergesAndItsReadersIncludingValueListsAreRenamed) {
  Chain c;
  int32_t x = c.input({4}), a = c.tensor({4}), b = c.tensor({4}), o = c.output({8});
  c.op("aten.exp.default", {x, a});
  c.op("aten.exp.default", {x, b});
  int32_t l = c.list({a, b});
  c.op("aten.cat.default", {l, c.add(VkValue{}), o});
  EXPECT_EQ(eliminate_common_subexpressions(c.ir, UseDef(c.ir)).calls_removed, 1u);
  EXPECT_EQ(c.ops(), (std::vector<std::string>{"aten.exp.default", "aten.cat.default"}));
  EXPECT_EQ(c.ir.values[l].ids, (std::vector<int32_t>{a, a}));
}

TEST(CseIr, CopyIntoATensorIsNeverMergedAndMakesItsReadersDistinct) {
  Chain c;
  int32_t x = c.input({4}), s = c.tensor({4}), a = c.tensor({4}), b = c.tensor({4});
  int32_t f = c.boolean(false);
  c.op("aten.exp.default", {s, a});        // reads s before the copy
  c.op("aten.copy_.default", {s, x, f, s});
  c.op("aten.copy_.default", {s, x, f, s});
  c.op("aten.exp.default", {s, b});        // reads s after: another value
  c.ir.output_ids = {static_cast<uint32_t>(a), static_cast<uint32_t>(b)};
  EXPECT_EQ(eliminate_common_subexpressions(c.ir, UseDef(c.ir)).calls_removed, 0u);
  EXPECT_EQ(c.ir.chain.size(), 4u);
}

TEST(CseIr, ReadsOfProgramStateStay) {
  Chain c;
  int32_t s = c.tensor({4}), a = c.tensor({4}), b = c.tensor({4}), o = c.output({4});
  c.ir.state.push_back({s, {}});
  c.op("aten.exp.default", {s, a});
  c.op("aten.exp.default", {s, b});
  c.op("aten.add.Tensor", {a, b, c.add(VkValue{}), o});
  EXPECT_EQ(eliminate_common_subexpressions(c.ir, UseDef(c.ir)).calls_removed, 0u);
}

TEST(CseIr, GraphOutputsAreKeptEvenWhenEqual) {
  Chain c;
  int32_t x = c.input({4}), a = c.output({4}), b = c.output({4});
  c.op("aten.exp.default", {x, a});
  c.op("aten.exp.default", {x, b});
  EXPECT_EQ(eliminate_common_subexpressions(c.ir, UseDef(c.ir)).calls_removed, 0u);
}

// The kept output's delegate memory object is reused by another tensor before the dropped
// output's last reader: extending the kept one's life would make them one storage.
TEST(CseIr, MemoryObjectReusedBeforeTheLastReaderBlocksTheMerge) {
  Chain c;
  int32_t x = c.input({4}), a = c.tensor({4}, 0), t = c.tensor({4}, 0), b = c.tensor({4}, 1), o = c.output({4});
  c.op("aten.exp.default", {x, a});
  c.op("aten.neg.default", {a, t});  // a dies here; t reuses memory object 0
  c.op("aten.exp.default", {x, b});
  c.op("aten.add.Tensor", {t, b, c.add(VkValue{}), o});
  EXPECT_EQ(eliminate_common_subexpressions(c.ir, UseDef(c.ir)).calls_removed, 0u);
  // Without the shared memory object the same calls merge.
  c.ir.values[t].tensor.mem_obj_id = 2;
  EXPECT_EQ(eliminate_common_subexpressions(c.ir, UseDef(c.ir)).calls_removed, 1u);
}

}  // namespace

namespace {

// select_copy at a SymInt index computed twice: equal calls between the same two writes merge,
// calls on either side of a write stay.
TEST(CseIr, SymIntArgumentsAreEqualOnlyBetweenTheSameWrites) {
  Chain c;
  int32_t x = c.input({4, 3});
  VkValue sv;
  sv.kind = VkValueKind::SymInt;
  int32_t sym = c.add(sv), zero = c.add([] { VkValue v; v.kind = VkValueKind::Int; return v; }());
  int32_t a = c.tensor({3}), b = c.tensor({3}), d = c.tensor({3}), o1 = c.output({3}), o2 = c.output({3});
  c.op("aten.sym_size.int", {x, zero, sym});
  c.op("aten.select_copy.int", {x, zero, sym, a});
  c.op("aten.select_copy.int", {x, zero, sym, b});
  c.op("aten.sym_size.int", {x, zero, sym});
  c.op("aten.select_copy.int", {x, zero, sym, d});
  c.op("aten.add.Tensor", {a, b, c.add(VkValue{}), o1});
  c.op("aten.add.Tensor", {a, d, c.add(VkValue{}), o2});
  EXPECT_EQ(eliminate_common_subexpressions(c.ir, UseDef(c.ir)).calls_removed, 1u);
  EXPECT_EQ(c.ir.chain.size(), 6u);
}

}  // namespace
