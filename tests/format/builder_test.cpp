// Builder round trips (every value kind, both constant placements, inline and segment
// delegates, dynamic inputs, kernel calls), exact byte layout, and decoding by flatc itself.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "etwebgpu/builder.h"
#include "etwebgpu/error.h"
#include "format/describe.h"
#include "format/ir.h"
#include "format/sha256.h"
#include "format_test_util.h"
#include "program_generated.h"

using namespace etwebgpu;
using namespace etwebgpu::format;
using Placement = GraphBuilder::ConstantPlacement;

namespace {

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
T rd(const std::vector<uint8_t>& b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

uint64_t align(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// A graph using every VkGraph value kind, constants of several shapes (including a 0-dim, an
// empty and a duplicate), a host dtype that differs from the device dtype and a multi-output op.
struct EveryKind {
  GraphBuilder g;
  GraphBuilder::Id x, y, c0, c1, c2, c3, ce, n, i, d, b, s, il, dl, bl, si, vl, t, out, o2, outs;
  explicit EveryKind(bool dynamic = false) {
    x = g.input(DType::Float32, {2, 3}, dynamic, 0);
    y = g.input(DType::Int32, {4}, false, 3, DType::Int64, true);
    c0 = g.constant_f32({3}, {1.f, 2.f, 3.f});
    c1 = g.constant_i32({2, 2}, {1, 2, 3, 4});
    c2 = g.constant(DType::Float32, {}, f32_bytes({7.5f}));
    c3 = g.constant_f32({3}, {1.f, 2.f, 3.f});  // same bytes as c0: same named key
    ce = g.constant(DType::Float32, {0, 4}, {});
    n = g.null();
    i = g.int_(-7);
    d = g.dbl(-std::numeric_limits<double>::infinity());
    b = g.boolean(true);
    s = g.str("tanh");
    il = g.int_list({1, -1, std::numeric_limits<int64_t>::max()});
    dl = g.double_list({2.0, 0.5});
    bl = g.bool_list({true, false, true});
    si = g.symint(5);
    vl = g.value_list({si, i, si});
    t = g.tensor(DType::Float32, {2, 3}, 0);
    out = g.tensor(DType::Float32, {2, 3}, 1);
    o2 = g.tensor(DType::Bool, {2, 3});
    outs = g.value_list({out, o2});
    g.op("aten.add.Tensor", {x, c0, i, t});
    g.op("custom.everything.default", {t, n, d, b, s, il, dl, bl, vl, c1, c2, c3, ce, y, outs});
    g.output(out);
    g.output(o2);
  }
};

void expect_every_kind(const VkGraphIR& ir, const EveryKind& e, bool named) {
  ASSERT_EQ(ir.values.size(), 21u);
  EXPECT_EQ(ir.version, "0");
  EXPECT_EQ(ir.input_ids, (std::vector<uint32_t>{uint32_t(e.x), uint32_t(e.y)}));
  EXPECT_EQ(ir.output_ids, (std::vector<uint32_t>{uint32_t(e.out), uint32_t(e.o2)}));
  auto T = [&](int id) -> const VkTensorDesc& {
    EXPECT_EQ(ir.values[id].kind, VkValueKind::Tensor) << id;
    return ir.values[id].tensor;
  };
  EXPECT_EQ(T(e.x).dtype, VkDType::Float32);
  EXPECT_EQ(T(e.x).dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(T(e.x).constant_id, -1);
  EXPECT_EQ(T(e.x).mem_obj_id, 0);  // default 0, omitted on disk
  EXPECT_EQ(T(e.y).dtype, VkDType::Int32);
  EXPECT_EQ(T(e.y).mem_obj_id, 3);
  EXPECT_EQ(T(e.c0).constant_id, 0);  // first constant: omitted on disk, default 0
  EXPECT_EQ(T(e.c0).mem_obj_id, -1);
  EXPECT_EQ(T(e.c1).constant_id, 1);
  EXPECT_EQ(T(e.c1).dtype, VkDType::Int32);
  EXPECT_TRUE(T(e.c2).dims.empty());
  EXPECT_EQ(T(e.c3).constant_id, 3);
  EXPECT_EQ(T(e.ce).dims, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(T(e.o2).dtype, VkDType::Bool);
  EXPECT_EQ(T(e.o2).mem_obj_id, -1);
  EXPECT_EQ(ir.values[e.n].kind, VkValueKind::Null);
  EXPECT_EQ(ir.values[e.i].kind, VkValueKind::Int);
  EXPECT_EQ(ir.values[e.i].int_val, -7);
  EXPECT_EQ(ir.values[e.d].kind, VkValueKind::Double);
  EXPECT_TRUE(std::isinf(ir.values[e.d].double_val) && ir.values[e.d].double_val < 0);
  EXPECT_EQ(ir.values[e.b].kind, VkValueKind::Bool);
  EXPECT_TRUE(ir.values[e.b].bool_val);
  EXPECT_EQ(ir.values[e.s].str, "tanh");
  EXPECT_EQ(ir.values[e.il].ints, (std::vector<int64_t>{1, -1, std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(ir.values[e.dl].doubles, (std::vector<double>{2.0, 0.5}));
  EXPECT_EQ(ir.values[e.bl].bools, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(ir.values[e.si].kind, VkValueKind::SymInt);
  EXPECT_EQ(ir.values[e.si].int_val, 5);
  EXPECT_EQ(ir.values[e.vl].ids, (std::vector<int32_t>{e.si, e.i, e.si}));
  EXPECT_EQ(ir.values[e.outs].ids, (std::vector<int32_t>{e.out, e.o2}));
  ASSERT_EQ(ir.chain.size(), 2u);
  EXPECT_EQ(ir.chain[0].node_id, 0u);
  EXPECT_EQ(ir.chain[0].name, "aten.add.Tensor");
  EXPECT_EQ(ir.chain[0].args, (std::vector<int32_t>{e.x, e.c0, e.i, e.t}));
  EXPECT_EQ(ir.chain[1].node_id, 1u);
  EXPECT_EQ(ir.chain[1].args.back(), e.outs);
  ASSERT_EQ(ir.constants.size(), 5u);
  const std::vector<uint8_t> c0 = f32_bytes({1.f, 2.f, 3.f});
  EXPECT_TRUE(std::equal(ir.constants[0].data.begin(), ir.constants[0].data.end(), c0.begin(), c0.end()));
  EXPECT_TRUE(std::equal(ir.constants[3].data.begin(), ir.constants[3].data.end(), c0.begin(), c0.end()));
  EXPECT_EQ(ir.constants[1].data.size(), 16u);
  EXPECT_EQ(ir.constants[2].data.size(), 4u);
  EXPECT_EQ(ir.constants[4].data.size(), 0u);
  EXPECT_EQ(rd<float>(std::vector<uint8_t>(ir.constants[2].data.begin(), ir.constants[2].data.end()), 0), 7.5f);
  if (named) {
    EXPECT_EQ(ir.constants[0].named_key, sha256_hex(c0));
    EXPECT_EQ(ir.constants[3].named_key, ir.constants[0].named_key);
    EXPECT_TRUE(ir.constants[4].named_key.empty());  // empty constants are never named
  } else {
    for (const auto& c : ir.constants) EXPECT_TRUE(c.named_key.empty());
  }
}

Program read(const std::vector<uint8_t>& bytes) { return read_program(std::make_shared<Bytes>(bytes)); }

}  // namespace

TEST(BuilderRoundTrip, EveryValueKindInAllFourPlacementCombinations) {
  EveryKind e;
  std::string first_json;
  for (Placement p : {Placement::NamedData, Placement::InlineBlob}) {
    for (bool seg : {true, false}) {
      SCOPED_TRACE(testing::Message() << "named=" << (p == Placement::NamedData) << " segment=" << seg);
      GraphBuilder::Options opt;
      opt.constants = p;
      opt.delegate_in_segment = seg;
      const Program prog = read(e.g.serialize(opt));
      const ExecutionPlan& plan = prog.plan("forward");
      ASSERT_EQ(plan.delegates.size(), 1u);
      EXPECT_EQ(plan.delegates[0].id, "VulkanBackend");
      EXPECT_EQ(prog.named_data.size(), p == Placement::NamedData ? 3u : 0u);  // c0/c3 share a key
      const VkGraphIR ir = read_vkgraph(plan.delegates[0].blob, prog);
      expect_every_kind(ir, e, p == Placement::NamedData);
      // Apart from constant placement the graphs are identical.
      nlohmann::json j = nlohmann::json::parse(vkgraph_to_json(ir));
      for (auto& c : j["constants"]) c.erase("named_key");
      if (first_json.empty()) first_json = j.dump();
      EXPECT_EQ(j.dump(), first_json);
      EXPECT_NE(describe_program(prog).find("custom.everything.default("), std::string::npos);
    }
  }
}

TEST(BuilderRoundTrip, ProgramSideEValuesAreMemoryPlannedDelegateIo) {
  EveryKind e;
  const Program prog = read(e.g.serialize());
  const ExecutionPlan& plan = prog.plan("forward");
  ASSERT_EQ(plan.inputs.size(), 2u);
  ASSERT_EQ(plan.outputs.size(), 2u);
  ASSERT_EQ(plan.non_const_buffer_sizes.size(), 2u);
  EXPECT_EQ(plan.non_const_buffer_sizes[0], 0);
  const EValue& x = plan.values[plan.inputs[0]];
  const EValue& y = plan.values[plan.inputs[1]];
  EXPECT_EQ(x.tensor.scalar_type, ScalarType::Float);
  EXPECT_EQ(y.tensor.scalar_type, ScalarType::Long);  // host int64 feeding an INT32 VkTensor
  EXPECT_EQ(y.tensor.sizes, (std::vector<int64_t>{4}));
  EXPECT_EQ(plan.values[plan.outputs[1]].tensor.scalar_type, ScalarType::Bool);
  for (int32_t id : {plan.inputs[0], plan.inputs[1], plan.outputs[0], plan.outputs[1]}) {
    const TensorInfo& t = plan.values[id].tensor;
    EXPECT_TRUE(t.has_allocation);
    EXPECT_EQ(t.memory_id, 1u);
    EXPECT_EQ(t.memory_offset % 16, 0u);
    EXPECT_EQ(t.dynamism, ShapeDynamism::Static);
    EXPECT_EQ(t.dim_order.size(), t.sizes.size());
  }
  ASSERT_EQ(plan.chains.size(), 1u);
  ASSERT_EQ(plan.chains[0].size(), 1u);
  const Instruction& call = plan.chains[0][0];
  EXPECT_EQ(call.kind, InstrKind::DelegateCall);
  EXPECT_EQ(call.index, 0);
  EXPECT_EQ(call.args, (std::vector<int32_t>{plan.inputs[0], plan.inputs[1], plan.outputs[0], plan.outputs[1]}));
}

TEST(BuilderRoundTrip, DynamicInputsAreDynamicBound) {
  EveryKind e(/*dynamic=*/true);
  const Program prog = read(e.g.serialize());
  const ExecutionPlan& plan = prog.plan("forward");
  EXPECT_EQ(plan.values[plan.inputs[0]].tensor.dynamism, ShapeDynamism::DynamicBound);
  EXPECT_EQ(plan.values[plan.inputs[0]].tensor.sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(plan.values[plan.inputs[1]].tensor.dynamism, ShapeDynamism::Static);
  EXPECT_EQ(plan.values[plan.outputs[0]].tensor.dynamism, ShapeDynamism::DynamicBound);
  EXPECT_NE(describe_program(prog).find("dynamic"), std::string::npos);
}

TEST(BuilderRoundTrip, ProgramBuilderKernelAndSeveralDelegateCalls) {
  GraphBuilder g1;
  {
    auto a = g1.input(DType::Float32, {4});
    auto w = g1.constant_f32({4}, {1, 2, 3, 4});
    auto o = g1.tensor(DType::Float32, {4}, 0);
    g1.op("aten.mul.Tensor", {a, w, o});
    g1.output(o);
  }
  GraphBuilder g2;  // identical bytes to g1: shares the blob segment and the named key
  {
    auto a = g2.input(DType::Float32, {4});
    auto w = g2.constant_f32({4}, {1, 2, 3, 4});
    auto o = g2.tensor(DType::Float32, {4}, 0);
    g2.op("aten.mul.Tensor", {a, w, o});
    g2.output(o);
  }
  ProgramBuilder pb;
  auto in = pb.tensor(DType::Float32, {4});
  auto mid = pb.tensor(DType::Float32, {4});
  auto scaled = pb.tensor(DType::Float32, {4});
  auto out = pb.tensor(DType::Float32, {4});
  auto k = pb.constant_tensor(DType::Float32, {2}, f32_bytes({5.f, 6.f}));
  auto k2 = pb.constant_tensor(DType::Float32, {3}, f32_bytes({1.f, 2.f, 3.f}));
  auto il = pb.int_list({1, 1});
  auto otl = pb.optional_tensor_list({k, -1});
  auto tl = pb.tensor_list({k, k2});
  auto dl = pb.double_list({0.25});
  auto bl = pb.bool_list({true});
  pb.input(in);
  pb.delegate(g1, {in}, {mid});
  pb.kernel("aten::mul", "Scalar_out", {mid, pb.dbl(0.5), scaled});
  pb.kernel("aten::mul", "Scalar_out", {scaled, pb.dbl(2.0), scaled});
  pb.kernel("custom::lists", "out", {il, otl, tl, dl, bl, pb.null(), pb.boolean(false), scaled});
  pb.delegate(g2, {scaled}, {out});
  pb.output(out);
  for (Placement p : {Placement::NamedData, Placement::InlineBlob}) {
    const auto bytes = pb.serialize(p);
    const Program prog = read(bytes);
    const ExecutionPlan& plan = prog.plan("forward");
    ASSERT_EQ(plan.operators.size(), 2u);
    EXPECT_EQ(plan.operators[0].key(), "aten::mul.Scalar_out");
    EXPECT_EQ(plan.operators[1].key(), "custom::lists.out");
    ASSERT_EQ(plan.chains[0].size(), 5u);
    const auto& c = plan.chains[0];
    EXPECT_EQ(c[0].kind, InstrKind::DelegateCall);
    EXPECT_EQ(c[1].kind, InstrKind::KernelCall);
    EXPECT_EQ(c[1].args.size(), 4u);
    EXPECT_EQ(c[1].args[2], scaled);
    EXPECT_EQ(c[1].args[3], scaled);  // trailing return entry = out
    EXPECT_EQ(c[2].index, 0);         // operator table deduplicated
    EXPECT_EQ(c[4].kind, InstrKind::DelegateCall);
    EXPECT_EQ(c[4].index, 1);
    EXPECT_EQ(plan.values[c[1].args[1]].kind, EValueKind::Double);
    EXPECT_EQ(plan.values[c[1].args[1]].double_val, 0.5);
    // Program IntList items point at Int EValues.
    const EValue& ilv = plan.values[il];
    ASSERT_EQ(ilv.kind, EValueKind::IntList);
    ASSERT_EQ(ilv.items.size(), 2u);
    EXPECT_EQ(plan.values[ilv.items[0]].kind, EValueKind::Int);
    EXPECT_EQ(plan.values[ilv.items[1]].int_val, 1);
    EXPECT_EQ(plan.values[otl].items, (std::vector<int64_t>{k, -1}));
    EXPECT_EQ(plan.values[tl].items, (std::vector<int64_t>{k, k2}));
    EXPECT_EQ(plan.values[dl].doubles, (std::vector<double>{0.25}));
    EXPECT_EQ(plan.values[bl].bools, (std::vector<uint8_t>{1}));
    // CPU constants live in the constant segment (data_buffer_idx > 0, no allocation_info).
    const TensorInfo& kt = plan.values[k].tensor;
    const TensorInfo& k2t = plan.values[k2].tensor;
    EXPECT_TRUE(kt.is_constant());
    EXPECT_EQ(kt.data_buffer_idx, 1u);
    EXPECT_EQ(k2t.data_buffer_idx, 2u);
    ASSERT_EQ(kt.constant_data.size(), 8u);
    ASSERT_EQ(k2t.constant_data.size(), 12u);
    EXPECT_EQ(rd<float>(std::vector<uint8_t>(kt.constant_data.begin(), kt.constant_data.end()), 4), 6.f);
    EXPECT_EQ(rd<float>(std::vector<uint8_t>(k2t.constant_data.begin(), k2t.constant_data.end()), 8), 3.f);
    EXPECT_EQ(k2t.constant_data.data() - kt.constant_data.data(), 16);  // entries padded to 16
    // Both delegates decode; identical blobs share one segment.
    for (const Delegate& d : plan.delegates) {
      const VkGraphIR ir = read_vkgraph(d.blob, prog);
      EXPECT_EQ(ir.chain.at(0).name, "aten.mul.Tensor");
    }
    EXPECT_EQ(plan.delegates[0].blob.data(), plan.delegates[1].blob.data());
    EXPECT_EQ(prog.named_data.size(), p == Placement::NamedData ? 1u : 0u);
  }
}

TEST(BuilderValidation, RejectsBadConstantsIdsAndInterfaces) {
  GraphBuilder g;
  auto expect_invalid = [](auto&& f) {
    try {
      f();
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const etwebgpu::Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    }
  };
  expect_invalid([&] { g.constant(DType::Float32, {2, 2}, std::vector<uint8_t>(15)); });
  expect_invalid([&] { g.constant_f32({3}, {1.f, 2.f}); });
  expect_invalid([&] { g.tensor(DType::Float32, {-1, 2}); });
  expect_invalid([&] { g.tensor(DType::Float32, {1LL << 40}); });
  auto x = g.input(DType::Float32, {2});
  expect_invalid([&] { g.op("aten.relu.default", {x, 99}); });
  expect_invalid([&] { g.op("aten.relu.default", {}); });
  expect_invalid([&] { g.value_list({x, -1}); });
  expect_invalid([&] { g.output(5); });
  expect_invalid([&] { g.output(g.int_(1)); });
  ProgramBuilder pb;
  expect_invalid([&] { pb.constant_tensor(DType::Int32, {3}, std::vector<uint8_t>(8)); });
  expect_invalid([&] { pb.input(3); });
  expect_invalid([&] { pb.kernel("aten::relu", "out", {7}); });
  expect_invalid([&] { pb.tensor_list({pb.int_(1)}); });
  auto t = pb.tensor(DType::Float32, {3});
  expect_invalid([&] { pb.delegate(g, {t}, {}); });        // wrong count
  g.output(x);
  expect_invalid([&] { pb.delegate(g, {t}, {t}); });       // sizes [3] vs dims [2]
}

TEST(BuilderLayout, SimpleGraphObeysEveryFormatInvariant) {
  GraphBuilder g;
  auto x = g.input(DType::Float32, {1, 3, 4, 5});
  auto w = g.constant_f32({1, 3, 1, 5}, std::vector<float>(15, 0.5f));
  auto a = g.int_(1);
  auto o = g.tensor(DType::Float32, {1, 3, 4, 5}, 0);
  g.op("aten.add.Tensor", {x, w, a, o});
  g.output(o);
  const auto f = g.serialize();
  ASSERT_GE(f.size(), 40u);
  // Header (FORMAT.md 3.1).
  EXPECT_EQ(std::string(f.begin() + 4, f.begin() + 8), "ET12");
  EXPECT_EQ(std::string(f.begin() + 8, f.begin() + 12), "eh00");
  EXPECT_EQ(rd<uint32_t>(f, 12), 32u);
  const uint64_t program_size = rd<uint64_t>(f, 16), base = rd<uint64_t>(f, 24), data_size = rd<uint64_t>(f, 32);
  EXPECT_EQ(base, align(program_size, 128));
  EXPECT_EQ(f.size(), base + data_size);
  for (uint64_t i = program_size; i < base; ++i) ASSERT_EQ(f[i], 0) << "gap byte " << i;
  // Removing the header and shifting the root gives an identical Program.
  std::vector<uint8_t> plain(f.begin(), f.begin() + 8);
  plain.insert(plain.end(), f.begin() + 40, f.begin() + program_size);
  const uint32_t root = rd<uint32_t>(f, 0) - 32;
  std::memcpy(plain.data(), &root, 4);
  {
    flatbuffers::Verifier v(plain.data(), plain.size());
    ASSERT_TRUE(executorch_flatbuffer::VerifyProgramBuffer(v));
    // (Without the header there is no segment area, so compare through the accessors.)
    const Program a = read(f);
    const auto* b = executorch_flatbuffer::GetProgram(plain.data());
    EXPECT_EQ(a.plans.at(0).values.size(), b->execution_plan()->Get(0)->values()->size());
    EXPECT_EQ(a.plans[0].name, b->execution_plan()->Get(0)->name()->str());
    EXPECT_EQ(a.named_data.size(), b->named_data()->size());
  }
  // Segments (FORMAT.md 3.3): constant segment first, empty, then the blob, then named data.
  const auto* p = executorch_flatbuffer::GetProgram(f.data());
  const auto* segs = p->segments();
  ASSERT_EQ(segs->size(), 3u);
  EXPECT_EQ(segs->Get(0)->offset(), 0u);
  EXPECT_EQ(segs->Get(0)->size(), 0u);
  EXPECT_EQ(p->constant_segment()->segment_index(), 0u);
  EXPECT_EQ(p->constant_segment()->offsets()->size(), 1u);
  EXPECT_EQ(p->constant_segment()->offsets()->Get(0), 0u);
  EXPECT_EQ(p->backend_delegate_data()->size(), 0u);
  uint64_t prev_end = 0;
  for (uint32_t i = 0; i < segs->size(); ++i) {
    const uint64_t off = segs->Get(i)->offset();
    EXPECT_EQ(off, i == 0 ? 0 : align(prev_end, 128)) << "segment " << i;
    for (uint64_t k = base + prev_end; k < base + off; ++k) ASSERT_EQ(f[k], 0) << "segment gap byte " << k;
    prev_end = off + segs->Get(i)->size();
  }
  EXPECT_EQ(prev_end, data_size);
  const auto* del = p->execution_plan()->Get(0)->delegates()->Get(0);
  EXPECT_EQ(del->id()->str(), "VulkanBackend");
  EXPECT_EQ(del->processed()->location(), executorch_flatbuffer::DataLocation::SEGMENT);
  EXPECT_EQ(del->processed()->index(), 1u);
  EXPECT_EQ(del->compile_specs()->size(), 0u);
  // VH00 blob (FORMAT.md 1).
  const uint64_t blob_at = base + segs->Get(1)->offset();
  EXPECT_EQ(blob_at % 128, 0u);
  const std::vector<uint8_t> blob(f.begin() + blob_at, f.begin() + blob_at + segs->Get(1)->size());
  EXPECT_EQ(rd<uint32_t>(blob, 0), 0u);
  EXPECT_EQ(std::string(blob.begin() + 4, blob.begin() + 8), "VH00");
  EXPECT_EQ(rd<uint16_t>(blob, 8), 30u);
  EXPECT_EQ(rd<uint16_t>(blob, 30), 0u);
  const uint32_t fb_off = rd<uint32_t>(blob, 10), fb_size = rd<uint32_t>(blob, 14), bytes_off = rd<uint32_t>(blob, 18);
  EXPECT_EQ(fb_off, 32u);
  EXPECT_EQ(bytes_off, 32 + align(fb_size, 16));
  EXPECT_EQ(rd<uint64_t>(blob, 22), 0u);
  EXPECT_EQ(blob.size(), bytes_off);
  EXPECT_EQ(std::string(blob.begin() + 36, blob.begin() + 40), "VK00");
  for (size_t k = fb_off + fb_size; k < bytes_off; ++k) EXPECT_EQ(blob[k], 0);
  // Named data: key = sha256 of the exact, unpadded segment bytes.
  ASSERT_EQ(p->named_data()->size(), 1u);
  const auto* nd = p->named_data()->Get(0);
  EXPECT_EQ(nd->segment_index(), 2u);
  const auto* s2 = segs->Get(2);
  EXPECT_EQ(s2->size(), 60u);
  const std::vector<uint8_t> w_bytes(f.begin() + base + s2->offset(), f.begin() + base + s2->offset() + s2->size());
  EXPECT_EQ(nd->key()->str(), sha256_hex(w_bytes));
  // Memory plan.
  const auto* plan = p->execution_plan()->Get(0);
  EXPECT_EQ(plan->non_const_buffer_sizes()->size(), 2u);
  EXPECT_EQ(plan->non_const_buffer_sizes()->Get(0), 0);
  EXPECT_EQ(plan->non_const_buffer_sizes()->Get(1), 480);
  EXPECT_EQ(plan->chains()->Get(0)->inputs()->size(), 0u);  // present but empty
  (void)w;
}

TEST(BuilderLayout, InlineBlobConstantsArePaddedTo16) {
  GraphBuilder g;
  auto x = g.input(DType::Float32, {3});
  auto w = g.constant_f32({3}, {1, 2, 3});
  auto v = g.constant_f32({2}, {4, 5});
  auto o = g.tensor(DType::Float32, {3});
  g.op("custom.op", {x, w, v, o});
  g.output(o);
  const auto blob = g.serialize_blob(Placement::InlineBlob);
  EXPECT_TRUE(blob.named_data.empty());
  const uint32_t fb_size = rd<uint32_t>(blob.bytes, 14), bytes_off = rd<uint32_t>(blob.bytes, 18);
  EXPECT_EQ(bytes_off, 32 + align(fb_size, 16));
  EXPECT_EQ(rd<uint64_t>(blob.bytes, 22), 32u);  // 12 -> 16, 8 -> 16
  EXPECT_EQ(blob.bytes.size(), bytes_off + 32u);
  EXPECT_EQ(rd<float>(blob.bytes, bytes_off + 16), 4.f);
  Program empty;
  const VkGraphIR ir = read_vkgraph(blob.bytes, empty);
  ASSERT_EQ(ir.constants.size(), 2u);
  EXPECT_EQ(ir.constants[1].data.data() - blob.bytes.data(), static_cast<ptrdiff_t>(bytes_off + 16));
  EXPECT_EQ(ir.constants[1].data.size(), 8u);
}

TEST(BuilderFlatc, FlatcDecodesBuilderVkGraphAndProgram) {
  const std::filesystem::path flatc = "/usr/bin/flatc";
  if (!std::filesystem::exists(flatc)) GTEST_SKIP() << "flatc not installed at /usr/bin/flatc";
  EveryKind e;
  const auto file = e.g.serialize();
  const Program prog = read(file);
  const ByteSpan blob = prog.plan("forward").delegates.at(0).blob;
  const uint32_t fb_size = rd<uint32_t>(std::vector<uint8_t>(blob.begin(), blob.begin() + 30), 14);
  const auto dir = std::filesystem::temp_directory_path() / ("etwebgpu_flatc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "graph.bin", std::ios::binary).write(reinterpret_cast<const char*>(blob.data() + 32), fb_size);
    std::ofstream(dir / "model.bin", std::ios::binary).write(reinterpret_cast<const char*>(file.data()), file.size());
  }
  const std::string schema_dir = std::string(ETWEBGPU_SOURCE_DIR) + "/schema/";
  auto run = [&](const std::string& schema, const std::string& bin) {
    const std::string cmd = flatc.string() + " --json --raw-binary --strict-json --defaults-json -o " + dir.string() +
                            " " + schema_dir + schema + " -- " + (dir / bin).string() + " 2>&1";
    return std::system(cmd.c_str());
  };
  auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  ASSERT_EQ(run("vkgraph.fbs", "graph.bin"), 0);
  const std::string gj = slurp(dir / "graph.json");
  EXPECT_NE(gj.find("\"aten.add.Tensor\""), std::string::npos);
  EXPECT_NE(gj.find("\"custom.everything.default\""), std::string::npos);
  EXPECT_NE(gj.find("\"value_type\": \"SymInt\""), std::string::npos);
  EXPECT_NE(gj.find("\"staging_datatype\": \"FLOAT32\""), std::string::npos);
  EXPECT_NE(gj.find(sha256_hex(f32_bytes({1.f, 2.f, 3.f}))), std::string::npos);
  ASSERT_EQ(run("program.fbs", "model.bin"), 0);
  const std::string pj = slurp(dir / "model.json");
  EXPECT_NE(pj.find("\"VulkanBackend\""), std::string::npos);
  EXPECT_NE(pj.find("\"forward\""), std::string::npos);
  std::filesystem::remove_all(dir);
}
