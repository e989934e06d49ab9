// The load rewrite that makes a gather at consecutive positions a slice. ExecuTorch's Llama
// (dynamic shapes) takes its RoPE tables' rows at the chunk's positions as
//   p = select_copy(input_pos, 0, k);  r = arange(0, S) (maybe cloned);  pos = add(p, r)
//   cos = index.Tensor(freqs_cos, [pos]);  sin = index.Tensor(freqs_sin, [pos])   (pos maybe
//   through a contiguous clone a gather, as the 1B export has it)
// five dispatches a step. The positions are the rows p .. p + S - 1, and input_pos is a small
// graph input the host holds (Graph::input_bytes), so each gather becomes
//   st = etwebgpu.position_rows(input_pos, k, S, rows);  en = add(st, S)   (host SymInts, one
//   pair for the tables of one row count)
//   cos = slice_copy(freqs_cos, 0, st, en, 1)
// one dispatch each. position_rows applies index.Tensor's rule to every position (negatives count
// from the end) and raises its error where one is out of range, or where the window crosses 0
// (not one slice).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "graph/fusion.h"
#include "graph/rewrite_pipeline.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

bool int_value(const format::VkGraphIR& ir, int32_t id, int64_t want) {
  return id >= 0 && static_cast<size_t>(id) < ir.values.size() && ir.values[id].kind == VkValueKind::Int &&
         ir.values[id].int_val == want;
}

bool is_graph_input(const format::VkGraphIR& ir, int32_t t) {
  for (uint32_t id : ir.input_ids)
    if (static_cast<int32_t>(id) == t) return true;
  return false;
}

bool int_tensor(const graph::UseDef& ix, int32_t t) {
  const VkDType d = ix.dtype(t);
  return ix.tensor(t) && (d == VkDType::Int32 || d == VkDType::Int64);
}

// The consecutive positions p + arange(0, S) in 1-D int tensor `pos`, or none.
struct Window {
  size_t add = 0, select = 0, range = 0, clone = graph::UseDef::npos;
  int32_t input = -1, index = -1, count = -1;  // input_pos, k, S (Int or SymInt)
};

std::optional<Window> read_window(const format::VkGraphIR& ir, const graph::UseDef& ix, int32_t pos) {
  if (!int_tensor(ix, pos) || ix.dims(pos).size() != 1) return std::nullopt;
  const format::VkOpCall* add = ix.made_by(pos, "aten.add.Tensor", 4);
  if (!add || !int_value(ir, add->args[2], 1) || ix.writers(pos).size() != 1) return std::nullopt;
  Window w;
  w.add = ix.producer(pos);
  for (int side = 0; side < 2; ++side) {
    const int32_t p = add->args[side], r = add->args[1 - side];
    // p: select_copy(input_pos, 0, k) of a 1-D int graph input, a 0-d tensor.
    const format::VkOpCall* sel = ix.made_by(p, "aten.select_copy.int", 4);
    if (!sel || !int_tensor(ix, p) || !ix.dims(p).empty() || !int_value(ir, sel->args[1], 0)) continue;
    const int32_t in = sel->args[0];
    // The host reads input_pos as uploaded: no call may write it.
    if (!int_tensor(ix, in) || ix.dims(in).size() != 1 || !is_graph_input(ir, in) || !ix.writers(in).empty() ||
        ir.values[sel->args[2]].kind != VkValueKind::Int)
      continue;
    // r: arange(0, S, 1) or arange(S), through a contiguous clone or not.
    size_t clone_at = graph::UseDef::npos;
    const int32_t src = ix.clone_source(r, &clone_at);
    if (!int_tensor(ix, r) || !int_tensor(ix, src)) continue;
    int32_t count = -1;
    if (const format::VkOpCall* a = ix.made_by(src, "aten.arange.start_step", 8)) {
      if (int_value(ir, a->args[0], 0) && int_value(ir, a->args[2], 1)) count = a->args[1];
    } else if (const format::VkOpCall* a = ix.made_by(src, "aten.arange.default", 6)) {
      count = a->args[0];
    }
    if (count < 0 || (ir.values[count].kind != VkValueKind::Int && ir.values[count].kind != VkValueKind::SymInt)) continue;
    w.select = ix.producer(p);
    w.range = ix.producer(src);
    w.clone = src == r ? graph::UseDef::npos : clone_at;
    w.input = in;
    w.index = sel->args[2];
    w.count = count;
    return w;
  }
  return std::nullopt;
}

