#include "graph/use_def.h"

#include <algorithm>

#include "graph/memory_plan.h"

namespace etwebgpu::graph {

namespace {
const std::vector<size_t> kNone;
}

bool pure_op(const std::string& op) {
  static const std::set<std::string> random = {
      "aten.native_dropout.default", "aten.bernoulli.default", "aten.rand.default",
      "aten.randn.default",          "aten.rand_like.default", "aten.randn_like.default",
      "aten.normal.Tensor_Tensor",   "aten.uniform.default",   "aten.multinomial.default",
  };
  return !random.count(op) && !in_place_args().count(op);
}

UseDef::UseDef(const format::VkGraphIR& ir)
    : ir_(ir), mentions_(ir.values.size()), writers_(ir.values.size()), readers_(ir.values.size()), pinned_(ir.values.size(), 0),
      in_place_(ir.values.size(), 0) {
  auto pin = [&](int64_t v) {
    if (v >= 0 && static_cast<size_t>(v) < pinned_.size()) pinned_[v] = 1;
  };
  for (auto id : ir.input_ids) pin(id);
  for (auto id : ir.output_ids) pin(id);
  for (const auto& st : ir.state) pin(st.value_id);
  auto note = [](std::vector<size_t>& list, size_t i) {
    if (list.empty() || list.back() != i) list.push_back(i);
  };
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    const auto& c = ir.chain[i];
    if (c.args.empty()) continue;
    for (int32_t a : c.args) each_tensor(a, [&](int32_t t) { note(mentions_[t], i); });
    for (size_t k = 0; k + 1 < c.args.size(); ++k) each_tensor(c.args[k], [&](int32_t t) { note(readers_[t], i); });
    each_tensor(c.args.back(), [&](int32_t t) { note(writers_[t], i); });
    if (auto it = in_place_args().find(c.name); it != in_place_args().end())
      for (size_t k : it->second)
        if (k + 1 < c.args.size())
          each_tensor(c.args[k], [&](int32_t t) {
            note(writers_[t], i);
            in_place_[t] = pinned_[t] = 1;
          });
  }
  for (size_t v = 0; v < ir.values.size(); ++v) {
    int32_t m = memory(static_cast<int32_t>(v));
    if (m < 0) continue;
    if (static_cast<size_t>(m) >= sharing_.size()) sharing_.resize(static_cast<size_t>(m) + 1);
    sharing_[m].push_back(static_cast<int32_t>(v));
  }
}

bool UseDef::tensor(int32_t v) const {
  // Values a pass appends after the index was built are not in it.
  return v >= 0 && static_cast<size_t>(v) < mentions_.size() && ir_.values[v].kind == format::VkValueKind::Tensor;
}

const std::vector<size_t>& UseDef::mentions(int32_t v) const { return tensor(v) ? mentions_[v] : kNone; }
const std::vector<size_t>& UseDef::writers(int32_t v) const { return tensor(v) ? writers_[v] : kNone; }
const std::vector<size_t>& UseDef::readers(int32_t v) const { return tensor(v) ? readers_[v] : kNone; }

size_t UseDef::producer(int32_t v) const {
  if (!tensor(v) || writers_[v].size() != 1 || in_place_[v]) return npos;
  return writers_[v][0];
}

bool UseDef::pinned(int32_t v) const { return v >= 0 && static_cast<size_t>(v) < pinned_.size() && pinned_[v]; }

int32_t UseDef::memory(int32_t v) const {
  if (!tensor(v) || ir_.values[v].tensor.is_constant()) return -1;
  return ir_.values[v].tensor.mem_obj_id;
}

const format::VkOpCall* UseDef::made_by(int32_t t, const char* op, size_t nargs) const {
  const size_t p = producer(t);
  if (p == npos) return nullptr;
  const auto& c = ir_.chain[p];
  return c.name == op && c.args.size() == nargs ? &c : nullptr;
}

