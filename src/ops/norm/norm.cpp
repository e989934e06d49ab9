// Normalizations and softmax: batch_norm (inference, and with batch statistics), layer_norm, group_norm, rms_norm,
// softmax, log_softmax. Row-wise ops use one workgroup per row (norm_row.wgsl); softmax and
// log_softmax over contiguous rows (inner == 1) whose length divides by 4 take the vec4 kernel
// softmax_row_vec4.wgsl instead (online max/sum, one read pass + one write pass), chosen per run
// from live shapes. Softmax (where vec4 does not take the row), layer_norm and rms_norm over
// contiguous rows of at most 1024 take norm_row_lanes.wgsl (32 lanes per row, the row in
// registers); the norms' long rows, when few, norm_row_split.wgsl. force_route "softmax" = "vec4"
// | "lanes" | "general" and "norm" = "lanes" | "workgroup" | "split" pin them.
#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>

#include "graph/fusion.h"
#include "graph/layout_view.h"
#include "graph/rewrite_pipeline.h"
#include "ops/norm/input_norm.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

constexpr const char* kSelectRmsNorm = "etwebgpu.rms_norm_select";

enum RowMode : uint32_t { kSoftmax = 0, kLogSoftmax = 1, kLayerNorm = 2, kRmsNorm = 3, kGroupNorm = 4 };

// Longest row norm_row_lanes.wgsl holds in registers (32 lanes x VMAX values).
constexpr uint32_t kLanesMaxLen = 32 * 32;
// norm_row_split.wgsl: elements per workgroup (its CH), and the row counts below which rows of
// two chunks or more are split (one workgroup a row would leave most of a GPU idle).
constexpr uint32_t kSplitChunk = 4096, kSplitMaxRows = 256;

struct RowParams {
  uint32_t rows = 0, len = 1, inner = 1, groups = 1, hw = 1, cpg = 1;
  float eps = 0.f;
  uint32_t xoff = 0;  // the element of X where row 0 starts (etwebgpu.rms_norm_select)
};
static_assert(sizeof(RowParams) == 32);

struct BatchParams {
  uint32_t numel = 0, inner = 1, channels = 1;
  float eps = 0.f;
};

