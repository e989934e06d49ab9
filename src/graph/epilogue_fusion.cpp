#include "graph/epilogue_fusion.h"

#include <algorithm>
#include <optional>
#include <set>

#include "graph/fusion.h"
#include "graph/memory_plan.h"

namespace etwebgpu::graph {

EpilogueHosts& EpilogueHosts::global() {
  static EpilogueHosts h;
  return h;
}

bool EpilogueHosts::has(const std::string& name) const {
  return std::any_of(hosts_.begin(), hosts_.end(), [&](const auto& h) { return h.first == name; });
}

size_t EpilogueHosts::max_inputs(const std::string& name) const {
  for (const auto& [n, m] : hosts_)
    if (n == name) return m;
  return 0;
}

namespace {

// The consumer's work as an epilogue of `value`: its expression with x0 = value, and the other
// inputs.
struct Consumer {
  format::VkExpr expr;
  std::vector<int32_t> extras;
};

std::optional<Consumer> as_epilogue(Graph& g, const format::VkGraphIR& ir, const format::VkOpCall& c, int32_t value) {
  Consumer r;
  if (c.name == kFusedOp) {
    if (c.args.size() < 3) return std::nullopt;
    const auto& ev = ir.values[c.args[c.args.size() - 2]];
    if (ev.kind != format::VkValueKind::Expr || !ev.expr) return std::nullopt;
    std::vector<int32_t> inputs(c.args.begin(), c.args.end() - 2);
    if (std::find(inputs.begin(), inputs.end(), value) == inputs.end()) return std::nullopt;
    if (!plain_expression(*ev.expr)) return std::nullopt;  // only the fused elementwise kernel reads it
    // Input k becomes x<order[k]>: value first, then the others in their order.
    std::vector<uint32_t> order(inputs.size());
    uint32_t next = 1;
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k] == value) {
        order[k] = 0;
        continue;
      }
      if (!float_tensor(ir, inputs[k])) return std::nullopt;
      order[k] = next++;
      r.extras.push_back(inputs[k]);
    }
    r.expr.terms = ev.expr->terms;
    for (auto& t : r.expr.terms)
      for (auto* o : {&t.a, &t.b})
        if (o->kind == format::VkExprOperand::Kind::Input) {
          if (o->index >= order.size()) return std::nullopt;  // malformed: left to its builder
          o->index = order[o->index];
        }
    return r;
  }
  std::optional<FusedTerm> t = fusable_term(g, ir, c);
  if (!t || (t->x != value && t->y != value)) return std::nullopt;
  std::vector<int32_t> inputs{value};
  for (int32_t o : {t->x, t->y})
    if (o >= 0 && o != value) inputs.push_back(o);
  r.extras.assign(inputs.begin() + 1, inputs.end());
  r.expr = expression({*t}, {c.args.back()}, inputs);
  r.expr.views.clear();
  return r;
}

}  // namespace

