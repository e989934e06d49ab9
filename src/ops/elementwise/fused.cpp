// etwebgpu.fused_elementwise: a group of float elementwise calls that graph/fusion.cpp merged at
// load. One generated kernel reads each input once per element (broadcast strides), evaluates
// the terms in f32 with the unfused kernels' math (unary_math.wgsl, binary_math.wgsl) and writes
// the last term. The node is labelled fused[op+op+...] so profiles attribute time to it.
#include <cstring>
#include <sstream>

#include "graph/fusion.h"
#include "kernel/wgsl.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

// Op codes the fused kernel evaluates (unary.cpp's UnOp / binary.cpp's BinOp float ops).
bool known_unary(uint32_t op) { return op <= 21 || (op >= 40 && op <= 56); }
bool known_binary(uint32_t op) { return op <= 9 || (op >= 25 && op <= 28); }

struct Operand {
  char kind = 's';  // 'x' input, 't' term, 's' scalar
  size_t index = 0;
};
struct Term {
  bool binary = false;
  uint32_t op = 0;
  Operand a, b;
  uint32_t c[4] = {0, 0, 0, 0};  // f32 bit patterns
  std::string label;
};

std::vector<Term> parse_terms(const OpContext& oc, const std::string& text, size_t inputs) {
  std::istringstream in(text);
  std::vector<Term> terms;
  auto operand = [&](const std::string& tok, bool scalar_ok) {
    Operand o;
    if (tok == "s" && scalar_ok) return o;
    if (tok.size() < 2 || (tok[0] != 'x' && tok[0] != 't') || tok.find_first_not_of("0123456789", 1) != std::string::npos ||
        tok.size() > 6)
      oc.fail(ErrorKind::Format, "bad operand '" + tok + "' in the fused term list");
    o.kind = tok[0];
    o.index = std::stoul(tok.substr(1));
    if (o.kind == 'x' ? o.index >= inputs : o.index >= terms.size())
      oc.fail(ErrorKind::Format, "operand '" + tok + "' refers past the inputs or the terms before it");
    return o;
  };
  auto bits = [&](const std::string& tok) {
    if (tok.size() != 8 || tok.find_first_not_of("0123456789abcdef") != std::string::npos)
      oc.fail(ErrorKind::Format, "bad constant '" + tok + "' in the fused term list");
    return static_cast<uint32_t>(std::stoul(tok, nullptr, 16));
  };
  std::string kind;
  while (in >> kind) {
    Term t;
    std::string op, a, b, c0, c1, c2, c3;
    if (kind == "u" && (in >> op >> a >> c0 >> c1 >> c2 >> c3 >> t.label)) {
      t.a = operand(a, false);
      t.c[0] = bits(c0), t.c[1] = bits(c1), t.c[2] = bits(c2), t.c[3] = bits(c3);
    } else if (kind == "b" && (in >> op >> a >> b >> c0 >> c1 >> t.label)) {
      t.binary = true;
      t.a = operand(a, false);
      t.b = operand(b, true);
      t.c[0] = bits(c0), t.c[1] = bits(c1);
    } else {
      oc.fail(ErrorKind::Format, "malformed fused term list '" + text + "'");
    }
    if (op.empty() || op.size() > 3 || op.find_first_not_of("0123456789") != std::string::npos)
      oc.fail(ErrorKind::Format, "bad op code '" + op + "' in the fused term list");
    t.op = static_cast<uint32_t>(std::stoul(op));
    if (!(t.binary ? known_binary(t.op) : known_unary(t.op)))
      oc.fail(ErrorKind::Format, std::string(t.binary ? "binary" : "unary") + " op code " + op + " is not a float op");
    if (t.label.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      oc.fail(ErrorKind::Format, "bad label '" + t.label + "' in the fused term list");
    terms.push_back(std::move(t));
  }
  if (terms.empty()) oc.fail(ErrorKind::Format, "empty fused term list");
  return terms;
}

std::string wgsl_operand(const Operand& o, size_t term) {
  if (o.kind == 'x') return "x" + std::to_string(o.index);
  if (o.kind == 't') return "t" + std::to_string(o.index);
  return "P.c[" + std::to_string(term) + "].y";
}

// The kernel text for these terms: Params sized for them, then one `let` per input and term.
std::string generate(const std::vector<Term>& terms, size_t inputs) {
  std::string s = "struct Params { o: Shape, n: u32, pad: u32, pad1: u32, pad2: u32, s: array<Shape, " +
                  std::to_string(inputs) + ">, c: array<vec4<f32>, " + std::to_string(terms.size()) + "> };\n";
  s += kernel::shader_source("fused_elementwise");
  s += "\noverride WG: u32 = 256u;\n@compute @workgroup_size(WG)\n"
       "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
       "        @builtin(local_invocation_index) lid: u32) {\n"
       "  let i = (wid.x + wid.y * nwg.x) * WG + lid;\n"
       "  if (i >= P.n) { return; }\n";
  for (size_t k = 0; k < inputs; ++k) {
    std::string x = std::to_string(k);
    s += "  let x" + x + " = f32(X" + x + "[offset_of(i, P.s[" + x + "])]);\n";
  }
  for (size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    std::string c = "P.c[" + std::to_string(k) + "]";
    s += "  let t" + std::to_string(k) + " = ";
    if (t.binary)
      s += "binary_f32(" + std::to_string(t.op) + "u, " + wgsl_operand(t.a, k) + ", " + wgsl_operand(t.b, k) + ", " + c +
           ".x);\n";
    else
      s += "unary_f32(" + std::to_string(t.op) + "u, " + wgsl_operand(t.a, k) + ", " + c + ".x, " + c + ".y, " + c +
           ".z, i32(" + c + ".w));\n";
  }
  s += "  Y[i] = Y_T(t" + std::to_string(terms.size() - 1) + ");\n}\n";
  return s;
}

constexpr size_t kShapeBytes = sizeof(ShapeU);

void build_fused(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() < 3) oc.fail(ErrorKind::Format, "expects inputs, a term list and an output");
  std::vector<int32_t> inputs(oc.call.args.begin(), oc.call.args.end() - 2);
  int32_t out = oc.out();
  if (inputs.size() > graph::kMaxFusedInputs)
    oc.fail(ErrorKind::Limit, std::to_string(inputs.size()) + " inputs; at most " +
                                  std::to_string(graph::kMaxFusedInputs) + " per fused kernel");
  for (int32_t x : inputs) require_dtype(oc, x, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "output");
  std::vector<Term> terms = parse_terms(oc, g.string(oc.arg(inputs.size())), inputs.size());
  std::string label;
  for (auto& t : terms) label += (label.empty() ? "" : "+") + t.label;
  oc.node.op = "fused[" + label + "]";

  oc.output(out, [inputs](const kernel::Live& l) {
    std::vector<int64_t> d = l.dims(inputs[0]);
    for (size_t k = 1; k < inputs.size(); ++k) d = broadcast_shape(d, l.dims(inputs[k]));
    return d;
  });
  std::vector<uint32_t> consts;
  for (auto& t : terms) consts.insert(consts.end(), t.c, t.c + 4);
  size_t bytes = kShapeBytes + 16 + inputs.size() * kShapeBytes + consts.size() * 4;
  auto k = kernel::Kernel::generated("fused_elementwise", generate(terms, inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) k.input("X" + std::to_string(i), inputs[i]);
  k.output("Y", out)
      .params_bytes(bytes,
                    [inputs, out, consts, bytes](const kernel::Live& l, std::vector<uint8_t>& p) {
                      p.assign(bytes, 0);
                      const auto& od = l.dims(out);
                      ShapeU o = make_shape(od);
                      std::memcpy(p.data(), &o, kShapeBytes);
                      uint32_t n = o.numel;
                      std::memcpy(p.data() + kShapeBytes, &n, 4);
                      for (size_t i = 0; i < inputs.size(); ++i) {
                        const auto& d = l.dims(inputs[i]);
                        auto st = broadcast_strides(d, od);
                        ShapeU s = make_shape(od, &st);
                        s.pad0 = d == od ? 1u : 0u;
                        std::memcpy(p.data() + kShapeBytes + 16 + i * kShapeBytes, &s, kShapeBytes);
                      }
                      std::memcpy(p.data() + kShapeBytes + 16 + inputs.size() * kShapeBytes, consts.data(),
                                  consts.size() * 4);
                    })
      .flat(out);
  oc.add(k);
}

ETW_REGISTER_OP(graph::kFusedOp, build_fused);

}  // namespace
}  // namespace etwebgpu::ops
