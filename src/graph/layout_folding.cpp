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
#include "graph/layout_view.h"
#include "graph/memory_plan.h"

namespace etwebgpu::graph {

using format::VkValueKind;

namespace {

bool is_permute(const format::VkGraphIR& ir, const format::VkOpCall& c) {
  return (c.name == "aten.permute_copy.default" || c.name == "aten.permute.default") && c.args.size() == 3 &&
         ir.values[c.args[0]].kind == VkValueKind::Tensor && ir.values[c.args[1]].kind == VkValueKind::IntList &&
         ir.values[c.args[2]].kind == VkValueKind::Tensor;
}

// The id of a Null value (appended once): clone's memory_format.
int32_t null_value(format::VkGraphIR& ir, int32_t& id) {
  if (id < 0) id = add_null(ir);
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

// The one part of a cat of one tensor (DenseNet's first layer concatenates its input alone), of
// the output's dtype and dims; -1 otherwise.
int32_t sole_cat_part(const format::VkGraphIR& ir, const format::VkOpCall& c) {
  if (c.name != "aten.cat.default" || c.args.size() != 3) return -1;
  for (int32_t a : c.args)
    if (a < 0 || static_cast<size_t>(a) >= ir.values.size()) return -1;
  const auto& list = ir.values[c.args[0]];
  const auto& out = ir.values[c.args[2]];
  if (list.kind != VkValueKind::ValueList || list.ids.size() != 1 || out.kind != VkValueKind::Tensor) return -1;
  const int32_t x = list.ids[0];
  if (x < 0 || static_cast<size_t>(x) >= ir.values.size() || x == c.args[2]) return -1;
  const auto& in = ir.values[x];
  return in.kind == VkValueKind::Tensor && in.tensor.dtype == out.tensor.dtype && in.tensor.dims == out.tensor.dims ? x : -1;
}

}  // namespace

size_t fold_identity_layouts(format::VkGraphIR& ir, bool static_shapes) {
  if (!static_shapes) return 0;
  int32_t null_id = -1;
  size_t folded = 0;
  for (auto& c : ir.chain) {
    const int32_t part = sole_cat_part(ir, c);
    if (part < 0 && !moves_nothing(ir, c)) continue;
    const int32_t x = part >= 0 ? part : c.args.front(), y = c.args.back();
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
    auto p1 = normalized_permutation(ir.values[first.args[1]].ints, rank), p2 = normalized_permutation(ir.values[second.args[1]].ints, rank);
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
    std::vector<int64_t> table(entries);
    for (size_t k = 0; k < entries; ++k) table[k] = (*map)[k * unit] / unit;
    const int32_t index = add_i32_constant(ir, table);
    const int32_t flat = add_tensor(ir, dtype, {numel(sd) / unit, unit});
    const int32_t picked = add_tensor(ir, dtype, {static_cast<int64_t>(entries), unit});
    format::VkOpCall view_in, gather, view_out;
    view_in.node_id = gather.node_id = view_out.node_id = ir.chain[j].node_id;
    view_in.name = view_out.name = "aten.view_copy.default";
    view_in.args = {src, add_int_list(ir, {numel(sd) / unit, unit}), flat};
    gather.name = "aten.index_select.default";
    gather.args = {flat, add_int(ir, 0), index, picked};
    view_out.args = {picked, add_int_list(ir, od), out};
    for (size_t c : calls) removed[c] = true;
    replacement[j] = {std::move(view_in), std::move(gather), std::move(view_out)};
    ++collapsed;
  }
  if (collapsed) splice_calls(ir, removed, replacement);
  return collapsed;
}

namespace {

// The row-wise op at `c`: its input and output tensors, or {-1, -1}. A LayerNorm over the last dim
// alone whose statistics nothing reads, or a linear.
std::pair<int32_t, int32_t> rowwise_io(const format::VkGraphIR& ir, const UseDef& ix, const format::VkOpCall& c) {
  const std::pair<int32_t, int32_t> none{-1, -1};
  if (c.name == "aten.linear.default" && c.args.size() == 4 && ix.tensor(c.args[0]) && ix.tensor(c.args[3]))
    return {c.args[0], c.args[3]};
  if (c.name != "aten.native_layer_norm.default" || c.args.size() != 6 || !ix.tensor(c.args[0])) return none;
  const auto& shape = ir.values[c.args[1]];
  const int32_t x = c.args[0];
  if (shape.kind != VkValueKind::IntList || shape.ints.size() != 1 || ix.dims(x).empty() || shape.ints[0] != ix.dims(x).back())
    return none;
  const int32_t out = ix.main_output(c.args[5]);
  return out >= 0 ? std::make_pair(x, out) : none;
}

}  // namespace

size_t move_row_layouts_before_rowwise(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes) {
  if (!static_shapes) return 0;
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  std::vector<std::vector<format::VkOpCall>> replacement(n);
  size_t moved = 0;
  for (size_t p = 0; p < n; ++p) {
    const auto [x, y] = rowwise_io(ir, ix, ir.chain[p]);
    if (x < 0 || removed[p] || ix.dims(x).empty() || ix.dims(y).empty() || ix.dims(x).size() != ix.dims(y).size())
      continue;
    const int64_t K = ix.dims(x).back(), C = ix.dims(y).back();
    if (K > C) continue;  // the layouts would move more data on x than on y
    // The layout calls after y that move whole rows.
    std::vector<size_t> calls;
    bool copies = false;
    int32_t t = y;
    size_t at = p;
    for (size_t r = ix.sole_reader(t, at); r != UseDef::npos && !removed[r]; r = ix.sole_reader(t, at)) {
      const format::VkOpCall& c = ir.chain[r];
      if (c.args.size() < 2 || c.args[0] != t || !ix.tensor(c.args.back())) break;
      const int32_t o = c.args.back();
      const std::vector<int64_t>& od = ix.dims(o);
      const int64_t rank = static_cast<int64_t>(ix.dims(t).size());
      if (od.empty() || od.back() != C || ix.dtype(o) != ix.dtype(t)) break;
      auto not_last = [&](int32_t dim_arg) {
        const auto d = static_int(ir, dim_arg);
        return d && *d >= -rank && *d < rank && (*d < 0 ? *d + rank : *d) != rank - 1;
      };
      bool row = false;
      if (c.name == "aten.view_copy.default" || c.name == "aten._unsafe_view.default" || c.name == "aten.clone.default") {
        row = is_contiguous_view(ir, c);
      } else if (c.name == "aten.permute_copy.default" && c.args.size() == 3) {
        const auto perm = normalized_permutation(ir.values[c.args[1]].ints, static_cast<size_t>(rank));
        row = !perm.empty() && perm.back() == rank - 1;
        copies = copies || (row && !is_contiguous_view(ir, c));
      } else if (c.name == "aten.index_select.default" && c.args.size() == 4) {
        const auto& idx = ir.values[c.args[2]];
        row = not_last(c.args[1]) && idx.kind == VkValueKind::Tensor && idx.tensor.is_constant();
        copies = copies || row;
      } else if (c.name == "aten.slice_copy.Tensor" && c.args.size() == 6) {
        row = not_last(c.args[1]);
        copies = copies || row;
      }
      // Well formed (an index_select's output: its input with the dim resized), and rows may be
      // dropped, never added (the op would then run on more of them).
      bool valid = false;
      if (row && c.name == "aten.index_select.default") {
        std::vector<int64_t> want = ix.dims(t);
        const int64_t d = *static_int(ir, c.args[1]);
        want[static_cast<size_t>(d < 0 ? d + rank : d)] = numel(ir.values[c.args[2]].tensor.dims);
        valid = want == od;
      } else if (row) {
        const auto v = view_through(ir, c, contiguous_view(ix.dims(t)));
        valid = v && v->dims == od;
      }
      if (!valid || numel(od) > numel(ix.dims(t))) break;
      calls.push_back(r);
      t = o;
      at = r;
    }
    if (!copies || calls.empty()) continue;
    const size_t last = calls.back();
    if (!ix.unchanged_between(x, p, last)) continue;
    // The same calls on x (last dim K), then the op, writing the last call's output.
    std::vector<format::VkOpCall> made;
    int32_t cur = x;
    for (size_t r : calls) {
      format::VkOpCall c = ir.chain[r];
      std::vector<int64_t> d = ix.dims(c.args.back());
      d.back() = K;
      const int32_t o = add_tensor(ir, ix.dtype(x), d);
      c.args.front() = cur;
      c.args.back() = o;
      if (c.name != "aten.clone.default" && is_contiguous_view(ir, c) && c.args.size() == 3) c.args[1] = add_int_list(ir, d);
      made.push_back(std::move(c));
      cur = o;
    }
    format::VkOpCall op = ir.chain[p];
    op.args.front() = cur;
    const int32_t z = ir.chain[last].args.back();
    if (op.name == "aten.linear.default") {
      op.args.back() = z;
    } else {  // LayerNorm: fresh statistics tensors of z's rows
      std::vector<int64_t> sd = ix.dims(z);
      sd.back() = 1;
      op.args.back() = add_value_list(ir, {z, add_tensor(ir, ix.dtype(z), sd), add_tensor(ir, ix.dtype(z), sd)});
    }
    made.push_back(std::move(op));
    removed[p] = true;
    for (size_t r : calls) removed[r] = true;
    replacement[last] = std::move(made);
    ++moved;
  }
  if (moved) splice_calls(ir, removed, replacement);
  return moved;
}

}  // namespace etwebgpu::graph
