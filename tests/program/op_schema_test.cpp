// The one table of operator signatures (src/format/op_schema): out-variant layouts follow from
// argument names, every out variant targets a registered operator, and both readers (the program
// merge and inspect's describe) take their knowledge from it.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "format/describe.h"
#include "format/op_schema.h"
#include "graph/op_registry.h"
#include "program/program_graph.h"

using namespace etwebgpu;
using namespace etwebgpu::format;

namespace {

std::vector<int> layout_of(const std::string& kernel) {
  const OutVariant* v = find_out_variant(kernel).variant;
  EXPECT_NE(v, nullptr) << kernel;
  return v ? v->layout : std::vector<int>{};
}

TEST(OpSchema, OutVariantLayoutsPlaceEachArgumentByNameAndNullTheRest) {
  // full.out(size, fill_value, out) -> full.default(size, fill_value, dtype, layout, device, pin_memory) + out
  EXPECT_EQ(layout_of("aten::full.out"), (std::vector<int>{0, 1, -1, -1, -1, -1, 2}));
  // _to_copy.out(self, non_blocking, memory_format, out): non_blocking is the 6th functional argument.
  EXPECT_EQ(layout_of("aten::_to_copy.out"), (std::vector<int>{0, -1, -1, -1, -1, 1, 2, 3}));
  EXPECT_EQ(layout_of("aten::arange.start_out"), (std::vector<int>{0, 1, 2, -1, -1, -1, -1, 3}));
  // In-place kernels write self; multi-output kernels list the functional arguments only.
  EXPECT_EQ(layout_of("aten::copy_"), (std::vector<int>{0, 1, 2, 0}));
  EXPECT_EQ(layout_of("aten::max.dim_max"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(find_out_variant("aten::max.dim_max").variant->outputs, 2);
  EXPECT_EQ(find_out_variant("aten::add.Scalar_out").variant, nullptr);  // the generic rule's
}

TEST(OpSchema, EveryOutVariantIsSpelledOnceAndTargetsARegisteredOperator) {
  std::set<std::string> kernels;
  for (const OpSchema& s : op_schemas()) {
    EXPECT_EQ(find_op_schema(s.name), &s) << s.name;
    for (const OutVariant& v : s.out_variants) {
      EXPECT_TRUE(kernels.insert(v.kernel).second) << v.kernel << " listed twice";
      EXPECT_EQ(find_out_variant(v.kernel).op, &s) << v.kernel;
      EXPECT_TRUE(graph::OpRegistry::global().has(s.name)) << v.kernel << " -> " << s.name << " is not registered";
    }
  }
  EXPECT_GT(kernels.size(), 30u);
}

TEST(OpSchema, ArgIndexFindsArgumentsByNameAndRefusesUnknownOnes) {
  EXPECT_EQ(arg_index("aten.add.Tensor", "alpha"), 2);
  EXPECT_EQ(arg_index("aten.convolution.default", "groups"), 8);
  EXPECT_EQ(arg_index("aten.add.Tensor", "beta"), -1);
  EXPECT_EQ(arg_index("aten.no_such_op.default", "self"), -1);
}

TEST(OpSchema, TheMergeLaysAKernelCallOutByTheTable) {
  VkGraphIR ir;
  ir.values.resize(4);
  std::vector<int32_t> args = {0, 1, 2, 3};  // _to_copy.out(self, non_blocking, memory_format, out)
  std::string op;
  ASSERT_TRUE(graph::map_kernel_call("aten::_to_copy.out", args, op, ir));
  EXPECT_EQ(op, "aten._to_copy.default");
  ASSERT_EQ(args.size(), 8u);  // as many as the builder reads: self, dtype, ..., memory_format, out
  EXPECT_EQ(args[0], 0);
  for (int k : {1, 2, 3, 4}) EXPECT_EQ(ir.values[args[k]].kind, VkValueKind::Null) << k;
  EXPECT_EQ(args[5], 1);
  EXPECT_EQ(args[6], 2);
  EXPECT_EQ(args[7], 3);
}

TEST(OpSchema, DescribeNamesScalarArgumentsOfEveryListedOperator) {
  // aten.any.dim was known only to the KernelCall mapping before the table was shared.
  VkGraphIR ir;
  VkValue x;
  x.kind = VkValueKind::Tensor;
  x.tensor.dtype = VkDType::Bool;
  x.tensor.dims = {2, 3};
  x.tensor.constant_id = -1;  // not a constant (the schema default is constant 0)
  VkValue dim;
  dim.kind = VkValueKind::Int;
  dim.int_val = 1;
  VkValue keep;
  keep.kind = VkValueKind::Bool;
  keep.bool_val = true;
  ir.values = {x, dim, keep, x};
  ir.chain.push_back(VkOpCall{0, "aten.any.dim", {0, 1, 2, 3}});
  const std::string text = describe_vkgraph(ir);
  EXPECT_NE(text.find("aten.any.dim(%0:bool[2,3], dim=Int(1), keepdim=Bool(true))"), std::string::npos) << text;
}

}  // namespace
