#include "graph/layout_folding.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <climits>
#include <optional>
#include <set>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"
#include "graph/layout_trace.h"
#include "graph/memory_plan.h"

namespace etwebgpu::graph {

using format::VkValueKind;

namespace {

bool is_permute(const format::VkGraphIR& ir, const format::VkOpCall& c) {
  return (c.name == "aten.permute_copy.default" || c.name == "aten.permute.default") && c.args.size() == 3 &&
         ir.values[c.args[0]].kind == VkValueKind::Tensor && ir.values[c.args[1]].kind == VkValueKind::IntList &&
         ir.values[c.args[2]].kind == VkValueKind::Tensor;
}

// The permutation `dims` normalized to [0, rank), or empty when it is not one.
std::vector<int64_t> normalized(const std::vector<int64_t>& dims, size_t rank) {
  if (dims.size() != rank) return {};
  std::vector<int64_t> p;
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    int64_t k = d < 0 ? d + static_cast<int64_t>(rank) : d;
    if (k < 0 || k >= static_cast<int64_t>(rank) || !seen.insert(k).second) return {};
    p.push_back(k);
  }
  return p;
}

// The id of a Null value (appended once): clone's memory_format.
int32_t null_value(format::VkGraphIR& ir, int32_t& id) {
  if (id < 0) {
    ir.values.push_back(format::VkValue{});
    id = static_cast<int32_t>(ir.values.size() - 1);
  }
  return id;
}

// An optional Int argument: nullopt for None, `bad` for anything else (a SymInt, a Double).
constexpr int64_t kNotInt = INT64_MIN;
std::optional<int64_t> opt_int(const format::VkGraphIR& ir, int32_t id) {
  const auto& v = ir.values[id];
  if (v.kind == VkValueKind::Null) return std::nullopt;
  return v.kind == VkValueKind::Int ? v.int_val : kNotInt;
}

// True when the call hands its input through unchanged (same dims, same dtype, every element).
bool moves_nothing(const format::VkGraphIR& ir, const format::VkOpCall& c) {
  auto tensor = [&](int32_t id) { return id >= 0 && static_cast<size_t>(id) < ir.values.size() && ir.values[id].kind == VkValueKind::Tensor; };
  if (c.args.size() < 2 || !tensor(c.args.front()) || !tensor(c.args.back())) return false;
  for (int32_t a : c.args)
    if (a < 0 || static_cast<size_t>(a) >= ir.values.size()) return false;
  const auto& in = ir.values[c.args.front()].tensor;
  const auto& out = ir.values[c.args.back()].tensor;
  if (in.dtype != out.dtype || in.dims != out.dims || c.args.front() == c.args.back()) return false;
  if (c.name == "aten.slice_copy.Tensor" && c.args.size() == 6) {  // [self, dim, start, end, step, out]
    const auto& d = ir.values[c.args[1]];
    const int64_t r = static_cast<int64_t>(in.dims.size());
    if (d.kind != VkValueKind::Int || d.int_val < -r || d.int_val >= r) return false;
    const int64_t size = in.dims[d.int_val < 0 ? d.int_val + r : d.int_val];
    auto start = opt_int(ir, c.args[2]), end = opt_int(ir, c.args[3]), step = opt_int(ir, c.args[4]);
    if (start == kNotInt || end == kNotInt || step == kNotInt) return false;
    // PyTorch's bounds: a negative one wraps once, then both clamp to [0, size].
    int64_t s = start.value_or(0), e = end.value_or(size);
    if (s < 0) s += size;
    if (e < 0) e += size;
    return step.value_or(1) == 1 && std::clamp<int64_t>(s, 0, size) == 0 && std::clamp<int64_t>(e, 0, size) == size;
  }
  if (c.name == "aten.constant_pad_nd.default" && c.args.size() == 4) {  // [self, pad, value, out]
    const auto& pad = ir.values[c.args[1]];
    return pad.kind == VkValueKind::IntList && std::all_of(pad.ints.begin(), pad.ints.end(), [](int64_t p) { return p == 0; });
  }
  if (c.name == "aten.expand_copy.default" && c.args.size() == 4) {  // [self, size, implicit, out]
    const auto& size = ir.values[c.args[1]];
    if (size.kind != VkValueKind::IntList || size.ints.size() != in.dims.size()) return false;
    for (size_t d = 0; d < in.dims.size(); ++d)
      if (size.ints[d] != -1 && size.ints[d] != in.dims[d]) return false;
    return true;
  }
  return false;
}

}  // namespace

