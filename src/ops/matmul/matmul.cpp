// aten.linear / mm / bmm / addmm / matmul: one GEMM family (tiled, tiled vec4-over-K, GEMV, and the
// large-tile kernels 128x128 / 64x128 for big problems, see matmul_gemm_large.wgsl).
// Every op reduces to C[b] = alpha * A[b] @ op(B[b]) + beta * bias with A [M, K], B [K, N] or
// [N, K] (TRANS_B, the linear weight read in place), up to 4 collapsed batch dims (stride 0 =
// broadcast) and a bias broadcast over [M, N]. The route is chosen per run from live shapes
// (a pure performance decision); LoadOptions::force_route["matmul"] overrides it where valid.
// Every route takes a fused epilogue (ops/epilogue.h).
#include <algorithm>
#include <functional>

#include "graph/epilogue_fusion.h"
#include "ops/epilogue.h"
#include "ops/matmul/layer_norm_linear.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t M = 0, N = 0, K = 0, batch = 1;
  uint32_t bdims[4] = {1, 1, 1, 1};
  uint32_t astr[4] = {0, 0, 0, 0};
  uint32_t bstr[4] = {0, 0, 0, 0};
  uint32_t cstride = 0, bias_sm = 0, bias_sn = 0, pad = 0;
  float alpha = 1.f, beta = 1.f;
  uint32_t splits = 1, kchunk = 0;
  float eps = 0.f;  // layer_norm_linear's norm
  uint32_t pad1 = 0, pad2 = 0, pad3 = 0;
};
static_assert(sizeof(Params) == 112);

// What an op's shape function produces from live dims.
struct Problem {
  int64_t M = 0, N = 0, K = 0;
  std::vector<int64_t> batch;          // output batch dims
  std::vector<int64_t> a_bstr, b_bstr; // element strides per batch dim (0 = broadcast)
  std::vector<int64_t> out_dims;
  int64_t bias_sm = 0, bias_sn = 0;
};

// Drops size-1 batch dims and merges neighbours that stay contiguous for both operands, so that
// any broadcast pattern fits the kernel's 4 batch dims when it can.
void collapse_batch(const Problem& pr, Params& p) {
  std::vector<int64_t> d, sa, sb;
  for (size_t i = 0; i < pr.batch.size(); ++i) {
    if (pr.batch[i] == 1) continue;
    if (!d.empty() && sa.back() == pr.a_bstr[i] * pr.batch[i] && sb.back() == pr.b_bstr[i] * pr.batch[i]) {
      d.back() *= pr.batch[i];
      sa.back() = pr.a_bstr[i];
      sb.back() = pr.b_bstr[i];
      continue;
    }
    d.push_back(pr.batch[i]);
    sa.push_back(pr.a_bstr[i]);
    sb.push_back(pr.b_bstr[i]);
  }
  if (d.size() > 4)
    throw Error(ErrorKind::Limit, "broadcast batch dims " + shape_str(pr.batch) + " need " + std::to_string(d.size()) +
                                      " batch dims after collapsing, the kernel has 4");
  size_t off = 4 - d.size();
  for (size_t i = 0; i < d.size(); ++i) {
    p.bdims[off + i] = kernel::u32(d[i], "batch dim");
    p.astr[off + i] = kernel::u32(sa[i], "batch stride");
    p.bstr[off + i] = kernel::u32(sb[i], "batch stride");
  }
}

enum Route { kTiled = 0, kVec4 = 1, kGemv = 2, kGemvVec4 = 3, kLarge = 4, kLargeAligned = 5, kLargeM64 = 6,
             kLargeM64Aligned = 7, kSmall = 8, kSmall16 = 9, kVec4SplitK = 10, kRoutes = 11 };

// Large-tile routes need a whole wave of workgroups and a long K to beat the 64x64 kernel: pick
// the biggest tile that still gives at least kLargeMinTiles workgroups (a GPU has tens to ~150
// compute units), for K of at least kLargeMinK. On the H200 (bench/route_sweep.sh) the 64x64
// kernel won every transformer projection of K = 192..768, e.g. 1500x1536x384: 0.093 ms against
// 0.104 (64x128) and 0.124 (128x128); the large tiles win at 2048^3 and up.
constexpr int64_t kLargeMinTiles = 128, kLargeMinK = 512;

