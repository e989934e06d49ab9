#include "ops/elementwise/fused_terms.h"

#include <algorithm>
#include <sstream>

#include "ops/elementwise/elementwise_ops.h"

namespace etwebgpu::ops {
namespace {

std::string wgsl_operand(const FusedOperand& o, const std::string& consts, size_t term) {
  if (o.kind == 'x') return "x" + std::to_string(o.index);
  if (o.kind == 't') return "t" + std::to_string(o.index);
  return consts + "[" + std::to_string(term) + "].y";
}

}  // namespace

std::vector<FusedTermSpec> parse_fused_terms(const graph::OpContext& oc, const std::string& text, size_t inputs,
                                             std::vector<std::vector<int64_t>>* perms) {
  std::istringstream in(text);
  std::vector<FusedTermSpec> terms;
  if (perms) perms->assign(inputs, {});
  auto operand = [&](const std::string& tok, bool scalar_ok) {
    FusedOperand o;
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
    if (kind == "p") {
      std::string k, dims;
      if (!perms) oc.fail(ErrorKind::Format, "an input permutation in a term list that only the fused elementwise kernel reads");
      if (!terms.empty() || !(in >> k >> dims) || k.empty() || k.size() > 2 ||
          k.find_first_not_of("0123456789") != std::string::npos || std::stoul(k) >= inputs ||
          !(*perms)[std::stoul(k)].empty())
        oc.fail(ErrorKind::Format, "malformed input permutation in the fused term list '" + text + "'");
      std::vector<int64_t>& p = (*perms)[std::stoul(k)];
      std::istringstream ds(dims);
      for (std::string d; std::getline(ds, d, ',');) {
        if (d.empty() || d.size() > 1 || d.find_first_not_of("01234567") != std::string::npos)
          oc.fail(ErrorKind::Format, "bad dim '" + d + "' in the input permutation " + dims);
        p.push_back(std::stoll(d));
      }
      std::vector<int64_t> sorted = p;
      std::sort(sorted.begin(), sorted.end());
      for (size_t j = 0; j < sorted.size(); ++j)
        if (sorted[j] != static_cast<int64_t>(j))
          oc.fail(ErrorKind::Format, "input permutation " + dims + " is not a permutation of its dims");
      continue;
    }
    FusedTermSpec t;
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
    if (!(t.binary ? is_binary_f32(t.op) : is_unary_f32(t.op)))
      oc.fail(ErrorKind::Format, std::string(t.binary ? "binary" : "unary") + " op code " + op + " is not a float op");
    if (t.label.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      oc.fail(ErrorKind::Format, "bad label '" + t.label + "' in the fused term list");
    terms.push_back(std::move(t));
  }
  if (terms.empty()) oc.fail(ErrorKind::Format, "empty fused term list");
  return terms;
}

std::string fused_terms_wgsl(const std::vector<FusedTermSpec>& terms, const std::string& consts,
                             const std::string& indent) {
  std::string s;
  for (size_t k = 0; k < terms.size(); ++k) {
    const FusedTermSpec& t = terms[k];
    std::string c = consts + "[" + std::to_string(k) + "]";
    s += indent + "let t" + std::to_string(k) + " = ";
    if (t.binary)
      s += "binary_f32(" + binary_constant(t.op) + ", " + wgsl_operand(t.a, consts, k) + ", " +
           wgsl_operand(t.b, consts, k) + ", " + c + ".x);\n";
    else
      s += "unary_f32(" + unary_constant(t.op) + ", " + wgsl_operand(t.a, consts, k) + ", " + c + ".x, " + c + ".y, " +
           c + ".z, i32(" + c + ".w));\n";
  }
  return s;
}

std::vector<uint32_t> fused_term_constants(const std::vector<FusedTermSpec>& terms) {
  std::vector<uint32_t> consts;
  for (auto& t : terms) consts.insert(consts.end(), t.c, t.c + 4);
  return consts;
}

std::string fused_terms_label(const std::vector<FusedTermSpec>& terms) {
  std::string label;
  for (auto& t : terms) label += (label.empty() ? "" : "+") + t.label;
  return label;
}

}  // namespace etwebgpu::ops
