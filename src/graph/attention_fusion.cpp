#include "graph/attention_fusion.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/constant_folding.h"
#include "graph/layout_view.h"

namespace etwebgpu::graph {
namespace {

using format::VkDType;
using format::VkOpCall;
using format::VkValueKind;
using Dims = std::vector<int64_t>;

// One match attempt over the chain: the calls it would remove, and what it found.
struct Match {
  std::vector<size_t> taken;  // chain indices of the pattern's calls
  int32_t q = -1, k = -1, v = -1, mask = -1, out = -1;
  double scale = 1.0;
  bool zero_masked = false;
  std::vector<int64_t> layout;  // empty: contiguous q, k, v, out (see kFusedAttentionOp)
};

// Elements of a base tensor seen through layout calls (graph/layout_view.h): element
// (i_0, ..., i_n) is base element offset + sum i_k * strides[k].
using Strided = format::VkExprView;

class Matcher {
 public:
  explicit Matcher(const UseDef& ix) : ix_(ix), ir_(ix.ir()) {}

  // The attention whose second bmm is chain[j], or nullopt.
  // `strided`: also absorb the layout calls around q, k, v and the output (static shapes only).
  std::optional<Match> match(size_t j, bool strided) {
    m_ = Match{};
    strided_ = strided;
    if (!find(j)) return std::nullopt;
    // Every value a removed call produces is read only by removed calls (the output excepted).
    // Strided walks may meet a call twice (q, k and v sliced from one permute).
    std::set<size_t> set(m_.taken.begin(), m_.taken.end());
    if (strided_) m_.taken.assign(set.begin(), set.end());
    if (set.size() != m_.taken.size()) return std::nullopt;
    for (size_t t : m_.taken) {
      bool inside = true;  // every tensor of the output (each piece of a split)
      ix_.each_tensor(ir_.chain[t].args.back(), [&](int32_t o) { inside = inside && (o == m_.out || ix_.internal(o, m_.taken)); });
      if (!inside) return std::nullopt;
    }
    return m_;
  }

