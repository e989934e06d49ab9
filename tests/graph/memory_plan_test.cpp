// graph::plan_memory on hand-made chains (no GPU): live intervals (ValueList members included),
// memory objects as units, inputs / outputs / state / load-time weights kept apart, reuse only
// between lives that never meet at a node, and copy-free views only where no later write could
// tell the view from its input.
#include <gtest/gtest.h>

#include <random>

#include "graph/memory_plan.h"
#include "support/ir_chain.h"

using namespace etwebgpu;
using namespace etwebgpu::graph;
using format::VkDType;
using format::VkValue;
using format::VkValueKind;

namespace {

constexpr int32_t kNone = MemoryPlan::kNone;

// A VkGraphIR written by hand; every tensor is f32 unless told, 4 bytes per element.
struct Chain : etwebgpu::testing::IrChain {
  int32_t constant(std::vector<int64_t> dims) {
    int32_t id = tensor(std::move(dims));
    ir.values[id].tensor.constant_id = static_cast<int32_t>(ir.constants.size());
    ir.constants.push_back({});
    return id;
  }
  void unary(int32_t in, int32_t out) { op("aten.relu.default", {in, out}); }
  void view(int32_t in, int32_t out) { op("aten.view_copy.default", {in, ints(ir.values[out].tensor.dims), out}); }
  MemoryPlan plan(MemoryPlanOptions opts = {}) const {
    std::vector<uint64_t> bytes(ir.values.size(), 0);
    for (size_t i = 0; i < ir.values.size(); ++i)
      if (ir.values[i].kind == VkValueKind::Tensor) {
        int64_t n = 1;
        for (int64_t d : ir.values[i].tensor.dims) n *= d;
        bytes[i] = static_cast<uint64_t>(n) * 4;
      }
    return plan_memory(ir, bytes, opts);
  }
};

// No two tensors of different units whose intervals meet share a buffer; a unit is in one buffer.
void expect_no_live_overlap(const Chain& c, const MemoryPlan& p) {
  size_t n = c.ir.values.size();
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b) {
      if (p.buffer_of[a] == kNone || p.buffer_of[a] != p.buffer_of[b] || p.unit_of[a] == p.unit_of[b]) continue;
      if (p.first[a] == kNone || p.first[b] == kNone) continue;
      bool meet = p.first[a] <= p.last[b] && p.first[b] <= p.last[a];
      EXPECT_FALSE(meet) << "%" << a << " [" << p.first[a] << "," << p.last[a] << "] and %" << b << " [" << p.first[b]
                         << "," << p.last[b] << "] share buffer " << p.buffer_of[a];
    }
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b)
      if (p.unit_of[a] != kNone && p.unit_of[a] == p.unit_of[b]) {
        EXPECT_EQ(p.buffer_of[a], p.buffer_of[b]);
      }
}

TEST(MemoryPlan, IntervalRunsFromTheFirstToTheLastNodeNamingTheTensor) {
  Chain c;
  int32_t x = c.input({8}), t1 = c.tensor({8}), t2 = c.tensor({8}), o = c.output({8});
  c.unary(x, t1);                      // 0
  c.unary(t1, t2);                     // 1
  c.op("aten.add.Tensor", {t1, t2, c.null(), o});  // 2
  auto p = c.plan();
  EXPECT_EQ(p.first[t1], 0);
  EXPECT_EQ(p.last[t1], 2);
  EXPECT_EQ(p.first[t2], 1);
  EXPECT_EQ(p.last[t2], 2);
  EXPECT_EQ(p.first[x], 0);
  EXPECT_EQ(p.last[o], 2);
}

