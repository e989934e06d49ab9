#include "ops/quantized/q4gsw_gemv_rows.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "format/escape.h"

namespace etwebgpu::ops::q4 {
namespace {

// A workgroup's layout: KT invocations along K times 256 / KT row groups, RPT outputs each (even:
// a SwiGLU or rotary pair is one invocation's; at most 4, one vec4 of sums).
struct RowsConfig {
  uint32_t rpt, kt;
  uint32_t per() const { return (256 / kt) * rpt; }  // outputs per workgroup
};

// By what the 1B recipe's decode step measured in the model (H100, stop 54: each op's GPU time
// under each pinned layout, twice): with float activations, 2x32 for the o-projection and down
// GEMVs (N 2048: 690 us a step for the 32 against 729-735 at 2x64) and gate/up (548 against
// 568-571 at 4x64), 4x32 for a vocabulary-wide head (N 128256: 99 against 109 us at 4x64), and
// 2x64 kept for the q/k/v GEMV with its rotary pairs (324 against 332 at 2x32, 367 at 4x64).
// Stop 56's two sweeps (H100, 4 to 32 GEMVs of cold weights): one output an invocation at KT 64
// for N and K up to 2048 without pairs (the o-projection: 0.394 against 0.420-0.439 ms for 32;
// at N 3072 it lost, 0.459 against 0.433); 8da4w GEMVs four outputs an invocation at KT 32 from N
// 8192 (gate/up's N 16384: 0.086 against 0.097-0.104 at KT 64; the vocabulary head 0.092
// against 0.119), 2x64 below (level with the others at N 2048 and 3072).
// force_route["q4_gemv_rows"] = "RPTxKT" (RPT 1, 2 or 4, KT 32 or 64; RPT 1 not under a SwiGLU
// or rotary pair) pins one, for the route sweep.
RowsConfig default_rows_config(int64_t n, int64_t k, bool quantized_acts, bool rotary, bool pairs) {
  if (quantized_acts) return n >= 8192 ? RowsConfig{4u, 32u} : RowsConfig{2u, 64u};
  if (rotary) return {2u, 64u};
  if (!pairs && n <= 2048 && k <= 2048) return {1u, 64u};
  return {n >= 65536 ? 4u : 2u, 32u};
}
RowsConfig rows_config(const OpContext& oc, int64_t n, int64_t k, bool quantized_acts, bool rotary, bool pairs) {
  const std::string v = pinned_route(oc, "q4_gemv_rows", {"1x64", "2x64", "4x64", "1x32", "2x32", "4x32"});
  if (v.empty()) return default_rows_config(n, k, quantized_acts, rotary, pairs);
  const RowsConfig cfg{static_cast<uint32_t>(v[0] - '0'), v[2] == '6' ? 64u : 32u};
  if (cfg.rpt == 1 && pairs)
    oc.fail(ErrorKind::Unsupported, "force_route q4_gemv_rows = \"" + v + "\": a SwiGLU or rotary pair needs two outputs an invocation");
  return cfg;
}

// How an 8da4w gemv_rows sums a chunk: "dot4" / "portable" (the row quantized once into
// workgroup memory, integer dot products by dot4I8Packed or its portable form; K up to 8192, 8 KiB
// of the 16 KiB every adapter has) or "float" (each invocation quantizes what it reads; other K).
// force_route["dq8ca_gemv_rows"] pins one.
std::string dq8ca_sums(const OpContext& oc, int64_t K) {
  const bool fits = K <= 8192;
  const bool have = oc.g.ctx().info().packed_dot4;
  const std::string v = pinned_route(oc, "dq8ca_gemv_rows", {"dot4", "portable", "float"});
  if (v.empty()) return fits ? (have ? "dot4" : "portable") : "float";
  if (v != "float" && !fits)
    oc.fail(ErrorKind::Unsupported, "force_route dq8ca_gemv_rows = \"" + v + "\" needs K <= 8192, got " + std::to_string(K));
  if (v == "dot4" && !have)
    oc.fail(ErrorKind::Unsupported, "force_route dq8ca_gemv_rows = \"dot4\" needs the adapter's packed_4x8_integer_dot_product");
  return v;
}

// What gemv_rows stages in workgroup memory, besides its fixed 7 KiB (partial sums, reductions)
// and an 8da4w row staged quantized (`xq_bytes`): the float row (XS_SHARED) where it fits the
// device's workgroup memory, unless the quantized row replaces it (an 8da4w GEMV stages both only
// when pinned: under an input norm that made the 1B q/k/v 7 us slower a call on an H100, and the
// row is read from memory); the workgroup's scales (SC_SHARED) only when pinned: on an H100
// staging them lost on every 1B decode shape (the vocabulary head 147 us against 111, gate/up 117
// against 101: stop 44's route sweep).
// force_route["q4_gemv_rows_x"] / ["q4_gemv_rows_sc"] = "shared" | "global" pins one.
// Whether an invocation requests its next step's chunks (and their scales) before it sums the one
// it holds (PRE 1) or each step its own, the scales read as they are used (PRE 0). Stop 56's two
// route sweeps (H100, 1B decode shapes, 4 to 32 GEMVs of cold weights): with float activations
// one step ahead was 5-16% faster on q/k/v, o and down (K 8192: 0.167-0.170 against 0.191-0.198
// ms for 8) and level on gate/up and the head; an 8da4w GEMV, whose row is quantized before its
// first sums, was level or slower (gate/up 0.099 against 0.086; its decode step 2% slower in the
// model); two or four steps ahead were 1.1-2.1x slower on every shape (removed).
// force_route["q4_gemv_rows_pre"] = "0" | "1" pins one.
uint32_t prefetch_steps(const OpContext& oc, bool quantized_acts) {
  const std::string v = pinned_route(oc, "q4_gemv_rows_pre", {"0", "1"});
  if (v.empty()) return quantized_acts ? 0u : 1u;
  return v == "1" ? 1u : 0u;
}

// Where a staged row's input norm reads its elements and weights: all at once into registers (K
// up to 16 an invocation; stop 56's sweep: 23% less time on 32 q/k/v-shaped GEMVs, 12% on gate/up)
// or by a loop of loads before the sums and one after (longer rows). force_route["q4_gemv_rows_norm"]
// = "registers" | "loop" pins one.
constexpr int64_t kNormRegsMaxK = 16 * 256;
bool norm_in_registers(const OpContext& oc, int64_t K) {
  return K <= kNormRegsMaxK && pinned_route(oc, "q4_gemv_rows_norm", {"registers", "loop"}) != "loop";
}

struct Staging {
  bool x = false, sc = false;
  uint32_t x_vec4 = 0, sc_words = 0;  // their sizes (XS_VEC4: K / 4 rounded up to 8; SC_WORDS)
};
Staging staging(const OpContext& oc, int64_t K, int64_t gs, uint32_t per, uint64_t xq_bytes) {
  Staging st;
  st.x_vec4 = static_cast<uint32_t>((K / 4 + 7) / 8 * 8);
  st.sc_words = per * static_cast<uint32_t>((K + gs - 1) / gs);
  const uint64_t limit = oc.g.ctx().info().max_workgroup_storage;
  const uint64_t fixed = 7168 + xq_bytes;
  const uint64_t x_bytes = uint64_t{st.x_vec4} * 16;
  const uint64_t sc_bytes = uint64_t{st.sc_words} * 4;
  auto pinned = [&](const char* key) -> std::optional<bool> {
    const std::string v = pinned_route(oc, key, {"shared", "global"});
    if (v.empty()) return std::nullopt;
    return v == "shared";
  };
  const auto px = pinned("q4_gemv_rows_x"), psc = pinned("q4_gemv_rows_sc");
  st.x = px.value_or(!xq_bytes && fixed + x_bytes <= limit);
  const uint64_t used = fixed + (st.x ? x_bytes : 0);
  st.sc = psc.value_or(false);
  if (used > limit || (st.sc && used + sc_bytes > limit))
    oc.fail(ErrorKind::Unsupported, "force_route q4_gemv_rows_x / q4_gemv_rows_sc = \"shared\": the staging needs " +
                                        std::to_string(used + (st.sc ? sc_bytes : 0)) + " bytes of workgroup memory, the device has " +
                                        std::to_string(limit));
  return st;
}

// Every workgroup of a GEMV with an input norm sums the row's squares again. Read from memory (the
// row not staged), on an H100 at K 2048 (1B recipe decode, profiled) that cost 5 us over a norm
// dispatch's 14 at 384 workgroups (q, k, v), 13 at 1024 (gate and up) and 91 at 8016 (the
// vocabulary head): the norm pays for itself up to about 512. Where the row is staged (K up to
// 4096: 16 KiB, which desktop GPUs' workgroup memory holds beside the kernel's own) the sums come
// with the staging's one read of the row, so the fold reaches gate and up too; the head keeps its
// norm until measured.
constexpr int64_t kNormInlineWorkgroups = 512;
constexpr int64_t kStagedNormMaxK = 4096, kStagedNormWorkgroups = 2048;
bool norm_pays(int64_t K, int64_t workgroups) {
  return workgroups <= (K <= kStagedNormMaxK ? kStagedNormWorkgroups : kNormInlineWorkgroups);
}

// gemv_rows' shapes: K and the group size multiples of 8, weight rows of whole words packing K.
bool gemv_rows_shapes(int64_t K, int64_t gs, int64_t wrow) { return K % 8 == 0 && gs % 8 == 0 && wrow % 4 == 0 && wrow * 2 >= K; }

// Params with the 8da4w fields (q4gsw_weights.wgsl under DQ8CA).
struct DqLinParams {
  LinParams lin;
  uint32_t mode;
  int32_t sym_zp;
  float qmin, qmax, denom, eps;
  uint32_t pad3, pad4;
};
static_assert(sizeof(DqLinParams) == 96);

}  // namespace

SwigluOut read_swiglu_out(OpContext& oc, size_t form_arg) {
  Graph& g = oc.g;
  SwigluOut glu;
  const std::string form = g.string(oc.arg(form_arg));
  if (form != "silu" && form != "sigmoid")
    oc.fail(ErrorKind::Format, "the SwiGLU form must be \"silu\" or \"sigmoid\", got \"" + format::escape_untrusted(form) + "\"");
  glu.sigmoid = form == "sigmoid";
  const auto outs = g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::Format, "expects outputs [h, pairs], got " + std::to_string(outs.size()) + " values");
  glu.h = outs[0];
  glu.pairs = outs[1];
  require_dtype(oc, glu.h, {VkDType::Float32, VkDType::Float16}, "h");
  require_dtype(oc, glu.pairs, {VkDType::Float32, VkDType::Float16}, "pairs");
  const auto& th = g.tensor(glu.h);
  const auto& tp = g.tensor(glu.pairs);
  if (th.rank() < 1 || tp.rank() != th.rank() || th.max_dims.back() < 1 || tp.max_dims.back() != 2 * th.max_dims.back())
    oc.fail(ErrorKind::Format, "h " + shape_str(th.max_dims) + " and pairs " + shape_str(tp.max_dims) + " must have one rank, pairs " +
                                   "twice h's last dim");
  return glu;
}