// Rows per invocation of the large-tile kernel a vec4 GEMM (M > 1) takes: 8 (128x128), 4 (64x128)
// or 0 (the 64x64 kernels).
int large_tile_rows(int64_t M, int64_t N, int64_t K, int64_t nb) {
  if (K < kLargeMinK || N < 128) return 0;
  if (M >= 128 && int64_t(ceil_div(M, 128) * ceil_div(N, 128)) * nb >= kLargeMinTiles) return 8;
  if (M >= 64 && int64_t(ceil_div(M, 64) * ceil_div(N, 128)) * nb >= kLargeMinTiles) return 4;
  return 0;
}
// The small-tile kernel (matmul_gemm_small.wgsl: K split inside the workgroup, no second
// dispatch) for vec4 problems whose 64x64 tiles are fewer than kSmallBelowTiles over a K below
// kSmallBelowK: 16x16 tiles over 16 slices where 32x32 tiles would be fewer than
// kSmall16BelowTiles, else 32x32 tiles over 4 slices. Past that K, the 16x16 form replaces the
// split pair below kSmall16BelowK. A fused LayerNorm takes the 32x32 form (its row statistics,
// taken by every workgroup, cost more over four times the workgroups). H100, GPU us, small16 /
// small / split (bench/route_sweep.sh): 197x192x192 13.1 / 17.5 / 26.5, 197x576x192 15.2 / 17.6 /
// 30.8, 197x768x192 18.3 / 18.2 / 31.3, 197x1536x192 24.9 / 21.9 / 36.9, 197x192x768 17.5 / 37.2 /
// 33.9, 128x256x256 13.0 / 20.4 / 24.9, 64x1536x512 17.2 / 27.2 / 34.2, 128x256x1024 20.1 / 45.9 /
// 31.1, 64x512x2048 27.4 / 77.5 / 32.9, 197x192x3072 36.1 / - / 45.9, 1500x384x3072 192.6 / - /
// 199.3, 64x512x4096 42.2 / - / 37.9; with the norm, 197x576x192 23.6 / 19.5.
constexpr int64_t kSmallBelowTiles = 128, kSmallBelowK = 1024, kSmall16BelowTiles = 160, kSmall16BelowK = 4096;
// Split-K for the 64x64 vec4 kernel (op_common.h) when its tiles are too few to fill the GPU and
// K is long. On the H200 (bench/route_sweep.sh, ms 64x64 / split): ViT-tiny's MLP down-projection
// 197x192x768 (12 tiles) 0.058 / 0.031, Whisper-size 1500x384x1536 (144 tiles) 0.161 / 0.109;
// at K = 384 level (0.048 / 0.047) and at K = 192 the extra dispatch loses (0.021 / 0.025). The
// partials go to the graph's shared scratch, at most kMaxSplitFloats.
constexpr SplitPolicy kSplit{/*below_tiles=*/256, /*target=*/512, /*min_k=*/512, /*max_splits=*/32, /*min_chunk=*/32};
constexpr uint64_t kMaxSplitFloats = uint64_t(1) << 22;

bool takes_small(int64_t M, int64_t N, int64_t K, int64_t nb) {
  return K < kSmallBelowK && int64_t(ceil_div(M, 64) * ceil_div(N, 64)) * nb < kSmallBelowTiles;
}
bool takes_small16(int64_t M, int64_t N, int64_t nb) {
  return int64_t(ceil_div(M, 32) * ceil_div(N, 32)) * nb < kSmall16BelowTiles;
}
// The 16x16 small-tile kernel in place of a split-K pair: for [N, K] weights. GPT-2's [K, N]
// addmms on it ran no faster in the model than on the split pair (35 us a call, H200); a constant
// [K, N] weight is made [N, K] at load (addmm_as_linear.cpp).
bool small16_over_split(bool norm, bool trans_b, int64_t K) { return !norm && trans_b && K < kSmall16BelowK; }

// Live dims read as the tensors' largest (exported) dims: load-time sizing from an op's shape
// function.
class MaxLive : public kernel::Live {
 public:
  explicit MaxLive(Graph& g) : g_(g) {}
  const std::vector<int64_t>& dims(int32_t t) const override { return g_.tensor(t).max_dims; }
  int64_t integer(int32_t v) const override { return g_.integer(v); }

