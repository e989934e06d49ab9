// The load rewrite that folds a SwiGLU into the 4-bit linear after it (q4gsw_gemv_rows.h
// FoldedInput::Swiglu). The epilogue pass made a Llama MLP's
//   g = gate(x);  h = up(x) with the epilogue silu(g) * up;  down(h)
// where gate and up are linear_q4gsw (or the 8da4w linears that choose their own parameters) of
// one input, g possibly through a view to its own shape. Here up loses its epilogue and writes its own output u, and down reads ValueList
// [g, u, h, form] instead of h (or of its clone or same-shape view, which goes), computing silu(g) * u as its GEMV reads it. Gate and up, now
// alike, then become one multi-output call (RewritePhase::Projections): a decode step loses one
// dispatch per layer. On the GEMM routes (prefill) down runs the fold's own kernel into h first,
// so a prefill chunk keeps its three dispatches.
//
// Taken only where gate and up can stack (one input or clones of one tensor, one K and group
// size, no bias) and down's GEMV takes the fold (K and group size multiples of 8). g and h are
// no graph output or state; nothing between up and down may name g but those calls.
#include <algorithm>
#include <set>
#include <sstream>
#include <vector>

#include "graph/epilogue_fusion.h"
#include "graph/fusion.h"
#include "ops/op_common.h"
#include "ops/quantized/q4gsw_gemv_rows.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

// A linear family whose calls take a folded input: its single-output name, the count of its own
// arguments before an epilogue, and where its bias and group size are.
struct Family {
  const char* name;
  size_t fixed, bias, group_size;
};
constexpr Family kFamilies[] = {{"et_vk.linear_q4gsw.default", 5, 4, 3},
                                {"etwebgpu.linear_dq8ca_q4gsw_qparams", 15, 14, 13}};

const Family* family_of(const std::string& name) {
  for (const Family& f : kFamilies)
    if (name == f.name) return &f;
  return nullptr;
}

// The form of an epilogue's term list (graph/fusion.h) when it is silu(x1) * x0: "silu" for
// [silu(x1), x0 * t0], "sigmoid" for [sigmoid(x1), x1 * t0, x0 * t1] (the export's decomposed
// silu; operands of a product in either order); "" otherwise.
std::string swiglu_form(const std::string& text) {
  struct Term {
    bool binary;
    std::string a, b, label;
  };
  std::istringstream in(text);
  std::vector<std::string> tok;
  for (std::string t; in >> t;) tok.push_back(t);
  std::vector<Term> terms;
  for (size_t i = 0; i < tok.size();) {
    if (tok[i] == "u" && i + 8 <= tok.size()) {
      terms.push_back({false, tok[i + 2], "", tok[i + 7]});
      i += 8;
    } else if (tok[i] == "b" && i + 7 <= tok.size()) {
      terms.push_back({true, tok[i + 2], tok[i + 3], tok[i + 6]});
      i += 7;
    } else {
      return "";
    }
  }
  auto product_of = [](const Term& t, const char* p, const char* q) {
    return t.binary && t.label == "mul" && ((t.a == p && t.b == q) || (t.a == q && t.b == p));
  };
  if (terms.size() == 2 && !terms[0].binary && terms[0].label == "silu" && terms[0].a == "x1" && product_of(terms[1], "x0", "t0"))
    return "silu";
  if (terms.size() == 3 && !terms[0].binary && terms[0].label == "sigmoid" && terms[0].a == "x1" && product_of(terms[1], "x1", "t0") &&
      product_of(terms[2], "x0", "t1"))
    return "sigmoid";
  return "";
}