size_t fold_identity_layouts(format::VkGraphIR& ir, bool static_shapes) {
  if (!static_shapes) return 0;
  int32_t null_id = -1;
  size_t folded = 0;
  for (auto& c : ir.chain) {
    if (!moves_nothing(ir, c)) continue;
    const int32_t x = c.args.front(), y = c.args.back();
    c.name = "aten.clone.default";
    c.args = {x, null_value(ir, null_id), y};
    ++folded;
  }
  return folded;
}

size_t fold_inverse_permutes(format::VkGraphIR& ir, const UseDef& ix) {
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  int32_t null_id = -1;
  size_t folded = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& first = ir.chain[i];
    if (removed[i] || !is_permute(ir, first)) continue;
    const int32_t x = first.args[0], mid = first.args[2];
    const size_t j = ix.sole_reader(mid, i);
    if (j == UseDef::npos) continue;
    auto& second = ir.chain[j];
    if (!is_permute(ir, second) || second.args[0] != mid || second.args[2] == x) continue;
    const auto& xd = ir.values[x].tensor;
    const auto& yd = ir.values[second.args[2]].tensor;
    const size_t rank = xd.dims.size();
    auto p1 = normalized(ir.values[first.args[1]].ints, rank), p2 = normalized(ir.values[second.args[1]].ints, rank);
    if (p1.empty() || p2.empty() || xd.dtype != yd.dtype || xd.dims != yd.dims) continue;
    // mid[k] = x[p1[k]], y[k] = mid[p2[k]] = x[p1[p2[k]]]: the identity when p1[p2[k]] == k.
    bool identity = true;
    for (size_t k = 0; k < rank; ++k) identity = identity && p1[p2[k]] == static_cast<int64_t>(k);
    if (!identity) continue;
    if (!ix.unchanged_between(x, i, j)) continue;
    second.name = "aten.clone.default";
    second.args = {x, null_value(ir, null_id), second.args[2]};
    removed[i] = true;
    ++folded;
  }
  if (folded) drop_calls(ir, removed);
  return folded;
}

