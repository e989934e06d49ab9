// Scaled dot-product attention: et_vk.sdpa ([B..., H, S, D]), the llama KV-cache ops
// sdpa_with_kv_cache / update_cache ([1, S, H, D] with caches [1, Cmax, Hkv, D]) and
// etwebgpu.attention, the fused form of a decomposed attention (graph/attention_fusion.h).
// The kernels are layout-generic (strides in the uniform) and read k/v head h / group (GQA
// without materialising repeated K/V). Two families, chosen at load from the maximum shapes:
// - fused (head dims <= 64, or <= 128 and not a long prefill: see pick_staged): no attn scratch. Per run,
//   few query rows per head (S_q <= 8, the decode step) take the decode route: up to 2,048 keys
//   a row, sdpa_decode_wide in one pass (a workgroup a row, its scores in workgroup memory) when
//   there are enough rows or few keys; otherwise split-K, sdpa_decode scoring chunks of keys per
//   workgroup with an online softmax and sdpa_decode_combine merging the chunks (skipped when one
//   chunk covers the keys). force_route "sdpa_decode" = "wide" | "split" pins one. More rows take
//   the flash route, sdpa_flash, one pass with K/V tiles in workgroup memory, which splits its
//   keys the same way when its workgroups are few (head dims <= 64). force_route "sdpa" =
//   "flash" | "decode" pins one; "sdpa_reduce" = "workgroup" keeps the decode reductions off
//   subgroups.
// - staged (head dims past 128, a long prefill past 64, or force_route "sdpa" = "staged" / any "sdpa_qk"): QK -> row
//   softmax -> AV through a scratch attn[B, H, S_q, S_kv] sized for the maximum shapes. QK has
//   two routes giving the same numbers: the per-row route is a tiled batched GEMM (a workgroup
//   owns a 64-row x 64-key block, 4x4 per invocation, Q/K tiles in workgroup memory); the
//   per-entry route, taken when B*H*S_q < GraphOptions::sdpa_occupancy_floor (too few rows to
//   fill the GPU, e.g. channel attention with S_q = 32 and D = 4096), gives each attention entry
//   TPE invocations that split the D-long dot product and reduce in workgroup memory.
//   force_route "sdpa_qk" = "row" | "entry" pins it. Softmax is one workgroup per row with an
//   online (max, sum); AV is a tiled batched GEMM like QK.
#include <cmath>
#include <limits>

#include "graph/attention_fusion.h"
#include "graph/epilogue_fusion.h"
#include "ops/epilogue.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using graph::Node;

struct Params {
  uint32_t b = 1, h = 1, sq = 0, skv = 0;
  uint32_t d = 0, dv = 0, group = 1, causal = 0;
  uint32_t start = 0, rows = 0, entries = 0, neg_inf_bits = 0xff800000u;
  uint32_t q_b = 0, q_h = 0, q_s = 0;
  float scale = 1.f;
  uint32_t k_b = 0, k_h = 0, k_s = 0, zero_masked = 0;
  uint32_t v_b = 0, v_h = 0, v_s = 0, splits = 1;
  uint32_t o_b = 0, o_h = 0, o_s = 0, chunk = 0;
  uint32_t m_b = 0, m_h = 0, m_s = 0, m_c = 0;
  uint32_t q_o = 0, k_o = 0, v_o = 0, o_o = 0;
  uint32_t pad = 0, pad1 = 0, pad2 = 0, pad3 = 0;  // pad: 0, which an epilogue's NaN patterns OR in
};
static_assert(sizeof(Params) == 160);

// Above this many S_q x S_kv entries per head a prefill (S_q > kDecodeRows) with head dims past
// 64 takes the staged kernels by default (see pick_staged).
constexpr int64_t kFlashMaxEntries = 64 * 1024;
// The staged AV product splits its keys like the GEMMs (op_common.h): a Whisper-size encoder's
// 6 heads x 1500 rows x 64 columns give its 64x64 tiles 144 workgroups over 1500 keys.
constexpr SplitPolicy kAvSplit{/*below_tiles=*/256, /*target=*/512, /*min_k=*/512, /*max_splits=*/32, /*min_chunk=*/64};
constexpr uint64_t kMaxAvSplitFloats = uint64_t(1) << 22;
// Query rows per head up to which the decode route runs.
constexpr int64_t kDecodeRows = 8;
// The decode route splits the keys until about this many workgroups run (64 keys per split at
// least); rows * splits <= kDecodeTarget + rows bounds its partials scratch.
constexpr int64_t kDecodeTarget = 512;
constexpr int64_t kDecodeTile = 64;
// The one-pass decode kernel (sdpa_decode_wide) keeps a row's scores in workgroup memory: up to
// kWideMaxKeys keys (8 KiB). It runs one workgroup a row, so it takes rows with at most
// kWideMaxKeys keys when there are enough rows to spread the keys over the GPU (Llama-3.2-1B
// decode: 32), or few keys. Its workgroup memory is 14 KiB, within the 16 every device has (1,024
// invocations a workgroup, 29 KiB, were 2-4% slower in the 1B decode on an H100).
constexpr int64_t kWideMaxKeys = 2048, kWideMinRows = 16, kWideSmallKeys = 256, kWidePrefillRows = 1024;
// sdpa_flash at DMAX 64 (32 rows, or 64 with ROWS64) and 128: query rows per workgroup, and its
// workgroup memory (Q, K/P, V and Red tiles).
constexpr int64_t kFlashRows64 = 32, kFlashRowsWide = 64, kFlashRows128 = 16;
// Keys per flash tile (head dims <= 64), and the workgroups a flash pass splits its keys for: on
// the H200 (132 SMs) 512 was best or within 7% of best from 3 to 12 heads and 197 to 1500 rows
// (6 x 1500 x 64: 128 workgroups 0.33 ms, 512 0.24, 4096 0.36).
constexpr int64_t kFlashTile = 32, kFlashTarget = 512;
constexpr uint64_t kFlashBytes64 = 4 * (3 * 32 * 64 + 32 * 16);
constexpr uint64_t kFlashBytesWide = 4 * (64 * 64 + 2 * 32 * 64 + 64 * 16);
constexpr uint64_t kFlashBytes128 = 4 * (128 * 16 + 128 * 17 + 16 * 128 + 16 * 16);

enum class Route { Auto, Row, Entry, Flash, Decode };

// sdpa_with_kv_cache's new key and value rows (its k and v), read by the attention beside the caches.
struct NewRows {
  int32_t k = -1, v = -1;
};

// The staged QK route forced by "sdpa_qk".
Route forced_qk(const OpContext& oc) {
  const std::string r = pinned_route(oc, "sdpa_qk", {"row", "entry"});
  return r.empty() ? Route::Auto : r == "row" ? Route::Row : Route::Entry;
}