std::vector<int32_t> read_multi_outs(OpContext& oc, size_t widths_arg, bool rotated, std::vector<int64_t>* widths, int64_t* n,
                                     std::vector<int32_t>* rot) {
  Graph& g = oc.g;
  const auto all = g.value_list(oc.out());
  *widths = g.int_list(oc.arg(widths_arg));
  const size_t extra = rotated ? 2 : 0;
  if (widths->size() < 2 || widths->size() > 3 || all.size() != widths->size() + extra)
    oc.fail(ErrorKind::Format, rotated ? "expects 2 or 3 widths and as many outputs plus the rotated q and k, got " +
                                             std::to_string(widths->size()) + " and " + std::to_string(all.size())
                                       : "expects 2 or 3 outputs and as many widths, got " + std::to_string(all.size()) + " and " +
                                             std::to_string(widths->size()));
  const std::vector<int32_t> outs(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(widths->size()));
  *n = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    require_dtype(oc, outs[i], {VkDType::Float32, VkDType::Float16}, "out");
    const auto& t = g.tensor(outs[i]);
    if ((*widths)[i] < 1 || t.rank() < 1 || t.max_dims.back() != (*widths)[i] || t.rank() != g.tensor(outs[0]).rank())
      oc.fail(ErrorKind::Format, "output " + std::to_string(i) + " " + shape_str(t.max_dims) + " does not end in its width " +
                                     std::to_string((*widths)[i]));
    *n += (*widths)[i];
  }
  rot->assign(all.end() - static_cast<std::ptrdiff_t>(extra), all.end());
  return outs;
}