namespace {

// A table this large stays a chain: it would cost more device memory than the copies it replaces
// save time.
constexpr uint64_t kMaxGatherTableBytes = 16ull << 20;

int32_t new_tensor(format::VkGraphIR& ir, format::VkDType dtype, std::vector<int64_t> dims) {
  format::VkValue v;
  v.kind = VkValueKind::Tensor;
  v.tensor.dtype = dtype;
  v.tensor.dims = std::move(dims);
  v.tensor.constant_id = -1;
  v.tensor.mem_obj_id = -1;
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

int32_t new_int(format::VkGraphIR& ir, int64_t x) {
  format::VkValue v;
  v.kind = VkValueKind::Int;
  v.int_val = x;
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

}  // namespace

size_t collapse_layout_chains(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes) {
  if (!static_shapes) return 0;
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  std::vector<std::vector<format::VkOpCall>> replacement(n);
  auto layout = [&](size_t i) { return i != UseDef::npos && is_traceable_layout(ir, ir.chain[i]); };
  // An intermediate of a chain: one writer, read only by the next call, not pinned or aliased.
  auto passes = [&](int32_t t, size_t reader) { return ix.sole_reader(t) == reader && !ix.aliased(t); };
  size_t collapsed = 0;
  for (size_t j = 0; j < n; ++j) {
    if (!layout(j)) continue;
    const int32_t out = ir.chain[j].args.back();
    const size_t next = ix.sole_reader(out);
    if (next != UseDef::npos && layout(next) && passes(out, next)) continue;  // not the chain's end
    std::vector<size_t> calls{j};
    int32_t src = ir.chain[j].args.front();
    for (size_t p = ix.producer(src); layout(p) && !removed[p] && passes(src, calls.front()) &&
                                      ir.chain[p].args.back() == src;
         p = ix.producer(src)) {
      calls.insert(calls.begin(), p);
      src = ir.chain[p].args.front();
    }
    size_t copies = 0;
    for (size_t c : calls) copies += !is_contiguous_view(ir, ir.chain[c]);
    const auto dtype = ix.dtype(src);
    bool same_dtype = true;
    for (size_t c : calls) same_dtype = same_dtype && ix.dtype(ir.chain[c].args.back()) == dtype;
    if (copies < 2 || !same_dtype || !ix.unchanged_between(src, calls.front(), j)) continue;
    std::vector<const format::VkOpCall*> chain;
    for (size_t c : calls) chain.push_back(&ir.chain[c]);
    const auto map = trace_layouts(ir, src, chain);
    if (!map || map->empty()) continue;
    // Rows when every output row of the last dim's length is a whole source row, in order.
    const std::vector<int64_t> od = ix.dims(out), sd = ix.dims(src);  // copies: values grow below
    const int64_t L = od.empty() ? 1 : od.back();
    bool rows = !sd.empty() && L > 1 && sd.back() == L;
    for (size_t r = 0; rows && r < map->size(); r += static_cast<size_t>(L)) {
      rows = (*map)[r] % L == 0;
      for (int64_t e = 1; rows && e < L; ++e) rows = (*map)[r + e] == (*map)[r] + e;
    }
    const int64_t unit = rows ? L : 1;
    const size_t entries = map->size() / static_cast<size_t>(unit);
    if (entries * 4 > kMaxGatherTableBytes || numel(sd) > INT32_MAX) continue;
    auto table = std::make_shared<std::vector<uint8_t>>(entries * 4);
    for (size_t k = 0; k < entries; ++k) {
      const int32_t at = static_cast<int32_t>((*map)[k * unit] / unit);
      std::memcpy(table->data() + k * 4, &at, 4);
    }
    const int32_t index = add_owned_constant(ir, std::move(table), format::VkDType::Int32, {static_cast<int64_t>(entries)});
    const int32_t flat = new_tensor(ir, dtype, {numel(sd) / unit, unit});
    const int32_t picked = new_tensor(ir, dtype, {static_cast<int64_t>(entries), unit});
    format::VkOpCall view_in, gather, view_out;
    view_in.node_id = gather.node_id = view_out.node_id = ir.chain[j].node_id;
    view_in.name = view_out.name = "aten.view_copy.default";
    view_in.args = {src, add_int_list(ir, {numel(sd) / unit, unit}), flat};
    gather.name = "aten.index_select.default";
    gather.args = {flat, new_int(ir, 0), index, picked};
    view_out.args = {picked, add_int_list(ir, od), out};
    for (size_t c : calls) removed[c] = true;
    replacement[j] = {std::move(view_in), std::move(gather), std::move(view_out)};
    ++collapsed;
  }
  if (!collapsed) return 0;
  std::vector<format::VkOpCall> chain;
  for (size_t i = 0; i < n; ++i) {
    if (!replacement[i].empty())
      for (auto& c : replacement[i]) chain.push_back(std::move(c));
    else if (!removed[i])
      chain.push_back(std::move(ir.chain[i]));
  }
  ir.chain = std::move(chain);
  return collapsed;
}

}  // namespace etwebgpu::graph