// The kernels of one attention op: created once at load; `set` (from the op's prepare) takes the
// live Params (shapes, strides, scale) and picks the route of this run.
struct Attention {
  Params p;
  bool staged = false;
  bool use_entry = false, use_decode = false, use_av_split = false, use_wide = false;
  bool wide_ok = false;     // the one-pass decode kernel was built (shapes and buffers it reads)
  bool writes_new = false;  // ... and stores sdpa_with_kv_cache's new rows into the caches
  std::string decode_pin;   // force_route "sdpa_decode": "wide", "split" or "" (by shape)
  Route route = Route::Auto;  // staged: Auto | Row | Entry; fused: Auto | Flash | Decode
  uint32_t tpe = 1;
  int64_t floor = 4096;
  uint64_t av_split_floats = 0;  // room for AV split-K partials (staged), 0: never split
  int64_t partial_slots = 0;     // fused: (row, split) partials the scratch holds
  uint64_t flash_rows = kFlashRows64;
  bool flash_splits_ok = false;  // the flash kernel may split keys (head dims <= 64)

  // Key splits of a flash pass: when its workgroups are too few to fill the GPU (ViT-tiny: 3 heads
  // x 4 row blocks of 64), the keys are split in whole tiles until about kFlashTarget run, and
  // sdpa_decode_combine merges the splits.
  int64_t flash_split(int64_t bh, int64_t sq, int64_t skv) const {
    int64_t wgs = std::max<int64_t>(1, ceil_div(sq, flash_rows) * bh);
    int64_t tiles = std::max<int64_t>(1, ceil_div(skv, kFlashTile));
    return std::clamp<int64_t>(ceil_div(kFlashTarget, wgs), 1, tiles);
  }

  // Checks grids and buffer limits for the maximum shapes (bh = B*H heads of sq query rows)
  // before anything is allocated; the attn scratch only where the staged kernels need it.
  static void check_limits(const OpContext& oc, int64_t bh, int64_t sq, int64_t skv, int64_t dv, bool staged) {
    Graph& g = oc.g;
    const auto& info = g.ctx().info();
    uint64_t max_wg = static_cast<uint64_t>(info.max_workgroups_per_dim) * info.max_workgroups_per_dim;
    int64_t rows = bh * sq;
    if (!staged) {
      // flash: grid (ceil(S_q / 16, 32 or 64), splits, B*H); decode: (splits, B*H*S_q) with S_q <= kDecodeRows.
      uint64_t lim = info.max_workgroups_per_dim;
      if (static_cast<uint64_t>(bh) > lim || ceil_div(static_cast<uint64_t>(sq), 16) > lim ||
          static_cast<uint64_t>(bh * std::min(sq, kDecodeRows)) > lim)
        oc.fail(ErrorKind::Limit, "attention over " + std::to_string(bh) + " heads x " + std::to_string(sq) +
                                      " query rows exceeds the device's workgroups per dimension");
      return;
    }
    int64_t entries = rows * skv;
    if (entries > std::numeric_limits<uint32_t>::max())
      oc.fail(ErrorKind::Limit, "attention scratch of " + std::to_string(rows) + " rows x " + std::to_string(skv) +
                                    " keys exceeds 2^32 entries");
    uint64_t bytes = g.float_bytes(static_cast<uint64_t>(entries));
    uint64_t lim = std::min<uint64_t>(info.max_storage_binding ? info.max_storage_binding : UINT64_MAX,
                                      info.max_buffer_size ? info.max_buffer_size : UINT64_MAX);
    if (bytes > lim)
      oc.fail(ErrorKind::Limit, "attention scratch needs " + std::to_string(bytes) + " bytes; the device binds at most " +
                                    std::to_string(lim));
    if (static_cast<uint64_t>(rows) > max_wg || ceil_div(static_cast<uint64_t>(entries), 256) > max_wg ||
        ceil_div(static_cast<uint64_t>(rows * dv), 256) > max_wg)
      oc.fail(ErrorKind::Limit, "attention grid exceeds the device's workgroup limits");
  }

  // Whether an op with these maximum head dims runs the staged kernels (see the file comment).
  static bool pick_staged(const OpContext& oc, int64_t d, int64_t dv, int64_t max_sq, int64_t max_skv) {
    const std::string r = pinned_route(oc, "sdpa", {"flash", "decode", "staged"});
    bool fits = std::max(d, dv) <= 128;  // the decode kernels' head dims
    bool flash_fits = fits && oc.g.ctx().info().max_workgroup_storage >=
                                  (std::max(d, dv) <= 64 ? kFlashBytes64 : kFlashBytes128);
    if ((r == "flash" || r == "decode") && !fits)
      oc.fail(ErrorKind::InvalidArgument, "force_route sdpa = \"" + r + "\" needs head dims <= 128");
    if (r == "flash" && !flash_fits)
      oc.fail(ErrorKind::Unsupported, "force_route sdpa = \"flash\" needs " +
                                          std::to_string(std::max(d, dv) <= 64 ? kFlashBytes64 : kFlashBytes128) +
                                          " bytes of workgroup memory; the device has " +
                                          std::to_string(oc.g.ctx().info().max_workgroup_storage));
    // A long prefill with head dims past 64 goes staged unless forced: the D128 flash form is
    // not register-tiled (on the H200 its 64-dim predecessor took 0.565 ms for 6 heads x 1500 x 64
    // where the staged kernels take 0.285 ms). Decode steps and everything up to 64 dims keep the
    // fused kernels (fewer dispatches, no scratch); prefill rows on a device without room for the
    // flash tiles go staged.
    bool prefill = max_sq > kDecodeRows;
    bool long_prefill = prefill && std::max(d, dv) > 64 && max_sq * max_skv > kFlashMaxEntries;
    return r == "staged" || forced_qk(oc) != Route::Auto || !fits || (r.empty() && long_prefill) ||
           (r != "decode" && prefill && !flash_fits);
  }

  // mask_kind: 0 none, 1 float, 2 bool; the maximum B*H, S_q, S_kv and head dims.
  // `ep`: the epilogue every kernel writing out applies (empty: none). `fresh`: k and v are
  // sdpa_with_kv_cache's caches and these its new rows, which the one-pass decode kernel stores
  // into them where it runs (writes_in_pass()); every other route reads caches already written.
  static std::shared_ptr<Attention> build(OpContext& oc, int32_t q, int32_t k, int32_t v, int32_t out, int32_t mask,
                                          int mask_kind, int64_t max_bh, int64_t max_sq, int64_t max_skv, int64_t d,
                                          int64_t dv, const Epilogue& ep, const NewRows& fresh = {}) {
    auto att = std::make_shared<Attention>();
    att->staged = pick_staged(oc, d, dv, max_sq, max_skv);
    check_limits(oc, max_bh, max_sq, max_skv, dv, att->staged);
    int64_t max_rows = max_bh * max_sq;
    if (att->staged) {
      att->build_staged(oc, q, k, v, out, mask, mask_kind, max_bh, max_sq, max_skv, d, dv, ep);
    } else {
      const std::string r = pinned_route(oc, "sdpa", {"flash", "decode", "staged"});
      att->route = r == "flash" ? Route::Flash : r == "decode" ? Route::Decode : Route::Auto;
      // Rows the decode route may take: S_q <= kDecodeRows unless forced.
      int64_t decode_rows = att->route == Route::Decode ? max_rows : max_bh * std::min(max_sq, kDecodeRows);
      att->build_fused(oc, q, k, v, out, mask, mask_kind, decode_rows, max_bh, max_sq, max_skv, std::max(d, dv), ep, fresh);
    }
    return att;
  }

