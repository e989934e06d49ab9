// Every real export parses, and spot facts from FORMAT.md hold on the decoded IR.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "etwebgpu/error.h"
#include "format/describe.h"
#include "format/ir.h"
#include "format/sha256.h"
#include "format_test_util.h"

using namespace etwebgpu::format;
using namespace etwebgpu::format::fixtures;

namespace {

struct Decoded {
  Program prog;
  std::vector<VkGraphIR> graphs;  // one per delegate of plan "forward"
};

Decoded decode(const std::string& name) {
  Decoded d{read_program(load_case(name)), {}};
  for (const Delegate& del : d.prog.plan("forward").delegates) d.graphs.push_back(read_vkgraph(del.blob, d.prog));
  return d;
}

bool has_op(const VkGraphIR& g, const std::string& op) {
  return std::any_of(g.chain.begin(), g.chain.end(), [&](const VkOpCall& c) { return c.name == op; });
}

}  // namespace

TEST(PteConformance, EveryFixtureParsesAndDescribeMentionsEveryOp) {
  ETWEBGPU_REQUIRE_CONFORMANCE();
  size_t files = 0, graphs = 0, ops = 0;
  for (const std::string& name : conformance_cases()) {
    SCOPED_TRACE(name);
    Decoded d;
    ASSERT_NO_THROW(d = decode(name));
    ++files;
    const ExecutionPlan& plan = d.prog.plan("forward");
    EXPECT_FALSE(plan.inputs.empty());
    EXPECT_FALSE(plan.outputs.empty());
    const std::string text = describe_program(d.prog);
    EXPECT_EQ(text.find("cannot decode"), std::string::npos);
    for (const VkGraphIR& g : d.graphs) {
      ++graphs;
      EXPECT_EQ(g.version, "0");
      EXPECT_FALSE(g.chain.empty());
      const std::string gtext = describe_vkgraph(g);
      for (const VkOpCall& op : g.chain) {
        ++ops;
        EXPECT_NE(gtext.find(op.name + "("), std::string::npos) << op.name;
        EXPECT_NE(text.find(op.name + "("), std::string::npos) << op.name;
      }
      EXPECT_NO_THROW(nlohmann::json::parse(vkgraph_to_json(g)));
    }
    for (const OperatorRef& o : plan.operators) EXPECT_NE(text.find(o.key()), std::string::npos) << o.key();
    // The summary form leaves the graphs out but still counts their ops.
    const std::string brief = describe_program(d.prog, /*include_graphs=*/false);
    EXPECT_EQ(brief.find("values:\n"), std::string::npos);
    for (const VkGraphIR& g : d.graphs)
      EXPECT_NE(brief.find(std::to_string(g.chain.size()) + " ops"), std::string::npos);
  }
  EXPECT_GT(files, 30u);
  EXPECT_GT(graphs, 30u);
  EXPECT_GT(ops, 100u);
}

TEST(PteConformance, DelegateCallsMatchGraphInterfaces) {
  ETWEBGPU_REQUIRE_CONFORMANCE();
  for (const std::string& name : conformance_cases()) {
    SCOPED_TRACE(name);
    const Decoded d = decode(name);
    const ExecutionPlan& plan = d.prog.plan("forward");
    ASSERT_EQ(plan.chains.size(), 1u);
    for (const Instruction& in : plan.chains[0]) {
      if (in.kind != InstrKind::DelegateCall) continue;
      const VkGraphIR& g = d.graphs[static_cast<size_t>(in.index)];
      EXPECT_EQ(plan.delegates[static_cast<size_t>(in.index)].id, "VulkanBackend");
      ASSERT_EQ(in.args.size(), g.input_ids.size() + g.output_ids.size());
      for (size_t k = 0; k < in.args.size(); ++k) {
        const EValue& ev = plan.values[static_cast<size_t>(in.args[k])];
        ASSERT_EQ(ev.kind, EValueKind::Tensor);
        const uint32_t vid = k < g.input_ids.size() ? g.input_ids[k] : g.output_ids[k - g.input_ids.size()];
        const VkValue& vv = g.values[vid];
        ASSERT_EQ(vv.kind, VkValueKind::Tensor);
        EXPECT_EQ(ev.tensor.sizes, vv.tensor.dims) << "arg " << k;
        EXPECT_TRUE(ev.tensor.has_allocation);
        EXPECT_EQ(ev.tensor.memory_id, 1u);
        EXPECT_EQ(ev.tensor.memory_offset % 16, 0u);
      }
    }
  }
}