TEST(MemoryPlan, TensorsInsideValueListsLiveUntilTheListIsUsed) {
  Chain c;
  int32_t x = c.input({4}), a = c.tensor({4}), b = c.tensor({4}), cat = c.tensor({8}), o = c.output({8});
  c.unary(x, a);                                               // 0
  c.unary(x, b);                                               // 1
  c.unary(x, c.tensor({4}));                                   // 2 (an unrelated tensor)
  c.op("aten.cat.default", {c.list({a, b}), c.ints({0}), cat});  // 3
  c.unary(cat, o);                                             // 4
  auto p = c.plan();
  EXPECT_EQ(p.last[a], 3);
  EXPECT_EQ(p.last[b], 3);
  EXPECT_NE(p.buffer_of[a], p.buffer_of[b]);
  EXPECT_NE(p.buffer_of[a], p.buffer_of[cat]);
  // Outputs of a multi-output op (a ValueList as the last argument) are born there.
  Chain d;
  int32_t y = d.input({4}), v = d.tensor({4}), m = d.tensor({4}), o2 = d.output({4});
  d.op("aten.var_mean.correction", {y, d.null(), d.null(), d.list({v, m})});  // 0
  d.op("aten.add.Tensor", {v, m, d.null(), o2});                               // 1
  auto q = d.plan();
  EXPECT_EQ(q.first[v], 0);
  EXPECT_EQ(q.first[m], 0);
  EXPECT_NE(q.buffer_of[v], q.buffer_of[m]);
  EXPECT_TRUE(q.buffers[q.buffer_of[v]].computed);
}

TEST(MemoryPlan, BufferIsReusedOnlyAfterItsOccupantDiedAtAnEarlierNode) {
  Chain c;
  int32_t x = c.input({16});
  std::vector<int32_t> t;
  for (int i = 0; i < 4; ++i) t.push_back(c.tensor({16}));
  int32_t o = c.output({16});
  c.unary(x, t[0]);     // 0: t0 [0,1]
  c.unary(t[0], t[1]);  // 1: t1 [1,2]
  c.unary(t[1], t[2]);  // 2: t2 [2,3]
  c.unary(t[2], t[3]);  // 3: t3 [3,4]
  c.unary(t[3], o);     // 4
  auto p = c.plan();
  // t0 dies at node 1 and t2 is born at node 2: one buffer. t1 dies at node 2, where t2 is born:
  // node 2 reads t1 and writes t2, so they cannot share.
  EXPECT_EQ(p.buffer_of[t[0]], p.buffer_of[t[2]]);
  EXPECT_EQ(p.buffer_of[t[1]], p.buffer_of[t[3]]);
  EXPECT_NE(p.buffer_of[t[0]], p.buffer_of[t[1]]);
  EXPECT_EQ(p.buffers[p.buffer_of[t[0]]].units, 2);
  // Two shared buffers of 64 bytes, plus the input and output's own.
  EXPECT_EQ(p.total_bytes(), 4u * 64u);
  EXPECT_EQ(c.plan({false, false}).total_bytes(), 6u * 64u);
  expect_no_live_overlap(c, p);
}

TEST(MemoryPlan, LargestUnitsArePlacedFirstAndSizeTheirBuffer) {
  Chain c;
  int32_t x = c.input({4});
  int32_t small = c.tensor({4}), big = c.tensor({100}), mid = c.tensor({10}), o = c.output({4});
  c.unary(x, small);                                    // 0
  c.op("aten.expand_copy.default", {small, c.ints({100}), c.null(), big});  // 1: small [0,1]
  c.op("aten.sum.dim_IntList", {big, c.null(), c.null(), mid});  // 2: big [1,2]
  c.op("aten.sum.dim_IntList", {mid, c.null(), c.null(), o});    // 3: mid [2,3]
  auto p = c.plan();
  // small [0,1] and mid [2,3] never meet: one buffer, sized for mid; big meets both: its own.
  EXPECT_EQ(p.buffer_of[small], p.buffer_of[mid]);
  EXPECT_NE(p.buffer_of[big], p.buffer_of[mid]);
  EXPECT_EQ(p.buffers[p.buffer_of[big]].bytes, 400u);
  EXPECT_EQ(p.buffers[p.buffer_of[mid]].bytes, 40u);
}