EpilogueStats fuse_epilogues(Graph& g, format::VkGraphIR& ir, const UseDef& ix) {
  const size_t n = ir.chain.size();
  EpilogueStats stats;
  int32_t next_mem = unused_memory_object(ir);
  // A moved producer reads its inputs at its consumer's position: their lives end there now.
  std::vector<size_t> last_use(ir.values.size(), 0);
  for (size_t v = 0; v < ir.values.size(); ++v)
    if (!ix.mentions(static_cast<int32_t>(v)).empty()) last_use[v] = ix.mentions(static_cast<int32_t>(v)).back();
  // True when no other tensor of v's memory object lives while v does: the delegate only packed
  // them (graph/memory_plan.h plans such tensors apart), so v may take a memory object of its own.
  auto packed_only = [&](int32_t v) {
    if (ix.memory(v) < 0 || ix.mentions(v).empty()) return true;
    size_t first = ix.mentions(v).front(), last = last_use[v];
    for (size_t u = 0; u < ir.values.size(); ++u) {
      const int32_t id = static_cast<int32_t>(u);
      if (id == v || ix.memory(id) != ix.memory(v) || ix.mentions(id).empty()) continue;
      if (ix.mentions(id).front() <= last && last_use[u] >= first) return false;
    }
    return true;
  };

  std::vector<bool> removed(n, false);
  std::vector<std::vector<format::VkOpCall>> replacement(n);  // calls run in place of call i
  auto single_reader = [&](int32_t t, size_t at) -> size_t {
    size_t c = ix.sole_reader(t, at);
    return c == UseDef::npos || removed[c] || !replacement[c].empty() ? n : c;
  };
  // From the last producer back: a consumer that could take either of two producers takes the
  // nearer one, which moves least (SwiGLU's up projection, a residual block's last conv).
  for (size_t p = n; p-- > 0;) {
    const format::VkOpCall& prod = ir.chain[p];
    if (!EpilogueHosts::global().has(prod.name) || prod.args.empty()) continue;
    int32_t out = prod.args.back();
    if (!float_tensor(ir, out)) continue;
    size_t c = single_reader(out, p);
    if (c >= n) continue;
    // Across contiguous views (reshapes, clones: same words in the same order), the consumer is
    // the last view's reader; the producer then writes its own output and the views, moved after
    // it, yield the result.
    std::vector<size_t> views;
    int32_t value = out;
    while (c < n && is_contiguous_view(ir, ir.chain[c]) && ir.chain[c].args.front() == value) {
      int32_t vo = ir.chain[c].args.back();
      views.push_back(c);
      bool same = float_tensor(ir, vo) && ir.values[vo].tensor.dtype == ir.values[out].tensor.dtype &&
                  numel(ir.values[vo].tensor.dims) == numel(ir.values[out].tensor.dims);
      c = same ? single_reader(vo, c) : n;
      value = vo;
    }
    if (c >= n) continue;
    std::optional<Consumer> cons = as_epilogue(g, ir, ir.chain[c], value);
    if (!cons || cons->extras.size() > EpilogueHosts::global().max_inputs(prod.name)) continue;
    int32_t res = ir.chain[c].args.back();
    // The consumer keeps the elements and the dtype; across a view, its other inputs have its
    // shape exactly (read at the same flat index) or are one element (attention's scale after
    // bmm -> view).
    if (!float_tensor(ir, res) || ir.values[res].tensor.dtype != ir.values[out].tensor.dtype ||
        ir.values[res].tensor.dims != ir.values[value].tensor.dims ||
        std::count(cons->extras.begin(), cons->extras.end(), res))
      continue;
    bool extras_ok = true;
    for (int32_t e : cons->extras)
      extras_ok = extras_ok && (views.empty() || ir.values[e].tensor.dims == ir.values[res].tensor.dims ||
                                numel(ir.values[e].tensor.dims) == 1);  // a scalar reads its one element
    if (!extras_ok) continue;
    int32_t dst = views.empty() ? res : out;  // what the producer writes
    // The fused call runs at the consumer's position, so the producer reads its inputs later: no
    // call in between may write them or storage they share. No input may share the
    // output's storage (one binding cannot be read-only and read-write at once); when the
    // delegate only packed them (their lives did not meet before), the output gets a memory
    // object of its own.
    std::vector<int32_t> reads;
    for (int32_t a : prod.args)
      ix.each_tensor(a, [&](int32_t t) {
        if (t != out) reads.push_back(t);
      });
    const int32_t m = ix.memory(dst);
    bool safe = true, shares = false;
    for (int32_t t : reads) safe = safe && t != dst && t != res && ix.unchanged_between(t, p, c, views);
    for (size_t q = p + 1; q < c && safe; ++q)  // producers moved to q write there now
      for (const auto& call : replacement[q])
        ix.each_tensor(call.args.back(), [&](int32_t w) {
          for (int32_t t : reads) safe = safe && w != t && !(ix.memory(t) >= 0 && ix.memory(w) == ix.memory(t));
        });
    for (int32_t t : reads) shares = shares || (m >= 0 && m == ix.memory(t));
    for (int32_t t : cons->extras) shares = shares || (m >= 0 && m == ix.memory(t));
    if (!safe || (shares && !packed_only(dst))) continue;

    format::VkOpCall call = prod;
    call.args.back() = add_expr(ir, std::move(cons->expr));
    call.args.insert(call.args.end(), cons->extras.begin(), cons->extras.end());
    call.args.push_back(dst);
    if (shares) ir.values[dst].tensor.mem_obj_id = next_mem++;
    for (int32_t t : reads) last_use[t] = std::max(last_use[t], c);
    removed[p] = true;
    replacement[c].push_back(std::move(call));
    for (size_t k = 0; k < views.size(); ++k) {
      format::VkOpCall v = ir.chain[views[k]];
      if (k + 1 == views.size()) v.args.back() = res;
      removed[views[k]] = true;
      replacement[c].push_back(std::move(v));
    }
    ++stats.fused;
  }
  if (stats.fused) splice_calls(ir, removed, replacement);
  return stats;
}

}  // namespace etwebgpu::graph
