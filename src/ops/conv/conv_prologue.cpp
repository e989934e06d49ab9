#include "ops/conv/conv_prologue.h"

#include <cstdio>

#include "etwebgpu/tensor.h"
#include "graph/epilogue_fusion.h"
#include "graph/fusion.h"
#include "graph/rewrite_pipeline.h"
#include "kernel/wgsl.h"
#include "ops/conv/conv_call.h"
#include "ops/elementwise/elementwise_ops.h"
#include "ops/elementwise/fused_terms.h"

namespace etwebgpu::ops {

ConvPrologue ConvPrologue::read(const graph::OpContext& oc, size_t at, int64_t channels) {
  ConvPrologue p;
  if (oc.nargs() <= at + 1) return p;
  const int32_t id = oc.arg(at);
  if (oc.g.kind(id) != format::VkValueKind::Expr || !oc.g.ir().values[id].expr || !oc.g.ir().values[id].expr->on_input)
    return p;
  const format::VkExpr& e = *oc.g.ir().values[id].expr;
  const size_t n = e.views.size();
  if (n < 1 || n - 1 > kMaxPrologueInputs || at + n >= oc.nargs())
    oc.fail(ErrorKind::Format, "a prologue reads x0 and at most " + std::to_string(kMaxPrologueInputs) + " inputs, got " +
                                   std::to_string(n == 0 ? 0 : n - 1));
  check_fused_expr(oc, e, n, false);
  for (size_t k = 1; k < n; ++k) {
    const int32_t in = oc.arg(at + k);
    require_dtype(oc, in, {format::VkDType::Float32, format::VkDType::Float16, format::VkDType::Float64}, "prologue input");
    const int64_t count = oc.g.tensor(in).max_numel();
    if (count != channels && count != 1)
      oc.fail(ErrorKind::Format, "prologue input " + std::to_string(k) + " " + shape_str(oc.g.tensor(in).max_dims) +
                                     " holds neither one value per input channel (" + std::to_string(channels) +
                                     ") nor one value");
    p.inputs_.push_back(in);
    p.scalar_.push_back(count == 1 && channels != 1);
  }
  p.terms_ = e.terms;
  return p;
}

std::string ConvPrologue::label() const { return fused_terms_label(terms_); }

void ConvPrologue::attach(kernel::Kernel& k, bool library) const {
  if (empty()) return;
  for (size_t i = 0; i < inputs_.size(); ++i) k.input("PR" + std::to_string(i), inputs_[i]);
  // The terms' constants as run-time values (| P.pad, always 0): WGSL constant evaluation
  // rejects a NaN or infinite literal.
  const std::vector<uint32_t> words = fused_term_constants(terms_);
  std::string s = library ? std::string(kernel::shader_source("epilogue")) + unary_ops_wgsl() + binary_ops_wgsl() : "";
  s += "fn prologue_terms(x0: f32, c: u32) -> f32 {\n  let PRO_C = array<vec4<f32>, " + std::to_string(terms_.size()) + ">(";
  for (size_t t = 0; t < terms_.size(); ++t) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%sbitcast<vec4<f32>>(vec4<u32>(0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu) | vec4<u32>(P.pad))",
                  t ? ", " : "", words[4 * t], words[4 * t + 1], words[4 * t + 2], words[4 * t + 3]);
    s += buf;
  }
  s += ");\n";
  for (size_t i = 0; i < inputs_.size(); ++i)
    s += "  let x" + std::to_string(i + 1) + " = f32(PR" + std::to_string(i) + "[" + (scalar_[i] ? "0u" : "c") + "]);\n";
  s += fused_terms_wgsl(terms_, "PRO_C", "  ");
  s += "  return t" + std::to_string(terms_.size() - 1) + ";\n}\n";
  k.define("PROLOGUE").prelude(s);
}