RopeOut read_rope_out(OpContext& oc, size_t cos_arg, const std::vector<int32_t>& raw, const std::vector<int32_t>& rotated,
                      const std::vector<int64_t>& widths) {
  Graph& g = oc.g;
  RopeOut rope;
  rope.cos = oc.arg(cos_arg);
  rope.sin = oc.arg(cos_arg + 1);
  for (size_t i : {size_t{2}, size_t{3}}) {
    const int32_t v = oc.arg(cos_arg + i);
    if (g.is_null(v)) continue;
    const auto kind = g.kind(v);
    if (kind != format::VkValueKind::Int && kind != format::VkValueKind::SymInt)
      oc.fail(ErrorKind::Format, std::string("the tables' slice ") + (i == 2 ? "start" : "end") + " must be an Int, a SymInt or Null");
    (i == 2 ? rope.start : rope.end) = v;
  }
  for (int32_t t : {rope.cos, rope.sin}) require_dtype(oc, t, {VkDType::Float32, VkDType::Float16}, "freqs_cos/freqs_sin");
  if (raw.size() < 2 || rotated.size() != 2)
    oc.fail(ErrorKind::Format, "expects the rotated q and k after the linear's outputs, got " + std::to_string(rotated.size()) + " values");
  const auto& tc = g.tensor(rope.cos);
  if (tc.rank() != 2 || g.tensor(rope.sin).max_dims != tc.max_dims)
    oc.fail(ErrorKind::Format, "freqs_cos " + shape_str(tc.max_dims) + " and freqs_sin " + shape_str(g.tensor(rope.sin).max_dims) +
                                   " must be one [S, head_dim / 2] shape");
  const int64_t D = 2 * tc.max_dims[1];
  for (int64_t w : widths)
    if (w % 2) oc.fail(ErrorKind::Format, "the widths must be even (whole pairs), got " + std::to_string(w));
  rope.q = rotated[0];
  rope.k = rotated[1];
  for (size_t i = 0; i < 2; ++i) {
    require_dtype(oc, rotated[i], {VkDType::Float32, VkDType::Float16}, i ? "k" : "q");
    const auto& r = g.tensor(rotated[i]).max_dims;
    const auto& w = g.tensor(raw[i]).max_dims;
    // [..., H, D] over the linear's [..., H * D].
    if (D < 2 || r.size() != w.size() + 1 || r.back() != D || widths[i] % D != 0 || r.end()[-2] * D != widths[i] ||
        !std::equal(w.begin(), w.end() - 1, r.begin()))
      oc.fail(ErrorKind::Format, std::string(i ? "k " : "q ") + shape_str(r) + " must be the linear's " + shape_str(w) +
                                     " split into heads of freqs_cos's head_dim " + std::to_string(D));
  }
  rope.head_dim = static_cast<uint32_t>(D);
  return rope;
}

