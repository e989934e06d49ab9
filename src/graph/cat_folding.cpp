#include "graph/cat_folding.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"
#include "graph/layout_trace.h"
#include "graph/layout_view.h"
#include "graph/memory_plan.h"

using etwebgpu::format::VkValueKind;

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
        const auto p = normalized_permutation(ir.values[call.args[1]].ints, D.size());
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
  if (pushed) splice_calls(ir, removed, replacement);
  return pushed;
}

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

size_t fold_channel_shuffles(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes) {
  if (!static_shapes) return 0;
  // Layout calls followed after the cat: ShuffleNet's view, permute, (clone,) view.
  constexpr size_t kMaxLayoutCalls = 5;
  std::vector<bool> removed(ir.chain.size(), false);
  int32_t next_mem = unused_memory_object(ir);
  size_t folded = 0;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    const format::VkOpCall& cat = ir.chain[i];
    if (cat.name != "aten.cat.default" || cat.args.size() != 3 || ir.values[cat.args[0]].kind != VkValueKind::ValueList ||
        !ix.tensor(cat.args[2]) || !float_tensor(ir, cat.args[2]))
      continue;
    const std::vector<int32_t> parts = ir.values[cat.args[0]].ids;
    const int32_t whole = cat.args[2];
    const std::vector<int64_t>& D = ix.dims(whole);
    const auto dim = static_int(ir, cat.args[1]);
    const int64_t rank = static_cast<int64_t>(D.size());
    if (parts.size() != 2 || rank < 2 || !dim || (*dim != 1 && *dim != 1 - rank)) continue;
    if (!ix.tensor(parts[0]) || !ix.tensor(parts[1]) || ix.dims(parts[0]) != ix.dims(parts[1]) ||
        ix.dtype(parts[0]) != ix.dtype(whole) || ix.dtype(parts[1]) != ix.dtype(whole) || ix.dims(parts[0])[1] * 2 != D[1])
      continue;
    // The layout calls after the cat up to the first tensor of the cat's dims holding the interleave.
    const int64_t N = D[0], C = D[1] / 2, R = numel(D) / (N * 2 * C);
    std::vector<const format::VkOpCall*> calls;
    std::vector<size_t> at;
    int32_t v = whole, shuffled = -1;
    size_t from = i;
    while (calls.size() < kMaxLayoutCalls) {
      const size_t r = ix.sole_reader(v, from);
      if (r == UseDef::npos || !is_traceable_layout(ir, ir.chain[r]) || ir.chain[r].args.front() != v) break;
      calls.push_back(&ir.chain[r]);
      at.push_back(r);
      v = ir.chain[r].args.back();
      from = r;
      if (!ix.tensor(v) || ix.dtype(v) != ix.dtype(whole)) break;
      if (ix.dims(v) != D) continue;
      const auto src = trace_layouts(ir, whole, calls);
      bool interleaved = src && static_cast<int64_t>(src->size()) == numel(D);
      for (int64_t n = 0; interleaved && n < N; ++n)
        for (int64_t k = 0; interleaved && k < 2 * C; ++k)
          for (int64_t p = 0; interleaved && p < R; ++p)
            interleaved = (*src)[static_cast<size_t>((n * 2 * C + k) * R + p)] == (n * 2 * C + (k % 2) * C + k / 2) * R + p;
      if (interleaved && ix.producer(v) == r) {
        shuffled = v;
        break;
      }
    }
    if (shuffled < 0) continue;
    // A split of it along dim 1 into two pieces, which the call then writes.
    std::vector<int32_t> outs{shuffled};
    if (const size_t r = ix.sole_reader(shuffled, at.back()); r != UseDef::npos) {
      const format::VkOpCall& split = ir.chain[r];
      const bool is_split = (split.name == "aten.split_with_sizes_copy.default" || split.name == "aten.split_copy.Tensor") &&
                            split.args.size() == 4 && split.args[0] == shuffled &&
                            ir.values[split.args[3]].kind == VkValueKind::ValueList;
      const auto sdim = is_split ? static_int(ir, split.args[2]) : std::nullopt;
      if (sdim && (*sdim == 1 || *sdim == 1 - rank) && ir.values[split.args[3]].ids.size() == 2) {
        std::vector<int32_t> pieces = ir.values[split.args[3]].ids;
        int64_t channels = 0;
        bool fits = true;
        for (int32_t q : pieces) {
          fits = fits && ix.tensor(q) && ix.producer(q) == r && ix.dtype(q) == ix.dtype(whole) &&
                 ix.dims(q).size() == D.size();
          if (!fits) break;
          std::vector<int64_t> qd = ix.dims(q);
          channels += qd[1];
          qd[1] = D[1];
          fits = qd == D && ix.dims(q)[1] > 0;
        }
        if (fits && channels == D[1]) {
          outs = pieces;
          at.push_back(r);
        }
      }
    }
    for (int32_t o : outs) own_storage(ir, o, next_mem);  // written at the cat's place now
    format::VkOpCall& call = ir.chain[i];
    call.name = kChannelShuffle;
    call.args = {call.args[0], add_value_list(ir, outs)};
    for (size_t r : at) removed[r] = true;
    ++folded;
  }
  if (folded) drop_calls(ir, removed);
  return folded;
}

}  // namespace etwebgpu::graph

