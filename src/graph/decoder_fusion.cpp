#include "graph/decoder_fusion.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "graph/constant_folding.h"
#include "graph/fusion.h"

namespace etwebgpu::graph {

namespace {

using format::VkDType;
using format::VkValueKind;

// float32 / float16 tensors (the kernels the patterns become take those).
bool floating(const UseDef& ix, int32_t t) {
  return ix.tensor(t) && (ix.dtype(t) == VkDType::Float32 || ix.dtype(t) == VkDType::Float16);
}

std::optional<double> number(const format::VkGraphIR& ir, int32_t v) {
  if (v < 0 || static_cast<size_t>(v) >= ir.values.size()) return std::nullopt;
  const auto& x = ir.values[v];
  if (x.kind == VkValueKind::Int) return static_cast<double>(x.int_val);
  if (x.kind == VkValueKind::Double) return x.double_val;
  return std::nullopt;
}

bool alpha_one(const format::VkGraphIR& ir, int32_t v) {
  if (v >= 0 && static_cast<size_t>(v) < ir.values.size() && ir.values[v].kind == VkValueKind::Null) return true;
  auto a = number(ir, v);
  return a && *a == 1.0;
}

// An IntList / Int naming only the last dim of a rank-r tensor.
bool last_dim(const format::VkGraphIR& ir, int32_t v, size_t r) {
  if (v < 0 || static_cast<size_t>(v) >= ir.values.size()) return false;
  const auto& x = ir.values[v];
  int64_t d;
  if (x.kind == VkValueKind::IntList && x.ints.size() == 1) d = x.ints[0];
  else if (x.kind == VkValueKind::Int) d = x.int_val;
  else return false;
  return r > 0 && (d == -1 || d == static_cast<int64_t>(r) - 1);
}

struct Rewrite {
  std::set<size_t> members;
  std::vector<int32_t> inputs;  // tensors read from outside the pattern
  format::VkOpCall call;        // replaces the last member
};

int32_t add_value(format::VkGraphIR& ir, format::VkValue v) {
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

// mean.dim at chain position i, the middle of an RMSNorm.
std::optional<Rewrite> match_rms_norm(format::VkGraphIR& ir, const UseDef& ix, size_t i) {
  const auto& mean = ir.chain[i];
  if (mean.name != "aten.mean.dim" || mean.args.size() != 5) return std::nullopt;
  int32_t sq = mean.args[0], m = mean.args[4];
  const auto* square = ix.made_by(sq, "aten.mul.Tensor", 3);
  if (!square || square->args[0] != square->args[1]) return std::nullopt;
  int32_t x = square->args[0];
  if (!floating(ix, x) || ix.dims(x).empty() || ix.dims(sq) != ix.dims(x) || ix.dtype(sq) != ix.dtype(x)) return std::nullopt;
  size_t rank = ix.dims(x).size();
  const auto& keep = ir.values[mean.args[2]];
  if (!last_dim(ir, mean.args[1], rank) || keep.kind != VkValueKind::Bool || !keep.bool_val ||
      ir.values[mean.args[3]].kind != VkValueKind::Null)
    return std::nullopt;

  size_t k = ix.sole_reader(m);
  if (k == UseDef::npos) return std::nullopt;
  const auto& add = ir.chain[k];
  std::optional<double> eps;
  if (add.name == "aten.add.Tensor" && add.args.size() == 4 && alpha_one(ir, add.args[2])) {
    int32_t other = add.args[0] == m ? add.args[1] : add.args[1] == m ? add.args[0] : -1;
    if (other != m) eps = scalar_constant(ir, other);
  } else if (add.name == "aten.add.Scalar" && add.args.size() == 4 && add.args[0] == m && alpha_one(ir, add.args[2])) {
    eps = number(ir, add.args[1]);
  }
  if (!eps) return std::nullopt;
  int32_t v = add.args.back();
  size_t k2 = ix.sole_reader(v);
  if (k2 == UseDef::npos || ir.chain[k2].name != "aten.rsqrt.default" || ir.chain[k2].args.size() != 2) return std::nullopt;
  int32_t r = ir.chain[k2].args[1];
  size_t k3 = ix.sole_reader(r);
  if (k3 == UseDef::npos) return std::nullopt;
  const auto& scale = ir.chain[k3];
  if (scale.name != "aten.mul.Tensor" || scale.args.size() != 3) return std::nullopt;
  if (!((scale.args[0] == x && scale.args[1] == r) || (scale.args[0] == r && scale.args[1] == x))) return std::nullopt;
  int32_t y = scale.args[2];
  if (ix.dims(y) != ix.dims(x) || ix.dtype(y) != ix.dtype(x)) return std::nullopt;

  Rewrite rw;
  rw.members = {static_cast<size_t>(ix.producer(sq)), i, static_cast<size_t>(k), static_cast<size_t>(k2),
                static_cast<size_t>(k3)};
  rw.inputs = {x};
  int32_t weight = -1, out = y;
  size_t k4 = ix.sole_reader(y);
  if (k4 != UseDef::npos && ir.chain[k4].name == "aten.mul.Tensor" && ir.chain[k4].args.size() == 3) {
    const auto& wm = ir.chain[k4];
    int32_t w = wm.args[0] == y ? wm.args[1] : wm.args[0];
    int64_t len = ix.dims(x).back(), wn = 1;
    bool lead_ones = true;
    if (ix.tensor(w))
      for (size_t d = 0; d < ix.dims(w).size(); ++d) {
        wn *= ix.dims(w)[d];
        if (d + 1 < ix.dims(w).size() && ix.dims(w)[d] != 1) lead_ones = false;
      }
    if (w != y && floating(ix, w) && ix.dtype(w) == ix.dtype(x) && lead_ones && !ix.dims(w).empty() &&
        ix.dims(w).back() == len && wn == len && ix.dims(w).size() <= rank && ix.dims(wm.args[2]) == ix.dims(x) &&
        ix.dtype(wm.args[2]) == ix.dtype(x)) {
      weight = w;
      out = wm.args[2];
      rw.members.insert(static_cast<size_t>(k4));
      rw.inputs.push_back(w);
    }
  }
  rw.call.node_id = ir.chain[*rw.members.rbegin()].node_id;
  rw.call.name = "et_vk.rms_norm.default";
  rw.call.args = {x, weight, -1, out};
  if (!ix.can_replace(rw.members, rw.inputs)) return std::nullopt;
  format::VkValue e;
  e.kind = VkValueKind::Double;
  e.double_val = *eps;
  if (weight < 0) rw.call.args[1] = add_value(ir, format::VkValue{});
  rw.call.args[2] = add_value(ir, e);
  return rw;
}

// One half of an interleaved pair: squeeze(slice(x, -1, k, k + 1), -1) -> (x, k).
std::optional<std::pair<int32_t, int64_t>> half_of(const format::VkGraphIR& ir, const UseDef& ix, int32_t t,
                                                   std::set<size_t>& members) {
  const format::VkOpCall* sq = ix.made_by(t, "aten.squeeze_copy.dims", 3);
  if (!sq) sq = ix.made_by(t, "aten.squeeze_copy.dim", 3);
  if (!sq) return std::nullopt;
  int32_t s = sq->args[0];
  const auto* sl = ix.made_by(s, "aten.slice_copy.Tensor", 6);
  if (!sl || !ix.tensor(s) || !last_dim(ir, sq->args[1], ix.dims(s).size())) return std::nullopt;
  int32_t x = sl->args[0];
  if (!ix.tensor(x) || ix.dims(x).empty() || ix.dims(x).back() != 2 || !last_dim(ir, sl->args[1], ix.dims(x).size()))
    return std::nullopt;
  auto start = number(ir, sl->args[2]), end = number(ir, sl->args[3]), step = number(ir, sl->args[4]);
  if (!start || !end || !step || *step != 1 || (*start != 0 && *start != 1) || *end != *start + 1) return std::nullopt;
  members.insert(static_cast<size_t>(ix.producer(t)));
  members.insert(static_cast<size_t>(ix.producer(s)));
  return std::make_pair(x, static_cast<int64_t>(*start));
}

struct Term {
  int32_t x = -1, table = -1;
  int64_t half = -1;
};

// mul(half, table) in either order.
std::optional<Term> term_of(const format::VkGraphIR& ir, const UseDef& ix, int32_t t, std::set<size_t>& members) {
  const auto* mul = ix.made_by(t, "aten.mul.Tensor", 3);
  if (!mul) return std::nullopt;
  for (int side = 0; side < 2; ++side)
    if (auto h = half_of(ir, ix, mul->args[side], members)) {
      members.insert(static_cast<size_t>(ix.producer(t)));
      return Term{h->first, mul->args[1 - side], h->second};
    }
  return std::nullopt;
}

// The rotated half as a trailing unit dim: unsqueeze(v, -1) -> v.
int32_t unsqueezed(const format::VkGraphIR& ir, const UseDef& ix, int32_t u, std::set<size_t>& members) {
  const auto* us = ix.made_by(u, "aten.unsqueeze_copy.default", 3);
  if (!us || !last_dim(ir, us->args[1], ix.dims(u).size())) return -1;
  members.insert(static_cast<size_t>(ix.producer(u)));
  return us->args[0];
}

// cat at chain position i, the end of an interleaved rotary embedding.
std::optional<Rewrite> match_rope(format::VkGraphIR& ir, const UseDef& ix, size_t i) {
  const auto& cat = ir.chain[i];
  if (cat.name != "aten.cat.default" || cat.args.size() != 3) return std::nullopt;
  int32_t list = cat.args[0], out = cat.args[2];
  if (!ix.tensor(out) || ir.values[list].kind != VkValueKind::ValueList || ir.values[list].ids.size() != 2 ||
      !last_dim(ir, cat.args[1], ix.dims(out).size()))
    return std::nullopt;
  Rewrite rw;
  rw.members.insert(i);
  int32_t re = unsqueezed(ir, ix, ir.values[list].ids[0], rw.members);
  int32_t im = unsqueezed(ir, ix, ir.values[list].ids[1], rw.members);
  const auto* sub = ix.made_by(re, "aten.sub.Tensor", 4);
  const auto* add = ix.made_by(im, "aten.add.Tensor", 4);
  if (!sub || !add || !alpha_one(ir, sub->args[2]) || !alpha_one(ir, add->args[2])) return std::nullopt;
  rw.members.insert(static_cast<size_t>(ix.producer(re)));
  rw.members.insert(static_cast<size_t>(ix.producer(im)));
  auto ac = term_of(ir, ix, sub->args[0], rw.members), bs = term_of(ir, ix, sub->args[1], rw.members);
  auto p = term_of(ir, ix, add->args[0], rw.members), q = term_of(ir, ix, add->args[1], rw.members);
  if (!ac || !bs || !p || !q) return std::nullopt;
  if (p->half == 1) std::swap(p, q);  // a * sin + b * cos in either order
  int32_t x = ac->x, cos = ac->table, sin = bs->table;
  if (ac->half != 0 || bs->half != 1 || p->half != 0 || q->half != 1) return std::nullopt;
  if (bs->x != x || p->x != x || q->x != x || p->table != sin || q->table != cos) return std::nullopt;
  // x [.., S, H, D/2, 2]; the tables broadcast as [.., S, 1, D/2] against a half [.., S, H, D/2].
  const auto& xd = ix.dims(x);
  if (xd.size() < 4 || ix.dims(out) != xd) return std::nullopt;
  for (int32_t t : {x, cos, sin, out})
    if (!floating(ix, t) || ix.dtype(t) != ix.dtype(x)) return std::nullopt;
  std::vector<int64_t> half(xd.begin(), xd.end() - 1);
  for (int32_t t : {cos, sin}) {
    const auto& td = ix.dims(t);
    if (td.size() > half.size()) return std::nullopt;
    std::vector<int64_t> pad(half.size() - td.size(), 1);
    pad.insert(pad.end(), td.begin(), td.end());
    size_t r = pad.size();
    if (pad[r - 1] != half[r - 1] || pad[r - 2] != 1 || pad[r - 3] != half[r - 3]) return std::nullopt;
    for (size_t d = 0; d + 3 < r; ++d)
      if (pad[d] != 1) return std::nullopt;
  }
  rw.inputs = {x, cos, sin};
  rw.call.node_id = cat.node_id;
  rw.call.name = kRopeInterleavedOp;
  rw.call.args = {x, cos, sin, out};
  if (*rw.members.rbegin() != i || !ix.can_replace(rw.members, rw.inputs)) return std::nullopt;
  return rw;
}

}  // namespace

DecoderFusionStats fuse_decoder_patterns(format::VkGraphIR& ir, const UseDef& ix) {
  DecoderFusionStats stats;
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  std::vector<std::optional<format::VkOpCall>> replacement(n);
  for (size_t i = 0; i < n; ++i) {
    std::optional<Rewrite> rw = match_rms_norm(ir, ix, i);
    bool rope = !rw;
    if (rope) rw = match_rope(ir, ix, i);
    if (!rw) continue;
    bool taken = false;  // patterns never overlap in a well-formed chain; refuse if they do
    for (size_t m : rw->members) taken = taken || removed[m];
    if (taken) continue;
    ++(rope ? stats.ropes : stats.rms_norms);
    for (size_t m : rw->members) removed[m] = true;
    // The delegate may have packed the output into an input's memory object (their lives met only
    // through the calls now gone); the memory plan packs it anew, apart from the inputs it reads.
    int32_t out = rw->call.args.back();
    for (int32_t e : rw->inputs)
      if (ix.memory(out) >= 0 && ix.memory(out) == ix.memory(e)) ir.values[out].tensor.mem_obj_id = -1;
    replacement[*rw->members.rbegin()] = std::move(rw->call);
    stats.calls_removed += rw->members.size() - 1;
  }
  if (stats.calls_removed) splice_calls(ir, removed, replacement);
  return stats;
}

}  // namespace etwebgpu::graph
