// The load rewrite that makes a Llama MLP's gate and up projections one kernel with SwiGLU on its
// output (q4gsw_gemv_rows.h SwigluOut). The epilogue pass made
//   g = gate(x);  h = up(x) with the epilogue silu(g) * up
// where gate and up are linear_q4gsw (or the 8da4w linears that choose their own parameters) of
// one input, g possibly through a view to its own shape. Both become one etwebgpu.*_swiglu call at
// up's place over their weights interleaved row by row (scales and weight sums column by column):
// the invocation of gemv_rows that holds gate row j holds up row j too and stores h[j] =
// silu(gate_j) * up_j, each silu computed once. A decode step loses one dispatch per layer; on
// the GEMM routes (prefill) the products go through `pairs` and one elementwise kernel, as many
// dispatches as before.
//
// Taken where gate and up stack: one input or clones of one tensor that nothing between them
// changes, one K and group size (the 8da4w ones: equal activation arguments), no bias, F (the
// width) a multiple of 4 and gemv_rows' shapes (K and group size multiples of 8). g and h are no
// graph output or state, g read by up alone.
#include <algorithm>
#include <set>
#include <vector>

#include "graph/rewrite_pipeline.h"
#include "graph/fusion.h"
#include "ops/elementwise/elementwise_ops.h"
#include "ops/elementwise/fused_terms.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

// A linear family whose gate and up can pair: its single-output name, the count of its own
// arguments before an epilogue, where its weights, weight sums (-1: none), scales, group size and
// bias are, the name of the paired call and whether that keeps the bias argument (Null).
struct Family {
  const char* name;
  size_t fixed;
  int weights, sums, scales, group_size, bias;
  const char* paired;
  bool paired_bias;
};
constexpr Family kFamilies[] = {
    {"et_vk.linear_q4gsw.default", 5, 1, -1, 2, 3, 4, "etwebgpu.linear_q4gsw_swiglu", false},
    {"etwebgpu.linear_dq8ca_q4gsw_qparams", 15, 10, 11, 12, 13, 14, "etwebgpu.linear_dq8ca_q4gsw_qparams_swiglu", true}};

const Family* family_of(const std::string& name) {
  for (const Family& f : kFamilies)
    if (name == f.name) return &f;
  return nullptr;
}

// The form of up's epilogue expression (x0 = up's value, x1 = the gate's) when it is
// silu(x1) * x0: "silu" for [silu(x1), x0 * t0], "sigmoid" for [sigmoid(x1), x1 * t0, x0 * t1]
// (the export's decomposed silu; operands of a product in either order); "" otherwise.
std::string swiglu_form(const format::VkExpr& e) {
  using Kind = format::VkExprOperand::Kind;
  const auto& terms = e.terms;
  auto is = [](const format::VkExprOperand& o, Kind kind, uint32_t index) { return o.kind == kind && o.index == index; };
  auto of_x1 = [&](const format::VkExprTerm& t, UnaryOp op) { return !t.binary && t.op == code(op) && is(t.a, Kind::Input, 1); };
  // t: a product of tensor operands (p, q) in either order.
  auto product = [&](const format::VkExprTerm& t, Kind pk, uint32_t pi, Kind qk, uint32_t qi) {
    return t.binary && t.op == code(BinaryOp::Mul) &&
           ((is(t.a, pk, pi) && is(t.b, qk, qi)) || (is(t.a, qk, qi) && is(t.b, pk, pi)));
  };
  if (!graph::plain_expression(e)) return "";
  if (terms.size() == 2 && of_x1(terms[0], UnaryOp::Silu) && product(terms[1], Kind::Input, 0, Kind::Term, 0)) return "silu";
  if (terms.size() == 3 && of_x1(terms[0], UnaryOp::Sigmoid) && product(terms[1], Kind::Input, 1, Kind::Term, 0) &&
      product(terms[2], Kind::Input, 0, Kind::Term, 1))
    return "sigmoid";
  return "";
}