size_t fold_swiglu_into_linears(Graph&, format::VkGraphIR& ir) {
  const size_t n = ir.chain.size();
  const auto mentions = graph::tensor_mentions(ir);
  const std::set<int32_t> pinned = graph::pinned_values(ir);
  auto mem = [&](int32_t id) { return ir.values[id].tensor.is_constant() ? -1 : ir.values[id].tensor.mem_obj_id; };
  int32_t next_mem = 0;
  for (const auto& v : ir.values)
    if (v.kind == VkValueKind::Tensor) next_mem = std::max(next_mem, v.tensor.mem_obj_id + 1);
  auto int_arg = [&](const format::VkOpCall& c, size_t a) {
    return ir.values[c.args[a]].kind == VkValueKind::Int ? ir.values[c.args[a]].int_val : -1;
  };
  // Only the call `at` names tensor t, besides the one that writes it.
  auto read_only_by = [&](int32_t t, size_t writer, size_t at) {
    return !pinned.count(t) && mentions[t].size() == 2 && mentions[t][0] == writer && mentions[t][1] == at;
  };
  std::vector<int32_t> ts;
  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t u = 0; u < n; ++u) {
    auto& up = ir.chain[u];
    const Family* fam = family_of(up.name);
    // The epilogue: [own arguments..., String, g, h].
    if (!fam || up.args.size() != fam->fixed + 3 || ir.values[up.args[fam->fixed]].kind != VkValueKind::String) continue;
    const std::string form = swiglu_form(ir.values[up.args[fam->fixed]].str);
    const int32_t gv = up.args[fam->fixed + 1], h = up.args.back();
    if (form.empty() || !graph::float_tensor(ir, gv) || !graph::float_tensor(ir, h) || ir.values[gv].tensor.dims != ir.values[h].tensor.dims ||
        ir.values[gv].tensor.dtype != ir.values[h].tensor.dtype || ir.values[h].tensor.dims.empty() ||
        ir.values[up.args[fam->bias]].kind != VkValueKind::Null)
      continue;
    // g: the gate's output, or a view_copy of it to the same shape that only up reads (the recipe
    // views it), which goes: it would stand between gate and up, which must stack.
    if (mentions[gv].size() != 2 || mentions[gv][1] != u || pinned.count(gv)) continue;
    size_t gi = mentions[gv][0], gview = n;
    int32_t graw = gv;
    if (ir.chain[gi].name == "aten.view_copy.default" && ir.chain[gi].args.size() == 3 && ir.chain[gi].args.back() == gv) {
      graw = ir.chain[gi].args[0];
      if (!graph::float_tensor(ir, graw) || ir.values[graw].tensor.dims != ir.values[gv].tensor.dims ||
          ir.values[graw].tensor.dtype != ir.values[gv].tensor.dtype || mentions[graw].size() != 2 ||
          !read_only_by(graw, mentions[graw][0], gi))
        continue;
      gview = gi;
      gi = mentions[graw][0];
    }
    const auto& gate = ir.chain[gi];
    if (gate.name != up.name || gate.args.size() != fam->fixed + 1 || gate.args.back() != graw || gi >= u ||
        ir.values[gate.args[fam->bias]].kind != VkValueKind::Null || int_arg(gate, fam->group_size) != int_arg(up, fam->group_size))
      continue;
    // Gate and up read one tensor, or clones of one source.
    size_t at = n;
    if (graph::clone_source(ir, mentions, gate.args[0], &at) != graph::clone_source(ir, mentions, up.args[0], &at)) continue;
    // h: read by one linear that takes a folded input, as its input alone (directly, or through a
    // contiguous clone or a view_copy to the same shape that only it reads, which goes: the 8da4w
    // export clones each linear's input, the recipe views it), whose GEMV takes it.
    if (pinned.count(h) || mentions[h].size() != 2 || mentions[h][0] != u) continue;
    size_t d = mentions[h][1], clone = n;
    int32_t y = h;
    if (const auto& c = ir.chain[d]; c.args.size() == 3 && c.args[0] == h && graph::float_tensor(ir, c.args[2]) &&
                                     ((c.name == "aten.clone.default" && ir.values[c.args[1]].kind == VkValueKind::Null) ||
                                      c.name == "aten.view_copy.default") &&
                                     ir.values[c.args[2]].tensor.dims == ir.values[h].tensor.dims &&
                                     ir.values[c.args[2]].tensor.dtype == ir.values[h].tensor.dtype) {
      y = c.args[2];
      if (pinned.count(y) || mentions[y].size() != 2 || mentions[y][0] != d) continue;
      clone = d;
      d = mentions[y][1];
    }
    auto& down = ir.chain[d];
    const Family* dfam = family_of(down.name);
    if (!q4::takes_folded_input(down.name) || down.args[0] != y || ir.values[h].tensor.dims.back() % 8 != 0 ||
        (dfam && int_arg(down, dfam->group_size) % 8 != 0))
      continue;
    graph::tensors_of(ir, down, ts);
    if (std::count(ts.begin(), ts.end(), y) != 1) continue;
    // The gate's output now lives until down: nothing in between may name it or share its storage.
    bool safe = true;
    for (size_t q = u + 1; q < d && safe; ++q) {
      if (q == clone) continue;
      graph::tensors_of(ir, ir.chain[q], ts);
      for (int32_t t : ts)
        if (t == graw || (mem(graw) >= 0 && mem(t) == mem(graw))) safe = false;
    }
    if (!safe) continue;
    // u: up's own output, like h, in storage of its own.
    format::VkValue uval = ir.values[h];
    uval.tensor.mem_obj_id = next_mem++;
    ir.values.push_back(std::move(uval));
    const int32_t uid = static_cast<int32_t>(ir.values.size() - 1);
    format::VkValue fv;
    fv.kind = VkValueKind::String;
    fv.str = form;
    ir.values.push_back(std::move(fv));
    const int32_t form_id = static_cast<int32_t>(ir.values.size() - 1);
    up.args.resize(fam->fixed);
    up.args.push_back(uid);
    down.args[0] = graph::add_value_list(ir, {graw, uid, y, form_id});
    if (clone < n) removed[clone] = true;
    if (gview < n) removed[gview] = true;
    ++fused;
  }
  if (fused) graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_LOAD_REWRITE(fold_swiglu_into_linears, Activations);

}  // namespace
}  // namespace etwebgpu::ops
