#include "graph/memory_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>

namespace etwebgpu::graph {

using format::VkGraphIR;
using format::VkOpCall;
using format::VkValueKind;

namespace {

constexpr int32_t kNone = MemoryPlan::kNone;

// Operators whose output is written once at load (not by a dispatch of each run).
bool written_at_load(const std::string& op) { return op == "et_vk.prepack.default"; }

}  // namespace

const std::map<std::string, std::vector<size_t>>& in_place_args() {
  static const std::map<std::string, std::vector<size_t>> m = {
      {"aten.copy_.default", {0}},
      {"aten.index_put_.default", {0}},
      {"update_cache.default", {1}},
      {"sdpa_with_kv_cache.default", {3, 4}},
  };
  return m;
}

bool permute_keeps_order(const VkGraphIR& ir, int32_t self, int32_t dims) {
  auto in_range = [&](int32_t v) { return v >= 0 && static_cast<size_t>(v) < ir.values.size(); };
  if (!in_range(self) || !in_range(dims) || ir.values[self].kind != VkValueKind::Tensor ||
      ir.values[dims].kind != VkValueKind::IntList)
    return false;
  const auto& d = ir.values[self].tensor.dims;
  const auto& p = ir.values[dims].ints;
  int64_t r = static_cast<int64_t>(d.size()), prev = -1;
  if (static_cast<int64_t>(p.size()) != r) return false;
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int64_t v : p) {
    int64_t k = v < 0 ? v + r : v;
    if (k < 0 || k >= r || seen[k]) return false;  // not a permutation: left to the builder's error
    seen[k] = true;
    // Dims of at most one element (live dims never exceed these) can go anywhere.
    if (d[k] <= 1) continue;
    if (k < prev) return false;
    prev = k;
  }
  return true;
}

bool select_keeps_order(const VkGraphIR& ir, int32_t self, int32_t dim) {
  auto in_range = [&](int32_t v) { return v >= 0 && static_cast<size_t>(v) < ir.values.size(); };
  if (!in_range(self) || !in_range(dim) || ir.values[self].kind != VkValueKind::Tensor ||
      ir.values[dim].kind != VkValueKind::Int)
    return false;
  const auto& d = ir.values[self].tensor.dims;
  int64_t r = static_cast<int64_t>(d.size()), k = ir.values[dim].int_val < 0 ? ir.values[dim].int_val + r : ir.values[dim].int_val;
  return k >= 0 && k < r && d[k] == 1;
}

// The output holds the input's words in the same order: only the live dims differ.
bool is_contiguous_view(const VkGraphIR& ir, const VkOpCall& c) {
  static const std::set<std::string> views = {
      "aten.view_copy.default",       "aten._unsafe_view.default", "aten.alias_copy.default",
      "aten.lift_fresh_copy.default", "aten.detach_copy.default",  "aten.squeeze_copy.dims",
      "aten.squeeze_copy.dim",        "aten.squeeze_copy.default", "aten.unsqueeze_copy.default",
  };
  if (c.args.size() < 2) return false;
  // clone [self, memory_format, out]: only None (contiguous) is a reinterpretation.
  if (c.name == "aten.clone.default")
    return c.args.size() == 3 && c.args[1] >= 0 && static_cast<size_t>(c.args[1]) < ir.values.size() &&
           ir.values[c.args[1]].kind == VkValueKind::Null;
  if (c.name == "aten.permute_copy.default" || c.name == "aten.permute.default")
    return c.args.size() == 3 && permute_keeps_order(ir, c.args[0], c.args[1]);
  if (c.name == "aten.select_copy.int") return c.args.size() == 4 && select_keeps_order(ir, c.args[0], c.args[1]);
  return views.count(c.name) > 0;
}

namespace {

struct UnionFind {
  std::vector<int32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int32_t find(int32_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  }
  // The smaller id stays the root, so a unit's representative is its first tensor.
  int32_t unite(int32_t a, int32_t b) {
    a = find(a), b = find(b);
    if (a > b) std::swap(a, b);
    parent[b] = a;
    return a;
  }
};

// Closed chain-index intervals, sorted and disjoint.
using Ranges = std::vector<std::pair<int32_t, int32_t>>;

void add_ranges(Ranges& r, const Ranges& more) {
  r.insert(r.end(), more.begin(), more.end());
  std::sort(r.begin(), r.end());
  Ranges merged;
  for (auto& x : r) {
    // Touching ranges merge too: no node index lies between them.
    if (!merged.empty() && x.first <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, x.second);
    else
      merged.push_back(x);
  }
  r = std::move(merged);
}

// True when some node index lies in both (a node naming both would read and write one buffer
// through two tensors).
bool overlap(const Ranges& a, const Ranges& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].second < b[j].first) ++i;
    else if (b[j].second < a[i].first) ++j;
    else return true;
  }
  return false;
}

}  // namespace