int64_t prod(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

// Optional per-channel/per-element parameter: float tensor of `expect` elements, or Null.
bool opt_param(OpContext& oc, int32_t id, int64_t expect, const char* what) {
  Graph& g = oc.g;
  if (g.is_null(id)) return false;
  require_dtype(oc, id, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, what);
  if (g.tensor(id).max_numel() != expect)
    oc.fail(ErrorKind::InvalidArgument, std::string(what) + " has shape " + shape_str(g.tensor(id).max_dims) +
                                            ", expected " + std::to_string(expect) + " elements");
  return true;
}

struct RowSetup {
  RowMode mode;
  int32_t x, w = -1, b = -1, out, mean = -1, rstd = -1;
  double eps = 0;
};

// A norm of one slice of x (etwebgpu.rms_norm_select): the element its row 0 starts at and the
// output's dims, per run; empty: every row of x, the output shaped like it.
struct RowSlice {
  std::function<uint32_t(const kernel::Live&)> xoff;
  std::function<std::vector<int64_t>(const kernel::Live&)> out_dims;
};

// Computes the row view (rows, len, inner, groups, hw, cpg) and the stat dims from the live input
// dims; throws when the live input no longer fits the op's arguments.
using RowShape = std::function<RowParams(const std::vector<int64_t>& in, std::vector<int64_t>* stat_dims)>;

void build_row(OpContext& oc, RowSetup s, RowShape shape, RowSlice slice = {}) {
  Graph& g = oc.g;
  bool stats = s.mean >= 0 && s.rstd >= 0;
  struct State {
    RowParams p;
    std::vector<int64_t> sd;
  };
  auto st = std::make_shared<State>();
  oc.prepare([s, st, shape, xoff = slice.xoff](const kernel::Live& l) {
    st->sd.clear();
    st->p = shape(l.dims(s.x), &st->sd);
    st->p.eps = static_cast<float>(s.eps);
    st->p.xoff = xoff ? xoff(l) : 0;
  });
  if (slice.out_dims)
    oc.output(s.out, slice.out_dims);
  else
    oc.output_like(s.out, s.x);
  if (stats) {
    oc.output(s.mean, [st](const kernel::Live&) { return st->sd; });
    oc.output(s.rstd, [st](const kernel::Live&) { return st->sd; });
  }
  // The route a test pins: force_route "softmax" = "vec4" | "lanes" | "general" (the softmax modes),
  // "norm" = "lanes" | "workgroup" | "split" (the norms).
  const bool softmax_mode = s.mode == kSoftmax || s.mode == kLogSoftmax;
  const std::string forced = softmax_mode ? pinned_route(oc, "softmax", {"vec4", "lanes", "general"})
                                          : pinned_route(oc, "norm", {"lanes", "workgroup", "split"});
  std::vector<int64_t> max_sd;
  const RowParams maxp = shape(g.tensor(s.x).max_dims, &max_sd);
  // Softmax over contiguous rows whose length divides by 4: softmax_row_vec4 (vec4 bindings need
  // the buffers to hold a whole vec4 at the maximum shapes).
  bool has_vec4 = false;
  if (softmax_mode) {
    auto holds_vec4 = [&g](int32_t id) {
      uint64_t eb = kernel::element_bytes(g.tensor(id).storage);
      return static_cast<uint64_t>(g.tensor(id).max_numel()) * eb >= 4 * eb;
    };
    has_vec4 = forced != "general" && forced != "lanes" && holds_vec4(s.x) && holds_vec4(s.out);
  }
  // Short contiguous rows of softmax (where vec4 does not take them), layer_norm and rms_norm:
  // norm_row_lanes, VPL values per lane, sized from the row length at the maximum shapes (a live
  // row may only be shorter).
  uint32_t lanes_vpl = 0;
  const bool lanes_mode = softmax_mode || s.mode == kLayerNorm || s.mode == kRmsNorm;
  if (lanes_mode && forced != "workgroup" && forced != "split" && forced != "general" && forced != "vec4" && maxp.len <= kLanesMaxLen)
    lanes_vpl = std::max<uint32_t>(1, (maxp.len + 31) / 32);
  // Long contiguous rows of the norms, fewer than a GPU has cores to give one each:
  // norm_row_split over chunks of kSplitChunk (force_route norm = "split": any contiguous row).
  const bool split_mode = s.mode == kLayerNorm || s.mode == kRmsNorm || s.mode == kGroupNorm;
  const bool split_ok = split_mode && (forced == "split" || (forced.empty() && maxp.len >= 2 * kSplitChunk));
  auto split_run = [st, split_ok, pinned = forced == "split"] {
    return split_ok && st->p.inner == 1 && (pinned || (st->p.len >= 2 * kSplitChunk && st->p.rows < kSplitMaxRows));
  };
  auto vec4_run = [st, has_vec4] { return has_vec4 && st->p.inner == 1 && st->p.len % 4 == 0; };
  auto lanes_run = [st, lanes_vpl, split_run, vec4_run] {
    return lanes_vpl > 0 && st->p.inner == 1 && st->p.len <= 32 * lanes_vpl && !split_run() && !vec4_run();
  };
  auto params = [st](const kernel::Live&) { return st->p; };
  // norm_row, norm_row_lanes and norm_row_split (APPLY) bind the same tensors, constants and stats.
  auto row_kernel = [&](const char* shader) {
    kernel::Kernel k(shader);
    k.constant("MODE", s.mode)
        .constant("HAS_W", s.w >= 0 ? 1.0 : 0.0)
        .constant("HAS_B", s.b >= 0 ? 1.0 : 0.0)
        .input("X", s.x)
        .input("W", s.w)
        .input("B", s.b)
        .output("O", s.out);
    if (stats) k.output("MEAN", s.mean).output("RSTD", s.rstd).define("STATS");
    return k;
  };
  kernel::Kernel k = row_kernel("norm_row");
  // Sums over the workgroup by subgroup (one barrier instead of eight: a decode step's RMSNorm).
  if (use_subgroups(oc, 256)) k.define("SUBGROUPS");
  oc.add(k.params<RowParams>(params)
             .groups([st, vec4_run, lanes_run, split_run](const kernel::Live&) {
               return kernel::Groups::linear(st->p.len == 0 || vec4_run() || lanes_run() || split_run() ? 0 : st->p.rows);
             })
             .variant("row"));
  if (split_ok) {
    const uint64_t max_parts = static_cast<uint64_t>(maxp.rows) * ceil_div(std::max<uint32_t>(maxp.len, 1), kSplitChunk);
    const gpu::Buffer& parts = g.make_scratch(max_parts * 16, "norm partials");
    auto split_groups = [st, split_run](const kernel::Live&) {
      return kernel::Groups::linear(st->p.len == 0 || !split_run() ? 0 : st->p.rows * ceil_div(st->p.len, kSplitChunk));
    };
    for (bool apply : {false, true}) {
      kernel::Kernel sk = apply ? row_kernel("norm_row_split") : kernel::Kernel("norm_row_split");
      if (!apply) sk.constant("MODE", s.mode).input("X", s.x);
      sk.define(apply ? "APPLY" : "PARTIALS").buffer("PART", parts, "vec4<f32>", apply ? kernel::Access::Read : kernel::Access::ReadWrite);
      if (use_subgroups(oc, 256)) sk.define("SUBGROUPS");
      oc.add(sk.params<RowParams>(params).groups(split_groups).variant(apply ? "split_apply" : "split_partials"));
    }
  }
  if (lanes_vpl > 0) {
    kernel::Kernel lk = row_kernel("norm_row_lanes");
    lk.constant("VPL", lanes_vpl);
    oc.add(lk.params<RowParams>(params)
               .groups([st, lanes_run](const kernel::Live&) {
                 return kernel::Groups::linear(st->p.len == 0 || !lanes_run() ? 0 : (st->p.rows + 7) / 8);
               })
               .variant("row_lanes"));
  }
  if (has_vec4)
    oc.add(kernel::Kernel("softmax_row_vec4")
               .constant("MODE", s.mode)
               .input("X", s.x, true)
               .output("O", s.out, true)
               .params<RowParams>(params)
               .groups([st, vec4_run](const kernel::Live&) {
                 return kernel::Groups::linear(st->p.len == 0 || !vec4_run() ? 0 : st->p.rows);
               })
               .variant("row_vec4"));
}

// Items 1 and 2 of a norm's ValueList get mean/rstd when they are float tensors that can hold
// one value per row at the maximum shape.
void stats_targets(OpContext& oc, const std::vector<int32_t>& items, int64_t max_rows, RowSetup& s) {
  Graph& g = oc.g;
  if (items.size() < 3) return;
  for (int k = 1; k < 3; ++k)
    if (!g.is_tensor(items[k]) || !is_float(g.tensor(items[k]).dtype) || g.tensor(items[k]).max_numel() < max_rows ||
        items[k] == items[0])
      return;
  if (items[1] == items[2]) return;
  s.mean = items[1];
  s.rstd = items[2];
}

int32_t first_output(OpContext& oc, size_t n_min) {
  Graph& g = oc.g;
  if (g.kind(oc.out()) != format::VkValueKind::ValueList) return oc.out();
  auto items = g.value_list(oc.out());
  if (items.size() < n_min || !g.is_tensor(items[0])) oc.fail(ErrorKind::InvalidArgument, "output list is malformed");
  return items[0];
}

void require_float_io(OpContext& oc, int32_t x, int32_t out) {
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "output");
}

