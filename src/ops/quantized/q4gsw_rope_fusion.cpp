// The load rewrite that takes a Llama attention's rotary embeddings into its q/k/v projection
// (q4gsw_gemv_rows.h RopeOut). The projection pass made
//   [q, k, v] = multi-output linear(x);  [q_rot, k_rot] = et_vk.apply_rotary_emb(view(q), view(k), cos, sin)
// (linear_q4gsw_multi, or the 8da4w linear choosing its own parameters); the views split the
// outputs into heads [..., H, D]. Both become one `*_multi_rope` call at the linear's place
// storing q_rot and k_rot itself: a decode step loses one dispatch per layer (on the GEMM routes
// the rotation stays a kernel of its own, as before).
//
// Taken where q and k are read only by their view chains (each view read once) into the rotation,
// nothing but those chains reads them, cos and sin exist at the linear's place (the rotation's
// tables [S, D/2] of the head dim the views give), every width is even and q_rot / k_rot are the
// linear's outputs split into heads.
#include <algorithm>
#include <set>
#include <vector>

#include "graph/rewrite_pipeline.h"
#include "graph/fusion.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

// A multi-output linear that can rotate: its name, the argument holding its widths, and the name
// of the call that rotates.
struct Family {
  const char* name;
  size_t widths;
  const char* rotated;
};
constexpr Family kFamilies[] = {{"etwebgpu.linear_q4gsw_multi", 4, "etwebgpu.linear_q4gsw_multi_rope"},
                                {"etwebgpu.linear_dq8ca_q4gsw_qparams_multi", 15, "etwebgpu.linear_dq8ca_q4gsw_qparams_multi_rope"}};

// Tensor t as aten.slice_copy.Tensor(table, 0, start, end, 1) of a 2-D float table, unchanged up to
// `at`, whose bounds (Int or SymInt) are known there (a SymInt's producer comes before `at`):
// call npos when it is not one.
struct RowSlice {
  size_t call = graph::UseDef::npos;
  int32_t table = -1, start = -1, end = -1;
};
// One SymInt, or Ints of one value.
bool same_int(const format::VkGraphIR& ir, int32_t a, int32_t b) {
  return a == b || (ir.values[a].kind == VkValueKind::Int && ir.values[b].kind == VkValueKind::Int &&
                    ir.values[a].int_val == ir.values[b].int_val);
}
RowSlice row_slice(const format::VkGraphIR& ir, const graph::UseDef& ix, int32_t t, size_t at) {
  const size_t p = ix.producer(t);
  if (p == graph::UseDef::npos) return {};
  const auto& c = ir.chain[p];
  if (c.name != "aten.slice_copy.Tensor" || c.args.size() != 6 || c.args.back() != t) return {};
  const int32_t table = c.args[0];
  auto bound = [&](int32_t v) {
    const auto kind = ir.values[v].kind;
    if (kind == VkValueKind::Int) return true;
    if (kind != VkValueKind::SymInt) return false;
    for (size_t i = at; i < ir.chain.size(); ++i)  // written at or after `at`: not known there
      if (ir.chain[i].args.back() == v) return false;
    return true;
  };
  const auto& dim = ir.values[c.args[1]];
  const auto& step = ir.values[c.args[4]];
  const bool ok = graph::float_tensor(ir, table) && ir.values[table].tensor.dims.size() == 2 &&
                  ir.values[table].tensor.dtype == ir.values[t].tensor.dtype && dim.kind == VkValueKind::Int &&
                  (dim.int_val == 0 || dim.int_val == -2) && step.kind == VkValueKind::Int && step.int_val == 1 &&
                  bound(c.args[2]) && bound(c.args[3]) && ix.unchanged_between(table, std::min(p, at), std::max(p, at)) &&
                  ir.values[table].tensor.dims[1] == ir.values[t].tensor.dims[1];
  return ok ? RowSlice{p, table, c.args[2], c.args[3]} : RowSlice{};
}

