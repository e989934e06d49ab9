// The op table (ops/elementwise/elementwise_ops.h): the WGSL generated from it holds one constant
// per entry and one switch case per float op, and on the device every float op's case is reached
// (the op tests check each op's values; here no entry may fall to the switch's default).
#include <cmath>
#include <string>

#include "ops/elementwise/elementwise_ops.h"
#include "support/ir_chain.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

template <size_t N>
void expect_one_constant_per_entry_and_one_case_per_float_op(const ops::ElementwiseOp (&table)[N],
                                                             const std::string& wgsl, const std::string& prefix,
                                                             std::string (*constant)(uint32_t)) {
  size_t float_ops = 0;
  for (const ops::ElementwiseOp& op : table) {
    const std::string name = constant(op.code);
    EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
    EXPECT_EQ(count(wgsl, "const " + name + ": u32 = " + std::to_string(op.code) + "u;\n"), 1u) << name;
    EXPECT_EQ(count(wgsl, "case " + name + ": {\n"), op.wgsl ? 1u : 0u) << name;
    if (!op.wgsl) continue;
    ++float_ops;
    // The body follows its case label, one line of the table's text per line.
    const std::string body = op.wgsl, first_line = body.substr(0, body.find('\n'));
    EXPECT_EQ(count(wgsl, "case " + name + ": {\n      " + first_line + "\n"), 1u) << name;
  }
  EXPECT_EQ(count(wgsl, "const " + prefix), N);
  EXPECT_EQ(count(wgsl, "case " + prefix), float_ops);
  EXPECT_EQ(count(wgsl, "default: {"), 1u);
}

TEST(ElementwiseOps, GeneratedWgslHasOneConstantPerEntryAndOneCasePerFloatOp) {
  const std::string unary = ops::unary_ops_wgsl(), binary = ops::binary_ops_wgsl();
  EXPECT_EQ(count(unary, "fn unary_f32(op: u32, x: f32, f0: f32, f1: f32, f2: f32, i0: i32) -> f32 {"), 1u);
  EXPECT_EQ(count(binary, "fn binary_f32(op: u32, x: f32, y: f32, alpha: f32) -> f32 {"), 1u);
  expect_one_constant_per_entry_and_one_case_per_float_op(ops::kUnaryOps, unary, "UNARY_", ops::unary_constant);
  expect_one_constant_per_entry_and_one_case_per_float_op(ops::kBinaryOps, binary, "BINARY_", ops::binary_constant);
  EXPECT_EQ(ops::binary_op_codes_wgsl(), binary.substr(0, binary.find("fn binary_f32")));
  // Enumerators become upper snake case.
  EXPECT_EQ(ops::unary_constant(ops::code(ops::UnaryOp::GeluErf)), "UNARY_GELU_ERF");
  EXPECT_EQ(ops::unary_constant(ops::code(ops::UnaryOp::Log1p)), "UNARY_LOG1P");
  EXPECT_EQ(ops::binary_constant(ops::code(ops::BinaryOp::PowScalarBase)), "BINARY_POW_SCALAR_BASE");
  EXPECT_THROW(ops::unary_constant(99), Error);
}

TEST(ElementwiseOps, FloatOpsAreTheEntriesWithABody) {
  for (const ops::ElementwiseOp& op : ops::kUnaryOps) EXPECT_EQ(ops::is_unary_f32(op.code), op.wgsl != nullptr) << op.name;
  for (const ops::ElementwiseOp& op : ops::kBinaryOps) EXPECT_EQ(ops::is_binary_f32(op.code), op.wgsl != nullptr) << op.name;
  EXPECT_FALSE(ops::is_unary_f32(99));
  EXPECT_FALSE(ops::is_binary_f32(99));
}

// Every float op of the table as a one-term fused kernel (the generated switch, compiled on the
// device): over a few inputs at least one result is not the switch's default (NaN for unary_f32,
// 0 for binary_f32), so each code reaches a case of its own.
TEST(ElementwiseOps, EveryFloatOpReachesItsCaseOnTheDevice) {
  ETW_REQUIRE_GPU();
  using Kind = format::VkExprOperand::Kind;
  const float xs[] = {0.25f, 0.5f, 0.75f, 1.5f, 2.f, 3.f, -0.5f, -2.f};
  const float ys[] = {1.5f, 2.f, 0.5f, 3.f, 1.25f, -2.f, 0.5f, 1.f};
  auto x = random_f32({8}, 1), y = random_f32({8}, 2);
  for (int i = 0; i < 8; ++i) x.as<float>()[i] = xs[i], y.as<float>()[i] = ys[i];
  IrChain c;
  int32_t xi = c.input({8}), yi = c.input({8});
  std::vector<std::string> names;
  std::vector<bool> binary;
  auto add = [&](const ops::ElementwiseOp& op, bool is_binary) {
    format::VkExprTerm t;
    t.binary = is_binary;
    t.op = op.code;
    t.a = {Kind::Input, 0};
    if (is_binary) t.b = {Kind::Input, 1}, t.c[0] = 1.f;  // alpha 1
    t.label = "op";
    format::VkExpr e;
    e.terms = {t};
    std::vector<int32_t> args{xi};
    if (is_binary) args.push_back(yi);
    args.push_back(c.expr(e));
    args.push_back(c.output({8}));
    c.op("etwebgpu.fused_elementwise", args);
    names.push_back(op.name);
    binary.push_back(is_binary);
  };
  for (const ops::ElementwiseOp& op : ops::kUnaryOps)
    if (op.wgsl) add(op, false);
  for (const ops::ElementwiseOp& op : ops::kBinaryOps)
    if (op.wgsl) add(op, true);
  auto out = run_ir(c.ir, {x, y});
  ASSERT_EQ(out.size(), names.size());
  for (size_t k = 0; k < out.size(); ++k) {
    bool own_case = false;
    for (double v : f64(out[k])) own_case = own_case || (binary[k] ? v != 0.0 : !std::isnan(v));
    EXPECT_TRUE(own_case) << names[k] << " gave only the default";
  }
}

}  // namespace