void build_softmax(OpContext& oc, RowMode mode) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_float_io(oc, x, out);
  int64_t rank = g.tensor(x).rank();
  int64_t dim = norm_dim(oc, g.integer(oc.arg(1)), rank);
  if (g.tensor(out).max_numel() != g.tensor(x).max_numel())
    oc.fail(ErrorKind::InvalidArgument, "output " + shape_str(g.tensor(out).max_dims) + " does not match input " +
                                            shape_str(g.tensor(x).max_dims));
  RowSetup s{mode, x, -1, -1, out};
  build_row(oc, s, [dim](const std::vector<int64_t>& in, std::vector<int64_t>*) {
    RowParams p;
    size_t d = static_cast<size_t>(dim);
    p.len = kernel::u32(in.empty() ? 1 : in[d], "row length");
    p.inner = kernel::u32(prod(in, d + 1, in.size()), "inner size");
    p.rows = kernel::u32(prod(in, 0, d) * p.inner, "row count");
    return p;
  });
}

void build_layer_norm(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = first_output(oc, 1);
  require_float_io(oc, x, out);
  auto ns = g.int_list(oc.arg(1));
  auto& md = g.tensor(x).max_dims;
  if (ns.empty() || ns.size() > md.size())
    oc.fail(ErrorKind::InvalidArgument, "normalized_shape " + shape_str(ns) + " does not fit input " + shape_str(md));
  size_t lead = md.size() - ns.size();
  for (size_t i = 0; i < ns.size(); ++i)
    if (md[lead + i] != ns[i])
      oc.fail(ErrorKind::InvalidArgument, "normalized_shape " + shape_str(ns) + " is not the trailing shape of input " +
                                              shape_str(md));
  int64_t len = numel(ns);
  RowSetup s{kLayerNorm, x, -1, -1, out};
  if (opt_param(oc, oc.arg(2), len, "weight")) s.w = oc.arg(2);
  if (opt_param(oc, oc.arg(3), len, "bias")) s.b = oc.arg(3);
  s.eps = g.number(oc.arg(4));
  if (g.kind(oc.out()) == format::VkValueKind::ValueList)
    stats_targets(oc, g.value_list(oc.out()), prod(md, 0, lead), s);
  build_row(oc, s, [lead, len](const std::vector<int64_t>& in, std::vector<int64_t>* sd) {
    if (in.size() < lead || numel(std::vector<int64_t>(in.begin() + lead, in.end())) != len)
      throw Error(ErrorKind::InvalidArgument, "live input " + shape_str(in) + " changed its normalized dims");
    RowParams p;
    p.len = kernel::u32(len, "row length");
    p.rows = kernel::u32(prod(in, 0, lead), "row count");
    *sd = in;
    for (size_t i = lead; i < sd->size(); ++i) (*sd)[i] = 1;
    return p;
  });
}

