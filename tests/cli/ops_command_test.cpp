// `etwebgpu ops` lists every registered operator once, in both spellings, and every KernelCall
// name it prints maps back onto that operator through map_kernel_call (the loader's mapping).
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "graph/op_registry.h"
#include "program/program_graph.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::map<std::string, std::vector<std::string>> listed_ops() {
  std::string out;
  EXPECT_EQ(run_cli("ops", &out), 0) << out;
  std::map<std::string, std::vector<std::string>> m;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string op, k;
    ls >> op;
    EXPECT_EQ(m.count(op), 0u) << op << " listed twice";
    auto& ks = m[op];
    while (ls >> k) ks.push_back(k);
  }
  return m;
}

TEST(CliOps, ListsEveryRegisteredOperatorOnceWithKernelNamesThatMapBack) {
  auto listed = listed_ops();
  auto names = library_op_names();
  ASSERT_EQ(listed.size(), names.size());
  for (const auto& op : names) {
    ASSERT_EQ(listed.count(op), 1u) << op;
    for (const auto& k : listed[op]) {
      format::VkGraphIR ir;
      std::vector<int32_t> args(16, 0);  // enough for the longest layout plus its outs
      std::string mapped;
      EXPECT_TRUE(graph::map_kernel_call(k, args, mapped, ir)) << k;
      EXPECT_EQ(mapped, op) << k;
    }
  }
}

TEST(CliOps, KernelSpellingsFollowExecuTorchOutVariants) {
  for (const char* op : {"aten.add.Tensor", "aten.lt.Scalar", "aten.relu.default", "aten.div.Tensor_mode",
                         "dim_order_ops._to_dim_order_copy.default", "et_vk.sdpa.default", "sym_size.int"})
    if (!graph::OpRegistry::global().has(op)) GTEST_SKIP() << op << " is not in this build (ETWEBGPU_ONLY_OPS)";
  auto listed = listed_ops();
  EXPECT_EQ(listed["aten.add.Tensor"], std::vector<std::string>{"aten::add.out"});
  EXPECT_EQ(listed["aten.lt.Scalar"], std::vector<std::string>{"aten::lt.Scalar_out"});
  EXPECT_EQ(listed["aten.relu.default"], std::vector<std::string>{"aten::relu.out"});
  EXPECT_EQ(listed["aten.div.Tensor_mode"], std::vector<std::string>{"aten::div.out_mode"});
  EXPECT_EQ(listed["dim_order_ops._to_dim_order_copy.default"], std::vector<std::string>{"dim_order_ops::_to_dim_order_copy.out"});
  // Vulkan-only and SymInt operators have no out variant.
  EXPECT_TRUE(listed["et_vk.sdpa.default"].empty());
  EXPECT_TRUE(listed["sym_size.int"].empty());
}

TEST(CliOps, MarkdownTableSpellsEveryOperatorInFull) {
  std::string out;
  ASSERT_EQ(run_cli("ops --markdown", &out), 0) << out;
  for (const auto& op : library_op_names())
    EXPECT_TRUE(has(out, ("| `" + op + "` |").c_str())) << op;
}

}  // namespace