 private:
  VkValueKind kind(int32_t id) const { return ir_.values[id].kind; }
  const Dims& dims(int32_t id) const { return ir_.values[id].tensor.dims; }
  bool is_float(int32_t id) const {
    if (kind(id) != VkValueKind::Tensor) return false;
    auto t = ir_.values[id].tensor.dtype;
    return t == VkDType::Float32 || t == VkDType::Float16;
  }
  // The call producing tensor `id`, when it is named `name` and has `nargs` arguments.
  const VkOpCall* made_by(int32_t id, const char* name, size_t nargs) const { return ix_.made_by(id, name, nargs); }
  // A value only the pattern reads: produced in the chain, `n` consumers, not pinned.
  bool inner(int32_t id, size_t n = 1) const {
    return passable(id) && ix_.readers(id).size() == n;
  }
  void take(int32_t id) { m_.taken.push_back(ix_.producer(id)); }
  std::optional<double> number(int32_t id) const {
    const auto& v = ir_.values[id];
    if (v.kind == VkValueKind::Int) return static_cast<double>(v.int_val);
    if (v.kind == VkValueKind::Double) return v.double_val;
    return std::nullopt;
  }
  bool boolean(int32_t id, bool want) const {
    const auto& v = ir_.values[id];
    return v.kind == VkValueKind::Bool && v.bool_val == want;
  }
  // Whether the call producing `id` keeps the elements in order (a reshape of a contiguous
  // tensor) with a static shape.
  const VkOpCall* view_of(int32_t id) const {
    if (auto* c = made_by(id, "aten.view_copy.default", 3)) return kind(c->args[1]) == VkValueKind::IntList ? c : nullptr;
    if (auto* c = made_by(id, "aten.squeeze_copy.dims", 3)) return c;
    if (auto* c = made_by(id, "aten.unsqueeze_copy.default", 3)) return c;
    if (auto* c = made_by(id, "aten.clone.default", 3)) return kind(c->args[1]) == VkValueKind::Null ? c : nullptr;
    return nullptr;
  }
  // Takes the reshape (or, with `scale`, the mul.Scalar whose factor it multiplies in) that
  // produces `id` and moves `id` to its input; false when `id` is made otherwise.
  bool step(int32_t& id, double* scale) {
    if (const VkOpCall* c = view_of(id)) {
      take(id);
      id = c->args[0];
      return true;
    }
    int32_t x = -1;
    std::optional<double> f = scaled(id, x);
    if (!scale || !f) return false;
    take(id);
    *scale *= *f;
    id = x;
    return true;
  }
  // When `id` is x * f (mul.Scalar, or mul.Tensor by a one-element constant, either side) with a
  // float x of the same dims: f, and x in `x`.
  std::optional<double> scaled(int32_t id, int32_t& x) const {
    if (const VkOpCall* c = made_by(id, "aten.mul.Scalar", 3)) {
      x = c->args[0];
      return is_float(x) ? number(c->args[1]) : std::nullopt;
    }
    const VkOpCall* c = made_by(id, "aten.mul.Tensor", 3);
    if (!c) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      int32_t a = c->args[side], f = c->args[1 - side];
      std::optional<double> v = scalar_constant(ir_, f);
      if (v && is_float(a) && dims(a) == dims(id)) {
        x = a;
        return v;
      }
    }
    return std::nullopt;
  }
  // Walks back from `id` through single-consumer reshapes (and, with `scale`, mul.Scalar
  // factors) to the first value made otherwise.
  int32_t skip(int32_t id, double* scale = nullptr) {
    while (inner(id) && step(id, scale)) {
    }
    return id;
  }
  // all(s == -inf, dim=-1, keepdim=True) spelled logical_not(any(logical_not(eq(s, -inf)))).
  bool all_masked(int32_t z, int32_t s) {
    const VkOpCall* n1 = inner(z) ? made_by(z, "aten.logical_not.default", 2) : nullptr;
    if (!n1) return false;
    take(z);
    int32_t a = n1->args[0];
    const VkOpCall* any = inner(a) ? made_by(a, "aten.any.dim", 4) : nullptr;
    if (!any) return false;
    take(a);
    std::optional<double> dim = number(any->args[1]);
    int64_t r = static_cast<int64_t>(dims(s).size());
    if (!dim || (*dim != -1 && *dim != r - 1) || !boolean(any->args[2], true)) return false;
    int32_t n = any->args[0];
    const VkOpCall* n2 = inner(n) ? made_by(n, "aten.logical_not.default", 2) : nullptr;
    if (!n2) return false;
    take(n);
    int32_t e = n2->args[0];
    const VkOpCall* eq = inner(e) ? made_by(e, "aten.eq.Scalar", 3) : nullptr;
    if (!eq) return false;
    take(e);
    std::optional<double> c = number(eq->args[1]);
    return eq->args[0] == s && c && std::isinf(*c) && *c < 0;
  }
  // The mask broadcasts to the scores' dims (right-aligned, each dim 1 or equal).
  bool broadcasts(int32_t mask, const Dims& to) const {
    const Dims& d = dims(mask);
    if (d.size() > to.size()) return false;
    for (size_t i = 0; i < d.size(); ++i) {
      int64_t a = d[d.size() - 1 - i], b = to[to.size() - 1 - i];
      if (a != 1 && a != b) return false;
    }
    return true;
  }