 private:
  Graph& g_;
};

SplitK choose_split(const Problem& pr, uint64_t nb, bool force) {
  uint64_t mn = static_cast<uint64_t>(pr.M * pr.N) * nb;
  return choose_split_k(kSplit, ceil_div(pr.M, 64) * ceil_div(pr.N, 64) * nb, pr.K, force,
                        mn ? kMaxSplitFloats / mn : 0);
}

struct Spec {
  int32_t a = -1, b = -1, bias = -1;  // bias -1: none
  bool trans_b = false;
  double alpha = 1.0, beta = 1.0;
  std::function<Problem(const kernel::Live&)> shape;  // throws Error on invalid live shapes
  size_t fixed = 2;           // the op's own arguments before a fused epilogue (ops/epilogue.h)
  const char* label = "mm";   // its name in a fused node's label
  // layer_norm_linear: A's rows are layer-normalised in the loads (64x64 vec4 kernels only).
  bool norm = false;
  int32_t norm_w = -1, norm_b = -1;  // -1: none
  double norm_eps = 0;
};

void require_float(OpContext& oc, int32_t id, const char* what) {
  require_dtype(oc, id, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, what);
}

// What prepare computes once per run for every kernel of the node.
struct Run {
  Problem pr;
  Params p;
  Route route = kTiled;
  kernel::Groups groups;
};