TEST(PteConformance, NamedConstantsResolveToTheirSha256) {
  ETWEBGPU_REQUIRE_CONFORMANCE();
  size_t checked = 0;
  for (const std::string& name : conformance_cases()) {
    SCOPED_TRACE(name);
    const Decoded d = decode(name);
    for (const auto& [key, data] : d.prog.named_data) EXPECT_EQ(sha256_hex(data), key);
    for (const VkGraphIR& g : d.graphs) {
      for (const VkValue& v : g.values) {
        if (v.kind != VkValueKind::Tensor || !v.tensor.is_constant()) continue;
        const VkConstant& c = g.constants[static_cast<size_t>(v.tensor.constant_id)];
        EXPECT_EQ(c.named_key.size(), 64u);
        uint64_t n = vk_dtype_size(v.tensor.dtype);
        for (int64_t x : v.tensor.dims) n *= static_cast<uint64_t>(x);
        EXPECT_EQ(c.data.size(), n);
        EXPECT_EQ(v.tensor.mem_obj_id, -1);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST(PteConformance, AddBcastHasOneDelegateWithAtenAdd) {
  ETWEBGPU_REQUIRE_CONFORMANCE();
  const Decoded d = decode("add_bcast");
  const ExecutionPlan& plan = d.prog.plan("forward");
  ASSERT_EQ(plan.delegates.size(), 1u);
  ASSERT_EQ(d.graphs.size(), 1u);
  const VkGraphIR& g = d.graphs[0];
  ASSERT_TRUE(has_op(g, "aten.add.Tensor"));
  EXPECT_EQ(g.input_ids.size(), 2u);
  EXPECT_EQ(g.output_ids.size(), 1u);
  const VkOpCall& add = *std::find_if(g.chain.begin(), g.chain.end(), [](const VkOpCall& c) { return c.name == "aten.add.Tensor"; });
  ASSERT_EQ(add.args.size(), 4u);  // self, other, alpha, out
  EXPECT_EQ(g.values[static_cast<size_t>(add.args[2])].kind, VkValueKind::Int);
  EXPECT_EQ(g.values[static_cast<size_t>(add.args[2])].int_val, 1);
  const VkValue& in1 = g.values[g.input_ids[1]];
  EXPECT_EQ(in1.tensor.dims, (std::vector<int64_t>{1, 3, 1, 5}));
  EXPECT_EQ(in1.tensor.dtype, VkDType::Float32);
  EXPECT_NE(describe_vkgraph(g).find("alpha=Int(1)"), std::string::npos);
  // Program-side: the method inputs are the delegate's inputs.
  EXPECT_EQ(plan.values[static_cast<size_t>(plan.inputs[1])].tensor.sizes, (std::vector<int64_t>{1, 3, 1, 5}));
  EXPECT_EQ(plan.values[static_cast<size_t>(plan.inputs[1])].tensor.scalar_type, ScalarType::Float);
  EXPECT_TRUE(plan.operators.empty());
  ASSERT_EQ(plan.non_const_buffer_sizes.size(), 2u);
  EXPECT_EQ(plan.non_const_buffer_sizes[0], 0);
}

TEST(PteConformance, SliceStepCarriesStepValues) {
  ETWEBGPU_REQUIRE_CONFORMANCE();
  const Decoded d = decode("slice_step");
  bool found = false;
  for (const VkGraphIR& g : d.graphs) {
    for (const VkOpCall& op : g.chain) {
      if (op.name != "aten.slice_copy.Tensor") continue;
      ASSERT_EQ(op.args.size(), 6u);
      const VkValue& step = g.values[static_cast<size_t>(op.args[4])];
      ASSERT_EQ(step.kind, VkValueKind::Int);
      EXPECT_GE(step.int_val, 1);
      const VkValue& dim = g.values[static_cast<size_t>(op.args[1])];
      EXPECT_TRUE(dim.kind == VkValueKind::Int || dim.kind == VkValueKind::Double);
      if (step.int_val > 1) found = true;
    }
  }
  EXPECT_TRUE(found) << "expected at least one slice with step > 1";
}

TEST(PteConformance, SdpaStandardHasKernelCallsWithOutVariantKeys) {
  ETWEBGPU_REQUIRE_CONFORMANCE();
  const Decoded d = decode("sdpa_standard");
  const ExecutionPlan& plan = d.prog.plan("forward");
  std::set<std::string> keys;
  for (const OperatorRef& o : plan.operators) keys.insert(o.key());
  EXPECT_TRUE(keys.count("aten::mul.Scalar_out")) << describe_program(d.prog);
  // Interleaving K D K D K K K K D (FORMAT.md section 6.2).
  std::string pattern;
  for (const Instruction& in : plan.chains.at(0)) pattern += in.kind == InstrKind::KernelCall ? 'K' : 'D';
  EXPECT_EQ(pattern, "KDKDKKKKD");
  for (const Instruction& in : plan.chains[0]) {
    if (in.kind != InstrKind::KernelCall) continue;
    ASSERT_GE(in.args.size(), 2u);
    EXPECT_EQ(in.args.back(), in.args[in.args.size() - 2]) << "return entry equals out";
    if (plan.operators[static_cast<size_t>(in.index)].key() == "aten::mul.Scalar_out") {
      ASSERT_EQ(in.args.size(), 4u);
      EXPECT_EQ(plan.values[static_cast<size_t>(in.args[1])].kind, EValueKind::Double);
    }
  }
}

TEST(PteConformance, DynamicMlpSeqHasBoundedInputsAndSymInt) {
  ETWEBGPU_REQUIRE_CONFORMANCE();
  const Decoded d = decode("dynamic_mlp_seq");
  const ExecutionPlan& plan = d.prog.plan("forward");
  const TensorInfo& in = plan.values[static_cast<size_t>(plan.inputs[0])].tensor;
  EXPECT_EQ(in.dynamism, ShapeDynamism::DynamicBound);
  EXPECT_EQ(in.sizes, (std::vector<int64_t>{1, 64, 32}));
  bool symint = false;
  for (const VkGraphIR& g : d.graphs)
    for (const VkValue& v : g.values) symint |= v.kind == VkValueKind::SymInt;
  EXPECT_TRUE(symint);
}

TEST(PteConformance, HeaderAndSegmentArithmeticMatchFormatNotes) {
  ETWEBGPU_REQUIRE_CONFORMANCE();
  for (const std::string& name : conformance_cases()) {
    SCOPED_TRACE(name);
    const auto b = load_case(name);
    ASSERT_GE(b->size(), 40u);
    EXPECT_EQ(std::string(b->begin() + 8, b->begin() + 12), "eh00");
    uint64_t program_size, base, data_size;
    std::memcpy(&program_size, b->data() + 16, 8);
    std::memcpy(&base, b->data() + 24, 8);
    std::memcpy(&data_size, b->data() + 32, 8);
    EXPECT_EQ(base, (program_size + 127) / 128 * 128);
    EXPECT_EQ(b->size(), base + data_size);
  }
}