  bool find(size_t j) {
    const VkOpCall& b2 = ir_.chain[j];
    if (b2.name != "aten.bmm.default" || b2.args.size() != 3) return false;
    int32_t a = b2.args[0], vm = b2.args[1], o3 = b2.args[2];
    if (!is_float(a) || !is_float(vm) || !is_float(o3)) return false;
    const Dims& da = dims(a);   // [B*H, S_q, S_kv]
    const Dims& dvm = dims(vm); // [B*H, S_kv, D_v]
    if (da.size() != 3 || dvm.size() != 3 || da[0] != dvm[0] || da[2] != dvm[1]) return false;
    m_.taken.push_back(j);
    Strided out_view;
    if (strided_ ? !output_layout(o3, out_view) : !output_4d(o3, da, dvm)) return false;
    // Probabilities: softmax(s, -1), or where(all(s == -inf), 0, softmax(s)) (safe softmax).
    int32_t p = skip(a);
    int32_t s_consumers = 1;
    if (const VkOpCall* w = inner(p) ? made_by(p, "aten.where.self", 4) : nullptr) {
      take(p);
      int32_t z = w->args[0], zeros = skip(w->args[1]);
      p = skip(w->args[2]);
      const VkOpCall* fl = inner(zeros) ? made_by(zeros, "aten.full_like.default", 8) : nullptr;
      std::optional<double> fill = fl ? number(fl->args[1]) : std::nullopt;
      if (!fl || fl->args[0] != p || !fill || *fill != 0.0 || !inner(p, 2)) return false;
      take(zeros);
      m_.zero_masked = true;
      s_consumers = 2;
      const VkOpCall* sm = made_by(p, "aten._softmax.default", 4);
      if (!sm || !all_masked(z, sm->args[0])) return false;
    } else if (!inner(p)) {
      return false;
    }
    const VkOpCall* sm = made_by(p, "aten._softmax.default", 4);
    if (!sm || !boolean(sm->args[2], false)) return false;
    take(p);
    int32_t s = sm->args[0];
    const Dims& ds = dims(s);  // [B, H, S_q, S_kv]
    std::optional<double> dim = number(sm->args[1]);
    if (!dim || (*dim != -1 && *dim != 3) || ds.size() != 4 || ds[0] * ds[1] != da[0] || ds[2] != da[1] ||
        ds[3] != da[2] || dims(p) != ds || !inner(s, s_consumers))
      return false;
    // Scores: bmm(q, k^T) * scale [+ mask], maybe through contiguous clones of their own shape
    // (timm's Swin writes one before its softmax).
    int32_t x = s;
    if (s_consumers == 1)
      while (const VkOpCall* c = made_by(x, "aten.clone.default", 3)) {
        if (kind(c->args[1]) != VkValueKind::Null || dims(c->args[0]) != ds || !inner(c->args[0])) break;
        take(x);
        x = c->args[0];
      }
    if (const VkOpCall* add = made_by(x, "aten.add.Tensor", 4)) {
      std::optional<double> alpha = number(add->args[2]);
      int32_t mask = add->args[1];
      if (!alpha || *alpha != 1.0 || !is_float(mask) || !broadcasts(mask, ds) || dims(add->args[0]) != ds) return false;
      take(x);
      m_.mask = mask;
      x = add->args[0];
      if (!inner(x)) return false;
    } else if (!step(x, &m_.scale)) {  // s itself has the all-masked check as a second consumer
      return false;
    }
    int32_t y = skip(x, &m_.scale);
    const VkOpCall* b1 = inner(y) ? made_by(y, "aten.bmm.default", 3) : nullptr;
    if (!b1) return false;
    take(y);
    int32_t qm = b1->args[0], ktm = b1->args[1];
    const Dims& dq = dims(qm);   // [B*H, S_q, D]
    const Dims& dkt = dims(ktm); // [B*H, D, S_kv]
    if (dq.size() != 3 || dkt.size() != 3 || dq[0] != da[0] || dq[1] != da[1] || dkt[0] != da[0] || dkt[1] != dq[2] ||
        dkt[2] != da[2])
      return false;
    if (strided_) return strided_inputs(qm, ktm, vm, out_view, ds[0], ds[1]);
    m_.q = skip(qm, &m_.scale);
    if (dims(m_.q) != Dims{ds[0], ds[1], da[1], dq[2]} || !is_float(m_.q)) return false;
    // k^T: a permute of the last two dims of [B, H, S_kv, D].
    int32_t kt = skip(ktm, &m_.scale);
    const VkOpCall* perm = inner(kt) ? made_by(kt, "aten.permute_copy.default", 3) : nullptr;
    if (!perm || kind(perm->args[1]) != VkValueKind::IntList || ir_.values[perm->args[1]].ints != Dims{0, 1, 3, 2})
      return false;
    take(kt);
    int32_t kin = perm->args[0];
    int64_t hk = 0, hv = 0;
    if (!kv(kin, Dims{da[0], da[2], dq[2]}, m_.k, hk) || !kv(vm, dvm, m_.v, hv)) return false;
    int64_t B = ds[0], H = ds[1];
    if (hk != hv || hk <= 0 || H % hk || dims(m_.k)[0] != B || dims(m_.v)[0] != B) return false;
    return is_float(m_.out);
  }
  // The second bmm's output, reshaped to [B, H, S_q, D_v] by its only consumer: the fused output.
  bool output_4d(int32_t o3, const Dims& da, const Dims& dvm) {
    if (!inner(o3)) return false;
    const VkOpCall& ov = ir_.chain[ix_.readers(o3)[0]];
    if (ov.args.empty() || ov.args[0] != o3 || view_of(ov.args.back()) != &ov) return false;
    m_.out = ov.args.back();
    const Dims& dout = dims(m_.out);
    if (dout.size() != 4 || dout[0] * dout[1] != da[0] || dout[2] != da[1] || dout[3] != dvm[2]) return false;
    take(m_.out);
    return true;
  }