// RMSNorm over the last dim of x's rows; with a slice, of the rows of x's slice at selected_dim
// (RowSlice: where it starts and the output's dims).
void rms_norm_rows(OpContext& oc, int32_t x, int32_t weight, double eps, int32_t out, RowSlice slice = {},
                   int64_t selected_dim = -1) {
  Graph& g = oc.g;
  require_float_io(oc, x, out);
  auto& md = g.tensor(x).max_dims;
  if (md.empty()) oc.fail(ErrorKind::InvalidArgument, "input must have at least one dim");
  int64_t len = md.back();
  RowSetup s{kRmsNorm, x, -1, -1, out};
  if (weight >= 0 && opt_param(oc, weight, len, "weight")) s.w = weight;
  s.eps = eps;
  // Without a weight the rows may be shorter at run time (graph/decoder_fusion.h makes such calls).
  build_row(oc, s, [len, weighted = s.w >= 0, selected_dim](const std::vector<int64_t>& in, std::vector<int64_t>*) {
    if (weighted && in.back() != len)
      throw Error(ErrorKind::InvalidArgument, "live last dim " + std::to_string(in.back()) + " differs from the weight's " +
                                                  std::to_string(len));
    const int64_t slices = selected_dim >= 0 ? std::max<int64_t>(in[selected_dim], 1) : 1;
    RowParams p;
    p.len = kernel::u32(in.back(), "row length");
    p.rows = kernel::u32(numel(in) / slices / std::max<int64_t>(in.back(), 1), "row count");
    return p;
  }, std::move(slice));
}

void build_rms_norm(OpContext& oc) {
  rms_norm_rows(oc, oc.arg(0), oc.g.is_null(oc.arg(1)) ? -1 : oc.arg(1), oc.g.number(oc.arg(2)), oc.out());
}