TEST(MemoryPlan, MemoryObjectTensorsWhoseLivesMeetAreOneUnitSizedForTheLargest) {
  Chain c;
  int32_t x = c.input({8});
  int32_t a = c.tensor({8}, 0), m = c.tensor({32}, 0), t = c.tensor({8}), o = c.output({8});
  c.unary(x, a);                                                     // 0: a [0,2]
  c.op("aten.expand_copy.default", {x, c.ints({32}), c.null(), m});  // 1: m [1,2], a's object
  c.op("aten.add.Tensor", {a, m, c.null(), t});                      // 2
  c.unary(t, o);                                                     // 3
  auto p = c.plan();
  EXPECT_EQ(p.unit_of[a], p.unit_of[m]);
  EXPECT_EQ(p.buffer_of[a], p.buffer_of[m]);
  EXPECT_EQ(p.buffers[p.buffer_of[a]].bytes, 128u);
  expect_no_live_overlap(c, p);
}

TEST(MemoryPlan, MemoryObjectTensorsWhoseLivesDoNotMeetArePlannedLikeOthers) {
  Chain c;
  int32_t x = c.input({8});
  int32_t a = c.tensor({8}, 0), b = c.tensor({8}), m = c.tensor({32}, 0), d = c.tensor({8}), o = c.output({8});
  c.unary(x, a);                                                     // 0: a [0,1]
  c.unary(a, b);                                                     // 1: b [1,3]
  c.unary(x, d);                                                     // 2: d [2,3]
  c.op("aten.add.Tensor", {b, d, c.null(), c.tensor({8})});          // 3
  c.op("aten.expand_copy.default", {x, c.ints({32}), c.null(), m});  // 4: m [4,5], a's object
  c.op("aten.sum.dim_IntList", {m, c.null(), c.null(), o});          // 5
  auto p = c.plan();
  EXPECT_NE(p.unit_of[a], p.unit_of[m]);
  expect_no_live_overlap(c, p);
  // Without reuse the object keeps its one buffer (the delegate's packing), nothing else shares.
  auto q = c.plan({false, false});
  EXPECT_EQ(q.buffer_of[a], q.buffer_of[m]);
  EXPECT_EQ(q.buffers[q.buffer_of[a]].bytes, 128u);
  EXPECT_NE(q.buffer_of[d], q.buffer_of[a]);
  EXPECT_NE(q.buffer_of[b], q.buffer_of[a]);
  EXPECT_LT(p.total_bytes(), q.total_bytes());
}

TEST(MemoryPlan, InputsOutputsStateAndLoadTimeWeightsKeepTheirOwnBuffers) {
  Chain c;
  int32_t x = c.input({8}), s = c.tensor({8}), w = c.constant({8}), pw = c.tensor({8});
  c.ir.state.push_back({s, {}});
  int32_t t1 = c.tensor({8}), t2 = c.tensor({8}), t3 = c.tensor({8}), o = c.output({8});
  c.op("et_vk.prepack.default", {w, pw});               // 0: pw written at load
  c.op("aten.add.Tensor", {x, pw, c.null(), t1});       // 1
  c.op("aten.add.Tensor", {t1, s, c.null(), t2});       // 2
  c.unary(t2, t3);                                      // 3
  c.unary(t3, o);                                       // 4
  c.op("aten.copy_.default", {s, t3, c.null(), s});     // 5: written back for the next run
  auto p = c.plan();
  EXPECT_EQ(p.buffer_of[w], kNone);  // constants are uploaded into buffers of their own
  for (int32_t v : {x, s, pw, o}) {
    ASSERT_NE(p.buffer_of[v], kNone);
    EXPECT_EQ(p.buffers[p.buffer_of[v]].units, 1) << "%" << v;
    for (int32_t other : {x, s, pw, o, t1, t2, t3})
      if (other != v) {
        EXPECT_NE(p.buffer_of[v], p.buffer_of[other]) << "%" << v << " and %" << other;
      }
  }
  // Only the output among them is wholly computed by the run (its first contents never matter).
  EXPECT_TRUE(p.buffers[p.buffer_of[o]].computed);
  for (int32_t v : {x, s, pw}) EXPECT_FALSE(p.buffers[p.buffer_of[v]].computed) << "%" << v;
  // t1 [1,2] and t3 [3,5] share.
  EXPECT_EQ(p.buffer_of[t1], p.buffer_of[t3]);
  expect_no_live_overlap(c, p);
}

