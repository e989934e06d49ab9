#include "ops/elementwise/fused_terms.h"

#include <algorithm>

#include "ops/elementwise/elementwise_ops.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using Kind = format::VkExprOperand::Kind;

std::string wgsl_operand(const format::VkExprOperand& o, const std::string& consts, size_t term) {
  if (o.kind == Kind::Input) return "x" + std::to_string(o.index);
  if (o.kind == Kind::Term) return "t" + std::to_string(o.index);
  return consts + "[" + std::to_string(term) + "].y";
}

}  // namespace

void check_fused_expr(const graph::OpContext& oc, const format::VkExpr& e, size_t inputs, bool layouts_allowed) {
  if (e.terms.empty()) oc.fail(ErrorKind::Internal, "empty fused expression");
  for (size_t k = 0; k < e.terms.size(); ++k) {
    const auto& t = e.terms[k];
    auto operand_ok = [&](const format::VkExprOperand& o, bool scalar_ok) {
      switch (o.kind) {
        case Kind::Input: return o.index < inputs;
        case Kind::Term: return o.index < k;
        case Kind::Scalar: return scalar_ok;
      }
      return false;
    };
    if (!operand_ok(t.a, false) || (t.binary && !operand_ok(t.b, !t.split)))
      oc.fail(ErrorKind::Internal, "fused term " + std::to_string(k) + " refers past the inputs or the terms before it");
    if (t.split) {
      if (!layouts_allowed) oc.fail(ErrorKind::Internal, "a cat term in an expression only the fused elementwise kernel reads");
      if (!t.binary) oc.fail(ErrorKind::Internal, "cat term " + std::to_string(k) + " without a second operand");
    } else if (!(t.binary ? is_binary_f32(t.op) : is_unary_f32(t.op))) {
      oc.fail(ErrorKind::Internal, std::string(t.binary ? "binary" : "unary") + " op code " + std::to_string(t.op) +
                                       " of fused term " + std::to_string(k) + " is not a float op");
    }
    if (t.label.empty() || t.label.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      oc.fail(ErrorKind::Internal, "bad label '" + t.label + "' of fused term " + std::to_string(k));
  }
  if (std::none_of(e.views.begin(), e.views.end(), [](const auto& v) { return v.has_value(); })) return;
  if (!layouts_allowed) oc.fail(ErrorKind::Internal, "an input view in an expression only the fused elementwise kernel reads");
  if (e.views.size() != inputs)
    oc.fail(ErrorKind::Internal, "input views for " + std::to_string(e.views.size()) + " of " + std::to_string(inputs) + " inputs");
  for (const auto& v : e.views) {
    if (!v) continue;
    if (v->strides.size() != v->dims.size() || v->dims.size() > 8 ||
        std::any_of(v->dims.begin(), v->dims.end(), [](int64_t d) { return d < 0; }))
      oc.fail(ErrorKind::Internal, "an input view of " + std::to_string(v->dims.size()) + " dims and " +
                                       std::to_string(v->strides.size()) + " strides");
    if (v->label.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_+") != std::string::npos)
      oc.fail(ErrorKind::Internal, "bad label '" + v->label + "' of an input view");
    if (v->part && (v->part->dim >= v->dims.size() || v->part->start < 0 ||
                    v->part->start + v->dims[v->part->dim] > v->part->extent))
      oc.fail(ErrorKind::Internal, "a cat part of " + shape_str(v->dims) + " placed outside its cat");
  }
}

const format::VkExpr& fused_expr_arg(const graph::OpContext& oc, int32_t id, const std::string& what, size_t inputs,
                                     bool layouts_allowed) {
  if (oc.g.kind(id) != format::VkValueKind::Expr || !oc.g.ir().values[id].expr)
    oc.fail(ErrorKind::Format, what + " must be a fused expression, which only the load-time fusion makes (a program "
                                      "cannot spell one): got " + format::vk_value_kind_name(oc.g.kind(id)));
  const format::VkExpr& e = *oc.g.ir().values[id].expr;
  check_fused_expr(oc, e, inputs, layouts_allowed);
  return e;
}

std::string fused_terms_wgsl(const std::vector<format::VkExprTerm>& terms, const std::string& consts,
                             const std::string& indent) {
  std::string s;
  for (size_t k = 0; k < terms.size(); ++k) {
    const format::VkExprTerm& t = terms[k];
    std::string c = consts + "[" + std::to_string(k) + "]";
    s += indent + "let t" + std::to_string(k) + " = ";
    if (t.split)
      s += "select(" + wgsl_operand(t.a, consts, k) + ", " + wgsl_operand(t.b, consts, k) + ", coord_of(i, " +
           std::to_string(t.split->dim) + "u) >= " + std::to_string(t.split->at) + "u);\n";
    else if (t.binary)
      s += "binary_f32(" + binary_constant(t.op) + ", " + wgsl_operand(t.a, consts, k) + ", " +
           wgsl_operand(t.b, consts, k) + ", " + c + ".x);\n";
    else
      s += "unary_f32(" + unary_constant(t.op) + ", " + wgsl_operand(t.a, consts, k) + ", " + c + ".x, " + c + ".y, " +
           c + ".z, i32(" + c + ".w));\n";
  }
  return s;
}

std::vector<uint32_t> fused_term_constants(const std::vector<format::VkExprTerm>& terms) {
  std::vector<uint32_t> consts;
  for (auto& t : terms)
    for (float f : t.c) consts.push_back(f32_bits(f));
  return consts;
}

std::string fused_terms_label(const std::vector<format::VkExprTerm>& terms) {
  std::string label;
  for (auto& t : terms) label += (label.empty() ? "" : "+") + t.label;
  return label;
}

}  // namespace etwebgpu::ops