// etwebgpu.rms_norm_deferred [x, weight, eps, out] (input_norm.h): et_vk.rms_norm.default whose one
// reader normalizes inputs of one row itself; this writes out on the other row counts.
void build_rms_norm_deferred(OpContext& oc) {
  const size_t first = oc.node.kernels.size();
  build_rms_norm(oc);
  const int32_t x = oc.arg(0);
  for (size_t k = first; k < oc.node.kernels.size(); ++k) {
    auto& run = oc.node.kernels[k];
    run.when = [x, was = std::move(run.when)](const kernel::Live& l) {
      const auto& d = l.dims(x);
      const int64_t len = d.empty() ? 1 : std::max<int64_t>(d.back(), 1);
      return !input_norm_inline(static_cast<uint64_t>(l.numel(x) / len)) && (!was || was(l));
    };
  }
}

// etwebgpu.rms_norm_select [x, dim, index, weight, eps, out] (made at load by norm_selects below):
// et_vk.rms_norm of aten.select_copy.int(x, dim, index), the selected slice read where it lies in
// x. x's dims before `dim` are 1 and `dim` is not its last, so the slice is whole rows of x from
// element index * (the slice's size) on; out has x's dims without `dim`.
void build_rms_norm_select(OpContext& oc) {
  Graph& g = oc.g;
  const int32_t x = oc.arg(0), index = oc.arg(2), weight = oc.arg(3), out = oc.out();
  const auto& md = g.tensor(x).max_dims;
  const int64_t r = static_cast<int64_t>(md.size());
  if (r < 2) oc.fail(ErrorKind::InvalidArgument, "input " + shape_str(md) + " must have at least two dims");
  const int64_t d = norm_dim(oc, g.integer(oc.arg(1)), r);
  if (d == r - 1) oc.fail(ErrorKind::InvalidArgument, "the selected dim must not be the normalized (last) one");
  for (int64_t i = 0; i < d; ++i)
    if (md[i] != 1)
      oc.fail(ErrorKind::InvalidArgument, "input " + shape_str(md) + ": the dims before the selected dim " + std::to_string(d) +
                                              " must be 1");
  const auto ik = g.kind(index);
  if (ik != format::VkValueKind::Int && ik != format::VkValueKind::SymInt)
    oc.fail(ErrorKind::InvalidArgument, "index must be an Int or a SymInt");
  RowSlice slice;
  slice.xoff = [x, d, index](const kernel::Live& l) {
    const auto& in = l.dims(x);
    return kernel::u32(select_index(l.integer(index), d, in[d]) * prod(in, d + 1, in.size()), "selected slice's offset");
  };
  slice.out_dims = [x, d](const kernel::Live& l) {
    std::vector<int64_t> o = l.dims(x);
    o.erase(o.begin() + d);
    return o;
  };
  // The dims before d are 1: the slice's rows are x's over in[d].
  rms_norm_rows(oc, x, g.is_null(weight) ? -1 : weight, g.number(oc.arg(4)), out, std::move(slice), d);
}

