#include "graph/cse.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/fusion.h"

namespace etwebgpu::graph {

namespace {

using format::VkValueKind;

bool in_range(const format::VkGraphIR& ir, int32_t v) { return v >= 0 && static_cast<size_t>(v) < ir.values.size(); }

std::string bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return std::to_string(u);
}

}  // namespace

CseStats eliminate_common_subexpressions(format::VkGraphIR& ir, const UseDef& ix) {
  CseStats stats;
  const size_t n = ir.values.size();
  std::vector<char> state(n, 0);
  for (const auto& st : ir.state)
    if (in_range(ir, st.value_id)) state[st.value_id] = 1;
  std::vector<std::vector<size_t>> symint_writes(n);  // chain positions writing each SymInt
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    const auto& c = ir.chain[i];
    if (c.args.empty()) continue;
    int32_t last = c.args.back();
    if (in_range(ir, last) && ir.values[last].kind == VkValueKind::SymInt) symint_writes[last].push_back(i);
  }

  // Constants with one dtype, dims and bytes are one value: keyed by their first tensor. The
  // bytes stay where the file holds them (a model's weights are gigabytes): constants are bucketed
  // by dtype, dims, size and a hash of three sampled spans, then compared in full within a bucket.
  std::vector<int32_t> canon(n);
  for (size_t v = 0; v < n; ++v) canon[v] = static_cast<int32_t>(v);
  auto sampled_hash = [](format::ByteSpan d) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    const size_t span = 256, at[3] = {0, d.size() / 2, d.size() > span ? d.size() - span : 0};
    for (size_t a : at)
      for (size_t i = a; i < std::min(d.size(), a + span); ++i) h = (h ^ d[i]) * 1099511628211ull;
    return h;
  };
  std::map<std::string, std::vector<int32_t>> buckets;
  for (size_t v = 0; v < n; ++v) {
    if (!ix.tensor(static_cast<int32_t>(v))) continue;
    const auto& t = ir.values[v].tensor;
    if (!t.is_constant() || static_cast<size_t>(t.constant_id) >= ir.constants.size()) continue;
    const auto& data = ir.constants[t.constant_id].data;
    std::string key = std::to_string(static_cast<int>(t.dtype)) + "|";
    for (int64_t d : t.dims) key += std::to_string(d) + ",";
    key += "|" + std::to_string(data.size()) + "|" + std::to_string(sampled_hash(data));
    auto& same = buckets[key];
    for (int32_t u : same) {
      const auto& other = ir.constants[ir.values[u].tensor.constant_id].data;
      if (data.empty() || std::memcmp(other.data(), data.data(), data.size()) == 0) {
        canon[v] = u;
        break;
      }
    }
    if (canon[v] == static_cast<int32_t>(v)) same.push_back(static_cast<int32_t>(v));
  }

  // A value's identity for comparing calls; empty when the call cannot take part.
  auto key_of = [&](int32_t a, size_t at, auto&& self) -> std::string {
    if (!in_range(ir, a)) return "";
    const auto& v = ir.values[a];
    switch (v.kind) {
      case VkValueKind::Null: return "N";
      case VkValueKind::Int: return "I" + std::to_string(v.int_val);
      case VkValueKind::Double: return "D" + bits(v.double_val);
      case VkValueKind::Bool: return v.bool_val ? "B1" : "B0";
      case VkValueKind::SymInt: {
        // Live: only itself, and only between the same two of its writes.
        const auto& w = symint_writes[a];
        return "Y" + std::to_string(a) + "@" + std::to_string(std::lower_bound(w.begin(), w.end(), at) - w.begin());
      }
      case VkValueKind::String: return "S" + std::to_string(v.str.size()) + ":" + v.str;
      case VkValueKind::Expr: return "";  // made after this pass
      case VkValueKind::IntList: {
        std::string s = "IL";
        for (int64_t x : v.ints) s += std::to_string(x) + ",";
        return s;
      }
      case VkValueKind::DoubleList: {
        std::string s = "DL";
        for (double x : v.doubles) s += bits(x) + ",";
        return s;
      }
      case VkValueKind::BoolList: {
        std::string s = "BL";
        for (uint8_t x : v.bools) s += x ? '1' : '0';
        return s;
      }
      case VkValueKind::ValueList: {
        std::string s = "L(";
        for (int32_t e : v.ids) {
          std::string k = self(e, at, self);
          if (k.empty()) return "";
          s += k + ";";
        }
        return s + ")";
      }
      case VkValueKind::Tensor: {
        // One value for the whole run: never written (an input or constant) or written once,
        // earlier; never program state.
        const auto& w = ix.writers(a);
        if (state[a] || w.size() > 1 || ix.aliased(a)) return "";
        if (w.size() == 1 && (ix.producer(a) == UseDef::npos || ix.producer(a) >= at)) return "";
        return "T" + std::to_string(canon[a]);
      }
    }
    return "";
  };

  // Replaces every mention of `from` at chain positions after `at` with `to`.
  auto rename = [&](int32_t from, int32_t to, size_t at) {
    for (size_t p = at + 1; p < ir.chain.size(); ++p)
      for (int32_t& a : ir.chain[p].args) {
        if (a == from) a = to;
        else if (in_range(ir, a) && ir.values[a].kind == VkValueKind::ValueList)
          for (int32_t& e : ir.values[a].ids)
            if (e == from) e = to;
      }
  };
  auto mentions = [&](size_t p, int32_t t) {
    bool hit = false;
    for (int32_t a : ir.chain[p].args) ix.each_tensor(a, [&](int32_t x) { hit = hit || x == t; });
    return hit;
  };

  std::map<std::string, size_t> seen;  // call key -> chain position of its first occurrence
  std::vector<bool> removed(ir.chain.size(), false);
  for (size_t j = 0; j < ir.chain.size(); ++j) {
    const auto& c = ir.chain[j];
    if (c.args.empty() || !pure_op(c.name)) continue;
    int32_t out = c.args.back();
    if (ix.producer(out) != j || ix.pinned(out) || ix.aliased(out) || ir.values[out].tensor.is_constant()) continue;
    std::string key = c.name + "#" + std::to_string(c.args.size());
    bool ok = true;
    for (size_t k = 0; k + 1 < c.args.size() && ok; ++k) {
      bool reads_out = false;
      ix.each_tensor(c.args[k], [&](int32_t t) { reads_out = reads_out || t == out; });
      std::string a = reads_out ? "" : key_of(c.args[k], j, key_of);
      ok = !a.empty();
      key += "|" + a;
    }
    if (!ok) continue;
    const auto& ot = ir.values[out].tensor;
    key += "->" + std::to_string(static_cast<int>(ot.dtype));
    for (int64_t d : ot.dims) key += "," + std::to_string(d);
    auto [it, fresh] = seen.emplace(key, j);
    if (fresh) continue;
    size_t i = it->second;
    int32_t keep = ir.chain[i].args.back();
    // `keep` now lives until the last reader of `out`: no tensor sharing its delegate memory
    // object may be named in between (the memory plan would make them one storage).
    size_t last = j;
    for (size_t p = j + 1; p < ir.chain.size(); ++p)
      if (mentions(p, out)) last = p;
    bool clash = false;
    if (ix.memory(keep) >= 0)
      for (size_t p = i + 1; p <= last && !clash; ++p) {
        if (removed[p]) continue;
        for (int32_t a : ir.chain[p].args)
          ix.each_tensor(a, [&](int32_t t) {
            if (t != keep && t != out && ix.memory(t) == ix.memory(keep)) clash = true;
          });
      }
    if (clash) continue;
    rename(out, keep, j);
    removed[j] = true;
    ++stats.calls_removed;
  }
  if (stats.calls_removed) drop_calls(ir, removed);
  return stats;
}

}  // namespace etwebgpu::graph