void build_gemm(OpContext& oc, Spec s) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  require_float(oc, s.a, "input");
  require_float(oc, s.b, "second operand");
  require_float(oc, out, "output");
  // beta == 0 ignores the bias entirely (PyTorch: nan/inf in it are not propagated).
  bool has_bias = s.bias >= 0 && s.beta != 0.0;
  if (s.bias >= 0) require_float(oc, s.bias, "bias");
  std::string force = pinned_route(oc, "matmul", {"tiled", "vec4", "gemv", "large", "large_m64", "splitk", "small", "small16"});
  // vec4 bindings need at least one whole vec4 in A and B; tinier operands never take them (nor
  // the large-tile routes, which only bind vec4 operands).
  bool vec4_bindable = holds_vec4(g, s.a) && holds_vec4(g, s.b);
  if (s.norm) {
    // Only the 64x64 vec4 and small kernels carry the norm: every live shape must fit them.
    const auto& wd = g.tensor(s.b).max_dims;
    if (!vec4_bindable || wd[1] % 4 != 0 || (!s.trans_b && wd[0] % 4 != 0))
      oc.fail(ErrorKind::InvalidArgument, "the fused layer norm needs vec4 operands and in_features % 4 == 0" +
                                              std::string(s.trans_b ? "" : " and out_features % 4 == 0") +
                                              ", got weight " + shape_str(wd));
    if (force != "splitk" && force != "vec4" && force != "small" && force != "small16")
      force.clear();  // the other routes are not built for it
  }
  Epilogue ep = Epilogue::read(oc, s.fixed, s.label);
  // Split-K scratch, sized for the exported shapes: with static shapes exactly what they split
  // into; otherwise a smaller live problem may split more, up to kMaxSplitFloats.
  uint64_t split_floats = 0;
  if (vec4_bindable && (force.empty() || force == "splitk")) {
    try {
      Problem pr = s.shape(MaxLive(g));
      uint64_t nb = static_cast<uint64_t>(numel(pr.batch));
      if (pr.M > 1 && pr.K % 4 == 0 && (s.trans_b || pr.N % 4 == 0)) {
        SplitK sp = choose_split(pr, nb, force == "splitk");
        if (force.empty() && small16_over_split(s.norm, s.trans_b, pr.K)) sp.splits = 1;  // live K is at most this
        else if (!g.options().static_shapes && pr.K >= int64_t(kSplit.min_k)) split_floats = kMaxSplitFloats;
        else if (sp.splits > 1) split_floats = uint64_t(sp.splits) * static_cast<uint64_t>(pr.M * pr.N) * nb;
      }
    } catch (const Error&) {
      // inconsistent exported shapes: the run reports them; no split route
    }
  }
  const gpu::Buffer* part = split_floats ? &g.shared_scratch(g.float_bytes(split_floats)) : nullptr;
  auto run = std::make_shared<Run>();
  oc.prepare([s, run, force, has_bias, vec4_bindable, split_floats](const kernel::Live& l) {
    Problem pr = s.shape(l);
    Params p;
    p.M = kernel::u32(pr.M, "M");
    p.N = kernel::u32(pr.N, "N");
    p.K = kernel::u32(pr.K, "K");
    int64_t nb = numel(pr.batch);
    p.batch = kernel::u32(nb, "batch");
    kernel::u32(numel(pr.out_dims), "output numel");
    collapse_batch(pr, p);
    p.cstride = kernel::u32(pr.M * pr.N, "M*N");
    p.bias_sm = static_cast<uint32_t>(pr.bias_sm);
    p.bias_sn = static_cast<uint32_t>(pr.bias_sn);
    p.alpha = static_cast<float>(s.alpha);
    p.beta = static_cast<float>(has_bias ? s.beta : 0.0);
    p.eps = static_cast<float>(s.norm_eps);
    bool vec4_ok = vec4_bindable && pr.K % 4 == 0 && (s.trans_b || pr.N % 4 == 0);
    bool gemv_ok = pr.M == 1;
    Route route = gemv_ok ? (vec4_ok ? kGemvVec4 : kGemv) : (vec4_ok ? kVec4 : kTiled);
    // Large tiles: 128x128 when that still fills the GPU, else 64x128, else the 64x64 kernels.
    int tm = vec4_ok && !gemv_ok ? large_tile_rows(pr.M, pr.N, pr.K, nb) : 0;
    if (force == "tiled") tm = 0, route = kTiled;
    else if (force == "vec4" && vec4_ok) tm = 0, route = kVec4;
    else if (force == "gemv" && gemv_ok) tm = 0, route = vec4_ok ? kGemvVec4 : kGemv;
    else if (force == "large" && vec4_ok) tm = 8;
    else if (force == "large_m64" && vec4_ok) tm = 4;
    else if (force == "small" && vec4_ok && !gemv_ok) tm = 0, route = kSmall;
    else if (force == "small16" && vec4_ok && !gemv_ok) tm = 0, route = kSmall16;
    if (s.norm) tm = 0, route = force == "small" ? kSmall : force == "small16" ? kSmall16 : kVec4;
    if (route == kVec4 && !tm && force.empty() && takes_small(pr.M, pr.N, pr.K, nb))
      route = !s.norm && takes_small16(pr.M, pr.N, nb) ? kSmall16 : kSmall;
    if (tm) {
      bool aligned = pr.M % (16 * tm) == 0 && pr.N % 128 == 0 && pr.K % 8 == 0;
      route = tm == 8 ? (aligned ? kLargeAligned : kLarge) : (aligned ? kLargeM64Aligned : kLargeM64);
    }
    if (route == kVec4 && !tm && force.empty() && small16_over_split(s.norm, s.trans_b, pr.K) &&
        choose_split(pr, static_cast<uint64_t>(nb), false).splits > 1)
      route = kSmall16;
    if (route == kVec4 && !tm && split_floats && (force.empty() || force == "splitk")) {
      SplitK sp = choose_split(pr, static_cast<uint64_t>(nb), force == "splitk");
      if (sp.splits > 1 && uint64_t(sp.splits) * static_cast<uint64_t>(pr.M * pr.N * nb) <= split_floats) {
        route = kVec4SplitK;
        p.splits = sp.splits;
        p.kchunk = sp.chunk;
      }
    }
    uint64_t z = pr.M == 0 || pr.N == 0 ? 0 : static_cast<uint64_t>(nb) * p.splits;
    kernel::Groups gr;
    if (tm) gr = kernel::Groups::grid(ceil_div(pr.N, 128), ceil_div(pr.M, 16 * tm), z);
    else if (route == kSmall) gr = kernel::Groups::grid(ceil_div(pr.N, 32), ceil_div(pr.M, 32), z);
    else if (route == kSmall16) gr = kernel::Groups::grid(ceil_div(pr.N, 16), ceil_div(pr.M, 16), z);
    else if (route == kTiled || route == kVec4 || route == kVec4SplitK) gr = kernel::Groups::grid(ceil_div(pr.N, 64), ceil_div(pr.M, 64), z);
    else gr = {ceil_div(pr.N, s.trans_b ? 4 : route == kGemvVec4 ? 256 : 64), 1, z, true};  // folds past the limit
    run->pr = std::move(pr);
    run->p = p;
    run->route = route;
    run->groups = gr;
  });
  oc.output(out, [run](const kernel::Live&) { return run->pr.out_dims; });

  struct RouteKernel { Route r; const char* shader; const char* entry; const char* name; int tm; bool aligned; const char* def; };
  const RouteKernel routes[kVec4SplitK] = {
      {kTiled, "matmul_gemm", "gemm", "gemm_tiled", 0, false, nullptr},
      {kVec4, "matmul_gemm", "gemm_vec4", "gemm_vec4", 0, false, nullptr},
      {kGemv, "matmul_gemv", "gemv", "gemv", 0, false, nullptr},
      {kGemvVec4, "matmul_gemv", "gemv_vec4", "gemv_vec4", 0, false, nullptr},
      {kLarge, "matmul_gemm_large", "gemm_large", "gemm_128x128", 8, false, nullptr},
      {kLargeAligned, "matmul_gemm_large", "gemm_large", "gemm_128x128_aligned", 8, true, nullptr},
      {kLargeM64, "matmul_gemm_large", "gemm_large", "gemm_64x128", 4, false, nullptr},
      {kLargeM64Aligned, "matmul_gemm_large", "gemm_large", "gemm_64x128_aligned", 4, true, nullptr},
      {kSmall, "matmul_gemm_small", "gemm_small", "gemm_small", 0, false, nullptr},
      {kSmall16, "matmul_gemm_small", "gemm_small", "gemm_small16", 0, false, "TILE16"},
  };
  auto add_norm = [&s](kernel::Kernel& k) {
    if (!s.norm) return;
    k.define("NORM_A")
        .constant("HAS_NW", s.norm_w >= 0 ? 1.0 : 0.0)
        .constant("HAS_NB", s.norm_b >= 0 ? 1.0 : 0.0)
        .input("NW", s.norm_w, true)
        .input("NB", s.norm_b, true);
  };
  if (part) {
    kernel::Kernel split("matmul_gemm", "gemm_vec4");
    split.define("VEC4").define("SPLITK").constant("TRANS_B", s.trans_b ? 1.0 : 0.0);
    split.input("A", s.a, true).input("B", s.b, true).buffer("PART", *part, g.float_storage(), kernel::Access::ReadWrite);
    add_norm(split);
    split.params<Params>([run](const kernel::Live&) { return run->p; });
    oc.add(split.when([run](const kernel::Live&) { return run->route == kVec4SplitK; })
               .groups([run](const kernel::Live&) { return run->groups; })
               .variant("gemm_vec4_splitk"));
    kernel::Kernel reduce("matmul_gemm", "gemm_splitk_reduce");
    reduce.define("SPLITK_REDUCE").constant("HAS_BIAS", has_bias ? 1.0 : 0.0);
    reduce.buffer("PART", *part, g.float_storage(), kernel::Access::Read).input("BIAS", has_bias ? s.bias : -1).output("C", out);
    ep.apply<Params>(reduce, [run](const kernel::Live&) { return run->p; });
    oc.add(reduce.when([run](const kernel::Live&) { return run->route == kVec4SplitK; })
               .groups([run](const kernel::Live&) {
                 return kernel::Groups::linear(ceil_div(uint64_t(run->p.batch) * run->p.cstride, 256));
               })
               .variant("gemm_splitk_reduce"));
  }
  for (const auto& rk : routes) {
    bool vec4 = rk.r != kTiled && rk.r != kGemv;
    if (vec4 && !vec4_bindable) continue;  // never taken (vec4_ok needs vec4_bindable)
    if (s.norm && rk.r != kVec4 && rk.r != kSmall && rk.r != kSmall16) continue;  // the norm: the 64x64 vec4 and small routes
    kernel::Kernel k(rk.shader, rk.entry);
    k.constant("TRANS_B", s.trans_b ? 1.0 : 0.0).constant("HAS_BIAS", has_bias ? 1.0 : 0.0);
    if (rk.tm) k.constant("TM", rk.tm).constant("ALIGNED", rk.aligned ? 1.0 : 0.0).define("NESTED_TILES");
    if (vec4) k.define("VEC4");
    if (rk.def) k.define(rk.def);
    Route r = rk.r;
    k.input("A", s.a, vec4).input("B", s.b, vec4).input("BIAS", has_bias ? s.bias : -1).output("C", out);
    add_norm(k);
    ep.apply<Params>(k, [run](const kernel::Live&) { return run->p; });
    oc.add(k.when([run, r](const kernel::Live&) { return run->route == r; })
               .groups([run](const kernel::Live&) { return run->groups; })
               .variant(rk.name));
  }
}