  void build_fused(OpContext& oc, int32_t q, int32_t k, int32_t v, int32_t out, int32_t mask, int mask_kind,
                   int64_t decode_rows, int64_t max_bh, int64_t max_sq, int64_t max_skv, int64_t dmax, const Epilogue& ep,
                   const NewRows& fresh) {
    Graph& g = oc.g;
    const std::string reduce = pinned_route(oc, "sdpa_reduce", {"workgroup", "subgroup"});
    if (reduce == "subgroup" && !g.ctx().info().subgroups)
      oc.fail(ErrorKind::Unsupported, "force_route sdpa_reduce = \"subgroup\" but the device has no subgroups");
    bool subgroups = g.ctx().info().subgroups && reduce != "workgroup";
    auto params = [this](const kernel::Live&) { return p; };
    // Partials of the decode route and of a flash pass split over keys: (max, sum, D_v sums) per
    // row and split; `set` keeps rows * splits within the slots.
    int64_t tiles = std::max<int64_t>(1, ceil_div(max_skv, kDecodeTile));
    partial_slots = std::min(kDecodeTarget + decode_rows, decode_rows * tiles);
    bool wide = dmax <= 64 && g.ctx().info().max_workgroup_storage >= kFlashBytesWide;
    flash_rows = dmax > 64 ? kFlashRows128 : wide ? kFlashRowsWide : kFlashRows64;
    flash_splits_ok = dmax <= 64;
    if (flash_splits_ok && max_sq > kDecodeRows)
      partial_slots = std::max(partial_slots, max_bh * max_sq * flash_split(max_bh, max_sq, max_skv));
    // They die within the op (written by flash or decode, read by the combine): the graph's
    // shared scratch, not a buffer per op (a Whisper-size encoder: 4 x 9.5 MB).
    const gpu::Buffer& partials =
        g.shared_scratch(g.float_bytes(static_cast<uint64_t>(std::max<int64_t>(partial_slots, 1)) * (dmax + 2)));
    kernel::Kernel flash("sdpa_flash");
    if (dmax > 64) flash.define("D128");
    else flash.buffer("W", partials, g.float_storage(), kernel::Access::ReadWrite);
    if (wide) flash.define("ROWS64");
    flash.constant("MASK", mask_kind).input("Q", q).input("K", k).input("V", v).input("M", mask_kind ? mask : -1).output("O", out);
    ep.apply<Params>(flash, params);
    oc.add(flash.when([this](const kernel::Live&) { return !use_decode; })
               .groups([this](const kernel::Live&) {
                 if (p.rows == 0 || p.dv == 0) return kernel::Groups::none();
                 return kernel::Groups::grid(ceil_div(p.sq, flash_rows), p.splits, uint64_t(p.b) * p.h);
               })
               .variant("flash"));
    kernel::Kernel decode("sdpa_decode");
    if (subgroups) decode.define("SUBGROUPS");
    decode.constant("MASK", mask_kind)
        .input("Q", q)
        .input("K", k)
        .input("V", v)
        .input("M", mask_kind ? mask : -1)
        .output("O", out)
        .buffer("W", partials, g.float_storage(), kernel::Access::ReadWrite);
    ep.apply<Params>(decode, params);
    oc.add(decode.when([this](const kernel::Live&) { return use_decode && !use_wide; })
               .groups([this](const kernel::Live&) {
                 if (p.rows == 0 || p.dv == 0) return kernel::Groups::none();
                 return kernel::Groups::grid(p.splits, p.rows, 1);
               })
               .variant(subgroups ? "decode_subgroup" : "decode"));
    decode_pin = pinned_route(oc, "sdpa_decode", {"wide", "split"});
    wide_ok = decode_rows > 0 && dmax <= 128 && decode_pin != "split" && holds_vec4(g, k) && holds_vec4(g, v);
    if (decode_pin == "wide" && !wide_ok)
      oc.fail(ErrorKind::Unsupported, "force_route sdpa_decode = \"wide\" needs head dims <= 128 and k and v of 4 elements at least");
    if (wide_ok) {
      writes_new = fresh.k >= 0 && holds_vec4(g, fresh.k) && holds_vec4(g, fresh.v) &&
                   pinned_route(oc, "sdpa_cache_write", {"attention", "separate"}) != "separate";
      kernel::Kernel wide("sdpa_decode_wide");
      if (subgroups) wide.define("SUBGROUPS");
      wide.constant("MASK", mask_kind)
          .constant("SMAX", kWideMaxKeys)
          .constant("VC", dmax <= 64 ? 16 : 32)
          .input("Q", q);
      if (writes_new) wide.define("WRITE_NEW").output("K", k, true).output("V", v, true);
      else wide.input("K", k, true).input("V", v, true);
      wide.input("M", mask_kind ? mask : -1).output("O", out);
      if (writes_new) wide.input("KN", fresh.k, true).input("VN", fresh.v, true);
      ep.apply<Params>(wide, params);
      oc.add(wide.when([this](const kernel::Live&) { return use_decode && use_wide; })
                 .groups([this](const kernel::Live&) { return kernel::Groups::linear(p.dv == 0 ? 0 : p.rows); })
                 .variant(subgroups ? "decode_wide_subgroup" : "decode_wide"));
    }
    kernel::Kernel combine("sdpa_decode_combine");
    combine.buffer("W", partials, g.float_storage(), kernel::Access::Read).output("O", out);
    ep.apply<Params>(combine, params);
    oc.add(combine.when([this](const kernel::Live&) { return p.splits > 1; })
               .groups([this](const kernel::Live&) {
                 return kernel::Groups::linear(p.dv == 0 ? 0 : p.rows);
               })
               .variant("decode_combine"));
  }