// Gather call i's index tensor when it takes a table's rows ([R, ...] -> [S, ...]) at one 1-D index
// tensor; -1 otherwise.
int32_t gather_index(const format::VkGraphIR& ir, const graph::UseDef& ix, size_t i) {
  const format::VkOpCall& g = ir.chain[i];
  if (g.name != "aten.index.Tensor" || g.args.size() != 3 || ir.values[g.args[1]].kind != VkValueKind::ValueList ||
      ir.values[g.args[1]].ids.size() != 1 || !ix.tensor(g.args[0]) || !ix.tensor(g.args[2]) || ix.dims(g.args[0]).empty() ||
      ix.dtype(g.args[0]) != ix.dtype(g.args[2]))
    return -1;
  return ir.values[g.args[1]].ids[0];
}

size_t position_windows(Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  std::vector<std::vector<format::VkOpCall>> replacement(n);
  size_t rewritten = 0;
  std::set<int32_t> seen;
  for (size_t i = 0; i < n; ++i) {
    const int32_t idx = gather_index(ir, ix, i);
    if (idx < 0) continue;
    // The gathers read the positions directly or each through its own contiguous clone (the 1B
    // export clones them once a table).
    size_t unused_at = 0;
    const int32_t pos = ix.clone_source(idx, &unused_at);
    if (!seen.insert(pos).second) continue;
    const auto w = read_window(ir, ix, pos);
    if (!w) continue;
    // Every reader of pos a gather it can slice, or a clone that only such gathers read.
    std::vector<size_t> gathers, clones;
    bool ok = true;
    for (size_t r : ix.readers(pos)) {
      if (gather_index(ir, ix, r) == pos) {
        gathers.push_back(r);
        continue;
      }
      const format::VkOpCall& c = ir.chain[r];
      size_t at = 0;
      const int32_t copy = c.args.empty() ? -1 : c.args.back();
      ok = ok && ix.tensor(copy) && ix.clone_source(copy, &at) == pos && at == r && ix.writers(copy).size() == 1 &&
           !ix.readers(copy).empty();
      if (!ok) break;
      for (size_t q : ix.readers(copy)) ok = ok && gather_index(ir, ix, q) == copy;
      if (!ok) break;
      clones.push_back(r);
      gathers.insert(gathers.end(), ix.readers(copy).begin(), ix.readers(copy).end());
    }
    if (!ok || gathers.empty()) continue;
    std::sort(gathers.begin(), gathers.end());
    // One window start a row count (the cos and sin tables share theirs), computed at its first gather.
    std::map<int64_t, std::pair<int32_t, int32_t>> bounds;  // rows -> (st, en)
    for (size_t r : gathers) {
      const format::VkOpCall& g = ir.chain[r];
      const int32_t table = g.args[0];
      const int64_t rows = ix.dims(table)[0];
      auto [at, first] = bounds.try_emplace(rows, -1, -1);
      if (first) {
        at->second = {graph::add_symint(ir), graph::add_symint(ir)};
        const auto [st, en] = at->second;
        replacement[r] = {{g.node_id, "etwebgpu.position_rows", {w->input, w->index, w->count, graph::add_int(ir, rows), st}},
                          {g.node_id, "add", {st, w->count, en}}};
      }
      const auto [st, en] = at->second;
      replacement[r].push_back({g.node_id, "aten.slice_copy.Tensor", {table, graph::add_int(ir, 0), st, en, graph::add_int(ir, 1), g.args[2]}});
      ++rewritten;
    }
    // The clones and the position chain go where nothing else reads them.
    bool clones_gone = true;
    for (size_t c : clones) {
      const int32_t copy = ir.chain[c].args.back();
      std::vector<size_t> members = ix.readers(copy);
      members.push_back(c);
      removed[c] = ix.internal(copy, members);
      clones_gone = clones_gone && removed[c];
    }
    std::vector<size_t> members = gathers;
    members.insert(members.end(), clones.begin(), clones.end());
    members.push_back(w->add);
    if (clones_gone && ix.internal(pos, members)) {
      removed[w->add] = true;
      const int32_t p = ir.chain[w->select].args.back();
      if (ix.internal(p, {w->select, w->add})) removed[w->select] = true;
      const int32_t r = ir.chain[w->add].args[0] == p ? ir.chain[w->add].args[1] : ir.chain[w->add].args[0];
      const int32_t src = ir.chain[w->range].args.back();
      if (w->clone == graph::UseDef::npos) {
        if (ix.internal(src, {w->range, w->add})) removed[w->range] = true;
      } else if (ix.internal(r, {w->clone, w->add})) {
        removed[w->clone] = true;
        if (ix.internal(src, {w->range, w->clone})) removed[w->range] = true;
      }
    }
  }
  if (rewritten) graph::splice_calls(ir, removed, replacement);
  return rewritten;
}

ETW_REGISTER_LOAD_REWRITE(position_windows, Simplify);

}  // namespace
}  // namespace etwebgpu::ops