// Bias strides over [M, N] for a bias broadcastable to it (PyTorch addmm rules).
void bias_strides(const std::vector<int64_t>& bd, int64_t M, int64_t N, Problem& pr) {
  if (bd.size() > 2) throw Error(ErrorKind::InvalidArgument, "bias " + shape_str(bd) + " has rank > 2");
  std::vector<int64_t> mn{M, N};
  bool ok = true;
  for (size_t i = 0; i < bd.size(); ++i) ok = ok && (bd[i] == 1 || bd[i] == mn[i + 2 - bd.size()]);
  if (!ok)
    throw Error(ErrorKind::InvalidArgument, "bias " + shape_str(bd) + " does not broadcast to " + shape_str(mn));
  auto st = broadcast_strides(bd, mn);
  pr.bias_sm = st[0];
  pr.bias_sn = st[1];
}

std::vector<int64_t> bstrides(const std::vector<int64_t>& batch_in, const std::vector<int64_t>& batch_out,
                              int64_t mat) {
  // Contiguous element strides of the operand's batch dims viewed at the output batch shape.
  std::vector<int64_t> s = broadcast_strides(batch_in, batch_out);
  for (auto& v : s) v *= mat;
  return s;
}

// linear(x, weight, bias): x [..., K] @ weight [N, K]^T + bias [N].
Spec linear_spec(OpContext& oc, int32_t x, int32_t weight, int32_t bias) {
  Graph& g = oc.g;
  Spec s;
  s.a = x;
  s.b = weight;
  if (!g.is_null(bias)) s.bias = bias;
  s.trans_b = true;
  s.fixed = 3;
  s.label = "linear";
  const Tensor& w = g.tensor(s.b);
  if (w.rank() != 2) oc.fail(ErrorKind::InvalidArgument, "weight must be 2-D [N, K], got " + shape_str(w.dims));
  if (g.tensor(s.a).rank() < 1) oc.fail(ErrorKind::InvalidArgument, "input must have rank >= 1");
  if (s.bias >= 0) {
    const Tensor& tb = g.tensor(s.bias);
    if (tb.rank() != 1 || (tb.dims[0] != w.dims[0] && tb.dims[0] != 1))
      oc.fail(ErrorKind::InvalidArgument, "bias " + shape_str(tb.dims) + " must be [" + std::to_string(w.dims[0]) + "]");
  }
  int32_t a = s.a, b = s.b, bi = s.bias;
  s.shape = [a, b, bi](const kernel::Live& l) {
    const auto& ad = l.dims(a);
    const auto& wd = l.dims(b);
    Problem pr;
    pr.K = wd[1];
    pr.N = wd[0];
    if (ad.back() != pr.K)
      throw Error(ErrorKind::InvalidArgument, "input " + shape_str(ad) + " and weight " + shape_str(wd) +
                                                       " disagree on in_features");
    pr.M = numel(ad) / std::max<int64_t>(pr.K, 1);
    if (pr.K == 0) pr.M = numel(std::vector<int64_t>(ad.begin(), ad.end() - 1));
    pr.out_dims = ad;
    pr.out_dims.back() = pr.N;
    if (bi >= 0) bias_strides(l.dims(bi), pr.M, pr.N, pr);
    return pr;
  };
  return s;
}