  void build_staged(OpContext& oc, int32_t q, int32_t k, int32_t v, int32_t out, int32_t mask, int mask_kind,
                    int64_t max_bh, int64_t max_sq, int64_t max_skv, int64_t d, int64_t dv, const Epilogue& ep) {
    const int64_t max_rows = max_bh * max_sq;
    Graph& g = oc.g;
    route = forced_qk(oc);
    floor = g.options().sdpa_occupancy_floor;
    auto& scratch = g.make_scratch(g.float_bytes(static_cast<uint64_t>(std::max<int64_t>(max_rows * max_skv, 1))),
                                   oc.call.name + ".attn");
    // Invocations per entry: about 32 products each, a power of two in [1, 256].
    while (tpe < 256 && tpe * 32 < d) tpe *= 2;
    auto params = [this](const kernel::Live&) { return p; };
    auto qk = [&](const char* shader) {
      kernel::Kernel kk(shader);
      kk.constant("MASK", mask_kind)
          .input("Q", q)
          .input("K", k)
          .input("M", mask_kind ? mask : -1)
          .buffer("A", scratch, g.float_storage(), kernel::Access::ReadWrite)
          .params<Params>(params);
      return kk;
    };
    oc.add(qk("sdpa_qk_row")
               .when([this](const kernel::Live&) { return !use_entry; })
               .groups([this](const kernel::Live&) {
                 if (p.rows == 0 || p.skv == 0) return kernel::Groups::none();
                 return kernel::Groups::grid(ceil_div(p.skv, 64), ceil_div(p.sq, 64), uint64_t(p.b) * p.h);
               })
               .variant("qk_tiled"));
    oc.add(qk("sdpa_qk_entry")
               .constant("TPE", tpe)
               .when([this](const kernel::Live&) { return use_entry; })
               .groups([this](const kernel::Live&) {
                 if (p.rows == 0 || p.skv == 0) return kernel::Groups::none();
                 return kernel::Groups::linear(ceil_div(p.entries, 256 / tpe));
               })
               .variant("qk_entry"));
    oc.add(kernel::Kernel("sdpa_softmax")
               .buffer("A", scratch, g.float_storage(), kernel::Access::ReadWrite)
               .params<Params>(params)
               .groups([this](const kernel::Live&) { return kernel::Groups::linear(p.skv == 0 ? 0 : p.rows); })
               .variant("softmax"));
    kernel::Kernel av("sdpa_av");
    av.buffer("A", scratch, g.float_storage(), kernel::Access::Read).input("V", v).output("O", out);
    ep.apply<Params>(av, params);
    oc.add(av.when([this](const kernel::Live&) { return !use_av_split; })
               .groups([this](const kernel::Live&) {
                 if (p.rows == 0 || p.dv == 0) return kernel::Groups::none();
                 return kernel::Groups::grid(ceil_div(p.dv, 64), ceil_div(p.sq, 64), uint64_t(p.b) * p.h);
               })
               .variant("av"));
    // AV split-K partials in the graph's shared scratch, sized at the exported shapes for the
    // split they take there (a live shape that would need more room does not split).
    SplitK at_max = av_split(max_bh, max_sq, max_skv, dv, kMaxAvSplitFloats);
    if (at_max.splits > 1) {
      av_split_floats = uint64_t(at_max.splits) * max_rows * dv;
      const gpu::Buffer& part = g.shared_scratch(g.float_bytes(av_split_floats));
      oc.add(kernel::Kernel("sdpa_av")
                 .define("SPLITK")
                 .buffer("A", scratch, g.float_storage(), kernel::Access::Read)
                 .input("V", v)
                 .buffer("PART", part, g.float_storage(), kernel::Access::ReadWrite)
                 .params<Params>(params)
                 .when([this](const kernel::Live&) { return use_av_split; })
                 .groups([this](const kernel::Live&) {
                   return kernel::Groups::grid(ceil_div(p.dv, 64), ceil_div(p.sq, 64), uint64_t(p.b) * p.h * p.splits);
                 })
                 .variant("av_splitk"));
      kernel::Kernel reduce("sdpa_av", "av_reduce");
      reduce.define("SPLITK_REDUCE").buffer("PART", part, g.float_storage(), kernel::Access::Read).output("O", out);
      ep.apply<Params>(reduce, params);
      oc.add(reduce.when([this](const kernel::Live&) { return use_av_split; })
                 .groups([this](const kernel::Live&) { return kernel::Groups::linear(ceil_div(uint64_t(p.rows) * p.dv, 256)); })
                 .variant("av_reduce"));
    }
  }

  // The AV product's split over keys: its 64x64 tiles (bh heads of sq rows, dv columns) are too
  // few to fill the GPU over many keys.
  static SplitK av_split(int64_t bh, int64_t sq, int64_t skv, int64_t dv, uint64_t room) {
    uint64_t out = static_cast<uint64_t>(bh * sq * dv);
    return choose_split_k(kAvSplit, ceil_div(sq, 64) * ceil_div(dv, 64) * uint64_t(bh), skv, false,
                          out ? room / out : 0);
  }

  // Whether this run's attention stores the new rows into the caches itself (the one-pass kernel
  // under WRITE_NEW): the cache writes before it are skipped.
  bool writes_in_pass() const { return use_wide && writes_new; }

  // Whether this decode run takes the one-pass kernel: its keys fit, its reads are whole vec4s
  // (head dims, offsets and strides multiples of 4), and by shape (or pinned "wide", which fails
  // naming what does not fit).
  bool wide_fits() const {
    const bool aligned = (p.d | p.dv | p.k_o | p.k_b | p.k_h | p.k_s | p.v_o | p.v_b | p.v_h | p.v_s) % 4 == 0;
    return wide_ok && p.skv <= kWideMaxKeys && aligned;
  }
  bool takes_wide() const {
    if (!wide_ok) return false;
    const bool fits = wide_fits();
    if (decode_pin == "wide") {
      if (!fits)
        throw Error(ErrorKind::Unsupported, "force_route sdpa_decode = \"wide\" needs at most " + std::to_string(kWideMaxKeys) +
                                                " keys and head dims, offsets and strides that are multiples of 4; got " +
                                                std::to_string(p.skv) + " keys, head dims " + std::to_string(p.d) + " / " +
                                                std::to_string(p.dv));
      return true;
    }
    return fits && (p.rows >= kWideMinRows || p.skv <= kWideSmallKeys);
  }