  // --- Strided mode: layout calls absorbed into the fused call's fixed layout.
  // A value a layout walk may pass: produced in the chain and not pinned; its consumers are
  // checked by match() once the whole pattern is known.
  bool passable(int32_t id) const {
    return ix_.producer(id) != UseDef::npos && !ix_.pinned(id);
  }
  // The permutation of a permute_copy call over `rank` dims, or nullopt.
  std::optional<Dims> permutation(const VkOpCall& c, size_t rank) const {
    if (kind(c.args[1]) != VkValueKind::IntList) return std::nullopt;
    Dims p = ir_.values[c.args[1]].ints;
    if (p.size() != rank) return std::nullopt;
    std::vector<bool> seen(rank, false);
    for (auto& x : p) {
      if (x < 0) x += static_cast<int64_t>(rank);
      if (x < 0 || x >= static_cast<int64_t>(rank) || seen[x]) return std::nullopt;
      seen[x] = true;
    }
    return p;
  }
  std::optional<int64_t> int_or(int32_t id, int64_t absent) const {
    if (kind(id) == VkValueKind::Null) return absent;
    std::optional<double> v = number(id);
    if (!v || *v != std::floor(*v) || std::fabs(*v) > 4.6e18) return std::nullopt;
    return static_cast<int64_t>(*v);
  }
  // `s`, the view of call c's first argument, becomes the view of its output: a reshape, a
  // permute, a slice, a select, or a multiplication by a constant (which moves no element).
  bool apply(const VkOpCall& c, int32_t out_id, Strided& s) const {
    const Dims& out = dims(out_id);
    int64_t r = static_cast<int64_t>(s.dims.size());
    auto axis = [&](int32_t id, int64_t rank) -> std::optional<int64_t> {
      std::optional<int64_t> d = int_or(id, -1 - rank);
      if (!d) return std::nullopt;
      int64_t x = *d < 0 ? *d + rank : *d;
      return x >= 0 && x < rank ? std::optional<int64_t>(x) : std::nullopt;
    };
    if (c.name == "aten.permute_copy.default") {
      std::optional<Dims> p = permutation(c, s.dims.size());
      if (!p) return false;
      Strided t;
      t.offset = s.offset;
      for (int64_t d : *p) t.dims.push_back(s.dims[d]), t.strides.push_back(s.strides[d]);
      s = t;
    } else if (c.name == "aten.slice_copy.Tensor" && c.args.size() == 6) {
      std::optional<int64_t> d = axis(c.args[1], r), start = int_or(c.args[2], 0), step = int_or(c.args[4], 1);
      if (!d || !start || !step || *step < 1 || out.size() != s.dims.size()) return false;
      if (out[*d] <= 1) step = 1;                  // the step moves to no second element
      else if (*step > s.dims[*d]) return false;  // it could not give two elements
      int64_t st = std::clamp<int64_t>(*start, -s.dims[*d], s.dims[*d]);
      st = st < 0 ? st + s.dims[*d] : st;
      if (out[*d] > 0 && st + (out[*d] - 1) * *step >= s.dims[*d]) return false;
      s.offset += st * s.strides[*d];
      s.strides[*d] *= *step;
      s.dims[*d] = out[*d];
    } else if (c.name == "aten.split_with_sizes_copy.default" && c.args.size() == 4) {
      // Piece k of the split: a slice at the sizes before it.
      std::optional<int64_t> d = axis(c.args[2], r);
      const auto& pieces = ir_.values[c.args[3]].ids;
      auto k = std::find(pieces.begin(), pieces.end(), out_id);
      if (!d || kind(c.args[1]) != VkValueKind::IntList || k == pieces.end() || out.size() != s.dims.size()) return false;
      const Dims& sizes = ir_.values[c.args[1]].ints;
      const size_t at = static_cast<size_t>(k - pieces.begin());
      if (sizes.size() != pieces.size()) return false;
      int64_t start = 0;
      for (size_t i = 0; i < at; ++i) start += sizes[i];
      if (sizes[at] != out[*d] || start + sizes[at] > s.dims[*d]) return false;
      s.offset += start * s.strides[*d];
      s.dims[*d] = out[*d];
    } else if (c.name == "aten.select_copy.int" && c.args.size() == 4) {
      std::optional<int64_t> d = axis(c.args[1], r), i = int_or(c.args[2], 0);
      if (!d || !i) return false;
      if (*i < -s.dims[*d] || *i >= s.dims[*d]) return false;
      int64_t k = *i < 0 ? *i + s.dims[*d] : *i;
      s.offset += k * s.strides[*d];
      s.dims.erase(s.dims.begin() + *d);
      s.strides.erase(s.strides.begin() + *d);
    } else if (c.name != "aten.mul.Scalar" && c.name != "aten.mul.Tensor") {
      if (!reshape_view(s, out)) return false;
    }
    return s.dims == out;
  }
  // Walks back from `id` through layout calls (and scalings, into the scale) to the tensor they
  // start from, `base`, and gives `id`'s elements as a view of it.
  bool resolve(int32_t id, int32_t& base, Strided& view) {
    std::vector<std::pair<const VkOpCall*, int32_t>> calls;  // each with the output the walk came through
    while (passable(id)) {
      const VkOpCall* c = view_of(id);
      int32_t next = c ? c->args[0] : -1;
      if (!c) {
        for (const char* name : {"aten.permute_copy.default", "aten.slice_copy.Tensor", "aten.select_copy.int",
                                 "aten.split_with_sizes_copy.default"}) {
          const VkOpCall& p = ir_.chain[ix_.producer(id)];
          if (p.name == name && p.args.size() >= 3) c = &p, next = p.args[0];
        }
      }
      if (!c) {
        std::optional<double> f = scaled(id, next);
        if (!f) break;
        m_.scale *= *f;
        c = &ir_.chain[ix_.producer(id)];
      }
      if (!is_float(next)) return false;
      take(id);
      calls.emplace_back(c, id);
      id = next;
    }
    base = id;
    if (!is_float(base)) return false;
    view = contiguous_view(dims(base));
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
      const Strided before = view;
      if (apply(*it->first, it->second, view)) continue;
      // Only copies of the same shape may follow the merge that failed (a clone before the bmm).
      const Dims& merged = dims(it->second);
      for (auto later = std::next(it); later != calls.rend(); ++later)
        if (dims(later->second) != merged || dims(later->first->args.front()) != merged) return false;
      return unmerged(before, merged, view);
    }
    return true;
  }
  // A last reshape of [B, H, S, D] to [B*H, S, D] whose B and H strides do not merge (Swin's
  // windows and heads, both sliced out of one qkv projection): the view stays 4-D, which the
  // fused layout holds as it is (a batch and a head stride).
  static bool unmerged(const Strided& four, const Dims& three, Strided& view) {
    if (four.dims.size() != 4 || three.size() != 3 || four.dims[0] * four.dims[1] != three[0] ||
        four.dims[2] != three[1] || four.dims[3] != three[2])
      return false;
    view = four;
    return true;
  }
  // Walks forward from the second bmm's output through its only consumers while they are reshapes
  // or permutes; the last value reached is the fused output, and `view` says where in it the bmm's
  // [B*H, S_q, D_v] elements land.
  bool output_layout(int32_t o3, Strided& view) {
    std::vector<const VkOpCall*> after;
    int32_t f = o3;
    while (!ix_.pinned(f) && ix_.readers(f).size() == 1) {
      const VkOpCall& c = ir_.chain[ix_.readers(f)[0]];
      int32_t o = c.args.back();
      if (c.args[0] != f || kind(o) != VkValueKind::Tensor || !is_float(o)) break;
      if (view_of(o) != &c && made_by(o, "aten.permute_copy.default", 3) != &c) break;
      take(o);
      after.push_back(&c);
      f = o;
    }
    m_.out = f;
    view = contiguous_view(dims(f));
    for (auto it = after.rbegin(); it != after.rend(); ++it) {
      const VkOpCall& c = **it;
      const Dims& in = dims(c.args[0]);
      if (c.name == "aten.permute_copy.default") {
        std::optional<Dims> p = permutation(c, in.size());
        if (!p || view.dims.size() != in.size()) return false;
        Strided t = view;
        for (size_t i = 0; i < p->size(); ++i) t.dims[(*p)[i]] = view.dims[i], t.strides[(*p)[i]] = view.strides[i];
        view = t;
      } else if (const Strided before = view; !reshape_view(view, in)) {
        return std::next(it) == after.rend() && unmerged(before, in, view);
      }
      if (view.dims != in) return false;
    }
    return true;
  }
  // q [B*H, S_q, D], k^T [B*H, D, S_kv] and v [B*H, S_kv, D_v] as the bmms read them, each a view
  // of the tensor its layout calls start from, with unit stride along D: the fused layout.
  bool strided_inputs(int32_t qm, int32_t ktm, int32_t vm, Strided out, int64_t B, int64_t H) {
    Strided q, k, v;
    if (!resolve(qm, m_.q, q) || !resolve(ktm, m_.k, k) || !resolve(vm, m_.v, v)) return false;
    // Repeated k/v heads (GQA) are the contiguous mode's: it reads the cache once per group.
    for (int32_t x : {m_.k, m_.v})
      if (made_by(x, "aten.expand_copy.default", 4)) return false;
    // Each as [B, H, rows, D] (a 3-D view's first stride splits into batch and head strides).
    for (Strided* x : std::array<Strided*, 4>{&q, &k, &v, &out}) {
      if (x->dims.size() == 3) {
        if (x->dims[0] != B * H) return false;
        x->dims = {B, H, x->dims[1], x->dims[2]};
        x->strides = {x->strides[0] * H, x->strides[0], x->strides[1], x->strides[2]};
      }
      if (x->dims.size() != 4 || x->dims[0] != B || x->dims[1] != H) return false;
    }
    std::swap(k.dims[2], k.dims[3]);
    std::swap(k.strides[2], k.strides[3]);
    m_.layout = {B, H, H, q.dims[2], k.dims[2], q.dims[3], v.dims[3]};
    for (const Strided* x : std::array<const Strided*, 4>{&q, &k, &v, &out}) {
      if (x->dims[3] > 1 && x->strides[3] != 1) return false;
      for (int64_t e : {x->offset, x->strides[0], x->strides[1], x->strides[2]}) {
        if (e < 0) return false;
        m_.layout.push_back(e);
      }
    }
    return is_float(m_.out);
  }

