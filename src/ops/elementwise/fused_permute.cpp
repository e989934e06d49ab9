// The load rewrite `fused_output_permutes`: a fused elementwise call (graph/fusion.h) whose output
// only a permute reads writes the permute's output itself, reading each input through that
// permute (its view's dims and strides permuted): one dispatch instead of two. ConvNeXt's residual
// add at the end of a stage, which `permute(0, 2, 3, 1)` moves to N, H, W, C before the
// downsampling LayerNorm, reads the linear's output before it in place then. After the epilogues
// (a call with views is no GEMM's or conv's epilogue), static shapes, no cat terms.
#include <numeric>
#include <vector>

#include "graph/fusion.h"
#include "graph/rewrite_pipeline.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

// The permutation `id` names for a rank `rank` tensor (negative dims wrapped); empty when it is none.
std::vector<size_t> permutation(const format::VkGraphIR& ir, int32_t id, size_t rank) {
  const auto& v = ir.values[id];
  if (v.kind != VkValueKind::IntList || v.ints.size() != rank) return {};
  std::vector<size_t> p;
  std::vector<bool> seen(rank, false);
  for (int64_t d : v.ints) {
    const int64_t r = static_cast<int64_t>(rank), k = d < 0 ? d + r : d;
    if (k < 0 || k >= r || seen[static_cast<size_t>(k)]) return {};
    seen[static_cast<size_t>(k)] = true;
    p.push_back(static_cast<size_t>(k));
  }
  return p;
}

size_t fused_output_permutes(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  if (!g.options().static_shapes) return 0;
  int32_t next_mem = graph::unused_memory_object(ir);
  std::vector<bool> removed(ir.chain.size(), false);
  size_t rewritten = 0;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    format::VkOpCall& call = ir.chain[i];
    if (call.name != graph::kFusedOp || call.args.size() < 3) continue;
    const int32_t out = call.args.back(), expr_id = call.args[call.args.size() - 2];
    const auto& ev = ir.values[expr_id];
    if (ev.kind != VkValueKind::Expr || !ev.expr || ev.expr->on_input || !ix.tensor(out)) continue;
    const format::VkExpr& e = *ev.expr;
    bool cats = false;
    for (const auto& t : e.terms) cats = cats || t.split.has_value();
    for (const auto& v : e.views) cats = cats || (v && v->part);
    if (cats) continue;
    const size_t r = ix.sole_reader(out, i);
    if (r == graph::UseDef::npos) continue;
    const format::VkOpCall& perm = ir.chain[r];
    const std::vector<int64_t>& od = ix.dims(out);
    const size_t rank = od.size();
    if (perm.name != "aten.permute_copy.default" || perm.args.size() != 3 || perm.args[0] != out) continue;
    const std::vector<size_t> p = permutation(ir, perm.args[1], rank);
    const int32_t result = perm.args[2];
    if (p.empty() || !ix.tensor(result) || ix.dtype(result) != ix.dtype(out) || ix.producer(result) != r) continue;
    std::vector<int64_t> want(rank);
    for (size_t j = 0; j < rank; ++j) want[j] = od[p[j]];
    if (ix.dims(result) != want) continue;
    // Each input as the call reads it, over the output's dims (leading 1s where it broadcasts),
    // then permuted.
    const size_t n_inputs = call.args.size() - 2;
    format::VkExpr pushed = e;
    pushed.views.resize(n_inputs);
    bool fits = true;
    for (size_t k = 0; k < n_inputs && fits; ++k) {
      const std::vector<int64_t>& stored = ix.dims(call.args[k]);
      format::VkExprView v = e.views.size() > k && e.views[k] ? *e.views[k] : format::VkExprView{0, stored, contiguous_strides(stored), "", std::nullopt};
      fits = v.dims.size() <= rank;
      if (!fits) break;
      v.dims.insert(v.dims.begin(), rank - v.dims.size(), 1);
      v.strides.insert(v.strides.begin(), rank - v.strides.size(), 0);
      // No part: calls with cat parts were skipped above.
      format::VkExprView moved{v.offset, {}, {}, v.label.empty() ? "permute" : v.label + "+permute", std::nullopt};
      for (size_t j = 0; j < rank; ++j) {
        moved.dims.push_back(v.dims[p[j]]);
        moved.strides.push_back(v.dims[p[j]] == 1 ? 0 : v.strides[p[j]]);
      }
      pushed.views[k] = std::move(moved);
    }
    if (!fits) continue;
    call.args[call.args.size() - 2] = graph::add_expr(ir, std::move(pushed));
    call.args.back() = result;
    graph::own_storage(ir, result, next_mem);  // written at the fused call's place now
    removed[r] = true;
    ++rewritten;
  }
  if (rewritten) graph::drop_calls(ir, removed);
  return rewritten;
}

ETW_REGISTER_LOAD_REWRITE(fused_output_permutes, Patterns);

}  // namespace
}  // namespace etwebgpu::ops