  // Takes the live Params (rows = B*H*S_q) and picks the route of this run.
  void set(Params q) {
    q.rows = kernel::u32(int64_t(q.b) * q.h * q.sq, "attention rows");
    q.entries = staged ? kernel::u32(int64_t(q.rows) * q.skv, "attention entries") : 0;
    p = q;
    if (staged) {
      use_entry = route == Route::Entry || (route == Route::Auto && int64_t(p.rows) < floor);
      SplitK sp = av_split_floats ? av_split(int64_t(p.b) * p.h, p.sq, p.skv, p.dv, av_split_floats) : SplitK{};
      use_av_split = sp.splits > 1;
      p.splits = sp.splits;
      p.chunk = sp.chunk;
      return;
    }
    use_decode = route == Route::Decode || (route == Route::Auto && p.sq <= kDecodeRows);
    p.splits = 1;
    p.chunk = std::max<uint32_t>(p.skv, 1);
    if (!use_decode && flash_splits_ok && p.rows > 0) {
      int64_t want = flash_split(int64_t(p.b) * p.h, p.sq, p.skv);
      int64_t chunk = ceil_div(ceil_div(p.skv, kFlashTile), want) * kFlashTile;
      int64_t splits = std::max<int64_t>(1, ceil_div(p.skv, chunk));
      if (splits > 1 && int64_t(p.rows) * splits <= partial_slots) {
        p.chunk = kernel::u32(chunk, "flash chunk");
        p.splits = kernel::u32(splits, "flash splits");
      }
    }
    use_wide = use_decode && p.rows > 0 && takes_wide();
    // Prefill rows over few keys, up to about one wave of its workgroups (so few that a flash
    // pass would split its keys and merge them in a second dispatch): the one-pass kernel, one
    // dispatch (H100: ViT-tiny's 3 x 197 x 64 22.4 against 30.4 us for flash + combine, BERT's 4 x
    // 128 x 64 18.1 against 29.1; 6 x 1500 x 64 would take 0.68 against 0.24 ms, and Swin-T's
    // windows, 2,352 to 9,408 rows of 49 keys, 63 us a layer against 38).
    if (!use_decode && route == Route::Auto && flash_splits_ok && p.rows > 0 && p.rows <= kWidePrefillRows &&
        p.skv <= kWideSmallKeys && wide_fits()) {
      use_decode = use_wide = true;
      p.splits = 1;
      p.chunk = std::max<uint32_t>(p.skv, 1);
    }
    if (use_decode && p.rows > 0 && !use_wide) {
      // Enough splits to fill about kDecodeTarget workgroups, each of whole 64-key tiles.
      int64_t tiles = std::max<int64_t>(1, ceil_div(p.skv, kDecodeTile));
      int64_t want = std::clamp<int64_t>(ceil_div(kDecodeTarget, p.rows), 1, tiles);
      int64_t chunk = ceil_div(tiles, want) * kDecodeTile;
      p.chunk = kernel::u32(chunk, "decode chunk");
      p.splits = kernel::u32(std::max<int64_t>(1, ceil_div(p.skv, chunk)), "decode splits");
    }
  }
};

int64_t prod(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= v[i];
  return n;
}

// The fixed layout of a fused attention (graph/attention_fusion.h): sizes, and (offset, batch,
// head, row stride) of q, k, v and out in their buffers.
struct Layout {
  int64_t b = 0, h = 0, hkv = 0, sq = 0, skv = 0, d = 0, dv = 0;
  int64_t at[4][4] = {};  // q, k, v, out
};

// Parses and checks a layout against the buffers it indexes: every element it names lies inside
// its tensor, and the output's elements are distinct and fill it.
Layout parse_layout(const OpContext& oc, const std::vector<int64_t>& l, const int32_t (&ids)[4]) {
  Graph& g = oc.g;
  if (l.size() != graph::kLayoutInts)
    oc.fail(ErrorKind::InvalidArgument, "layout must hold " + std::to_string(graph::kLayoutInts) + " integers, got " +
                                            std::to_string(l.size()));
  for (int64_t x : l)
    if (x < 0 || x > std::numeric_limits<uint32_t>::max())
      oc.fail(ErrorKind::InvalidArgument, "layout entry " + std::to_string(x) + " is outside [0, 2^32)");
  Layout y;
  y.b = l[0], y.h = l[1], y.hkv = l[2], y.sq = l[3], y.skv = l[4], y.d = l[5], y.dv = l[6];
  for (int t = 0; t < 4; ++t)
    for (int e = 0; e < 4; ++e) y.at[t][e] = l[7 + 4 * t + e];
  if (y.b < 1 || y.h < 1 || y.hkv < 1 || y.d < 1 || y.dv < 1 || y.h % y.hkv)
    oc.fail(ErrorKind::InvalidArgument, "layout: batch, heads, head dims must be positive and kv heads must divide heads");
  static const char* names[4] = {"q", "k", "v", "out"};
  // Entries are below 2^32, so these sums of products fit 128 bits.
  using wide = unsigned __int128;
  const int64_t heads[4] = {y.h, y.hkv, y.hkv, y.h}, rows[4] = {y.sq, y.skv, y.skv, y.sq},
                width[4] = {y.d, y.d, y.dv, y.dv};
  for (int t = 0; t < 4; ++t) {
    const auto* a = y.at[t];
    wide last = wide(a[0]) + wide(y.b - 1) * wide(a[1]) + wide(heads[t] - 1) * wide(a[2]) +
                wide(rows[t] - 1) * wide(a[3]) + wide(width[t] - 1);
    if (rows[t] > 0 && last >= wide(g.tensor(ids[t]).max_numel()))
      oc.fail(ErrorKind::InvalidArgument, std::string("layout reads ") + names[t] + " past the end of " +
                                              shape_str(g.tensor(ids[t]).max_dims));
  }
  // The output: as many elements as the attention gives, none written twice (sorted by stride,
  // each dim steps past everything the smaller ones reach).
  if (wide(g.tensor(ids[3]).max_numel()) != wide(y.b) * wide(y.h) * wide(y.sq) * wide(y.dv))
    oc.fail(ErrorKind::InvalidArgument, "layout: out " + shape_str(g.tensor(ids[3]).max_dims) + " does not hold [" +
                                            std::to_string(y.b) + ", " + std::to_string(y.h) + ", " + std::to_string(y.sq) +
                                            ", " + std::to_string(y.dv) + "]");
  std::vector<std::pair<int64_t, int64_t>> dims{{y.at[3][1], y.b}, {y.at[3][2], y.h}, {y.at[3][3], y.sq}, {1, y.dv}};
  std::sort(dims.begin(), dims.end());
  wide reach = 0;
  for (auto [stride, size] : dims) {
    if (size <= 1) continue;
    if (wide(stride) <= reach) oc.fail(ErrorKind::InvalidArgument, "layout writes some output elements twice");
    reach += wide(stride) * wide(size - 1);
  }
  return y;
}