namespace {

using format::VkValueKind;

// conv_prologues: an elementwise call (one op, or a group elementwise fusion made, without views
// or cats) whose output only a non-transposed conv reads, as its input, becomes that conv's
// prologue. Its operands: one of the output's shape [B, C, ...] (x0) and up to two holding one
// value per channel ([C, 1, ...], [1, C, 1, ...]: a BatchNorm's constants, a batch-1
// squeeze-excite gate) or one value. The call's inputs must hold at the conv what they held at the
// call, and the conv's epilogue leave room for the bindings.
size_t conv_prologues(graph::Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t i = 0; i < n; ++i) {
    const format::VkOpCall& call = ir.chain[i];
    if (call.args.empty() || !ix.tensor(call.args.back()) || !graph::float_tensor(ir, call.args.back())) continue;
    const int32_t y = call.args.back();
    // The expression and its inputs.
    format::VkExpr e;
    std::vector<int32_t> inputs;
    if (call.name == graph::kFusedOp) {
      const int32_t ex = call.args[call.args.size() - 2];
      if (ir.values[ex].kind != VkValueKind::Expr || !ir.values[ex].expr || !graph::plain_expression(*ir.values[ex].expr))
        continue;
      e = *ir.values[ex].expr;
      inputs.assign(call.args.begin(), call.args.end() - 2);
    } else if (auto t = graph::fusable_term(g, ir, call)) {
      inputs = {t->x};
      if (t->y >= 0) inputs.push_back(t->y);
      std::vector<graph::FusedTerm> terms{*t};
      e = graph::expression(terms, {y}, inputs);
    } else {
      continue;
    }
    const size_t c = ix.sole_reader(y, i);
    if (c == graph::UseDef::npos || removed[c]) continue;
    const format::VkOpCall& conv = ir.chain[c];
    // A conv or conv_with_clamp, not transposed (its kernel reads no prologue), without one yet.
    const auto cc = read_conv(ir, conv);
    if (!cc || cc->kind == ConvCall::Kind::Shuffle || cc->pro >= 0 || conv.args[0] != y) continue;
    const size_t own = cc->own;
    const std::vector<int64_t>& yd = ix.dims(y);
    if (yd.size() < 3) continue;
    const int64_t C = yd[1];
    // x0: the one input of y's shape and dtype, at position 0 of the new expression.
    int x0 = -1;
    bool ok = true;
    for (size_t k = 0; k < inputs.size() && ok; ++k) {
      if (!ix.tensor(inputs[k]) || !graph::float_tensor(ir, inputs[k])) ok = false;
      else if (ix.dims(inputs[k]) == yd && ix.dtype(inputs[k]) == ix.dtype(y)) ok = x0 < 0 ? (x0 = static_cast<int>(k), true) : false;
      else {
        // One value per channel: dims that broadcast to y with every dim but dim 1 of size 1.
        const std::vector<int64_t>& d = ix.dims(inputs[k]);
        const int64_t count = numel(d);
        bool per_channel = d.size() <= yd.size() && (count == 1 || count == C);
        for (size_t j = 0; per_channel && j < d.size(); ++j) {
          const size_t at = yd.size() - d.size() + j;
          per_channel = d[j] == 1 || (at == 1 && d[j] == C);
        }
        ok = per_channel;
      }
    }
    if (!ok || x0 < 0 || inputs.size() - 1 > kMaxPrologueInputs) continue;
    if (inputs.size() - 1 + cc->ep_inputs > graph::kMaxEpilogueInputs + 1) continue;  // 8 bindings in all
    bool steady = true;
    for (int32_t in : inputs) steady = steady && ix.unchanged_between(in, i, c);
    if (!steady) continue;
    // Input x0 first: renumber the expression's input operands.
    std::vector<int32_t> order{inputs[x0]};
    for (size_t k = 0; k < inputs.size(); ++k)
      if (static_cast<int>(k) != x0) order.push_back(inputs[k]);
    auto renumber = [&](format::VkExprOperand& o) {
      if (o.kind != format::VkExprOperand::Kind::Input) return;
      const int32_t id = inputs[o.index];
      o.index = static_cast<uint32_t>(std::find(order.begin(), order.end(), id) - order.begin());
    };
    for (auto& t : e.terms) renumber(t.a), renumber(t.b);
    e.views.assign(order.size(), std::nullopt);
    e.on_input = true;
    format::VkOpCall& target = ir.chain[c];
    std::vector<int32_t> args(target.args.begin(), target.args.begin() + static_cast<std::ptrdiff_t>(own));
    args[0] = order[0];
    args.push_back(graph::add_expr(ir, std::move(e)));
    args.insert(args.end(), order.begin() + 1, order.end());
    args.insert(args.end(), target.args.begin() + static_cast<std::ptrdiff_t>(own), target.args.end());
    target.args = std::move(args);
    removed[i] = true;
    ++fused;
  }
  if (fused) graph::drop_calls(ir, removed);
  return fused;
}

}  // namespace

ETW_REGISTER_LOAD_REWRITE(conv_prologues, Patterns);

}  // namespace etwebgpu::ops