void build_linear(OpContext& oc) { build_gemm(oc, linear_spec(oc, oc.arg(0), oc.arg(1), oc.arg(2))); }

// The layer norm in front of a GEMM over K input features (layer_norm_linear.h): its arguments
// 0..3 (x, norm weight, norm bias, eps), checked, into s.
void add_layer_norm(OpContext& oc, Spec& s, int64_t K) {
  Graph& g = oc.g;
  s.norm = true;
  require_float(oc, s.a, "input");
  if (g.tensor(s.a).max_dims.back() != K)
    oc.fail(ErrorKind::InvalidArgument, "input " + shape_str(g.tensor(s.a).max_dims) + " and weight " +
                                            shape_str(g.tensor(s.b).max_dims) + " disagree on in_features");
  for (int k : {1, 2}) {
    int32_t id = oc.arg(k);
    if (g.is_null(id)) continue;
    require_float(oc, id, k == 1 ? "norm weight" : "norm bias");
    if (g.tensor(id).max_numel() != K)
      oc.fail(ErrorKind::InvalidArgument, std::string(k == 1 ? "norm weight " : "norm bias ") +
                                              shape_str(g.tensor(id).max_dims) + " must have " + std::to_string(K) +
                                              " elements");
    (k == 1 ? s.norm_w : s.norm_b) = id;
  }
  s.norm_eps = g.number(oc.arg(3));
}