TEST(MemoryPlan, TensorReadBeforeAnyNodeWritesItIsNotShared) {
  Chain c;
  int32_t x = c.input({8}), z = c.tensor({8}), t = c.tensor({8}), u = c.tensor({8}), o = c.output({8});
  c.op("aten.add.Tensor", {x, z, c.null(), t});  // 0: z is read, never written (zeros)
  c.unary(t, u);                                  // 1
  c.unary(u, o);                                  // 2
  c.unary(x, z);                                  // 3: written after its read: last run's value mattered
  auto p = c.plan();
  EXPECT_EQ(p.buffers[p.buffer_of[z]].units, 1);
  EXPECT_FALSE(p.buffers[p.buffer_of[z]].computed);
  EXPECT_NE(p.buffer_of[z], p.buffer_of[t]);
  EXPECT_NE(p.buffer_of[z], p.buffer_of[u]);
}

TEST(MemoryPlan, RandomChainsNeverShareABufferBetweenLiveUnits) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Chain c;
    std::vector<int32_t> live = {c.input({1 + static_cast<int64_t>(rng() % 64)})};
    int nodes = 3 + static_cast<int>(rng() % 30);
    for (int i = 0; i < nodes; ++i) {
      int32_t a = live[rng() % live.size()], b = live[rng() % live.size()];
      int32_t out = c.tensor({1 + static_cast<int64_t>(rng() % 64)});
      switch (rng() % 4) {
        case 0: c.unary(a, out); break;
        case 1: c.op("aten.add.Tensor", {a, b, c.null(), out}); break;
        case 2: c.op("aten.cat.default", {c.list({a, b}), c.ints({0}), out}); break;
        default: c.ir.values[out].tensor.dims = c.ir.values[a].tensor.dims; c.view(a, out); break;
      }
      live.push_back(out);
    }
    c.ir.output_ids.push_back(static_cast<uint32_t>(live.back()));
    auto p = c.plan();
    expect_no_live_overlap(c, p);
    // Views share their input's data; nothing else may be in a view's buffer while it lives.
    for (size_t i = 0; i < c.ir.chain.size(); ++i)
      if (p.aliased_view[i]) {
        EXPECT_EQ(p.buffer_of[c.ir.chain[i].args.front()], p.buffer_of[c.ir.chain[i].args.back()]);
      }
    EXPECT_LE(p.total_bytes(), c.plan({false, false}).total_bytes());
  }
}

TEST(MemoryPlan, ViewOfAComputedTensorSharesItsBuffer) {
  Chain c;
  int32_t x = c.input({2, 8}), a = c.tensor({2, 8}), v = c.tensor({16}), o = c.output({16});
  c.unary(x, a);  // 0
  c.view(a, v);   // 1
  c.unary(v, o);  // 2
  auto p = c.plan();
  EXPECT_TRUE(p.aliased_view[1]);
  EXPECT_EQ(p.buffer_of[a], p.buffer_of[v]);
  EXPECT_EQ(p.unit_of[a], p.unit_of[v]);
  // Off: a copy into a buffer of its own.
  auto q = c.plan({false, false});
  EXPECT_FALSE(q.aliased_view[1]);
  EXPECT_NE(q.buffer_of[a], q.buffer_of[v]);
}