// norm_selects (docs/REWRITES.md): an et_vk.rms_norm whose input only an aten.select_copy.int of x
// writes, and only the norm reads, becomes etwebgpu.rms_norm_select over x: ExecuTorch's Llama
// selects the last position's row before its final norm, one dispatch a decode step. Where x's
// dims before the selected one are 1, the dim is not x's last (static Int), and x holds at the norm
// what it held at the select. After input_norms, which takes the norms a 4-bit GEMV reads.
size_t norm_selects(graph::Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  int32_t next_mem = graph::unused_memory_object(ir);
  size_t fused = 0;
  for (size_t j = 0; j < n; ++j) {
    if (ir.chain[j].name != "et_vk.rms_norm.default" || ir.chain[j].args.size() != 4) continue;
    const int32_t sel_out = ir.chain[j].args[0], out = ir.chain[j].args[3];
    if (!ix.tensor(sel_out) || !ix.tensor(out) || !graph::float_tensor(ir, sel_out)) continue;
    const size_t i = ix.producer(sel_out);
    if (i == graph::UseDef::npos || i >= j || ir.chain[i].name != "aten.select_copy.int" || ir.chain[i].args.size() != 4 ||
        ir.chain[i].args[3] != sel_out)
      continue;
    const format::VkOpCall& sel = ir.chain[i];
    const int32_t x = sel.args[0];
    const auto dim = graph::static_int(ir, sel.args[1]);
    const auto ik = ir.values[sel.args[2]].kind;
    if (!ix.tensor(x) || ix.dtype(x) != ix.dtype(sel_out) || !dim || (ik != format::VkValueKind::Int && ik != format::VkValueKind::SymInt))
      continue;
    const auto& xd = ix.dims(x);
    const int64_t rank = static_cast<int64_t>(xd.size()), d = *dim < 0 ? *dim + rank : *dim;
    if (d < 0 || d >= rank - 1 || !std::all_of(xd.begin(), xd.begin() + d, [](int64_t e) { return e == 1; })) continue;
    if (ix.sole_reader(sel_out, i) != j || !ix.can_replace({i, j}, {x})) continue;
    // The norm writes out while it reads x now: no storage in common.
    if (ix.share_memory(out, x)) graph::own_storage(ir, out, next_mem);
    format::VkOpCall call;
    call.node_id = ir.chain[j].node_id;
    call.name = kSelectRmsNorm;
    call.args = {x, sel.args[1], sel.args[2], ir.chain[j].args[1], ir.chain[j].args[2], out};
    ir.chain[j] = std::move(call);
    removed[i] = true;
    ++fused;
  }
  if (fused) graph::drop_calls(ir, removed);
  return fused;
}

void build_group_norm(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = first_output(oc, 1);
  require_float_io(oc, x, out);
  auto& md = g.tensor(x).max_dims;
  if (md.size() < 2) oc.fail(ErrorKind::InvalidArgument, "input " + shape_str(md) + " must be [N, C, *]");
  int64_t C = md[1], G = g.integer(oc.arg(6));
  if (g.integer(oc.arg(4)) != C)
    oc.fail(ErrorKind::InvalidArgument, "C argument " + std::to_string(g.integer(oc.arg(4))) + " differs from input " +
                                            shape_str(md));
  if (G <= 0 || C % G != 0)
    oc.fail(ErrorKind::InvalidArgument, "group " + std::to_string(G) + " does not divide C " + std::to_string(C));
  RowSetup s{kGroupNorm, x, -1, -1, out};
  if (opt_param(oc, oc.arg(1), C, "weight")) s.w = oc.arg(1);
  if (opt_param(oc, oc.arg(2), C, "bias")) s.b = oc.arg(2);
  s.eps = g.number(oc.arg(7));
  if (g.kind(oc.out()) == format::VkValueKind::ValueList) stats_targets(oc, g.value_list(oc.out()), md[0] * G, s);
  build_row(oc, s, [C, G](const std::vector<int64_t>& in, std::vector<int64_t>* sd) {
    if (in.size() < 2 || in[1] != C) throw Error(ErrorKind::InvalidArgument, "live input " + shape_str(in) + " changed C");
    int64_t hw = prod(in, 2, in.size());
    RowParams p;
    p.groups = kernel::u32(G, "groups");
    p.cpg = kernel::u32(C / G, "channels per group");
    p.hw = kernel::u32(std::max<int64_t>(hw, 1), "spatial size");
    p.len = kernel::u32(C / G * hw, "row length");
    p.rows = kernel::u32(in[0] * G, "row count");
    *sd = {in[0], G};
    return p;
  });
}

struct BatchStatsParams {
  uint32_t channels = 1, inner = 1, batch = 0, pad0 = 0;
  float eps = 0.f, momentum = 0.f;
  uint32_t pad1[2] = {0, 0};
};