  // K or V as the bmm reads it, `flat` = [B*H, S_kv, D], from tensor `t` holding it in order
  // ([B*H, S_kv, D] or [B, H, S_kv, D]), back to the cache [B, Hkv, S_kv, D]: directly (Hkv = H)
  // or repeated per kv head by unsqueeze(2) -> expand -> view (repeat_kv). Sets `src`, `hkv`.
  bool kv(int32_t t, const Dims& flat, int32_t& src, int64_t& hkv) {
    const Dims& d = dims(t);
    bool ok = d == flat || (d.size() == 4 && d[0] * d[1] == flat[0] && d[2] == flat[1] && d[3] == flat[2]);
    if (!ok) return false;
    int32_t x = skip(t);
    if (const VkOpCall* e = inner(x) ? made_by(x, "aten.expand_copy.default", 4) : nullptr) {
      const Dims& xe = dims(x);  // [B, Hkv, G, S_kv, D]
      if (xe.size() != 5 || xe[0] * xe[1] * xe[2] != flat[0] || xe[3] != flat[1] || xe[4] != flat[2]) return false;
      take(x);
      int32_t in = e->args[0];
      if (dims(in) != Dims{xe[0], xe[1], 1, xe[3], xe[4]}) return false;
      src = skip(in);
      if (dims(src) != Dims{xe[0], xe[1], xe[3], xe[4]}) return false;
      hkv = xe[1];
      return is_float(src);
    }
    src = x;
    const Dims& s = dims(src);
    if (s.size() != 4 || s[0] * s[1] != flat[0] || s[2] != flat[1] || s[3] != flat[2]) return false;
    hkv = s[1];
    return is_float(src);
  }