bool UseDef::aliased(int32_t t) const {
  const int32_t m = memory(t);
  if (m < 0 || mentions_[t].empty()) return false;
  const size_t first = mentions_[t].front(), last = mentions_[t].back();
  for (int32_t u : sharing_[m])
    if (u != t && !mentions_[u].empty() && mentions_[u].front() <= last && mentions_[u].back() >= first) return true;
  return false;
}

size_t UseDef::sole_reader(int32_t t, size_t writer) const {
  const size_t w = producer(t);
  if (w == npos || pinned(t) || (writer != npos && w != writer) || aliased(t)) return npos;
  const auto& m = mentions_[t];
  if (m.size() != 2 || m[0] != w) return npos;
  return m[1];
}

bool UseDef::internal(int32_t t, const std::vector<size_t>& members) const {
  const size_t w = producer(t);
  if (w == npos || pinned(t) || aliased(t)) return false;
  for (size_t i : mentions_[t])
    if (i != w && std::find(members.begin(), members.end(), i) == members.end()) return false;
  return true;
}

bool UseDef::unused(int32_t t) const {
  const size_t w = producer(t);
  return w != npos && !pinned(t) && mentions_[t].size() == 1 && !aliased(t);
}

bool UseDef::writes(size_t i, int32_t v) const {
  auto direct = [&](int32_t u) { return std::binary_search(writers_[u].begin(), writers_[u].end(), i); };
  if (!tensor(v)) return false;
  const int32_t m = memory(v);
  if (m < 0) return direct(v);
  for (int32_t u : sharing_[m])
    if (direct(u)) return true;
  return false;
}

bool UseDef::unchanged_between(int32_t v, size_t lo, size_t hi, const std::vector<size_t>& except) const {
  if (!tensor(v)) return true;
  auto check = [&](int32_t u) {
    for (size_t w : writers_[u])
      if (w > lo && w < hi && std::find(except.begin(), except.end(), w) == except.end()) return false;
    return true;
  };
  const int32_t m = memory(v);
  if (m < 0) return check(v);
  for (int32_t u : sharing_[m])
    if (!check(u)) return false;
  return true;
}

bool UseDef::can_replace(const std::set<size_t>& members, const std::vector<int32_t>& inputs) const {
  if (members.empty()) return false;
  const size_t last = *members.rbegin();
  const std::vector<size_t> list(members.begin(), members.end());
  for (size_t m : members)
    if (m != last) {
      bool inside = true;
      each_tensor(ir_.chain[m].args.back(), [&](int32_t o) { inside = inside && internal(o, list); });
      if (!inside) return false;
    }
  return reads_unchanged(members, inputs);
}

bool UseDef::reads_unchanged(const std::set<size_t>& members, const std::vector<int32_t>& inputs) const {
  if (members.empty()) return false;
  const size_t last = *members.rbegin();
  const std::vector<size_t> list(members.begin(), members.end());
  for (int32_t e : inputs) {
    size_t first = last;
    for (size_t p : mentions(e))
      if (members.count(p)) first = std::min(first, p);
    if (!unchanged_between(e, first, last, list)) return false;
  }
  return true;
}

int32_t UseDef::clone_source(int32_t t, size_t* at) const {
  for (size_t i : writers(t)) {
    const auto& c = ir_.chain[i];
    if (c.args.back() == t && c.name == "aten.clone.default" && c.args.size() == 3 &&
        ir_.values[c.args[1]].kind == format::VkValueKind::Null) {
      *at = i;
      return c.args[0];
    }
  }
  return t;
}

int32_t UseDef::main_output(int32_t out) const {
  if (tensor(out)) return out;
  if (out < 0 || static_cast<size_t>(out) >= ir_.values.size() || ir_.values[out].kind != format::VkValueKind::ValueList)
    return -1;
  const std::vector<int32_t>& ids = ir_.values[out].ids;
  if (ids.empty() || !tensor(ids[0])) return -1;
  for (size_t k = 1; k < ids.size(); ++k)
    if (tensor(ids[k]) && !unused(ids[k])) return -1;
  return ids[0];
}

}  // namespace etwebgpu::graph
