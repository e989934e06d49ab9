#include "ops/elementwise/elementwise_ops.h"

#include <cctype>

#include "etwebgpu/error.h"

namespace etwebgpu::ops {
namespace {

template <size_t N>
const ElementwiseOp* find(const ElementwiseOp (&ops)[N], uint32_t code) {
  for (const ElementwiseOp& op : ops)
    if (op.code == code) return &op;
  return nullptr;
}

// "GeluErf" -> "GELU_ERF", "Log1p" -> "LOG1P".
std::string upper_snake(const char* name) {
  std::string s;
  for (const char* c = name; *c; ++c) {
    if (std::isupper(static_cast<unsigned char>(*c)) && c != name && !std::isupper(static_cast<unsigned char>(c[-1])))
      s += '_';
    s += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  }
  return s;
}

template <size_t N>
std::string constant(const ElementwiseOp (&ops)[N], const char* prefix, uint32_t code) {
  const ElementwiseOp* op = find(ops, code);
  if (!op) throw Error(ErrorKind::Internal, "no " + std::string(prefix) + "* constant for op code " + std::to_string(code));
  return prefix + upper_snake(op->name);
}

template <size_t N>
std::string constants_wgsl(const ElementwiseOp (&ops)[N], const char* prefix) {
  std::string s;
  for (const ElementwiseOp& op : ops)
    s += "const " + std::string(prefix) + upper_snake(op.name) + ": u32 = " + std::to_string(op.code) + "u;\n";
  return s;
}

// `fn <signature> { switch op { case <CONSTANT>: { <body> } ... default: { <fallback> } } }`.
template <size_t N>
std::string switch_wgsl(const ElementwiseOp (&ops)[N], const char* prefix, const std::string& signature,
                        const std::string& fallback) {
  std::string s = "fn " + signature + " {\n  switch op {\n";
  for (const ElementwiseOp& op : ops) {
    if (!op.wgsl) continue;
    s += "    case " + std::string(prefix) + upper_snake(op.name) + ": {\n";
    for (const char* line = op.wgsl; *line;) {
      const char* end = line;
      while (*end && *end != '\n') ++end;
      s += "      " + std::string(line, end) + "\n";
      line = *end ? end + 1 : end;
    }
    s += "    }\n";
  }
  return s + "    default: { " + fallback + " }\n  }\n}\n";
}

}  // namespace

bool is_unary_f32(uint32_t code) {
  const ElementwiseOp* op = find(kUnaryOps, code);
  return op && op->wgsl;
}
bool is_binary_f32(uint32_t code) {
  const ElementwiseOp* op = find(kBinaryOps, code);
  return op && op->wgsl;
}

std::string unary_constant(uint32_t code) { return constant(kUnaryOps, "UNARY_", code); }
std::string binary_constant(uint32_t code) { return constant(kBinaryOps, "BINARY_", code); }

// Built once: every unary, binary, fused and epilogue kernel takes them.
const std::string& unary_ops_wgsl() {
  static const std::string s =
      constants_wgsl(kUnaryOps, "UNARY_") +
      switch_wgsl(kUnaryOps, "UNARY_", "unary_f32(op: u32, x: f32, f0: f32, f1: f32, f2: f32, i0: i32) -> f32",
                  "return nan();");
  return s;
}

const std::string& binary_op_codes_wgsl() {
  static const std::string s = constants_wgsl(kBinaryOps, "BINARY_");
  return s;
}

const std::string& binary_ops_wgsl() {
  static const std::string s =
      binary_op_codes_wgsl() +
      switch_wgsl(kBinaryOps, "BINARY_", "binary_f32(op: u32, x: f32, y: f32, alpha: f32) -> f32", "return 0.0;");
  return s;
}

}  // namespace etwebgpu::ops