TEST(MemoryPlan, EveryContiguousViewOpAliasesAndCloneOnlyWithoutMemoryFormat) {
  for (const char* op : {"aten._unsafe_view.default", "aten.alias_copy.default", "aten.squeeze_copy.dims",
                         "aten.squeeze_copy.dim", "aten.squeeze_copy.default", "aten.unsqueeze_copy.default",
                         "aten.clone.default", "aten.detach_copy.default", "aten.lift_fresh_copy.default"}) {
    Chain c;
    int32_t x = c.input({4}), a = c.tensor({4}), v = c.tensor({4}), o = c.output({4});
    c.unary(x, a);
    c.op(op, {a, c.null(), v});
    c.unary(v, o);
    EXPECT_TRUE(c.plan().aliased_view[1]) << op;
  }
  Chain c;
  int32_t x = c.input({4}), a = c.tensor({4}), v = c.tensor({4}), o = c.output({4});
  c.unary(x, a);
  c.op("aten.clone.default", {a, c.ints({1}), v});  // a memory format: not a plain reinterpretation
  c.unary(v, o);
  EXPECT_FALSE(c.plan().aliased_view[1]);
}

TEST(MemoryPlan, ViewIsCopiedWhenEitherSideIsWrittenAgain) {
  {  // input overwritten in place after the view (index_put_ writing into its self)
    Chain c;
    int32_t x = c.input({4}), a = c.tensor({4}), v = c.tensor({4}), o = c.output({4}), o2 = c.output({4});
    c.unary(x, a);                                                            // 0
    c.view(a, v);                                                             // 1
    c.op("aten.index_put.default", {a, c.list({x}), x, c.null(), a});         // 2
    c.unary(v, o);                                                            // 3
    c.unary(a, o2);                                                           // 4
    EXPECT_FALSE(c.plan().aliased_view[1]);
  }
  {  // output mutated in place by a cache update
    Chain c;
    int32_t x = c.input({4}), a = c.tensor({4}), v = c.tensor({4}), o = c.output({4});
    c.unary(x, a);
    c.view(a, v);
    c.op("update_cache.default", {x, v, c.ints({0}), c.tensor({4})});
    c.unary(v, o);
    EXPECT_FALSE(c.plan().aliased_view[1]);
  }
  {  // program state: rewritten by copy_ at the end of the run
    Chain c;
    int32_t x = c.input({4}), s = c.tensor({4}), v = c.tensor({4}), o = c.output({4});
    c.ir.state.push_back({s, {}});
    c.view(s, v);                                          // 0
    c.op("aten.copy_.default", {s, x, c.null(), s});       // 1
    c.unary(v, o);                                         // 2
    EXPECT_FALSE(c.plan().aliased_view[0]);
  }
  {  // different dtypes (storage types may differ)
    Chain c;
    int32_t x = c.input({4}), a = c.tensor({4}), v = c.tensor({4}, -1, VkDType::Float16), o = c.output({4});
    c.unary(x, a);
    c.view(a, v);
    c.unary(v, o);
    EXPECT_FALSE(c.plan().aliased_view[1]);
  }
}

TEST(MemoryPlan, ViewOfAGraphInputIntoAGraphOutputSharesTheInputsBuffer) {
  Chain c;
  int32_t x = c.input({2, 3}), o = c.output({6});
  c.view(x, o);
  auto p = c.plan();
  EXPECT_TRUE(p.aliased_view[0]);
  EXPECT_EQ(p.buffer_of[x], p.buffer_of[o]);
  EXPECT_FALSE(p.buffers[p.buffer_of[x]].computed);
}

