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

namespace etwebgpu::graph {

namespace {

int64_t product(const std::vector<int64_t>& d, size_t lo, size_t hi) {
  int64_t p = 1;
  for (size_t k = lo; k < hi && k < d.size(); ++k) p *= d[k];
  return p;
}

// A layout call pushed onto each part of a cat (push_layouts_into_cats).
struct PushedStep {
  enum class Kind { Reshape, Permute, Slice, Select } kind = Kind::Reshape;
  std::vector<int32_t> args;  // Permute / Slice / Select: the arguments between input and output
  std::vector<int64_t> dims;  // the whole cat's dims after the step
  size_t cat_dim = 0;         // after the step
  std::vector<int64_t> lens;  // each part's length along cat_dim after the step
};
// A tensor the rewrite makes: `out`, the cat after `steps`, reshaped when its dims differ.
struct PushedEnd {
  std::vector<PushedStep> steps;
  int32_t out;
};

// The cat dim after reshaping `from` (cat dim c, part lengths *lens) to `to` when the reshape keeps
// each part one block along one dim: the dims before c multiply as before, and c is kept or split
// into (c', inner) with every part a multiple of inner (the lengths shrink by it). ShuffleNet's
// view [1, 116, H, W] -> [1, 2, 58, H, W] of a cat of two 58-channel parts: c' = 1, lengths 1.
std::optional<size_t> reshape_keeps_parts(const std::vector<int64_t>& from, size_t c, std::vector<int64_t>* lens,
                                          const std::vector<int64_t>& to) {
  const int64_t pre = product(from, 0, c), post = product(from, c + 1, from.size());
  for (size_t c2 = 0; c2 < to.size(); ++c2) {
    if (product(to, 0, c2) != pre || to[c2] < 1 || from[c] % to[c2] != 0) continue;
    const int64_t inner = from[c] / to[c2];
    int64_t acc = 1;
    size_t k = c2 + 1;
    while (k < to.size() && acc < inner) acc *= to[k++];
    if (acc != inner || product(to, k, to.size()) != post) continue;
    if (!std::all_of(lens->begin(), lens->end(), [&](int64_t l) { return l % inner == 0; })) continue;
    for (int64_t& l : *lens) l /= inner;
    return c2;
  }
  return std::nullopt;
}

}  // namespace

size_t push_layouts_into_cats(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes) {
  if (!static_shapes) return 0;
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  std::vector<std::vector<format::VkOpCall>> replacement(n);
  using Kind = PushedStep::Kind;
  size_t pushed = 0;
  for (size_t i = 0; i < n; ++i) {
    const format::VkOpCall& cat = ir.chain[i];
    if (cat.name != "aten.cat.default" || cat.args.size() != 3 || !ix.tensor(cat.args[2]) ||
        ir.values[cat.args[0]].kind != VkValueKind::ValueList || !float_tensor(ir, cat.args[2]))
      continue;
    const std::vector<int32_t> parts = ir.values[cat.args[0]].ids;
    const int32_t out = cat.args[2];
    const auto dtype = ix.dtype(out);
    std::vector<int64_t> D = ix.dims(out);
    const auto dim = static_int(ir, cat.args[1]);
    const int64_t rank = static_cast<int64_t>(D.size());
    if (parts.size() < 2 || parts.size() > kMaxFusedInputs || rank > 8 || !dim || *dim < -rank || *dim >= rank) continue;
    size_t c = static_cast<size_t>(*dim < 0 ? *dim + rank : *dim);
    std::vector<int64_t> lens;
    bool ok = true;
    int64_t total = 0;
    for (int32_t p : parts) {
      ok = ok && ix.tensor(p) && ix.dtype(p) == dtype && ix.dims(p).size() == D.size();
      if (!ok) break;
      std::vector<int64_t> pd = ix.dims(p);
      lens.push_back(pd[c]);
      total += pd[c];
      pd[c] = D[c];
      ok = pd == D && lens.back() > 0;
    }
    if (!ok || total != D[c] || numel(D) <= 0) continue;

    // Walk the calls after the cat while each reads the last one's output alone.
    std::vector<PushedStep> steps;
    std::vector<PushedEnd> ends;
    std::vector<size_t> calls;
    bool moves = false;
    int32_t t = out;
    size_t at = i;
    // A split of `src` (the cat's values at dims D, reshaped to `to`) into pieces along a dim of
    // `to` that is a run of D's dims whose outer one is not the cat dim: a slice of that outer dim
    // per piece, each boundary a multiple of the run's inner size.
    auto split_ends = [&](const format::VkOpCall& split, const std::vector<int64_t> to) {
      // Copies: new values are appended below.
      const format::VkValue sizes = ir.values[split.args[1]];
      const auto sd = static_int(ir, split.args[2]);
      const int64_t r = static_cast<int64_t>(to.size());
      if (sizes.kind != VkValueKind::IntList || !sd || *sd < -r || *sd >= r ||
          ir.values[split.args[3]].kind != VkValueKind::ValueList)
        return false;
      const size_t k = static_cast<size_t>(*sd < 0 ? *sd + r : *sd);
      const std::vector<int32_t> pieces = ir.values[split.args[3]].ids;
      if (pieces.size() != sizes.ints.size()) return false;
      int64_t sum = 0;
      for (size_t p = 0; p < pieces.size(); ++p) {
        if (ix.aliased(pieces[p])) return false;
        std::vector<int64_t> want = to;
        want[k] = sizes.ints[p];
        if (!ix.tensor(pieces[p]) || ix.dims(pieces[p]) != want || ix.dtype(pieces[p]) != dtype || sizes.ints[p] < 0) return false;
        sum += sizes.ints[p];
      }
      if (sum != to[k]) return false;
      for (size_t a = 0; a < D.size(); ++a) {
        if (a == c || D[a] < 2 || product(D, 0, a) != product(to, 0, k)) continue;
        size_t b = a;
        while (b + 1 < D.size() && product(D, a, b + 1) < to[k]) ++b;
        if (product(D, a, b + 1) != to[k]) continue;
        const int64_t inner = product(D, a + 1, b + 1);
        if (!std::all_of(sizes.ints.begin(), sizes.ints.end(), [&](int64_t s) { return s % inner == 0; })) continue;
        int64_t start = 0;
        for (size_t p = 0; p < pieces.size(); ++p) {
          const int64_t len = sizes.ints[p] / inner;
          if (ix.mentions(pieces[p]).size() > 1 || ix.pinned(pieces[p])) {  // an unread piece is not made
            PushedStep s;
            s.kind = Kind::Slice;
            s.args = {add_int(ir, static_cast<int64_t>(a)), add_int(ir, start), add_int(ir, start + len), add_int(ir, 1)};
            s.dims = D;
            s.dims[a] = len;
            s.cat_dim = c;
            s.lens = lens;
            PushedEnd e{steps, pieces[p]};
            e.steps.push_back(std::move(s));
            ends.push_back(std::move(e));
          }
          start += len;
        }
        return true;
      }
      return false;
    };
    auto is_split = [&](const format::VkOpCall& call) {
      return call.name == "aten.split_with_sizes_copy.default" && call.args.size() == 4;
    };
    for (;;) {
      const size_t r = ix.sole_reader(t, at);
      if (r == UseDef::npos) break;
      const format::VkOpCall& call = ir.chain[r];
      if (call.args.empty() || call.args[0] != t) break;
      if (is_split(call)) {
        if (split_ends(call, D)) calls.push_back(r), moves = true;
        break;
      }
      const int32_t o = call.args.back();
      if (!ix.tensor(o) || ix.dtype(o) != dtype || ix.dims(o).size() > 8) break;
      const auto v = view_through(ir, call, contiguous_view(D));
      if (!v || v->dims != ix.dims(o)) break;
      PushedStep s;
      std::vector<int64_t> l2 = lens;
      if (is_contiguous_view(ir, call)) {
        const auto c2 = reshape_keeps_parts(D, c, &l2, ix.dims(o));
        if (!c2) {
          // A reshape that merges the cat dim: the cat is made at D and reshaped, or split after.
          const size_t r2 = ix.sole_reader(o, r);
          if (r2 != UseDef::npos && is_split(ir.chain[r2]) && ir.chain[r2].args[0] == o && !ix.aliased(o) &&
              split_ends(ir.chain[r2], ix.dims(o))) {
            calls.push_back(r), calls.push_back(r2), moves = true;
          } else if (!steps.empty()) {
            calls.push_back(r);
            ends.push_back({steps, o});
          }
          break;
        }
        s.kind = Kind::Reshape;
        c = *c2;
      } else if (call.name == "aten.permute_copy.default" || call.name == "aten.permute.default") {
        const auto p = normalized(ir.values[call.args[1]].ints, D.size());
        if (p.empty()) break;
        s.kind = Kind::Permute;
        s.args = {call.args[1]};
        c = static_cast<size_t>(std::find(p.begin(), p.end(), static_cast<int64_t>(c)) - p.begin());
      } else if (call.name == "aten.slice_copy.Tensor" || call.name == "aten.select_copy.int") {
        const auto k = static_int(ir, call.args[1]);
        const int64_t r1 = static_cast<int64_t>(D.size());
        const size_t kk = static_cast<size_t>(*k < 0 ? *k + r1 : *k);  // valid: view_through took it
        if (kk == c) break;
        const bool slice = call.name == "aten.slice_copy.Tensor";
        s.kind = slice ? Kind::Slice : Kind::Select;
        s.args.assign(call.args.begin() + 1, call.args.end() - 1);
        if (!slice && kk < c) --c;
      } else {
        break;
      }
      moves = moves || s.kind != Kind::Reshape;
      s.dims = ix.dims(o);
      s.cat_dim = c;
      s.lens = l2;
      lens = std::move(l2);
      D = s.dims;
      steps.push_back(std::move(s));
      calls.push_back(r);
      t = o;
      at = r;
    }
    if (ends.empty() && !steps.empty() && calls.size() == steps.size()) ends.push_back({steps, t});
    if (ends.empty() || !moves || calls.empty()) continue;
    const size_t last = calls.back();
    bool legal = true;
    for (int32_t p : parts) legal = legal && ix.unchanged_between(p, i, last);
    for (const PushedEnd& e : ends) legal = legal && !ix.aliased(e.out);
    if (!legal) continue;

    // Per end: each part through the steps, then the cat, then the end's own dims.
    std::vector<format::VkOpCall> made;
    auto call = [&](const char* name, std::vector<int32_t> args) {
      format::VkOpCall c2;
      c2.node_id = ir.chain[last].node_id;
      c2.name = name;
      c2.args = std::move(args);
      made.push_back(std::move(c2));
    };
    for (const PushedEnd& e : ends) {
      std::vector<int32_t> q;
      for (size_t j = 0; j < parts.size(); ++j) {
        int32_t cur = parts[j];
        for (const PushedStep& s : e.steps) {
          std::vector<int64_t> pd = s.dims;
          pd[s.cat_dim] = s.lens[j];
          const int32_t o = add_tensor(ir, dtype, pd);
          switch (s.kind) {
            case Kind::Reshape: call("aten.view_copy.default", {cur, add_int_list(ir, pd), o}); break;
            case Kind::Permute: call("aten.permute_copy.default", {cur, s.args[0], o}); break;
            case Kind::Slice: call("aten.slice_copy.Tensor", {cur, s.args[0], s.args[1], s.args[2], s.args[3], o}); break;
            case Kind::Select: call("aten.select_copy.int", {cur, s.args[0], s.args[1], o}); break;
          }
          cur = o;
        }
        q.push_back(cur);
      }
      const PushedStep& fin = e.steps.back();
      const bool same = ir.values[e.out].tensor.dims == fin.dims;
      const int32_t z = same ? e.out : add_tensor(ir, dtype, fin.dims);
      call("aten.cat.default", {add_value_list(ir, q), add_int(ir, static_cast<int64_t>(fin.cat_dim)), z});
      if (!same) call("aten.view_copy.default", {z, add_int_list(ir, ir.values[e.out].tensor.dims), e.out});
    }
    removed[i] = true;
    for (size_t k : calls) removed[k] = true;
    replacement[last] = std::move(made);
    ++pushed;
  }
  if (!pushed) return 0;
  std::vector<format::VkOpCall> chain;
  for (size_t i = 0; i < n; ++i) {
    if (!replacement[i].empty())
      for (auto& c : replacement[i]) chain.push_back(std::move(c));
    else if (!removed[i])
      chain.push_back(std::move(ir.chain[i]));
  }
  ir.chain = std::move(chain);
  return pushed;
}

}  // namespace etwebgpu::graph