// etwebgpu.layer_norm_linear (layer_norm_linear.h).
void build_layer_norm_linear(OpContext& oc) {
  Spec s = linear_spec(oc, oc.arg(0), oc.arg(4), oc.arg(5));
  s.fixed = 6;
  s.label = "layer_norm+linear";
  add_layer_norm(oc, s, oc.g.tensor(s.b).max_dims[1]);
  build_gemm(oc, s);
}

// mm ([M,K] x [K,N]) and bmm ([B,M,K] x [B,K,N], equal batches): `rank` is 2 or 3.
void build_plain_mm(OpContext& oc, int64_t rank) {
  Spec s;
  s.a = oc.arg(0);
  s.b = oc.arg(1);
  Graph& g = oc.g;
  s.label = rank == 2 ? "mm" : "bmm";
  const char* what = rank == 2 ? "mm needs 2-D operands, got " : "bmm needs 3-D operands, got ";
  if (g.tensor(s.a).rank() != rank || g.tensor(s.b).rank() != rank)
    oc.fail(ErrorKind::InvalidArgument, what + shape_str(g.tensor(s.a).dims) + " and " + shape_str(g.tensor(s.b).dims));
  int32_t a = s.a, b = s.b;
  s.shape = [a, b, rank](const kernel::Live& l) {
    const auto& ad = l.dims(a);
    const auto& bd = l.dims(b);
    int64_t o = rank - 2;  // leading batch dims
    if (ad[o + 1] != bd[o] || (o && ad[0] != bd[0]))
      throw Error(ErrorKind::InvalidArgument, "shapes " + shape_str(ad) + " and " + shape_str(bd) +
                                                       (o ? " cannot be batch-multiplied" : " cannot be multiplied"));
    Problem pr;
    pr.M = ad[o];
    pr.K = ad[o + 1];
    pr.N = bd[o + 1];
    pr.out_dims = {pr.M, pr.N};
    if (o) {
      pr.batch = {ad[0]};
      pr.a_bstr = {pr.M * pr.K};
      pr.b_bstr = {pr.K * pr.N};
      pr.out_dims.insert(pr.out_dims.begin(), ad[0]);
    }
    return pr;
  };
  build_gemm(oc, s);
}

void build_mm(OpContext& oc) { build_plain_mm(oc, 2); }
void build_bmm(OpContext& oc) { build_plain_mm(oc, 3); }

// addmm = beta * bias + alpha * mat1 @ mat2 from the arguments at these positions; `fixed`: the
// op's own arguments before a fused epilogue.
Spec addmm_spec(OpContext& oc, size_t bias, size_t mat1, size_t mat2, size_t beta, size_t alpha, size_t fixed) {
  Graph& g = oc.g;
  Spec s;
  s.bias = oc.arg(bias);
  s.a = oc.arg(mat1);
  s.b = oc.arg(mat2);
  s.beta = g.opt_number(oc.arg(beta)).value_or(1.0);
  s.alpha = g.opt_number(oc.arg(alpha)).value_or(1.0);
  s.fixed = fixed;
  s.label = "addmm";
  if (g.tensor(s.a).rank() != 2 || g.tensor(s.b).rank() != 2)
    oc.fail(ErrorKind::InvalidArgument, "addmm needs 2-D mat1/mat2, got " + shape_str(g.tensor(s.a).dims) + " and " +
                                            shape_str(g.tensor(s.b).dims));
  int32_t a = s.a, b = s.b, bi = s.bias;
  s.shape = [a, b, bi](const kernel::Live& l) {
    const auto& ad = l.dims(a);
    const auto& bd = l.dims(b);
    if (ad[1] != bd[0])
      throw Error(ErrorKind::InvalidArgument, "shapes " + shape_str(ad) + " and " + shape_str(bd) + " cannot be multiplied");
    Problem pr;
    pr.M = ad[0];
    pr.K = ad[1];
    pr.N = bd[1];
    pr.out_dims = {pr.M, pr.N};
    bias_strides(l.dims(bi), pr.M, pr.N, pr);
    return pr;
  };
  return s;
}