  const UseDef& ix_;
  const format::VkGraphIR& ir_;
  Match m_;
  bool strided_ = false;
};

}  // namespace

AttentionFusionStats fuse_attention(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes) {
  AttentionFusionStats stats;
  const size_t n = ir.chain.size();
  Matcher matcher(ix);
  std::vector<bool> removed(n, false);
  std::vector<std::optional<VkOpCall>> replacement(n);
  for (size_t j = 0; j < n; ++j) {
    std::optional<Match> m = static_shapes ? matcher.match(j, true) : std::nullopt;
    if (!m) m = matcher.match(j, false);
    if (!m) continue;
    if (std::any_of(m->taken.begin(), m->taken.end(), [&](size_t t) { return removed[t]; })) continue;
    std::set<size_t> taken(m->taken.begin(), m->taken.end());
    size_t last = *taken.rbegin();
    // The fused call reads q, k, v and the mask at the last removed call's place, later than the
    // pattern did; the output must not share an input's storage.
    std::vector<int32_t> inputs{m->q, m->k, m->v};
    if (m->mask >= 0) inputs.push_back(m->mask);
    bool safe = ix.reads_unchanged(taken, inputs);
    for (int32_t e : inputs) safe = safe && !ix.share_memory(m->out, e);
    if (!safe) continue;
    auto add_value = [&](format::VkValue v) {
      ir.values.push_back(std::move(v));
      return static_cast<int32_t>(ir.values.size() - 1);
    };
    format::VkValue null_v, scale_v, zero_v, layout_v;
    layout_v.kind = VkValueKind::IntList;
    layout_v.ints = m->layout;
    scale_v.kind = VkValueKind::Double;
    scale_v.double_val = m->scale;
    zero_v.kind = VkValueKind::Bool;
    zero_v.bool_val = m->zero_masked;
    VkOpCall call;
    call.node_id = ir.chain[last].node_id;
    call.name = kFusedAttentionOp;
    call.args = {m->q, m->k, m->v, m->mask >= 0 ? m->mask : add_value(null_v), add_value(scale_v), add_value(zero_v),
                 m->layout.empty() ? add_value(null_v) : add_value(layout_v), m->out};
    for (size_t t : taken) removed[t] = true;
    replacement[last] = std::move(call);
    ++stats.fused;
    stats.calls_removed += taken.size() - 1;
  }
  if (!stats.fused) return stats;
  std::vector<VkOpCall> chain;
  chain.reserve(n - stats.calls_removed);
  for (size_t i = 0; i < n; ++i) {
    if (replacement[i]) chain.push_back(std::move(*replacement[i]));
    else if (!removed[i]) chain.push_back(std::move(ir.chain[i]));
  }
  ir.chain = std::move(chain);
  return stats;
}

}  // namespace etwebgpu::graph
