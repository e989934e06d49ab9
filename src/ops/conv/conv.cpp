// aten.convolution.default and et_vk.conv_with_clamp.default: 2-D NCHW and 1-D (N, C, L as H = 1).
// Routes: groups == 1 and not transposed -> implicit-im2col GEMM: the large-tile kernel
// (conv_gemm_large, 128x128 or 64x128 tiles) when K >= 32 and the output gives enough tiles to
// fill the GPU, else the 64x64 conv_gemm; grouped -> direct kernel (vec4 over input channels when
// IC/groups % 4 == 0); depthwise -> conv_depthwise (four outputs of a row per invocation);
// transposed -> gather kernel (conv_transpose.wgsl).
// The 64x64 GEMM splits K when its tiles are too few to fill the GPU (two kernels: partial sums,
// then their reduce with bias and epilogue).
// Where the split would be taken over a K below kSmallBelowK, or the direct kernel over a K above
// kSmallOverDirectK, into at most kSmallMaxTiles of its tiles and without a fused prologue, the
// small-tile kernel (conv_gemm_small: 16x16 tiles, K split inside the workgroup, one dispatch)
// runs instead.
// etwebgpu.conv_channels_last: the same, its input read or output stored N, H, W, C
// (conv_channels_last.h). etwebgpu.conv_shuffle: the same, its output stored as the odd channels
// of a channel shuffle with a passthrough tensor (conv_shuffle.h).
// force_route["conv"] = "gemm" (64x64) | "gemm_splitk" (64x64, K split) | "gemm_small" (16x16, K
// split in the workgroup) | "gemm_large" (128x128) | "gemm_large_m64" (64x128) | "direct" picks
// that path for groups == 1. Every route takes a fused
// epilogue (ops/epilogue.h).
#include <cmath>
#include <limits>

#include "graph/epilogue_fusion.h"
#include "ops/conv/conv_channels_last.h"
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_prologue.h"
#include "ops/conv/conv_shuffle.h"
#include "ops/epilogue.h"
#include "ops/memory/channel_shuffle.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using Params = ConvParams;

enum class Route { Gemm, Direct, Transposed };

// Large-tile conv GEMM: taken when it still gives at least this many workgroups (see matmul.cpp).
constexpr uint64_t kLargeMinTiles = 128;
// Split-K for the 64x64 GEMM (op_common.h): when its tiles leave the GPU idle (as in a ResNet's
// 14x14 and 7x7 layers) K is split so that about kSplit.target workgroups run; the partials go to
// the graph's shared scratch (at most kMaxSplitFloats) and a reduce kernel adds them.
// From bench/route_sweep.sh on the H200 (ms, 64x64 / split / direct): 3x3 512->512 at 7x7
// 0.626 / 0.048 / 0.236; 3x3 64->64 at 56x56 0.086 / 0.043 / 0.069; 1x1 960->160 at 7x7
// 0.137 / 0.027 (32 splits) / 0.061. (1x1 160->960 at 7x7: 0.032 / 0.025 / 0.019: the direct
// kernel wins short-K convs of few tiles; not taken by default yet.)
// Below 256 tiles like the matmul GEMM: a Whisper-size encoder's conv1d 384->384 k3 at 1500 has
// 144 tiles over K = 1152.
constexpr SplitPolicy kSplit{/*below_tiles=*/256, /*target=*/256, /*min_k=*/256, /*max_splits=*/32, /*min_chunk=*/32};
constexpr uint64_t kMaxSplitFloats = uint64_t(1) << 22;
// A groups == 1 conv of K <= kDirectMaxK whose 64x64 GEMM would have fewer than kDirectMaxTiles
// tiles takes the direct kernel (H200, 1x1 160->960 at 7x7, 15 tiles: direct 0.019 ms, 64x64
// 0.032, split 0.025; MobileNetV3's expansion convs are of this kind).
constexpr uint64_t kDirectMaxK = 256, kDirectMaxTiles = 64;
// Of those, K above kSmallOverDirectK takes the small tiles when it may (no prologue). H100, GPU
// us, direct / small (1x1 convs of ShuffleNetV2 and MobileNets): 58->58 at 28x28 21.2 / 13.2,
// 116->116 at 14x14 16.6 / 13.1, 232->232 at 7x7 23.2 / 14.3, 160->960 at 7x7 19.2 / 14.6,
// 240->40 at 28x28 24.5 / 17.2, 144->32 at 28x28 18.3 / 13.5, 64->384 at 14x14 14.0 / 13.8; at
// or below 48 the direct kernel wins: 24->58 at 28x28 11.8 / 12.8, 32->192 12.5 / 15.6, 40->240
// 14.6 / 17.6.
constexpr uint64_t kSmallOverDirectK = 48;
bool direct_fits(uint64_t N, uint64_t OC, uint64_t K) { return K <= kDirectMaxK && ceil_div(N, 64) * ceil_div(OC, 64) < kDirectMaxTiles; }
bool small_over_direct(uint64_t N, uint64_t OC, uint64_t K) { return direct_fits(N, OC, K) && K > kSmallOverDirectK; }
// Where the 64x64 GEMM would split K below this, conv_gemm_small runs instead. H100, GPU us,
// small / split / direct (bench/route_sweep.sh, conv_C_OC_HW_KS): 1x1 256->32 at 27x27 15.0 /
// 25.7 / 24.7, 3x3 32->128 at 27x27 18.7 / 32.1 / 28.7, 1x1 384->48 at 13x13 17.0 / 26.2 / 31.2,
// 3x3 64->256 at 13x13 20.8 / 32.4 / 31.0, 1x1 512->1000 at 13x13 37.5 / 41.5 / 60.9, 3x3
// 128->128 at 28x28 39.7 / 45.5 / 78.9, 1x1 960->160 at 7x7 24.7 / 30.4 / 61.9, 3x3 256->256 at
// 14x14 48.0 / 49.0 / 136; 3x3 512->512 at 7x7 (K = 4608) 68.9 / 51.1 / 238. Measured up to
// 693 of its tiles; past kSmallMaxTiles (a Whisper-size conv1d, 384 -> 384 over 1500 steps: 2256)
// the split stays.
constexpr uint64_t kSmallBelowK = 4096, kSmallMaxTiles = 1024;
bool small_tiles_fit(uint64_t N, uint64_t OC) { return ceil_div(N, 16) * ceil_div(OC, 16) <= kSmallMaxTiles; }