// Per-channel normalization kernel: out = (x - mean[c]) * scale[c] (* w + b), where scale is
// 1 / sqrt(var + eps) from a variance tensor, or the tensor itself when `invstd` (batch stats).
void add_batch_apply(OpContext& oc, int32_t x, int32_t out, int32_t w, int32_t b, int32_t mean, int32_t scale, bool invstd,
                     int64_t C, double eps) {
  oc.output_like(out, x);
  oc.add(kernel::Kernel("norm_batch")
             .constant("HAS_W", w >= 0 ? 1.0 : 0.0)
             .constant("HAS_B", b >= 0 ? 1.0 : 0.0)
             .constant("INVSTD", invstd ? 1.0 : 0.0)
             .input("X", x)
             .input("W", w)
             .input("B", b)
             .input("MEAN", mean)
             .input("VAR", scale)
             .output("O", out)
             .params<BatchParams>([x, C, eps](const kernel::Live& l) {
               const auto& in = l.dims(x);
               return BatchParams{kernel::u32(l.numel(x), "element count"), kernel::u32(prod(in, 2, in.size()), "inner size"),
                                  kernel::u32(C, "channels"), static_cast<float>(eps)};
             })
             .flat(out));
}

// The live input must keep its C (weights and stats are per channel).
void check_channels(const kernel::Live& l, int32_t x, int64_t C) {
  const auto& in = l.dims(x);
  if (in.size() < 2 || in[1] != C) throw Error(ErrorKind::InvalidArgument, "live input " + shape_str(in) + " changed C");
}

// [N, C, ...] float input of rank 2 to 5; returns C.
int64_t batch_channels(OpContext& oc, int32_t x, int32_t out) {
  require_float_io(oc, x, out);
  auto& md = oc.g.tensor(x).max_dims;
  if (md.size() < 2 || md.size() > 5)
    oc.fail(ErrorKind::Unsupported, "input " + shape_str(md) + ": rank must be 2 to 5 ([N, C, ...])");
  return md[1];
}

// Inference batch norm: [x, w?, b?, running_mean, running_var, momentum, eps, outs].
void build_batch_norm(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = first_output(oc, 1);
  int64_t C = batch_channels(oc, x, out);
  bool has_w = opt_param(oc, oc.arg(1), C, "weight");
  bool has_b = opt_param(oc, oc.arg(2), C, "bias");
  for (int k : {3, 4}) {
    if (g.is_null(oc.arg(k))) oc.fail(ErrorKind::Unsupported, k == 3 ? "running_mean is required" : "running_var is required");
    opt_param(oc, oc.arg(k), C, k == 3 ? "running_mean" : "running_var");
  }
  oc.prepare([x, C](const kernel::Live& l) { check_channels(l, x, C); });
  add_batch_apply(oc, x, out, has_w ? oc.arg(1) : -1, has_b ? oc.arg(2) : -1, oc.arg(3), oc.arg(4), false, C,
                  g.number(oc.arg(6)));
}