void build_addmm(OpContext& oc) { build_gemm(oc, addmm_spec(oc, 0, 1, 2, 3, 4, 5)); }

// etwebgpu.layer_norm_addmm (layer_norm_linear.h).
void build_layer_norm_addmm(OpContext& oc) {
  Spec s = addmm_spec(oc, 4, 0, 5, 6, 7, 8);
  s.label = "layer_norm+addmm";
  add_layer_norm(oc, s, oc.g.tensor(s.b).max_dims[0]);
  build_gemm(oc, s);
}

// torch.matmul: 1-D operands get a dim prepended (first) / appended (second) and removed from the
// result; leading dims broadcast.
void build_matmul(OpContext& oc) {
  Graph& g = oc.g;
  Spec s;
  s.a = oc.arg(0);
  s.b = oc.arg(1);
  s.label = "matmul";
  if (g.tensor(s.a).rank() < 1 || g.tensor(s.b).rank() < 1)
    oc.fail(ErrorKind::InvalidArgument, "both arguments to matmul need to be at least 1-D");
  int32_t a = s.a, b = s.b;
  s.shape = [a, b](const kernel::Live& l) {
    auto ad = l.dims(a);
    auto bd = l.dims(b);
    bool a1 = ad.size() == 1, b1 = bd.size() == 1;
    if (a1) ad.insert(ad.begin(), 1);
    if (b1) bd.push_back(1);
    Problem pr;
    pr.M = ad[ad.size() - 2];
    pr.K = ad.back();
    pr.N = bd.back();
    if (bd[bd.size() - 2] != pr.K)
      throw Error(ErrorKind::InvalidArgument, "shapes " + shape_str(l.dims(a)) + " and " +
                                                       shape_str(l.dims(b)) + " cannot be multiplied");
    std::vector<int64_t> ba(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
    pr.batch = broadcast_shape(ba, bb);
    pr.a_bstr = bstrides(ba, pr.batch, pr.M * pr.K);
    pr.b_bstr = bstrides(bb, pr.batch, pr.K * pr.N);
    pr.out_dims = pr.batch;
    if (!a1) pr.out_dims.push_back(pr.M);
    if (!b1) pr.out_dims.push_back(pr.N);
    return pr;
  };
  build_gemm(oc, s);
}

ETW_REGISTER_OP("aten.linear.default", build_linear);
ETW_REGISTER_OP(kLayerNormLinear, build_layer_norm_linear);
ETW_REGISTER_OP(kLayerNormAddmm, build_layer_norm_addmm);
ETW_REGISTER_OP("aten.mm.default", build_mm);
ETW_REGISTER_OP("aten.bmm.default", build_bmm);
ETW_REGISTER_OP("aten.addmm.default", build_addmm);
ETW_REGISTER_OP("aten.matmul.default", build_matmul);
ETW_REGISTER_EPILOGUE_HOST("aten.linear.default");
ETW_REGISTER_EPILOGUE_HOST("aten.mm.default");
ETW_REGISTER_EPILOGUE_HOST("aten.bmm.default");
ETW_REGISTER_EPILOGUE_HOST("aten.addmm.default");
ETW_REGISTER_EPILOGUE_HOST("aten.matmul.default");

}  // namespace

bool gemm_takes_64x64_tiles(int64_t M, int64_t N, int64_t K, int64_t batch) {
  return M > 1 && large_tile_rows(M, N, K, batch) == 0;
}

}  // namespace etwebgpu::ops
