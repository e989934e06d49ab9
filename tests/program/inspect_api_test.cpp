// include/etwebgpu/inspect.h: a .pte described without a GPU (what `etwebgpu inspect` prints) and
// the supported-operator list (`etwebgpu ops`).
#include <gtest/gtest.h>

#include <algorithm>

#include "etwebgpu/builder.h"
#include "etwebgpu/example_model.h"
#include "etwebgpu/inspect.h"
#include "graph/op_registry.h"
#include "program/program_graph.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

TEST(InspectApi, TheExampleModelRunsAsOneDelegateWithEveryOperatorSupported) {
  const ProgramReport r = inspect(make_example_model().pte);
  EXPECT_EQ(r.method, "forward");
  ASSERT_EQ(r.instructions.size(), 1u);
  EXPECT_EQ(r.instructions[0].kind, "delegate");
  EXPECT_TRUE(r.instructions[0].supported);
  EXPECT_GT(r.gpu_ops, 4u);
  EXPECT_TRUE(r.unsupported.empty());
  EXPECT_NE(r.description.find("aten.convolution.default("), std::string::npos) << r.description;
  const std::string text = r.text();
  EXPECT_EQ(text.rfind(r.description, 0), 0u);
  EXPECT_NE(text.find("execution of 'forward' (one GPU graph of " + std::to_string(r.gpu_ops) + " ops)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("all operators supported"), std::string::npos) << text;
}

TEST(InspectApi, AnUnknownOperatorIsListedNotThrown) {
  GraphBuilder g;
  auto x = g.input(DType::Float32, {4});
  auto y = g.tensor(DType::Float32, {4});
  g.op("custom.frobnicate.default", {x, y});
  g.output(y);
  const ProgramReport r = inspect(g.serialize());
  EXPECT_EQ(r.unsupported, std::vector<std::string>{"custom.frobnicate.default"});
  ASSERT_EQ(r.instructions.size(), 1u);
  EXPECT_FALSE(r.instructions[0].supported);
  EXPECT_NE(r.text().find("missing operators (1):\n  custom.frobnicate.default"), std::string::npos) << r.text();
}

TEST(InspectApi, BadInputsGiveTheirErrorKinds) {
  const auto pte = make_example_model().pte;
  auto kind = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind([&] { inspect(pte, "backward"); }), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind([] { inspect_file("/nonexistent/model.pte"); }), ErrorKind::Io);
  EXPECT_EQ(kind([] { inspect(std::vector<uint8_t>(64, 7)); }), ErrorKind::Format);
}

TEST(InspectApi, SupportedOperatorsAreTheRegistryWithFamiliesAndKernelSpellings) {
  const auto ops = supported_operators();
  const auto names = graph::OpRegistry::global().names();
  ASSERT_EQ(ops.size(), names.size());
  const auto library = etwebgpu::testing::library_op_names();
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].name, names[i]);
    EXPECT_EQ(ops[i].kernel_calls, graph::kernel_call_names(ops[i].name)) << ops[i].name;
    // Test-only operators (tests/kernel/) are registered outside src/ops/ and have no family.
    bool in_library = std::find(library.begin(), library.end(), ops[i].name) != library.end();
    EXPECT_EQ(ops[i].family == "?", !in_library) << ops[i].name;
  }
  auto add = std::find_if(ops.begin(), ops.end(), [](const OperatorInfo& o) { return o.name == "aten.add.Tensor"; });
  ASSERT_NE(add, ops.end());
  EXPECT_EQ(add->family, "elementwise");
  EXPECT_EQ(add->kernel_calls, std::vector<std::string>{"aten::add.out"});
}

}  // namespace