int64_t RopeOut::first_row(const kernel::Live& l, int64_t m) const {
  const int64_t rows = l.dims(cos)[0];
  // aten.slice's clamping of [start, end) to [0, rows); no slice: every row.
  auto clamp = [rows](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rows : v, 0, rows); };
  const int64_t s = start >= 0 ? clamp(l.integer(start)) : 0;
  const int64_t e = end >= 0 ? std::max(s, clamp(l.integer(end))) : rows;
  if (e - s != m)
    throw Error(ErrorKind::InvalidArgument, "freqs_cos and freqs_sin rows [" + std::to_string(s) + ", " + std::to_string(e) + ") of " +
                                                shape_str(l.dims(cos)) + " must hold one row per input row (" + std::to_string(m) + ")");
  return s;
}

std::string dq8ca_route(const OpContext& oc) { return pinned_route(oc, "linear_dq8ca_q4gsw", {"gemv_rows", "dot4", "portable"}); }

bool gemv_rows_fits(Graph& g, int32_t x, const LinParams& base) {
  return gemv_rows_shapes(base.k, base.gs, base.wrow) && holds_vec4(g, x);
}

bool gemv_rows_takes_norm(const format::VkGraphIR& ir, const format::VkOpCall& c, size_t w_arg, size_t gs_arg,
                          bool quantized_acts, bool rotary) {
  if (c.args.size() <= std::max(w_arg, gs_arg)) return false;
  const auto& x = ir.values[c.args[0]];
  const auto& w = ir.values[c.args[w_arg]];
  const auto& gs = ir.values[c.args[gs_arg]];
  if (x.kind != format::VkValueKind::Tensor || x.tensor.dims.empty() || w.kind != format::VkValueKind::Tensor ||
      w.tensor.dims.size() != 2 || gs.kind != format::VkValueKind::Int || x.tensor.dims.back() <= 0 || gs.int_val <= 0)
    return false;
  const int64_t N = w.tensor.dims[0];
  const int64_t K = x.tensor.dims.back();
  return gemv_rows_shapes(K, gs.int_val, w.tensor.dims[1]) &&
         norm_pays(K, kernel::ceil_div(N, static_cast<int64_t>(default_rows_config(N, K, quantized_acts, rotary, true).per())));
}