// ---------------------------------------------------------------- et_vk.sdpa, etwebgpu.attention
// et_vk.sdpa [q, k, v, attn_mask (Tensor|Null), scale (Double|Null), out]; layout [B..., H, S, D];
// k/v heads equal q's or 1 (matmul broadcasting).
// etwebgpu.attention [q, k, v, attn_mask (Tensor|Null), scale (Double|Null), zero_masked (Bool),
// layout (IntList|Null), out] (graph/attention_fusion.h): rank 4 or a fixed layout, q heads a
// multiple of k/v heads (GQA), and rows with no visible key give 0 under zero_masked.
void build_attention(OpContext& oc, bool fused) {
  Graph& g = oc.g;
  int32_t q = oc.arg(0), k = oc.arg(1), v = oc.arg(2), mask = oc.arg(3), out = oc.out();
  bool zero_masked = fused && g.boolean(oc.arg(5));
  for (int32_t id : {q, k, v, out}) require_dtype(oc, id, {VkDType::Float32, VkDType::Float16}, "q/k/v/out");
  int mask_kind = 0;
  if (!g.is_null(mask)) {
    require_dtype(oc, mask, {VkDType::Float32, VkDType::Float16, VkDType::Bool}, "attn_mask");
    mask_kind = g.tensor(mask).dtype == VkDType::Bool ? 2 : 1;
  }
  std::optional<double> scale_opt = g.opt_number(oc.arg(4));
  std::optional<Layout> layout;
  if (fused && !g.is_null(oc.arg(6))) layout = parse_layout(oc, g.int_list(oc.arg(6)), {q, k, v, out});
  const auto& tq = g.tensor(q);
  // Maximum shapes as [B..., H, S, D]: the tensors' own, or the layout's.
  std::vector<int64_t> mq = tq.max_dims, mk = g.tensor(k).max_dims, mv = g.tensor(v).max_dims;
  if (layout) {
    const Layout& y = *layout;
    mq = {y.b, y.h, y.sq, y.d}, mk = {y.b, y.hkv, y.skv, y.d}, mv = {y.b, y.hkv, y.skv, y.dv};
  }
  int64_t r = static_cast<int64_t>(mq.size());
  if (r < 2 || r > 8) oc.fail(ErrorKind::Unsupported, "q must have rank 2..8, got " + shape_str(tq.max_dims));
  if (fused && r != 4) oc.fail(ErrorKind::InvalidArgument, "q must be [B, H, S_q, D], got " + shape_str(tq.max_dims));
  if (!layout)
    for (int32_t id : {k, v, out})
      if (g.tensor(id).rank() != r)
        oc.fail(ErrorKind::Unsupported, "q, k, v and out must have the same rank (no batch broadcasting)");
  if (mask_kind && (g.tensor(mask).rank() < 2 || g.tensor(mask).rank() > r))
    oc.fail(ErrorKind::InvalidArgument, "attn_mask " + shape_str(g.tensor(mask).max_dims) + " must be [..., S_q, S_kv]");
  // Limits from the maximum shapes, before any buffer is allocated.
  int64_t max_rows = prod(mq, 0, r - 1), max_skv = mk[r - 2];
  if (mq.back() != mk.back()) oc.fail(ErrorKind::InvalidArgument, "q and k head dims differ: " + shape_str(mq) + " vs " + shape_str(mk));
  if (g.tensor(out).max_numel() < max_rows * mv.back())
    oc.fail(ErrorKind::InvalidArgument, "out " + shape_str(g.tensor(out).max_dims) + " is smaller than [.., S_q, D_v]");

  auto od = std::make_shared<std::vector<int64_t>>();
  // etwebgpu.attention may carry an epilogue after its 7 arguments (graph/epilogue_fusion.h).
  const Epilogue ep = fused ? Epilogue::read(oc, 7, "attention") : Epilogue{};
  auto att = Attention::build(oc, q, k, v, out, mask, mask_kind, prod(mq, 0, r - 2), mq[r - 2], max_skv, mq.back(),
                              mv.back(), ep);
  // A fixed layout holds for the exported shapes only: q, k and v must keep them.
  std::vector<std::pair<int32_t, std::vector<int64_t>>> fixed;
  if (layout)
    for (int32_t id : {q, k, v}) fixed.emplace_back(id, g.tensor(id).max_dims);
  std::vector<int64_t> out_dims = g.tensor(out).max_dims;
  oc.prepare([att, od, q, k, v, mask, mask_kind, scale_opt, r, fused, zero_masked, layout, mq, mk, mv, fixed,
              out_dims](const kernel::Live& l) {
    auto bad = [](const std::string& m) { throw Error(ErrorKind::InvalidArgument, m); };
    for (const auto& [id, d] : fixed)
      if (l.dims(id) != d)
        bad("fused attention with a fixed layout got " + shape_str(l.dims(id)) + " for a tensor exported as " + shape_str(d));
    const auto& dq = layout ? mq : l.dims(q);
    const auto& dk = layout ? mk : l.dims(k);
    const auto& dv = layout ? mv : l.dims(v);
    size_t R = static_cast<size_t>(r);
    int64_t H = R >= 3 ? dq[R - 3] : 1, Sq = dq[R - 2], D = dq[R - 1];
    int64_t Hk = R >= 3 ? dk[R - 3] : 1, Skv = dk[R - 2];
    if (dk[R - 1] != D) bad("q " + shape_str(dq) + " and k " + shape_str(dk) + " head dims differ");
    if (dv[R - 2] != Skv || (R >= 3 && dv[R - 3] != Hk)) bad("k " + shape_str(dk) + " and v " + shape_str(dv) + " differ");
    for (size_t i = 0; i + 3 < R; ++i)
      if (dk[i] != dq[i] || dv[i] != dq[i]) bad("batch dims of q " + shape_str(dq) + " and k/v " + shape_str(dk) + " differ");
    if (fused ? (Hk <= 0 || H % Hk) : (Hk != H && Hk != 1))
      bad("k/v heads " + std::to_string(Hk) + " must " + (fused ? "divide" : "equal") + " q heads " + std::to_string(H) +
          (fused ? "" : " or be 1"));
    int64_t B = prod(dq, 0, R >= 3 ? R - 3 : 0), Dv = dv[R - 1];
    if (layout) {
      *od = out_dims;
    } else {
      *od = dq;
      (*od)[R - 1] = Dv;
    }
    Params p;
    p.b = kernel::u32(B, "batch");
    p.h = kernel::u32(H, "heads");
    p.sq = kernel::u32(Sq, "S_q");
    p.skv = kernel::u32(Skv, "S_kv");
    p.d = kernel::u32(D, "D");
    p.dv = kernel::u32(Dv, "D_v");
    p.group = kernel::u32(H / Hk, "group");  // k/v head = h / group
    p.zero_masked = zero_masked;
    p.scale = static_cast<float>(scale_opt ? *scale_opt : 1.0 / std::sqrt(static_cast<double>(D)));
    if (layout) {
      const auto& a = layout->at;
      p.q_o = kernel::u32(a[0][0], "offset"), p.q_b = kernel::u32(a[0][1], "stride"), p.q_h = kernel::u32(a[0][2], "stride"), p.q_s = kernel::u32(a[0][3], "stride");
      p.k_o = kernel::u32(a[1][0], "offset"), p.k_b = kernel::u32(a[1][1], "stride"), p.k_h = kernel::u32(a[1][2], "stride"), p.k_s = kernel::u32(a[1][3], "stride");
      p.v_o = kernel::u32(a[2][0], "offset"), p.v_b = kernel::u32(a[2][1], "stride"), p.v_h = kernel::u32(a[2][2], "stride"), p.v_s = kernel::u32(a[2][3], "stride");
      p.o_o = kernel::u32(a[3][0], "offset"), p.o_b = kernel::u32(a[3][1], "stride"), p.o_h = kernel::u32(a[3][2], "stride"), p.o_s = kernel::u32(a[3][3], "stride");
    } else {
      p.q_s = kernel::u32(D, "stride"), p.q_h = kernel::u32(Sq * D, "stride"), p.q_b = kernel::u32(H * Sq * D, "stride");
      p.k_s = kernel::u32(D, "stride"), p.k_h = kernel::u32(Skv * D, "stride"), p.k_b = kernel::u32(Hk * Skv * D, "stride");
      p.v_s = kernel::u32(Dv, "stride"), p.v_h = kernel::u32(Skv * Dv, "stride"), p.v_b = kernel::u32(Hk * Skv * Dv, "stride");
      p.o_s = kernel::u32(Dv, "stride"), p.o_h = kernel::u32(Sq * Dv, "stride"), p.o_b = kernel::u32(H * Sq * Dv, "stride");
    }
    if (mask_kind) {
      // Broadcast the mask to [B..., H, S_q, S_kv]; folded batch dims must be all 1 or all full.
      std::vector<int64_t> full(dq.begin(), dq.end() - 1);
      full.push_back(Skv);
      const auto& dm = l.dims(mask);
      std::vector<int64_t> bs;
      try {
        if (broadcast_shape(dm, full) != full) bad("attn_mask " + shape_str(dm) + " does not broadcast to " + shape_str(full));
        bs = broadcast_strides(dm, full);
      } catch (const Error& e) {
        bad(std::string("attn_mask: ") + e.what());
      }
      p.m_c = kernel::u32(bs[R - 1], "stride");
      p.m_s = kernel::u32(bs[R - 2], "stride");
      p.m_h = R >= 3 ? kernel::u32(bs[R - 3], "stride") : 0;
      if (R > 3) {
        bool all0 = true, contig = true;
        int64_t expect = bs[R - 4];
        for (int64_t i = static_cast<int64_t>(R) - 4; i >= 0; --i) {
          all0 = all0 && bs[i] == 0;
          contig = contig && bs[i] == expect;
          expect *= full[i];
        }
        if (!all0 && !contig)
          bad("attn_mask " + shape_str(dm) + " broadcasts over only some of the batch dims of " + shape_str(full));
        p.m_b = all0 ? 0 : kernel::u32(bs[R - 4], "stride");
      }
    }
    att->set(p);
  });
  oc.output(out, [od](const kernel::Live&) { return *od; });
}