size_t fold_rope_into_projections(Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  std::vector<size_t> slices;  // the tables' slices read in place
  size_t fused = 0;
  for (size_t r = 0; r < n; ++r) {
    const auto& rot = ir.chain[r];
    if (rot.name != "et_vk.apply_rotary_emb.default" || rot.args.size() != 5 || ir.values[rot.args[4]].kind != VkValueKind::ValueList ||
        ir.values[rot.args[4]].ids.size() != 2)
      continue;
    const int32_t fc = rot.args[2], fs = rot.args[3];
    if (!graph::float_tensor(ir, fc) || !graph::float_tensor(ir, fs) || ir.values[fc].tensor.dims.size() != 2 ||
        ir.values[fs].tensor.dims != ir.values[fc].tensor.dims)
      continue;
    const int64_t D = 2 * ir.values[fc].tensor.dims[1];
    // Each of xq and xk back through its views (each read once, by the next) to the linear's output.
    std::vector<size_t> views;
    int32_t src[2] = {-1, -1};
    bool ok = true;
    for (int i = 0; i < 2 && ok; ++i) {
      int32_t t = rot.args[i];
      size_t reader = r;
      for (;;) {
        if (!graph::float_tensor(ir, t) || ix.sole_reader(t) != reader) {
          ok = false;
          break;
        }
        const size_t p = ix.producer(t);
        const auto& c = ir.chain[p];
        if (c.name != "aten.view_copy.default" || c.args.size() != 3 || c.args.back() != t) {
          src[i] = t;
          break;
        }
        views.push_back(p);
        reader = p;
        t = c.args[0];
      }
    }
    if (!ok) continue;
    // The call writing both: the multi-output linear (checked below to list them as q and k).
    const size_t m = ix.producer(src[0]);
    if (m != ix.producer(src[1]) || removed[m]) continue;
    const auto& lin = ir.chain[m];
    const Family* fam = nullptr;
    for (const Family& f : kFamilies)
      if (lin.name == f.name) fam = &f;
    if (!fam || lin.args.size() != fam->widths + 2 || ir.values[lin.args.back()].kind != VkValueKind::ValueList) continue;
    const auto outs = ir.values[lin.args.back()].ids;
    const auto& wv = ir.values[lin.args[fam->widths]];
    if (wv.kind != VkValueKind::IntList || wv.ints.size() != outs.size() || outs.size() < 2 || outs[0] != src[0] || outs[1] != src[1])
      continue;
    const int32_t rq = ir.values[rot.args[4]].ids[0], rk = ir.values[rot.args[4]].ids[1];
    for (size_t i = 0; i < wv.ints.size() && ok; ++i) ok = wv.ints[i] % 2 == 0;
    // q_rot and k_rot: the outputs [..., W] split into heads [..., W / D, D].
    for (int i = 0; i < 2 && ok; ++i) {
      const int32_t rt = i ? rk : rq;
      const auto& w = ir.values[outs[i]].tensor.dims;
      const auto& d = ir.values[rt].tensor.dims;
      ok = graph::float_tensor(ir, rt) && ir.values[rt].tensor.dtype == ir.values[outs[i]].tensor.dtype && D >= 2 && !w.empty() &&
           d.size() == w.size() + 1 && d.back() == D && w.back() % D == 0 && d.end()[-2] * D == w.back() &&
           std::equal(w.begin(), w.end() - 1, d.begin());
    }
    // The tables exist at the linear's place: no call from there to the rotation writes them.
    for (int32_t t : {fc, fs}) ok = ok && ix.unchanged_between(t, m, r);
    if (!ok) continue;
    // Tables that are one slice of dim 0 of two others (ExecuTorch's Llama: the chunk's rows of
    // freqs_cos and freqs_sin, position_windows' slices) are read in place, at the slice's rows.
    const RowSlice sc = row_slice(ir, ix, fc, m), ss = row_slice(ir, ix, fs, m);
    const bool sliced = sc.call != graph::UseDef::npos && ss.call != graph::UseDef::npos && same_int(ir, sc.start, ss.start) &&
                        same_int(ir, sc.end, ss.end);
    format::VkOpCall call;
    call.node_id = lin.node_id;
    call.name = fam->rotated;
    call.args.assign(lin.args.begin(), lin.args.begin() + fam->widths + 1);
    call.args.push_back(sliced ? sc.table : fc);
    call.args.push_back(sliced ? ss.table : fs);
    call.args.push_back(sliced ? sc.start : graph::add_null(ir));
    call.args.push_back(sliced ? sc.end : graph::add_null(ir));
    if (sliced) {
      slices.push_back(sc.call);
      slices.push_back(ss.call);
    }
    std::vector<int32_t> all = outs;
    all.push_back(rq);
    all.push_back(rk);
    call.args.push_back(graph::add_value_list(ir, all));
    // q_rot and k_rot are now written at the linear's place, earlier than the export planned:
    // storage of their own, not a memory object they may share with tensors live in between.
    for (int32_t t : {rq, rk}) ir.values[t].tensor.mem_obj_id = -1;
    ir.chain[m] = std::move(call);
    removed[r] = true;
    for (size_t v : views) removed[v] = true;
    ++fused;
  }
  // A slice every reader of which now reads its table in place goes.
  for (size_t s : slices) {
    const auto& rd = ix.readers(ir.chain[s].args.back());
    removed[s] = std::all_of(rd.begin(), rd.end(), [&](size_t c) { return removed[c]; });
  }
  if (fused) graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_LOAD_REWRITE(fold_rope_into_projections, Rotary);

}  // namespace
}  // namespace etwebgpu::ops