size_t pair_swiglu_projections(Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  int32_t next_mem = graph::unused_memory_object(ir);
  auto int_arg = [&](const format::VkOpCall& c, int a) {
    return ir.values[c.args[a]].kind == VkValueKind::Int ? ir.values[c.args[a]].int_val : -1;
  };
  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t u = 0; u < n; ++u) {
    const auto& up = ir.chain[u];
    const Family* fam = family_of(up.name);
    // The epilogue: [own arguments..., Expr, g, h].
    if (!fam || up.args.size() != fam->fixed + 3 || ir.values[up.args[fam->fixed]].kind != VkValueKind::Expr ||
        !ir.values[up.args[fam->fixed]].expr)
      continue;
    const std::string form = swiglu_form(*ir.values[up.args[fam->fixed]].expr);
    const int32_t gv = up.args[fam->fixed + 1], h = up.args.back();
    if (form.empty() || !graph::float_tensor(ir, gv) || !graph::float_tensor(ir, h) || ir.values[h].tensor.dims.empty() ||
        ir.values[gv].tensor.dims != ir.values[h].tensor.dims || ir.values[gv].tensor.dtype != ir.values[h].tensor.dtype ||
        ix.pinned(h) || ix.sole_reader(gv) != u)
      continue;
    // g: the gate's output, or a view_copy of it to the same shape that only up reads.
    size_t gi = ix.producer(gv), gview = n;
    int32_t graw = gv;
    if (ir.chain[gi].name == "aten.view_copy.default" && ir.chain[gi].args.size() == 3 && ir.chain[gi].args.back() == gv) {
      graw = ir.chain[gi].args[0];
      if (!graph::float_tensor(ir, graw) || ir.values[graw].tensor.dims != ir.values[gv].tensor.dims ||
          ir.values[graw].tensor.dtype != ir.values[gv].tensor.dtype || ix.sole_reader(graw) != gi)
        continue;
      gview = gi;
      gi = ix.producer(graw);
    }
    const auto& gate = ir.chain[gi];
    if (removed[gi] || gate.name != up.name || gate.args.size() != fam->fixed + 1 || gate.args.back() != graw || gi >= u) continue;
    // Stackable: no bias, one group size and K, weights of F rows, scales (and sums) of one group
    // count and at least F columns; the 8da4w ones with equal activation arguments.
    const int64_t F = ir.values[h].tensor.dims.back();
    const int64_t gs = int_arg(up, fam->group_size);
    bool ok = F % 4 == 0 && gs > 0 && gs % 8 == 0 && gs == int_arg(gate, fam->group_size) &&
              ir.values[up.args[fam->bias]].kind == VkValueKind::Null && ir.values[gate.args[fam->bias]].kind == VkValueKind::Null;
    for (const auto* c : {&gate, &up}) {
      if (!ok) break;
      ok = graph::constant_2d(ir, c->args[fam->weights], format::VkDType::UInt8, 1) &&
           graph::constant_2d(ir, c->args[fam->scales], format::VkDType::Float32, 4) &&
           (fam->sums < 0 || graph::constant_2d(ir, c->args[fam->sums], format::VkDType::Int32, 4)) &&
           ir.values[c->args[fam->weights]].tensor.dims[0] == F && ir.values[c->args[fam->scales]].tensor.dims[1] >= F &&
           (fam->sums < 0 || ir.values[c->args[fam->sums]].tensor.dims[1] >= F);
    }
    if (!ok) continue;
    const auto &wg = ir.values[gate.args[fam->weights]].tensor, &wu = ir.values[up.args[fam->weights]].tensor;
    const auto &sg = ir.values[gate.args[fam->scales]].tensor, &su = ir.values[up.args[fam->scales]].tensor;
    if (wg.dims[1] != wu.dims[1] || sg.dims[0] != su.dims[0]) continue;
    if (fam->sums >= 0 && ir.values[gate.args[fam->sums]].tensor.dims[0] != ir.values[up.args[fam->sums]].tensor.dims[0]) continue;
    for (size_t a = 1; a < static_cast<size_t>(fam->weights) && ok; ++a) ok = graph::same_scalar(ir, gate.args[a], up.args[a]);
    if (!ok) continue;
    // The pair runs at up's place over up's input: gate's input must hold the same values there
    // (one tensor, or clones of one source that nothing between the two reads changes).
    const int32_t xg = gate.args[0], xu = up.args[0];
    if (!graph::float_tensor(ir, xg) || !graph::float_tensor(ir, xu) || ir.values[xg].tensor.dims != ir.values[xu].tensor.dims ||
        ir.values[xu].tensor.dims.back() % 8 != 0)
      continue;
    size_t cg = n, cu = n;
    const int32_t src = ix.clone_source(xg, &cg);
    if (ix.clone_source(xu, &cu) != src) continue;
    const size_t lo = xg == src ? gi : cg, hi = xu == src ? u : cu;
    if (!ix.unchanged_between(src, std::min(lo, hi), std::max(lo, hi))) continue;
    // pairs: the products on the GEMM routes, [..., 2F], in storage of its own.
    format::VkValue pv = ir.values[h];
    pv.tensor.dims.back() = 2 * F;
    pv.tensor.mem_obj_id = next_mem++;
    ir.values.push_back(std::move(pv));
    const int32_t pairs = static_cast<int32_t>(ir.values.size() - 1);
    format::VkValue fv;
    fv.kind = VkValueKind::String;
    fv.str = form;
    ir.values.push_back(std::move(fv));
    const int32_t form_id = static_cast<int32_t>(ir.values.size() - 1);
    format::VkOpCall call;
    call.node_id = ir.chain[u].node_id;
    call.name = fam->paired;
    call.args.assign(ir.chain[u].args.begin(), ir.chain[u].args.begin() + fam->weights);
    const int32_t gw = ir.chain[gi].args[fam->weights], uw = ir.chain[u].args[fam->weights];
    const int32_t gsc = ir.chain[gi].args[fam->scales], usc = ir.chain[u].args[fam->scales];
    call.args.push_back(graph::interleave_rows(ir, gw, uw, format::VkDType::UInt8, 1));
    if (fam->sums >= 0)
      call.args.push_back(graph::interleave_columns(ir, ir.chain[gi].args[fam->sums], ir.chain[u].args[fam->sums], F, format::VkDType::Int32, 4));
    call.args.push_back(graph::interleave_columns(ir, gsc, usc, F, format::VkDType::Float32, 4));
    call.args.push_back(ir.chain[u].args[fam->group_size]);
    if (fam->paired_bias) call.args.push_back(ir.chain[u].args[fam->bias]);
    call.args.push_back(form_id);
    call.args.push_back(graph::add_value_list(ir, {h, pairs}));
    ir.chain[u] = std::move(call);
    removed[gi] = true;
    if (gview < n) removed[gview] = true;
    // Gate's own input clone, read by nothing else now.
    if (xg != xu && cg < n && ix.sole_reader(xg, cg) == gi) removed[cg] = true;
    ++fused;
  }
  if (fused) graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_LOAD_REWRITE(pair_swiglu_projections, Activations);

}  // namespace
}  // namespace etwebgpu::ops