namespace etwebgpu::graph {

size_t reuse_cat_prefixes(format::VkGraphIR& ir, const UseDef& ix) {
  struct CatCall {
    size_t at;
    int32_t out;
    size_t dim;
    std::vector<int32_t> parts;
  };
  // Well-formed cats, by chain position: parts and output of one dtype and rank, sizes adding up.
  std::vector<CatCall> cats;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    const format::VkOpCall& c = ir.chain[i];
    if (c.name != "aten.cat.default" || c.args.size() != 3 || !ix.tensor(c.args[2]) ||
        ir.values[c.args[0]].kind != VkValueKind::ValueList)
      continue;
    const int32_t out = c.args[2];
    const std::vector<int64_t>& od = ix.dims(out);
    const int64_t r = static_cast<int64_t>(od.size());
    const auto dim = static_int(ir, c.args[1]);
    if (!dim || *dim < -r || *dim >= r) continue;
    const size_t d = static_cast<size_t>(*dim < 0 ? *dim + r : *dim);
    bool ok = true;
    int64_t total = 0;
    for (int32_t p : ir.values[c.args[0]].ids) {
      if (!ix.tensor(p) || ix.dtype(p) != ix.dtype(out) || ix.dims(p).size() != od.size()) {
        ok = false;
        break;
      }
      std::vector<int64_t> pd = ix.dims(p);
      total += pd[d];
      pd[d] = od[d];
      ok = ok && pd == od;
    }
    if (ok && total == od[d]) cats.push_back({i, out, d, ir.values[c.args[0]].ids});
  }
  size_t reused = 0;
  for (size_t b = 0; b < cats.size(); ++b) {
    CatCall& later = cats[b];
    // The earlier cat with the most parts that appear in a row in this one.
    size_t best = cats.size(), best_at = 0;
    for (size_t a = 0; a < b; ++a) {
      const CatCall& x = cats[a];
      if (x.dim != later.dim || x.parts.size() < 2 || x.parts.size() > later.parts.size() ||
          ix.dtype(x.out) != ix.dtype(later.out) || ix.dims(x.out).size() != ix.dims(later.out).size() ||
          (best < cats.size() && x.parts.size() <= cats[best].parts.size()))
        continue;
      const auto run = std::search(later.parts.begin(), later.parts.end(), x.parts.begin(), x.parts.end());
      if (run == later.parts.end()) continue;
      bool steady = ix.unchanged_between(x.out, x.at, later.at);
      for (int32_t p : x.parts) steady = steady && ix.unchanged_between(p, x.at, later.at);
      if (!steady) continue;
      best = a;
      best_at = static_cast<size_t>(run - later.parts.begin());
    }
    if (best == cats.size()) continue;
    const CatCall& x = cats[best];
    std::vector<int32_t> parts(later.parts.begin(), later.parts.begin() + static_cast<std::ptrdiff_t>(best_at));
    parts.push_back(x.out);
    parts.insert(parts.end(), later.parts.begin() + static_cast<std::ptrdiff_t>(best_at + x.parts.size()), later.parts.end());
    ir.chain[later.at].args[0] = add_value_list(ir, parts);
    ++reused;
  }
  return reused;
}

}  // namespace etwebgpu::graph

namespace etwebgpu::graph {

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
  int32_t out = c.args[5];
  if (ir.values[out].kind == VkValueKind::ValueList) {
    const auto ids = ir.values[out].ids;
    if (ids.empty()) return none;
    for (size_t k = 1; k < ids.size(); ++k)
      if (ix.tensor(ids[k]) && !ix.unused(ids[k])) return none;
    out = ids[0];
  }
  return ix.tensor(out) ? std::make_pair(x, out) : none;
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
        const auto perm = normalized(ir.values[c.args[1]].ints, static_cast<size_t>(rank));
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
  if (!moved) return 0;
  std::vector<format::VkOpCall> chain;
  for (size_t i = 0; i < n; ++i) {
    if (!replacement[i].empty())
      for (auto& c : replacement[i]) chain.push_back(std::move(c));
    else if (!removed[i])
      chain.push_back(std::move(ir.chain[i]));
  }
  ir.chain = std::move(chain);
  return moved;
}

}  // namespace etwebgpu::graph