kernel::Kernel gemv_rows(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                         const LinParams& base, const ActQuant& aq, const Epilogue& ep, const SwigluOut& glu,
                         const RopeOut& rope, const InputNorm& norm) {
  Graph& g = oc.g;
  // A chunk of four words when every weight row is whole vec4s and K fills them.
  const bool word4 = base.wrow % 16 == 0 && base.k % 32 == 0;
  const uint32_t chunk_weights = word4 ? 32 : 8;
  const RowsConfig cfg = rows_config(oc, base.n, base.k, aq.active(), rope.active(), glu.active() || rope.active());
  const uint32_t rpt = cfg.rpt, kt = cfg.kt;
  const uint64_t per = cfg.per();

  LinParams lin = base;
  lin.hd = rope.head_dim;
  kernel::Kernel k("q4gsw_gemv_rows");
  if (word4) k.define("WORD4");
  if (base.gs % chunk_weights == 0) k.define("GS_CHUNK");
  const uint32_t pre = prefetch_steps(oc, aq.active());
  k.constant("RPT", rpt).constant("KT", kt).constant("PRE", pre);
  if (norm.active()) {
    k.define("NORM_IN");
    if (norm.weight >= 0) k.define("NORM_W").input("NW", norm.weight, true);
    lin.norm_eps = norm.eps;
  }
  k.input("X", norm.active() ? norm.x : x, true)
      .buffer("W", g.raw_constant_buffer(w), word4 ? "vec4<u32>" : "u32", kernel::Access::Read)
      .input("SC", sc)
      .input("BIAS", bias);
  if (aq.source == ActQuant::Source::Tensors) k.define("DQ8CA").input("ISC", aq.scales).input("IZP", aq.zero_points);
  if (aq.source == ActQuant::Source::Self) k.define("DQ8CA").define("DQ8CA_SELF");
  bool dq_shared = false;
  if (aq.active()) {
    const std::string sums = dq8ca_sums(oc, base.k);
    dq_shared = sums != "float";
    if (dq_shared) k.define("DQ8CA_SHARED").constant("XQ_WORDS", static_cast<uint32_t>(base.k / 4));
    if (sums == "dot4") k.define("DOT4");
  }
  const Staging st = staging(oc, base.k, base.gs, static_cast<uint32_t>(per), dq_shared ? static_cast<uint64_t>(base.k) : 0);
  if (st.x) k.define("XS_SHARED").constant("XS_VEC4", st.x_vec4);
  if (norm.active() && st.x && norm_in_registers(oc, base.k)) k.define("NORM_REGS");
  if (st.sc) k.define("SC_SHARED").constant("SC_WORDS", st.sc_words);
  if (base.gs % chunk_weights == 0 && !st.sc && pre == 1) k.define("SC_QUEUE");
  // Reductions (the sums, an 8da4w row's range) by subgroup where the device has subgroups of at
  // most KT invocations.
  if (use_subgroups(oc, kt)) k.define("SUBGROUPS");
  if (glu.active()) {
    k.define("SWIGLU_OUT").output("O", glu.h);
    if (glu.sigmoid) k.define("SIGMOID_FORM");
  } else if (!rope.active()) {
    k.output("O", outs[0]);
  }
  if (rope.active()) {
    k.define("ROPE_OUT").input("COS", rope.cos).input("SIN", rope.sin).output("O", rope.q).output("O1", rope.k);
  } else if (outs.size() > 1) {
    k.output("O1", outs[1]);
  }
  if (outs.size() > 1) k.define("MULTI");
  if (outs.size() > 2) k.define("MULTI3").output("O2", outs[2]);
  auto rows = [x, K = base.k](const kernel::Live& l) { return static_cast<uint64_t>(l.numel(x) / K); };
  if (!aq.active()) {
    ep.apply<LinParams>(k, [rows, lin, rope](const kernel::Live& l) {
      LinParams p = lin;
      p.m = kernel::u32(rows(l), "rows");
      if (rope.active()) p.rope_row0 = kernel::u32(rope.first_row(l, rows(l)), "table row");
      return p;
    });
  } else {
    DqLinParams dq{};
    dq.lin = lin;
    dq.mode = aq.args.mode;
    dq.sym_zp = aq.args.sym_zp;
    dq.qmin = aq.args.qmin;
    dq.qmax = aq.args.qmax;
    dq.denom = aq.args.denom;
    dq.eps = aq.args.eps;
    ep.apply<DqLinParams>(k, [rows, dq, rope](const kernel::Live& l) {
      DqLinParams p = dq;
      p.lin.m = kernel::u32(rows(l), "rows");
      if (rope.active()) p.lin.rope_row0 = kernel::u32(rope.first_row(l, rows(l)), "table row");
      return p;
    });
  }
  k.groups([rows, n = base.n, per](const kernel::Live& l) { return kernel::Groups::linear(rows(l) * kernel::ceil_div(n, per)); });
  return k;
}

}  // namespace etwebgpu::ops::q4