size_t split_packed_memory_objects(VkGraphIR& ir) {
  const size_t n = ir.values.size();
  auto mem = [&](int32_t v) {
    return v >= 0 && static_cast<size_t>(v) < n && ir.values[v].kind == VkValueKind::Tensor &&
                   !ir.values[v].tensor.is_constant()
               ? ir.values[v].tensor.mem_obj_id
               : -1;
  };
  constexpr int32_t kEnd = INT32_MAX;
  std::vector<int32_t> first(n, kNone), last(n, kNone);
  auto name = [&](int32_t v, int32_t at) {
    if (mem(v) < 0) return;
    if (first[v] == kNone || at < first[v]) first[v] = at;
    last[v] = std::max(last[v], at);
  };
  for (size_t i = 0; i < ir.chain.size(); ++i)
    for (int32_t a : ir.chain[i].args) {
      name(a, static_cast<int32_t>(i));
      if (a >= 0 && static_cast<size_t>(a) < n && ir.values[a].kind == VkValueKind::ValueList)
        for (int32_t e : ir.values[a].ids) name(e, static_cast<int32_t>(i));
    }
  for (uint32_t v : ir.input_ids) name(static_cast<int32_t>(v), -1);
  for (uint32_t v : ir.output_ids) name(static_cast<int32_t>(v), kEnd);
  for (const auto& st : ir.state) {
    name(st.value_id, -1);
    name(st.value_id, kEnd);
  }
  std::map<int32_t, std::vector<int32_t>> objs;
  int32_t next = 0;
  for (size_t v = 0; v < n; ++v) {
    int32_t m = mem(static_cast<int32_t>(v));
    if (m < 0) continue;
    next = std::max(next, m + 1);
    if (first[v] != kNone) objs[m].push_back(static_cast<int32_t>(v));
  }
  size_t added = 0;
  for (auto& [id, members] : objs) {
    std::sort(members.begin(), members.end(), [&](int32_t a, int32_t b) { return first[a] < first[b]; });
    int32_t end = last[members.front()], cur = id;
    for (size_t k = 1; k < members.size(); ++k) {
      int32_t v = members[k];
      if (first[v] > end) {  // no earlier member is alive here: a new group
        cur = next++;
        ++added;
      }
      ir.values[v].tensor.mem_obj_id = cur;
      end = std::max(end, last[v]);
    }
  }
  return added;
}

uint64_t MemoryPlan::total_bytes() const {
  uint64_t s = 0;
  for (auto& b : buffers) s += b.bytes;
  return s;
}