TEST(MemoryPlan, ViewIsCopiedWhenAnAliasOfItsInputIsWrittenWhileTheViewLives) {
  // a and k are one memory object and their lives meet: k's write at node 2 changes a's words,
  // so a view of a that is still read after that cannot share them.
  Chain c;
  int32_t x = c.input({4}), a = c.tensor({4}, 0), v = c.tensor({4}), k = c.tensor({4}, 0), o = c.output({4}),
          o2 = c.output({4});
  c.unary(x, a);                                   // 0: a [0,4]
  c.view(a, v);                                    // 1: v [1,3]
  c.unary(x, k);                                   // 2: k [2,3]
  c.op("aten.add.Tensor", {v, k, c.null(), o});    // 3
  c.unary(a, o2);                                  // 4
  auto p = c.plan();
  EXPECT_EQ(p.unit_of[a], p.unit_of[k]);
  EXPECT_FALSE(p.aliased_view[1]);
  EXPECT_NE(p.buffer_of[v], p.buffer_of[k]);
  expect_no_live_overlap(c, p);
  // When the view dies before k is written, it joins the object.
  Chain d;
  int32_t y = d.input({4}), a2 = d.tensor({4}, 0), v2 = d.tensor({4}), w2 = d.tensor({4}), k2 = d.tensor({4}, 0),
          o3 = d.output({4});
  d.unary(y, a2);                                  // 0: a2 [0,4]
  d.view(a2, v2);                                  // 1: v2 [1,2]
  d.unary(v2, w2);                                 // 2
  d.unary(w2, k2);                                 // 3: k2 [3,4]
  d.op("aten.add.Tensor", {a2, k2, d.null(), o3});  // 4
  auto q = d.plan();
  EXPECT_TRUE(q.aliased_view[1]);
  EXPECT_EQ(q.buffer_of[v2], q.buffer_of[k2]);
  expect_no_live_overlap(d, q);
}

}  // namespace

// The delegate packs tensors whose lives never meet into one memory object; split_packed_memory_
// objects gives each group of meeting lives its own, keeping real aliases (and inputs and outputs,
// live from the start / to the end) together.
TEST(MemoryPlan, SplitPackedMemoryObjectsKeepsOnlyMeetingLivesTogether) {
  Chain c;
  int32_t x = c.input({8});
  int32_t a = c.tensor({8}, 0), b = c.tensor({8}, 1), d = c.tensor({8}, 0), e = c.tensor({8}, 1);
  int32_t alias = c.tensor({8}, 2), alias2 = c.tensor({8}, 2), o = c.output({8});
  c.unary(x, a);                                      // 0: a born
  c.unary(a, b);                                      // 1: a dies
  c.unary(b, d);                                      // 2: d packed into a's object
  c.op("aten.add.Tensor", {d, b, c.null(), e});       // 3: e meets b here (object 1 stays one)
  c.unary(e, alias);                                  // 4
  c.op("aten.add.Tensor", {alias, alias2, c.null(), alias2});  // 5: alias2 written in place of itself
  c.op("aten.add.Tensor", {alias, alias2, c.null(), o});       // 6
  int32_t first_new = 3;  // objects 0..2 exist
  EXPECT_EQ(split_packed_memory_objects(c.ir), 1u);
  EXPECT_EQ(c.ir.values[a].tensor.mem_obj_id, 0);
  EXPECT_EQ(c.ir.values[d].tensor.mem_obj_id, first_new) << "d only reused a's storage";
  EXPECT_EQ(c.ir.values[b].tensor.mem_obj_id, c.ir.values[e].tensor.mem_obj_id) << "b and e meet at node 3";
  EXPECT_EQ(c.ir.values[alias].tensor.mem_obj_id, c.ir.values[alias2].tensor.mem_obj_id);
  EXPECT_EQ(c.ir.values[x].tensor.mem_obj_id, -1);
  // Splitting again finds nothing more, and the plan still keeps meeting lives apart.
  EXPECT_EQ(split_packed_memory_objects(c.ir), 0u);
  expect_no_live_overlap(c, c.plan());
}

TEST(MemoryPlan, SplitKeepsAGraphOutputWithTheTensorsLivingBesideIt) {
  Chain c;
  int32_t x = c.input({8}), t = c.tensor({8}, 0), o = c.output({8});
  c.ir.values[o].tensor.mem_obj_id = 0;  // an output sharing t's object: its life runs to the end
  c.unary(x, o);                         // 0
  c.unary(x, t);                         // 1: t meets o (o lives on)
  c.unary(t, c.tensor({8}));             // 2
  EXPECT_EQ(split_packed_memory_objects(c.ir), 0u);
  EXPECT_EQ(c.ir.values[t].tensor.mem_obj_id, 0);
}