void build_sdpa(OpContext& oc) { build_attention(oc, false); }
void build_fused_attention(OpContext& oc) { build_attention(oc, true); }

// ---------------------------------------------------------------- KV cache
// value [1, S, Hkv, D] written into cache [1, Cmax, Hkv, D] at row start_pos: checked at load and
// per run; written by kv_cache_write.wgsl (add_cache_writes), both caches of a node in one dispatch.
struct CacheWrite {
  int32_t value = -1, cache = -1, start = -1;
  uint32_t elem = 4;  // bytes per element of both (one float storage)
  void build(OpContext& oc, int32_t val, int32_t c, int32_t st) {
    Graph& g = oc.g;
    value = val, cache = c, start = st;
    const auto& tv = g.tensor(val);
    const auto& tc = g.tensor(c);
    if (tv.rank() != 4 || tc.rank() != 4)
      oc.fail(ErrorKind::Unsupported, "value " + shape_str(tv.max_dims) + " and cache " + shape_str(tc.max_dims) +
                                          " must be [1, S, H, D] and [1, Cmax, H, D]");
    if (tv.max_dims[0] != 1 || tc.max_dims[0] != 1) oc.fail(ErrorKind::Unsupported, "only batch 1 is supported");
    if (tv.max_dims[2] != tc.max_dims[2] || tv.max_dims[3] != tc.max_dims[3])
      oc.fail(ErrorKind::InvalidArgument, "value " + shape_str(tv.max_dims) + " does not match cache " + shape_str(tc.max_dims));
    if (tv.storage != tc.storage)
      oc.fail(ErrorKind::Unsupported, std::string("value stored as ") + kernel::storage_name(tv.storage) + ", cache as " +
                                          kernel::storage_name(tc.storage));
    elem = kernel::element_bytes(tc.storage);
    if (tc.max_dims[2] * tc.max_dims[3] * elem % 4)
      oc.fail(ErrorKind::Unsupported, "a cache row of " + std::to_string(tc.max_dims[2] * tc.max_dims[3]) + " " +
                                          kernel::storage_name(tc.storage) + " elements is not a whole number of 32-bit words");
    auto k = g.kind(st);
    if (k != format::VkValueKind::Int && k != format::VkValueKind::SymInt && k != format::VkValueKind::Double)
      oc.fail(ErrorKind::Format, "start_pos must be an Int or SymInt");
    g.integer(st);
  }
  // Checks the live shapes; returns the live (start_pos, S).
  std::pair<int64_t, int64_t> check(const kernel::Live& l) const {
    const auto& dv = l.dims(value);
    const auto& dc = l.dims(cache);
    int64_t sp = l.integer(start);
    int64_t S = dv[1];
    if (dv[0] != 1 || dv[2] != dc[2] || dv[3] != dc[3])
      throw Error(ErrorKind::InvalidArgument, "value " + shape_str(dv) + " does not match cache " + shape_str(dc));
    if (sp < 0 || sp + S > dc[1])
      throw Error(ErrorKind::InvalidArgument, "start_pos " + std::to_string(sp) + " + S " + std::to_string(S) +
                                                  " exceeds the cache length " + std::to_string(dc[1]));
    return {sp, S};
  }
};

// The node's cache writes, first in it (attention reads the updated caches): `second` (the value
// cache of sdpa_with_kv_cache, same shapes) in the same dispatch, skipped in runs where `skip`
// holds (the attention writes them itself).
void add_cache_writes(OpContext& oc, std::shared_ptr<CacheWrite> first, std::shared_ptr<CacheWrite> second,
                      std::shared_ptr<const bool> skip = nullptr) {
  Graph& g = oc.g;
  struct WriteParams { uint32_t words, at, pad0, pad1; };
  kernel::Kernel k("kv_cache_write");
  k.buffer("K", g.buffer(first->value), "u32", kernel::Access::Read)
      .buffer("KC", g.buffer(first->cache), "u32", kernel::Access::ReadWrite);
  if (second) {
    k.define("PAIR");
    k.buffer("V", g.buffer(second->value), "u32", kernel::Access::Read)
        .buffer("VC", g.buffer(second->cache), "u32", kernel::Access::ReadWrite);
  }
  auto words_at = [first, second](const kernel::Live& l) {
    auto [sp, S] = first->check(l);
    if (second) second->check(l);
    const auto& dv = l.dims(first->value);
    const uint64_t row = static_cast<uint64_t>(dv[2] * dv[3]) * first->elem / 4;
    return std::pair<uint64_t, uint64_t>{static_cast<uint64_t>(S) * row, static_cast<uint64_t>(sp) * row};
  };
  oc.add(k.params<WriteParams>([words_at](const kernel::Live& l) {
            auto [words, at] = words_at(l);
            return WriteParams{kernel::u32(static_cast<int64_t>(words), "cache words"), kernel::u32(static_cast<int64_t>(at), "cache offset"), 0, 0};
          })
             .groups([words_at](const kernel::Live& l) {
               const uint64_t wgs = kernel::ceil_div(words_at(l).first, 256);
               const uint64_t x = std::min<uint64_t>(wgs, 32768);
               return kernel::Groups::grid(x, kernel::ceil_div(wgs, x));
             })
             .when([skip](const kernel::Live&) { return !skip || !*skip; })
             .variant("kv_cache_write"));
}