MemoryPlan plan_memory(const VkGraphIR& ir, const std::vector<uint64_t>& tensor_bytes, const MemoryPlanOptions& opts) {
  const size_t n = ir.values.size();
  const size_t nodes = ir.chain.size();
  auto is_tensor = [&](int32_t v) {
    return v >= 0 && static_cast<size_t>(v) < n && ir.values[v].kind == VkValueKind::Tensor;
  };
  auto planned = [&](int32_t v) { return is_tensor(v) && !ir.values[v].tensor.is_constant(); };
  // Calls f for the tensor `a` names: itself, or the tensors of a ValueList.
  auto each_tensor = [&](int32_t a, auto&& f) {
    if (planned(a)) f(a);
    else if (a >= 0 && static_cast<size_t>(a) < n && ir.values[a].kind == VkValueKind::ValueList)
      for (int32_t id : ir.values[a].ids)
        if (planned(id)) f(id);
  };

  MemoryPlan p;
  p.buffer_of.assign(n, kNone);
  p.first.assign(n, kNone);
  p.last.assign(n, kNone);
  p.unit_of.assign(n, kNone);
  p.aliased_view.assign(nodes, false);

  std::vector<char> is_input(n, 0), is_output(n, 0), is_state(n, 0), at_load(n, 0), mutated(n, 0), born(n, 0);
  std::vector<int> writes(n, 0);
  std::vector<int32_t> first_write(n, kNone);
  for (uint32_t v : ir.input_ids)
    if (v < n) is_input[v] = 1;
  for (uint32_t v : ir.output_ids)
    if (v < n) is_output[v] = 1;
  for (const auto& st : ir.state)
    if (st.value_id >= 0 && static_cast<size_t>(st.value_id) < n) is_state[st.value_id] = 1;

  for (size_t i = 0; i < nodes; ++i) {
    const auto& c = ir.chain[i];
    if (c.args.empty()) continue;
    int32_t node = static_cast<int32_t>(i);
    std::set<int32_t> read;  // tensors named by an argument other than the output
    for (size_t k = 0; k + 1 < c.args.size(); ++k) each_tensor(c.args[k], [&](int32_t v) { read.insert(v); });
    for (int32_t a : c.args)
      each_tensor(a, [&](int32_t v) {
        if (p.first[v] == kNone) p.first[v] = node;
        p.last[v] = node;
      });
    each_tensor(c.args.back(), [&](int32_t v) {
      ++writes[v];
      if (first_write[v] == kNone) {
        first_write[v] = node;
        // Born here: nothing before this node saw its contents.
        born[v] = p.first[v] == node && !read.count(v);
      }
      if (written_at_load(c.name)) at_load[v] = 1;
    });
    if (auto it = in_place_args().find(c.name); it != in_place_args().end())
      for (size_t k : it->second)
        if (k + 1 < c.args.size()) each_tensor(c.args[k], [&](int32_t v) { mutated[v] = 1; });
  }

  // Contents that matter before (or beyond) the run: such a tensor keeps a buffer of its own.
  auto computed = [&](int32_t v) { return born[v] && !is_input[v] && !is_state[v] && !at_load[v]; };
  auto pinned = [&](int32_t v) { return !computed(v) || is_output[v]; };
  auto active = [&](int32_t v) { return p.first[v] != kNone || is_input[v] || is_output[v] || is_state[v]; };

  // Units: the delegate's memory objects, then the copy-free views. Classes: tensors that are the
  // same data (a view and its input); tensors of one unit but different classes share in time.
  UnionFind units(n), classes(n);
  std::vector<Ranges> class_ranges(n);
  std::vector<std::vector<int32_t>> unit_classes(n);  // by unit root: its class roots
  for (size_t v = 0; v < n; ++v)
    if (planned(static_cast<int32_t>(v))) {
      if (p.first[v] != kNone) class_ranges[v] = {{p.first[v], p.last[v]}};
      unit_classes[v] = {static_cast<int32_t>(v)};
    }
  auto merge_units = [&](int32_t a, int32_t b) {
    int32_t ra = units.find(a), rb = units.find(b);
    if (ra == rb) return;
    int32_t r = units.unite(ra, rb), gone = r == ra ? rb : ra;
    unit_classes[r].insert(unit_classes[r].end(), unit_classes[gone].begin(), unit_classes[gone].end());
    unit_classes[gone].clear();
  };
  // A memory object's tensors whose lives meet are one value under two names (the delegate aliased
  // them): one unit. Those whose lives do not meet were only packed by the delegate's planner, which
  // the packing below redoes over the whole program; kept together they would block views.
  std::map<int32_t, std::vector<int32_t>> mem_objs;
  for (size_t v = 0; v < n; ++v)
    if (planned(static_cast<int32_t>(v)) && ir.values[v].tensor.mem_obj_id >= 0)
      mem_objs[ir.values[v].tensor.mem_obj_id].push_back(static_cast<int32_t>(v));
  for (auto& [id, members] : mem_objs) {
    if (!opts.reuse) {
      for (int32_t v : members) merge_units(members.front(), v);
      continue;
    }
    std::vector<int32_t> named;
    for (int32_t v : members)
      if (p.first[v] != kNone) named.push_back(v);
    std::sort(named.begin(), named.end(), [&](int32_t a, int32_t b) { return p.first[a] < p.first[b]; });
    int32_t end = kNone;
    for (size_t k = 0; k < named.size(); ++k) {
      if (k > 0 && p.first[named[k]] <= end) merge_units(named[k - 1], named[k]);
      end = k > 0 && p.first[named[k]] <= end ? std::max(end, p.last[named[k]]) : p.last[named[k]];
    }
  }

  if (opts.alias_views) {
    for (size_t i = 0; i < nodes; ++i) {
      const auto& c = ir.chain[i];
      if (!is_contiguous_view(ir, c)) continue;
      int32_t in = c.args.front(), out = c.args.back(), node = static_cast<int32_t>(i);
      if (!planned(in) || !planned(out) || in == out) continue;
      if (ir.values[in].tensor.dtype != ir.values[out].tensor.dtype) continue;
      // Both must hold one value for the whole run: `out` written only here, `in` written (once)
      // before here or fed from outside; neither written in place nor carried to the next run.
      if (writes[out] != 1 || !born[out] || first_write[out] != node) continue;
      if (writes[in] == 1 ? first_write[in] >= node : !(writes[in] == 0 && is_input[in])) continue;
      if (is_state[in] || is_state[out] || is_input[out] || mutated[in] || mutated[out]) continue;
      int32_t ci = classes.find(in), co = classes.find(out);
      int32_t ui = units.find(in), uo = units.find(out);
      if (ui != uo) {
        // Joining the two units must not make tensors of different data meet in one buffer.
        bool clash = false;
        for (int32_t d1 : unit_classes[ui])
          for (int32_t d2 : unit_classes[uo])
            if (!(d1 == ci && d2 == co) && overlap(class_ranges[d1], class_ranges[d2])) clash = true;
        if (clash) continue;
        merge_units(ui, uo);
      }
      int32_t u = units.find(in);
      int32_t r = classes.unite(ci, co), gone = r == ci ? co : ci;
      add_ranges(class_ranges[r], class_ranges[gone]);
      class_ranges[gone].clear();
      auto& uc = unit_classes[u];
      uc.erase(std::remove(uc.begin(), uc.end(), gone), uc.end());
      p.aliased_view[i] = true;
    }
  }

  struct Unit {
    int32_t root = 0;
    uint64_t bytes = 0;
    Ranges live;
    bool pinned = false, computed = true;
    std::vector<int32_t> members;
  };
  std::map<int32_t, Unit> by_root;
  for (size_t i = 0; i < n; ++i) {
    int32_t v = static_cast<int32_t>(i);
    if (!planned(v)) continue;
    Unit& u = by_root[units.find(v)];
    u.root = units.find(v);
    u.members.push_back(v);
    u.bytes = std::max(u.bytes, tensor_bytes[v]);
    if (p.first[v] != kNone) add_ranges(u.live, {{p.first[v], p.last[v]}});
    u.pinned = u.pinned || pinned(v);
    u.computed = u.computed && computed(v);
  }
  std::vector<Unit*> shared;
  for (auto& [root, u] : by_root) {
    if (!std::any_of(u.members.begin(), u.members.end(), active)) continue;
    for (int32_t v : u.members) p.unit_of[v] = root;
    if (u.pinned || !opts.reuse) {
      for (int32_t v : u.members) p.buffer_of[v] = static_cast<int32_t>(p.buffers.size());
      p.buffers.push_back({u.bytes, u.computed, 1});
    } else {
      shared.push_back(&u);
    }
  }
  // Largest first, so a buffer is as large as its first unit; each unit goes to the smallest
  // buffer whose occupants' lives it does not meet.
  std::stable_sort(shared.begin(), shared.end(), [](const Unit* a, const Unit* b) {
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    return a->live.front().first < b->live.front().first;
  });
  struct Occupied {
    int32_t buffer;
    Ranges live;  // lives of its units
  };
  std::vector<Occupied> occupied;
  for (Unit* u : shared) {
    int best = -1;
    for (size_t k = 0; k < occupied.size(); ++k) {
      if (overlap(occupied[k].live, u->live)) continue;
      if (best < 0 || p.buffers[occupied[k].buffer].bytes < p.buffers[occupied[best].buffer].bytes)
        best = static_cast<int>(k);
    }
    if (best < 0) {
      occupied.push_back({static_cast<int32_t>(p.buffers.size()), {}});
      p.buffers.push_back({0, true, 0});
      best = static_cast<int>(occupied.size() - 1);
    }
    int32_t bi = occupied[best].buffer;
    add_ranges(occupied[best].live, u->live);
    auto& b = p.buffers[bi];
    b.bytes = std::max(b.bytes, u->bytes);
    b.computed = b.computed && u->computed;
    ++b.units;
    for (int32_t v : u->members) p.buffer_of[v] = bi;
  }
  return p;
}

}  // namespace etwebgpu::graph