// The K split of the 64x64 conv GEMM of N columns, OC rows.
SplitK choose_split(uint64_t N, uint64_t OC, uint64_t K, bool force) {
  return choose_split_k(kSplit, ceil_div(N, 64) * ceil_div(OC, 64), K, force, kMaxSplitFloats / std::max<uint64_t>(N * OC, 1));
}

struct Conf {
  bool conv1d = false, transposed = false;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, oph = 0, opw = 0, groups = 1;
  int64_t OC = 0, KH = 1, KW = 1, icg = 0, ocg = 0;
};

// Which of the ops build_conv builds: their arguments differ after the conv's own nine.
enum class ConvForm { Plain, WithClamp, ChannelsLast, Shuffle };

void build_conv(OpContext& oc, ConvForm form) {
  Graph& g = oc.g;
  const bool with_clamp = form == ConvForm::WithClamp, channels_last = form == ConvForm::ChannelsLast,
             shuffle = form == ConvForm::Shuffle;
  int32_t x = oc.arg(0), w = oc.arg(1), bias = oc.arg(2), out = oc.out();
  // etwebgpu.conv_shuffle (conv_shuffle.h): the pieces it writes (`out` is the first) and the
  // passthrough, which has the conv's output shape.
  std::optional<ShufflePieces> pieces;
  int32_t passthrough = -1;
  if (shuffle) {
    pieces = ShufflePieces::read(oc, oc.out(), "a shuffling convolution");
    out = pieces->first();
    passthrough = oc.arg(9);
    require_dtype(oc, passthrough, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "passthrough");
  }
  for (auto [id, what] : {std::pair{x, "input"}, std::pair{w, "weight"}, std::pair{out, "output"}})
    require_dtype(oc, id, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, what);
  const Tensor& tx = g.tensor(x);
  const Tensor& tw = g.tensor(w);
  // etwebgpu.conv_channels_last (conv_channels_last.h): which sides are N, H, W, C. The input's
  // dims below are the conv's [N, C, H, W] view of it.
  // A mapped side (kInputMapped / kOutputMapped) reads or stores through an Int32 map: the input's
  // arguments are the conv's [N, C, H, W] view of it (IntList) and the map, the output's its map.
  int64_t layout = 0;
  size_t own = channels_last || shuffle ? 10 : with_clamp ? 11 : 9;
  std::vector<int64_t> in_dims;  // kInputMapped: the conv's view of its input
  int32_t in_map = -1, out_map = -1;
  if (channels_last) {
    layout = g.integer(oc.arg(9));
    const bool bad = layout < 1 || layout > 15 || ((layout & kInputChannelsLast) && (layout & kInputMapped)) ||
                     ((layout & kOutputChannelsLast) && (layout & kOutputMapped));
    if (bad)
      oc.fail(ErrorKind::Format, "layout must combine at most one of 1 (input channels-last) and 4 (input mapped) with at most "
                                 "one of 2 (output channels-last) and 8 (output mapped), got " + std::to_string(layout));
    if (layout & kInputMapped) {
      in_dims = g.int_list(oc.arg(own));
      in_map = oc.arg(own + 1);
      own += 2;
    }
    if (layout & kOutputMapped) out_map = oc.arg(own++);
  }
  const bool in_cl = layout & kInputChannelsLast, out_cl = layout & kOutputChannelsLast;
  auto conv_view = [in_cl, in_dims](const std::vector<int64_t>& d) {
    if (!in_dims.empty()) return in_dims;
    if (!in_cl) return d;
    return d.size() == 4 ? std::vector<int64_t>{d[0], d[3], d[1], d[2]} : std::vector<int64_t>{d[0], d[2], d[1]};
  };
  Conf c;
  const size_t x_rank = conv_view(tx.dims).size();
  if (x_rank != 3 && x_rank != 4)
    oc.fail(ErrorKind::Unsupported, "only 1-D (N, C, L) and 2-D (N, C, H, W) convolutions are supported, input is " +
                                        shape_str(conv_view(tx.dims)));
  c.conv1d = x_rank == 3;
  if (tw.rank() != x_rank)
    oc.fail(ErrorKind::InvalidArgument, "weight " + shape_str(tw.dims) + " must have the input's rank " + std::to_string(x_rank));
  // A map is an Int32 constant, an element per element of its side; the input's places lie in the
  // input, the output's are each place of the output once.
  auto check_map = [&](int32_t map, int64_t n, int64_t places, bool once, const char* what) {
    if (!g.is_tensor(map) || g.tensor(map).dtype != VkDType::Int32 || g.tensor(map).constant_id < 0 ||
        g.tensor(map).numel() != n)
      oc.fail(ErrorKind::Format, std::string("the ") + what + " map must be an Int32 constant of " + std::to_string(n) +
                                     " elements");
    const format::ByteSpan b = g.constant_bytes(map);
    if (b.size() < 4 * static_cast<size_t>(n)) oc.fail(ErrorKind::Format, std::string("the ") + what + " map's data is short");
    std::vector<bool> seen(once ? static_cast<size_t>(places) : 0, false);
    for (int64_t i = 0; i < n; ++i) {
      int32_t v;
      std::memcpy(&v, b.data() + 4 * i, 4);
      if (v < 0 || v >= places || (once && seen[static_cast<size_t>(v)]))
        oc.fail(ErrorKind::Format, std::string("the ") + what + " map's element " + std::to_string(i) + " is " + std::to_string(v) +
                                       ": not " + (once ? "an output" : "an input") + " place (0 to " + std::to_string(places - 1) + ")" +
                                       (once ? " or one taken before" : ""));
      if (once) seen[static_cast<size_t>(v)] = true;
    }
  };
  if (in_map >= 0) check_map(in_map, numel(in_dims), tx.numel(), false, "input");
  if (out_map >= 0) check_map(out_map, g.tensor(out).numel(), g.tensor(out).numel(), true, "output");
  auto [sh, sw] = conv_pair(oc, oc.arg(3), c.conv1d, "stride");
  auto [ph, pw] = conv_pair(oc, oc.arg(4), c.conv1d, "padding");
  auto [dh, dw] = conv_pair(oc, oc.arg(5), c.conv1d, "dilation");
  c.transposed = g.boolean(oc.arg(6));
  auto [oph, opw] = conv_pair(oc, oc.arg(7), c.conv1d, "output_padding");
  c.groups = g.integer(oc.arg(8));
  if (c.conv1d) sh = 1, ph = 0, dh = 1, oph = 0;
  c.sh = sh, c.sw = sw, c.ph = ph, c.pw = pw, c.dh = dh, c.dw = dw, c.oph = oph, c.opw = opw;
  if (sh < 1 || sw < 1) oc.fail(ErrorKind::InvalidArgument, "stride must be positive");
  if (dh < 1 || dw < 1) oc.fail(ErrorKind::InvalidArgument, "dilation must be positive");
  if (ph < 0 || pw < 0) oc.fail(ErrorKind::InvalidArgument, "padding must be non-negative");
  if (oph < 0 || opw < 0) oc.fail(ErrorKind::InvalidArgument, "output_padding must be non-negative");
  if (c.groups < 1) oc.fail(ErrorKind::InvalidArgument, "groups must be positive");
  if (!c.transposed && (oph != 0 || opw != 0))
    oc.fail(ErrorKind::InvalidArgument, "non-zero output_padding is only valid for a transposed convolution");
  if (c.transposed && ((oph >= sh && oph >= dh) || (opw >= sw && opw >= dw)))
    oc.fail(ErrorKind::InvalidArgument, "output_padding must be smaller than either stride or dilation");
  c.KW = tw.dims.back();
  c.KH = c.conv1d ? 1 : tw.dims[2];
  int64_t IC = conv_view(tx.dims)[1];
  if (c.transposed) {
    if (tw.dims[0] != IC || IC % c.groups != 0)
      oc.fail(ErrorKind::InvalidArgument, "transposed weight " + shape_str(tw.dims) + " does not match input channels " +
                                              std::to_string(IC) + " with groups " + std::to_string(c.groups));
    c.icg = IC / c.groups;
    c.ocg = tw.dims[1];
    c.OC = c.ocg * c.groups;
  } else {
    c.OC = tw.dims[0];
    c.icg = tw.dims[1];
    if (c.icg * c.groups != IC || c.OC % c.groups != 0)
      oc.fail(ErrorKind::InvalidArgument, "weight " + shape_str(tw.dims) + " does not match input channels " +
                                              std::to_string(IC) + " with groups " + std::to_string(c.groups));
    c.ocg = c.OC / c.groups;
  }
  bool has_bias = !g.is_null(bias);
  if (has_bias) {
    require_dtype(oc, bias, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "bias");
    if (g.tensor(bias).rank() != 1 || g.tensor(bias).dims[0] != c.OC)
      oc.fail(ErrorKind::InvalidArgument, "bias " + shape_str(g.tensor(bias).dims) + " must be [" + std::to_string(c.OC) + "]");
  }
  float out_min = -std::numeric_limits<float>::infinity(), out_max = std::numeric_limits<float>::infinity();
  if (with_clamp) {
    // DBL_MAX and friends turn into +-inf in f32, which clamps nothing, as intended.
    if (auto v = conv_clamp_bound(oc, oc.arg(9))) out_min = *v;
    if (auto v = conv_clamp_bound(oc, oc.arg(10))) out_max = *v;
  }

  const std::string label = with_clamp        ? "conv_with_clamp"
                            : channels_last ? "conv_channels_last"
                            : shuffle       ? "conv_shuffle"
                                            : "convolution";
  const ConvPrologue pro = ConvPrologue::read(oc, own, IC);
  if (!pro.empty() && c.transposed) oc.fail(ErrorKind::Format, "a transposed convolution takes no prologue");
  if (shuffle && (c.transposed || !pro.empty()))
    oc.fail(ErrorKind::Format, "a shuffling convolution is not transposed and takes no prologue");
  Epilogue ep = Epilogue::read(oc, own + pro.args(), pro.empty() ? label : pro.label() + "+" + label, passthrough);
  if (!pro.empty() && ep.empty()) oc.node.op = "fused[" + pro.label() + "+" + label + "]";
  if (pro.inputs() + ep.inputs() > graph::kMaxEpilogueInputs + 1)
    oc.fail(ErrorKind::Limit, std::to_string(pro.inputs()) + " prologue and " + std::to_string(ep.inputs()) +
                                  " epilogue inputs; at most " + std::to_string(graph::kMaxEpilogueInputs + 1) + " in all");

  // A channels-last output holds N, H, W, C (N, L, C) in that order, as [N, H, W, C] or
  // [N, H * W, C]; an epilogue would read its operands in that order, a prologue is not made.
  const size_t out_rank = g.tensor(out).rank();
  if (channels_last && (c.transposed || !ep.empty() || !pro.empty()))
    oc.fail(ErrorKind::Format, "a channels-last convolution is not transposed and takes no prologue or epilogue");
  if (out_cl && !(out_rank == 3 || (out_rank == 4 && !c.conv1d)))
    oc.fail(ErrorKind::Format, "a channels-last output is [N, H, W, C] or [N, H * W, C]; output is " +
                                   shape_str(g.tensor(out).dims));

  Route route = c.transposed ? Route::Transposed : c.groups == 1 ? Route::Gemm : Route::Direct;
  // Gemm route: 0 = pick per run from live shapes, 1 = 64x64 only, 2 = split, 3 = small tiles,
  // 8 / 4 = large TM forced.
  int gemm_force = 0;
  if (const std::string f = pinned_route(oc, "conv", {"gemm", "gemm_splitk", "gemm_small", "gemm_large", "gemm_large_m64", "direct"});
      !f.empty()) {
    if (!c.transposed && c.groups == 1) {
      route = f == "direct" ? Route::Direct : Route::Gemm;
      gemm_force = f == "gemm" ? 1 : f == "gemm_splitk" ? 2 : f == "gemm_small" ? 3 : f == "gemm_large" ? 8 : f == "gemm_large_m64" ? 4 : 0;
    }
  }
  // Large-tile kernels (Gemm route): TM follows OC unless forced. KH/KW are constants so the
  // im2col index split divides by constants.
  int large_tm = 0;
  const int64_t K = c.icg * c.KH * c.KW;
  if (route == Route::Gemm && gemm_force != 1 && gemm_force != 2 && gemm_force != 3) {
    if (gemm_force) large_tm = gemm_force;
    // 64x128 tiles even for OC <= 32 (UNet's 16 and 32 channels at 256x256 and 128x128: 0.069
    // and 0.048 ms against 0.084 and 0.054 for 64x64 tiles).
    else if (K >= 32) large_tm = c.OC >= 128 ? 8 : 4;
  }
  // Where the 64x64 GEMM splits K at the exported (largest) input, the small tiles or the split
  // route exist: the small tiles below kSmallBelowK without a fused prologue (they sample each
  // input element once per four output channels, and would run the prologue as often:
  // MobileNetV3-small's gated projections, H100: 41 us a call against 26 for the split pair);
  // else the split, with its scratch sized there. A conv that does not split there gets neither.
  bool small_route = gemm_force == 3;
  uint64_t split_floats = 0;
  if (route == Route::Gemm && !c.transposed && (gemm_force == 0 || gemm_force == 2)) {
    const auto md = conv_view(tx.max_dims);
    uint64_t N = static_cast<uint64_t>(md[0] * (c.conv1d ? 1 : conv_extent(md[2], c.ph, c.dh, c.KH, c.sh)) *
                                       conv_extent(md.back(), c.pw, c.dw, c.KW, c.sw));
    bool large_there = large_tm && ceil_div(N, 128) * ceil_div(static_cast<uint64_t>(c.OC), 16u * large_tm) >= kLargeMinTiles;
    SplitK sp = N && !large_there ? choose_split(N, c.OC, K, gemm_force == 2) : SplitK{};
    if ((sp.splits > 1 || small_over_direct(N, c.OC, K)) && gemm_force == 0 && pro.empty() && uint64_t(K) < kSmallBelowK && small_tiles_fit(N, c.OC))
      small_route = true;
    else if (sp.splits > 1) split_floats = sp.splits * N * static_cast<uint64_t>(c.OC);
  }
  const gpu::Buffer* part = split_floats ? &g.shared_scratch(g.float_bytes(split_floats)) : nullptr;

  // Per run: the live Params and, on the Gemm route, which kernel runs (-1: the 64x64 conv_gemm,
  // 0 / 1: the large-tile one unaligned / aligned, +4 when OW % 4 == 0 (ROW4), 2: split-K,
  // 3: direct, 6: small tiles) on which grid.
  struct Run {
    Params p{};
    std::vector<int64_t> od;
    int sel = -1;
    kernel::Groups gemm;
  };
  auto run = std::make_shared<Run>();
  if (pieces) pieces->check_channels(oc, c.OC, "the conv's " + std::to_string(c.OC) + " output channels");
  const std::vector<int64_t> mapped_od = out_map >= 0 ? g.tensor(out).dims : std::vector<int64_t>{};
  oc.prepare([run, x, c, route, large_tm, gemm_force, out_min, out_max, split_floats, small_route, out_cl, out_rank,
              conv_view, passthrough, pieces, mapped_od](const kernel::Live& l) {
    const auto xd = conv_view(l.dims(x));
    int64_t B = xd[0], IC = xd[1], H = c.conv1d ? 1 : xd[2], W = xd.back();
    if (IC != c.icg * c.groups)
      throw Error(ErrorKind::InvalidArgument, "input " + shape_str(xd) + " has " + std::to_string(IC) +
                                                  " channels, the weight expects " + std::to_string(c.icg * c.groups));
    int64_t OH, OW;
    if (c.transposed) {
      OH = (H - 1) * c.sh - 2 * c.ph + c.dh * (c.KH - 1) + c.oph + 1;
      OW = (W - 1) * c.sw - 2 * c.pw + c.dw * (c.KW - 1) + c.opw + 1;
    } else {
      OH = conv_extent(H, c.ph, c.dh, c.KH, c.sh);
      OW = conv_extent(W, c.pw, c.dw, c.KW, c.sw);
    }
    if (OH < 1 || OW < 1)
      throw Error(ErrorKind::InvalidArgument, "input " + shape_str(xd) + " is too small for the kernel: output size " +
                                                  std::to_string(OH) + "x" + std::to_string(OW));
    run->od = c.conv1d ? std::vector<int64_t>{B, c.OC, OW} : std::vector<int64_t>{B, c.OC, OH, OW};
    if (pieces) check_shuffle_store(*pieces, l, passthrough, run->od);
    if (out_cl)
      run->od = out_rank == 3 ? std::vector<int64_t>{B, OH * OW, c.OC} : std::vector<int64_t>{B, OH, OW, c.OC};
    if (!mapped_od.empty()) {
      if (numel(mapped_od) != numel(run->od))
        throw Error(ErrorKind::Format, "the mapped output " + shape_str(mapped_od) + " does not hold the conv's " + shape_str(run->od));
      run->od = mapped_od;
    }
    Params& p = run->p;
    p.B = kernel::u32(B, "batch");
    p.IC = kernel::u32(IC, "channels");
    p.H = kernel::u32(H, "H");
    p.W = kernel::u32(W, "W");
    p.OC = kernel::u32(c.OC, "OC");
    p.OH = kernel::u32(OH, "OH");
    p.OW = kernel::u32(OW, "OW");
    p.KH = static_cast<uint32_t>(c.KH);
    p.KW = static_cast<uint32_t>(c.KW);
    p.sh = static_cast<uint32_t>(c.sh), p.sw = static_cast<uint32_t>(c.sw);
    p.ph = static_cast<uint32_t>(c.ph), p.pw = static_cast<uint32_t>(c.pw);
    p.dh = static_cast<uint32_t>(c.dh), p.dw = static_cast<uint32_t>(c.dw);
    p.groups = static_cast<uint32_t>(c.groups);
    p.icg = static_cast<uint32_t>(c.icg), p.ocg = static_cast<uint32_t>(c.ocg);
    p.K = kernel::u32(c.icg * c.KH * c.KW, "K");
    p.N = kernel::u32(B * OH * OW, "B*OH*OW");
    p.total = kernel::u32(numel(run->od), "output numel");
    // Input index arithmetic is 32-bit too.
    kernel::u32(numel(xd), "input numel");
    p.out_min = out_min;
    p.out_max = out_max;
    if (route == Route::Gemm) {
      uint32_t bm = 16u * static_cast<uint32_t>(large_tm);
      run->sel = -1;
      if (large_tm && (gemm_force || ceil_div(p.N, 128) * ceil_div(p.OC, bm) >= kLargeMinTiles))
        run->sel = ((p.OC % bm == 0 && p.N % 128 == 0 && p.K % 8 == 0) ? 1 : 0) + (p.OW % 4 == 0 ? 4 : 0);
      run->gemm = kernel::Groups::grid(run->sel < 0 ? ceil_div(p.N, 64) : ceil_div(p.N, 128),
                                       ceil_div(p.OC, run->sel < 0 ? 64 : bm));
      p.splits = 1;
      if (run->sel < 0 && small_route &&
          (gemm_force == 3 || (small_tiles_fit(p.N, p.OC) && (choose_split(p.N, p.OC, p.K, false).splits > 1 ||
                                                               small_over_direct(p.N, p.OC, p.K))))) {
        run->sel = 6;
        run->gemm = kernel::Groups::grid(ceil_div(p.N, 16), ceil_div(p.OC, 16));
      }
      if (run->sel < 0 && split_floats) {
        SplitK sp = choose_split(p.N, p.OC, p.K, gemm_force == 2);
        if (sp.splits > 1 && uint64_t(sp.splits) * p.N * p.OC <= split_floats) {
          p.splits = sp.splits;
          p.kchunk = sp.chunk;
          run->sel = 2;
          run->gemm.z = sp.splits;
        }
      }
      // Short K over few tiles: the direct kernel (a slot per output) fills the GPU better.
      if (run->sel < 0 && !gemm_force && direct_fits(p.N, p.OC, p.K)) run->sel = 3;
    }
  });
  // The pieces' dims are checked against the live output above.
  if (pieces) pieces->declare(oc);
  else oc.output(out, [run](const kernel::Live&) { return run->od; });
  // Where a kernel stores: O, or the pieces and the passthrough.
  auto stores = [&](kernel::Kernel& k) {
    if (pieces) bind_shuffle_store(k, *pieces, passthrough);
    else k.output("O", out);
  };

  // The maps of a mapped side, for the kernels that read the input or store the output.
  auto maps = [&](kernel::Kernel& k, bool reads, bool stores_out) {
    if (reads && in_map >= 0) k.define("IN_MAPPED").input("IMAP", in_map);
    if (stores_out && out_map >= 0) k.define("OUT_MAPPED").input("OMAP", out_map);
  };
  auto conv_kernel = [&](const char* shader) {
    kernel::Kernel k(shader, shader);
    k.constant("HAS_BIAS", has_bias ? 1.0 : 0.0)
        .constant("HAS_CLAMP", with_clamp ? 1.0 : 0.0)
        .input("X", x)
        .input("Wt", w)
        .input("BIAS", has_bias ? bias : -1);
    stores(k);
    if (in_cl) k.constant("IN_CHANNELS_LAST", 1);
    if (out_cl) k.constant("OUT_CHANNELS_LAST", 1);
    maps(k, true, true);
    pro.attach(k, ep.empty());
    ep.apply<Params>(k, [run](const kernel::Live&) { return run->p; });
    return k;
  };
  if (route == Route::Gemm && part) {
    kernel::Kernel split("conv_gemm", "conv_gemm");
    split.define("SPLITK").input("X", x).input("Wt", w).buffer("PART", *part, g.float_storage(), kernel::Access::ReadWrite);
    if (in_cl) split.constant("IN_CHANNELS_LAST", 1);
    maps(split, true, false);
    pro.attach(split, true);
    split.params<Params>([run](const kernel::Live&) { return run->p; });
    oc.add(split.when([run](const kernel::Live&) { return run->sel == 2; })
               .groups([run](const kernel::Live&) { return run->gemm; })
               .variant("conv_gemm_splitk"));
    kernel::Kernel reduce("conv_gemm", "conv_splitk_reduce");
    reduce.define("SPLITK_REDUCE")
        .constant("HAS_BIAS", has_bias ? 1.0 : 0.0)
        .constant("HAS_CLAMP", with_clamp ? 1.0 : 0.0)
        .buffer("PART", *part, g.float_storage(), kernel::Access::Read)
        .input("BIAS", has_bias ? bias : -1);
    stores(reduce);
    if (out_cl) reduce.constant("OUT_CHANNELS_LAST", 1);
    maps(reduce, false, true);
    ep.apply<Params>(reduce, [run](const kernel::Live&) { return run->p; });
    oc.add(reduce.when([run](const kernel::Live&) { return run->sel == 2; })
               .groups([run](const kernel::Live&) {
                 return kernel::Groups::linear(ceil_div(uint64_t(run->p.OC) * run->p.N, 256));
               })
               .variant("conv_splitk_reduce"));
  }
  if (route == Route::Gemm && small_route) {
    kernel::Kernel k = conv_kernel("conv_gemm_small");
    k.constant("KHC", double(c.KH)).constant("KWC", double(c.KW));
    oc.add(k.when([run](const kernel::Live&) { return run->sel == 6; })
               .groups([run](const kernel::Live&) { return run->gemm; })
               .variant("conv_gemm_small"));
  }
  if (route == Route::Gemm) {
    for (int sel : {-1, 0, 1, 4, 5}) {
      if (sel >= 0 && !large_tm) break;
      kernel::Kernel k = conv_kernel(sel < 0 ? "conv_gemm" : "conv_gemm_large");
      std::string name = "conv_gemm";
      if (sel >= 0) {
        k.constant("TM", large_tm).constant("ALIGNED", sel & 1).constant("ROW4", sel >> 2);
        k.constant("KHC", double(c.KH)).constant("KWC", double(c.KW));
        name = std::string(large_tm == 8 ? "conv_gemm_128x128" : "conv_gemm_64x128") + (sel & 1 ? "_aligned" : "") +
               (sel & 4 ? "_row4" : "");
      }
      oc.add(k.when([run, sel](const kernel::Live&) { return run->sel == sel; })
                 .groups([run](const kernel::Live&) { return run->gemm; })
                 .variant(name));
    }
  }
  // Depthwise (one input and one output channel a group): four outputs of a row per invocation,
  // unless force_route["depthwise"] = "direct".
  const bool depthwise = route == Route::Direct && c.groups > 1 && c.icg == 1 && c.ocg == 1 &&
                         pinned_route(oc, "depthwise", {"rows", "direct"}) != "direct";
  if (depthwise) {
    oc.add(conv_kernel("conv_depthwise")
               .constant("KHC", double(c.KH))
               .constant("KWC", double(c.KW))
               .groups([run](const kernel::Live&) {
                 const Params& p = run->p;
                 return kernel::Groups::linear(ceil_div(uint64_t(p.B) * p.OC * p.OH * ceil_div(p.OW, 4), 256));
               })
               .variant("conv_depthwise"));
  } else if (route == Route::Direct || (route == Route::Gemm && !gemm_force)) {
    bool v4 = c.icg % 4 == 0;
    kernel::Kernel k = conv_kernel("conv_direct");
    k.constant("VEC4", v4 ? 1.0 : 0.0).flat(shuffle ? passthrough : out).variant(v4 ? "conv_direct_vec4" : "conv_direct");
    if (route == Route::Gemm) k.when([run](const kernel::Live&) { return run->sel == 3; });
    oc.add(std::move(k));
  } else if (route == Route::Transposed) {
    // Four output channels of a group per slot (OCT in conv_transpose.wgsl), summed by `ics` lanes:
    // the UNet's k2 s2 layers on the H200 (us, ics 1 / 2 / 4): 256 input channels 43 / 35 / 25,
    // 64 channels 21 / 25 / 27, 32 channels 22 / 27 / 33 (a bare dispatch measures 8.5).
    uint32_t ics = c.icg >= 256 ? 4 : c.icg >= 128 ? 2 : 1;
    oc.add(conv_kernel("conv_transpose")
               .constant("WG", 256)
               .constant("ICS", ics)
               .groups([run, ics](const kernel::Live&) {
                 const Params& p = run->p;
                 return kernel::Groups::linear(ceil_div(uint64_t(p.N) * p.groups * ceil_div(p.ocg, 4), 256 / ics));
               })
               .variant("conv_transpose"));
  }
}

void build_convolution(OpContext& oc) { build_conv(oc, ConvForm::Plain); }
void build_conv_with_clamp(OpContext& oc) { build_conv(oc, ConvForm::WithClamp); }
void build_conv_channels_last(OpContext& oc) { build_conv(oc, ConvForm::ChannelsLast); }
void build_conv_shuffle(OpContext& oc) { build_conv(oc, ConvForm::Shuffle); }

ETW_REGISTER_OP("aten.convolution.default", build_convolution);
ETW_REGISTER_OP("et_vk.conv_with_clamp.default", build_conv_with_clamp);
ETW_REGISTER_OP(kConvChannelsLast, build_conv_channels_last);
ETW_REGISTER_OP(kConvShuffle, build_conv_shuffle);
ETW_REGISTER_EPILOGUE_HOST("aten.convolution.default");
ETW_REGISTER_EPILOGUE_HOST("et_vk.conv_with_clamp.default");

}  // namespace
}  // namespace etwebgpu::ops