// _native_batch_norm_legit: [x, w?, b?, running_mean, running_var, training, momentum, eps,
// ValueList(out, save_mean, save_invstd)]; .no_stats: the same without the running stats.
// training: statistics of the batch (mean and biased variance over every dim but 1, one workgroup
// per channel), saved as save_mean and save_invstd = 1 / sqrt(var + eps); running stats, when
// given, become (1 - momentum) * running + momentum * batch stat (unbiased variance), as ATen.
// Not training: the running stats normalize and save_mean / save_invstd are empty, as ATen.
void build_batch_norm_legit(OpContext& oc, bool with_running) {
  Graph& g = oc.g;
  const int a = with_running ? 2 : 0;  // offset of training/momentum/eps
  auto outs = g.value_list(oc.out());
  if (outs.size() != 3) oc.fail(ErrorKind::InvalidArgument, "expects 3 outputs (out, save_mean, save_invstd), got " + std::to_string(outs.size()));
  int32_t x = oc.arg(0), out = outs[0], save_mean = outs[1], save_invstd = outs[2];
  int64_t C = batch_channels(oc, x, out);
  int32_t w = opt_param(oc, oc.arg(1), C, "weight") ? oc.arg(1) : -1;
  int32_t b = opt_param(oc, oc.arg(2), C, "bias") ? oc.arg(2) : -1;
  int32_t rm = -1, rv = -1;
  if (with_running) {
    rm = opt_param(oc, oc.arg(3), C, "running_mean") ? oc.arg(3) : -1;
    rv = opt_param(oc, oc.arg(4), C, "running_var") ? oc.arg(4) : -1;
    if ((rm < 0) != (rv < 0)) oc.fail(ErrorKind::InvalidArgument, "running_mean and running_var must both be given or both be None");
  }
  bool training = g.boolean(oc.arg(3 + a));
  double momentum = g.number(oc.arg(4 + a)), eps = g.number(oc.arg(5 + a));
  for (int32_t t : {save_mean, save_invstd}) require_dtype(oc, t, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "save_mean/save_invstd");
  if (!training) {
    if (rm < 0) oc.fail(ErrorKind::InvalidArgument, "evaluation mode (training=False) needs running_mean and running_var");
    oc.prepare([x, C](const kernel::Live& l) { check_channels(l, x, C); });
    add_batch_apply(oc, x, out, w, b, rm, rv, false, C, eps);
    for (int32_t t : {save_mean, save_invstd}) oc.output(t, [](const kernel::Live&) { return std::vector<int64_t>{0}; });
    return;
  }
  for (int32_t t : {save_mean, save_invstd})
    if (g.tensor(t).max_numel() < C)
      oc.fail(ErrorKind::InvalidArgument, "save_mean/save_invstd " + shape_str(g.tensor(t).max_dims) + " hold fewer than C = " + std::to_string(C));
  oc.prepare([x, C](const kernel::Live& l) { check_channels(l, x, C); });
  for (int32_t t : {save_mean, save_invstd}) oc.output(t, [C](const kernel::Live&) { return std::vector<int64_t>{C}; });
  kernel::Kernel k("norm_batch_stats");
  k.input("X", x).output("SAVE_MEAN", save_mean).output("SAVE_INVSTD", save_invstd);
  if (rm >= 0) k.output("RUN_MEAN", rm).output("RUN_VAR", rv).define("UPDATE");
  oc.add(k.params<BatchStatsParams>([x, C, eps, momentum](const kernel::Live& l) {
            const auto& in = l.dims(x);
            BatchStatsParams p;
            p.channels = kernel::u32(C, "channels");
            p.inner = kernel::u32(prod(in, 2, in.size()), "inner size");
            p.batch = kernel::u32(in[0], "batch");
            p.eps = static_cast<float>(eps);
            p.momentum = static_cast<float>(momentum);
            return p;
          })
             .groups([C](const kernel::Live&) { return kernel::Groups::linear(static_cast<uint64_t>(C)); })
             .variant("stats"));
  add_batch_apply(oc, x, out, w, b, save_mean, save_invstd, true, C, eps);
}

ETW_REGISTER_OP("aten._native_batch_norm_legit_no_training.default", build_batch_norm);
ETW_REGISTER_OP("aten._native_batch_norm_legit.default", [](OpContext& oc) { build_batch_norm_legit(oc, true); });
ETW_REGISTER_OP("aten._native_batch_norm_legit.no_stats", [](OpContext& oc) { build_batch_norm_legit(oc, false); });
ETW_REGISTER_OP("aten.native_layer_norm.default", build_layer_norm);
ETW_REGISTER_OP("aten.native_group_norm.default", build_group_norm);
ETW_REGISTER_OP("et_vk.rms_norm.default", build_rms_norm);
ETW_REGISTER_OP(kDeferredRmsNorm, build_rms_norm_deferred);
ETW_REGISTER_OP(kSelectRmsNorm, build_rms_norm_select);
ETW_REGISTER_LOAD_REWRITE(norm_selects, SelectedRows);
ETW_REGISTER_OP("aten._softmax.default", [](OpContext& oc) { build_softmax(oc, kSoftmax); });
ETW_REGISTER_OP("aten._log_softmax.default", [](OpContext& oc) { build_softmax(oc, kLogSoftmax); });

}  // namespace


}  // namespace etwebgpu::ops