// update_cache.default [value, cache, start_pos, out]. The llama op mutates `cache` in place and
// its returned tensor is a placeholder the CPU kernel leaves unwritten; we do the same.
void build_update_cache(OpContext& oc) {
  int32_t value = oc.arg(0), cache = oc.arg(1), start = oc.arg(2);
  require_dtype(oc, value, {VkDType::Float32, VkDType::Float16}, "value");
  require_dtype(oc, cache, {VkDType::Float32, VkDType::Float16}, "cache");
  auto cw = std::make_shared<CacheWrite>();
  cw->build(oc, value, cache, start);
  add_cache_writes(oc, cw, nullptr);
}

// sdpa_with_kv_cache.default [q, k, v, k_cache, v_cache, start_pos, seq_len, attn_mask, drop_p,
// is_causal, scale, out]: writes k/v into the caches at start_pos, then causal attention of
// q [1, S, Hq, D] over cache rows [0, start_pos + S) with GQA (Hq % Hkv == 0).
void build_sdpa_kv(OpContext& oc) {
  Graph& g = oc.g;
  int32_t q = oc.arg(0), k = oc.arg(1), v = oc.arg(2), kc = oc.arg(3), vc = oc.arg(4), start = oc.arg(5);
  int32_t seq_len = oc.arg(6), mask = oc.arg(7), drop = oc.arg(8), causal = oc.arg(9), out = oc.out();
  for (int32_t id : {q, k, v, kc, vc, out}) require_dtype(oc, id, {VkDType::Float32, VkDType::Float16}, "q/k/v/caches/out");
  if (!g.is_null(mask)) oc.fail(ErrorKind::Unsupported, "attn_mask is not supported (causal attention only)");
  if (!g.is_null(drop) && g.number(drop) != 0.0) oc.fail(ErrorKind::Unsupported, "dropout_p must be 0");
  if (!g.is_null(causal) && !g.boolean(causal)) oc.fail(ErrorKind::Unsupported, "only is_causal=True is supported");
  std::optional<double> scale_opt = g.opt_number(oc.arg(10));
  const auto& tq = g.tensor(q);
  const auto& tkc = g.tensor(kc);
  if (tq.rank() != 4 || tq.max_dims[0] != 1) oc.fail(ErrorKind::Unsupported, "q must be [1, S, Hq, D], got " + shape_str(tq.max_dims));
  int64_t Hq = tq.max_dims[2], D = tq.max_dims[3];
  if (tkc.rank() != 4) oc.fail(ErrorKind::Unsupported, "k_cache must be [1, Cmax, Hkv, D]");
  int64_t Cmax = tkc.max_dims[1], Hkv = tkc.max_dims[2];
  if (tkc.max_dims[3] != D) oc.fail(ErrorKind::InvalidArgument, "q and k_cache head dims differ");
  if (g.tensor(vc).max_dims != tkc.max_dims) oc.fail(ErrorKind::InvalidArgument, "k_cache and v_cache shapes differ");
  if (Hkv <= 0 || Hq % Hkv) oc.fail(ErrorKind::InvalidArgument, "q heads " + std::to_string(Hq) + " must be a multiple of kv heads " + std::to_string(Hkv));
  if (g.tensor(out).max_numel() < tq.max_numel()) oc.fail(ErrorKind::InvalidArgument, "out is smaller than q");
  auto sk = g.kind(seq_len);
  if (sk != format::VkValueKind::Int && sk != format::VkValueKind::SymInt && sk != format::VkValueKind::Double)
    oc.fail(ErrorKind::Format, "seq_len must be an Int or SymInt");
  // ExecuTorch's Vulkan partitioner rewrites update_cache + custom_sdpa into this op with seq_len
  // written as the constant 1 whatever q's length (patterns/sdpa.py); q's live length is then the
  // sequence length. Any other value must equal it.
  const bool seq_placeholder = sk == format::VkValueKind::Int && g.integer(seq_len) == 1;

  // The cache writes come first in the node: attention reads the updated caches. A decode run on
  // the one-pass kernel stores the new rows itself and skips them.
  auto kw = std::make_shared<CacheWrite>(), vw = std::make_shared<CacheWrite>();
  kw->build(oc, k, kc, start);
  vw->build(oc, v, vc, start);
  auto in_pass = std::make_shared<bool>(false);
  add_cache_writes(oc, kw, vw, in_pass);
  auto att = Attention::build(oc, q, kc, vc, out, -1, 0, Hq, tq.max_dims[1], Cmax, D, D, Epilogue{}, NewRows{k, v});
  oc.prepare([att, kw, vw, q, k, seq_len, seq_placeholder, scale_opt, in_pass](const kernel::Live& l) {
    auto [sp, S] = kw->check(l);
    vw->check(l);
    const auto& dq = l.dims(q);
    const auto& dk = l.dims(k);
    if (dq[0] != 1 || dq[1] != S || dk[1] != S)
      throw Error(ErrorKind::InvalidArgument, "q " + shape_str(dq) + " and k " + shape_str(dk) +
                                                  " must share batch 1 and sequence length");
    if (!seq_placeholder && l.integer(seq_len) != S)
      throw Error(ErrorKind::InvalidArgument, "seq_len " + std::to_string(l.integer(seq_len)) +
                                                  " differs from q's sequence length " + std::to_string(S));
    int64_t Hq = dq[2], D = dq[3], Hkv = dk[2];
    Params p;
    p.b = 1, p.h = kernel::u32(Hq, "heads"), p.sq = kernel::u32(S, "S"), p.skv = kernel::u32(sp + S, "S_kv");
    p.d = p.dv = kernel::u32(D, "D");
    p.group = kernel::u32(Hq / Hkv, "group");
    p.causal = 1;
    p.start = kernel::u32(sp, "start_pos");
    p.scale = static_cast<float>(scale_opt ? *scale_opt : 1.0 / std::sqrt(static_cast<double>(D)));
    // BSHD strides; the batch stride is unused (batch 1).
    p.q_s = p.o_s = kernel::u32(Hq * D, "stride"), p.q_h = p.o_h = kernel::u32(D, "stride");
    p.k_s = p.v_s = kernel::u32(Hkv * D, "stride"), p.k_h = p.v_h = kernel::u32(D, "stride");
    att->set(p);
    *in_pass = att->writes_in_pass();
  });
  oc.output(out, [q](const kernel::Live& l) { return l.dims(q); });
}

ETW_REGISTER_OP("et_vk.sdpa.default", build_sdpa);
ETW_REGISTER_OP(graph::kFusedAttentionOp, build_fused_attention);
// Its kernels bind q, k, v, the mask, out and the partials: two storage buffers are left.
ETW_REGISTER_EPILOGUE_HOST_BINDING(graph::kFusedAttentionOp, 2);
ETW_REGISTER_OP("sdpa_with_kv_cache.default", build_sdpa_kv);
ETW_REGISTER_OP("update_cache.default", build_update_cache);

}  // namespace
}  // namespace etwebgpu::ops
