// aten.linear / mm / bmm / addmm / matmul: one GEMM family (tiled, tiled vec4-over-K, GEMV, and the
// large-tile kernels 128x128 / 64x128 for big problems, see matmul_gemm_large.wgsl).
// Every op reduces to C[b] = alpha * A[b] @ op(B[b]) + beta * bias with A [M, K], B [K, N] or
// [N, K] (TRANS_B, the linear weight read in place), up to 4 collapsed batch dims (stride 0 =
// broadcast) and a bias broadcast over [M, N]. The route is chosen per run from live shapes
// (a pure performance decision); LoadOptions::force_route["matmul"] overrides it where valid.
#include <algorithm>
#include <functional>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t M = 0, N = 0, K = 0, batch = 1;
  uint32_t bdims[4] = {1, 1, 1, 1};
  uint32_t astr[4] = {0, 0, 0, 0};
  uint32_t bstr[4] = {0, 0, 0, 0};
  uint32_t cstride = 0, bias_sm = 0, bias_sn = 0, pad0 = 0;
  float alpha = 1.f, beta = 1.f;
  uint32_t pad1 = 0, pad2 = 0;
};
static_assert(sizeof(Params) == 96);

// What an op's shape function produces from live dims.
struct Problem {
  int64_t M = 0, N = 0, K = 0;
  std::vector<int64_t> batch;          // output batch dims
  std::vector<int64_t> a_bstr, b_bstr; // element strides per batch dim (0 = broadcast)
  std::vector<int64_t> out_dims;
  int64_t bias_sm = 0, bias_sn = 0;
};

uint32_t u32_of(const format::VkOpCall& call, int64_t v, const char* what) {
  if (v < 0 || v > static_cast<int64_t>(UINT32_MAX))
    fail_call(call, ErrorKind::Limit, std::string(what) + " " + std::to_string(v) + " does not fit 32 bits");
  return static_cast<uint32_t>(v);
}

// Drops size-1 batch dims and merges neighbours that stay contiguous for both operands, so that
// any broadcast pattern fits the kernel's 4 batch dims when it can.
void collapse_batch(const format::VkOpCall& call, const Problem& pr, Params& p) {
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
    fail_call(call, ErrorKind::Limit, "broadcast batch dims " + shape_str(pr.batch) + " need " +
                                          std::to_string(d.size()) + " batch dims after collapsing, the kernel has 4");
  size_t off = 4 - d.size();
  for (size_t i = 0; i < d.size(); ++i) {
    p.bdims[off + i] = u32_of(call, d[i], "batch dim");
    p.astr[off + i] = u32_of(call, sa[i], "batch stride");
    p.bstr[off + i] = u32_of(call, sb[i], "batch stride");
  }
}

enum Route { kTiled = 0, kVec4 = 1, kGemv = 2, kGemvVec4 = 3, kLarge = 4, kLargeAligned = 5, kLargeM64 = 6,
             kLargeM64Aligned = 7, kRoutes = 8 };

// Large-tile routes need a whole wave of workgroups to beat the 64x64 kernel: pick the biggest tile
// that still gives at least this many workgroups (a GPU has tens to ~150 compute units).
constexpr int64_t kLargeMinTiles = 128;

struct Spec {
  int32_t a = -1, b = -1, bias = -1;  // bias -1: none
  bool trans_b = false;
  double alpha = 1.0, beta = 1.0;
  std::function<Problem(Graph&)> shape;  // throws Error on invalid live shapes
};

void require_float(OpContext& oc, int32_t id, const char* what) {
  require_dtype(oc, id, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, what);
}

void build_gemm(OpContext& oc, Spec s) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  require_float(oc, s.a, "input");
  require_float(oc, s.b, "second operand");
  require_float(oc, out, "output");
  // beta == 0 ignores the bias entirely (PyTorch: nan/inf in it are not propagated).
  bool has_bias = s.bias >= 0 && s.beta != 0.0;
  if (s.bias >= 0) require_float(oc, s.bias, "bias");
  std::string force;
  if (auto it = g.options().force_route.find("matmul"); it != g.options().force_route.end()) {
    force = it->second;
    if (force != "tiled" && force != "vec4" && force != "gemv" && force != "large" && force != "large_m64")
      oc.fail(ErrorKind::InvalidArgument,
              "force_route matmul='" + force + "' (expected tiled, vec4, gemv, large or large_m64)");
  }
  gpu::Constants c{{"TRANS_B", s.trans_b ? 1.0 : 0.0}, {"HAS_BIAS", has_bias ? 1.0 : 0.0}};
  auto large = [&](int tm, bool aligned) {
    gpu::Constants lc = c;
    lc["TM"] = tm;
    lc["ALIGNED"] = aligned ? 1.0 : 0.0;
    return &g.ctx().pipeline("matmul_gemm_large", "gemm_large", lc);
  };
  const gpu::Pipeline* pipes[kRoutes] = {&g.ctx().pipeline("matmul_gemm", "gemm", c),
                                         &g.ctx().pipeline("matmul_gemm", "gemm_vec4", c),
                                         &g.ctx().pipeline("matmul_gemv", "gemv", c),
                                         &g.ctx().pipeline("matmul_gemv", "gemv_vec4", c),
                                         nullptr, nullptr, nullptr, nullptr};
  const char* names[kRoutes] = {"gemm_tiled", "gemm_vec4", "gemv", "gemv_vec4",
                                "gemm_128x128", "gemm_128x128_aligned", "gemm_64x128", "gemm_64x128_aligned"};
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  const gpu::Buffer& bias_buf = has_bias ? g.buffer(s.bias) : g.dummy_buffer();
  size_t first = oc.node.steps.size();
  // vec4 bindings need at least one whole vec4 in A and B; tinier operands never take them.
  bool vec4_bindable = g.buffer(s.a).size() >= 16 && g.buffer(s.b).size() >= 16;
  // The large-tile kernels only bind vec4 operands; without them those routes are never taken.
  if (vec4_bindable) {
    pipes[kLarge] = large(8, false);
    pipes[kLargeAligned] = large(8, true);
    pipes[kLargeM64] = large(4, false);
    pipes[kLargeM64Aligned] = large(4, true);
  }
  int nroutes = vec4_bindable ? kRoutes : 4;
  for (int r = 0; r < nroutes; ++r)
    oc.node.steps.push_back(g.make_step(*pipes[(r == kVec4 || r == kGemvVec4) && !vec4_bindable ? r - 1 : r],
                                        {{0, &g.buffer(s.a)}, {1, &g.buffer(s.b)}, {2, &bias_buf},
                                         {3, &g.buffer(out)}, {4, u->buf}},
                                        0, names[r]));
  graph::Node* node = &oc.node;
  const format::VkOpCall* call = &oc.call;
  auto pipe_arr = std::make_shared<std::array<const gpu::Pipeline*, kRoutes>>();
  for (int r = 0; r < kRoutes; ++r) (*pipe_arr)[r] = pipes[r];
  oc.node.resize = [&g, s, out, u, node, first, call, force, has_bias, pipe_arr, vec4_bindable, nroutes] {
    Problem pr = s.shape(g);
    Tensor& to = g.tensor(out);
    if (numel(pr.out_dims) > to.max_numel())
      fail_call(*call, ErrorKind::InvalidArgument,
                "output " + shape_str(pr.out_dims) + " exceeds its bound " + shape_str(to.max_dims));
    to.dims = pr.out_dims;
    Params p;
    p.M = u32_of(*call, pr.M, "M");
    p.N = u32_of(*call, pr.N, "N");
    p.K = u32_of(*call, pr.K, "K");
    int64_t nb = numel(pr.batch);
    p.batch = u32_of(*call, nb, "batch");
    u32_of(*call, numel(pr.out_dims), "output numel");
    collapse_batch(*call, pr, p);
    p.cstride = u32_of(*call, pr.M * pr.N, "M*N");
    p.bias_sm = static_cast<uint32_t>(pr.bias_sm);
    p.bias_sn = static_cast<uint32_t>(pr.bias_sn);
    p.alpha = static_cast<float>(s.alpha);
    p.beta = static_cast<float>(has_bias ? s.beta : 0.0);
    u->write(g, p);
    bool vec4_ok = vec4_bindable && pr.K % 4 == 0 && (s.trans_b || pr.N % 4 == 0);
    bool gemv_ok = pr.M == 1;
    Route route = gemv_ok ? (vec4_ok ? kGemvVec4 : kGemv) : (vec4_ok ? kVec4 : kTiled);
    // Large tiles: 128x128 when that still fills the GPU, else 64x128, else the 64x64 kernels.
    int64_t tiles128 = int64_t(ceil_div(pr.M, 128) * ceil_div(pr.N, 128)) * nb;
    int64_t tiles64 = int64_t(ceil_div(pr.M, 64) * ceil_div(pr.N, 128)) * nb;
    bool large_ok = vec4_ok && !gemv_ok && pr.K >= 32 && pr.N >= 128;
    int tm = 0;
    if (large_ok && pr.M >= 128 && tiles128 >= kLargeMinTiles) tm = 8;
    else if (large_ok && pr.M >= 64 && tiles64 >= kLargeMinTiles) tm = 4;
    if (force == "tiled") tm = 0, route = kTiled;
    else if (force == "vec4" && vec4_ok) tm = 0, route = kVec4;
    else if (force == "gemv" && gemv_ok) tm = 0, route = vec4_ok ? kGemvVec4 : kGemv;
    else if (force == "large" && vec4_ok) tm = 8;
    else if (force == "large_m64" && vec4_ok) tm = 4;
    if (tm && vec4_bindable) {
      bool aligned = pr.M % (16 * tm) == 0 && pr.N % 128 == 0 && pr.K % 8 == 0;
      route = tm == 8 ? (aligned ? kLargeAligned : kLarge) : (aligned ? kLargeM64Aligned : kLargeM64);
    }
    gpu::Grid grid;
    if (route >= kLarge) grid = {static_cast<uint32_t>(ceil_div(pr.N, 128)), static_cast<uint32_t>(ceil_div(pr.M, 16 * tm)), 1};
    else if (route == kTiled || route == kVec4) grid = {static_cast<uint32_t>(ceil_div(pr.N, 64)), static_cast<uint32_t>(ceil_div(pr.M, 64)), 1};
    else grid = g.ctx().grid(ceil_div(pr.N, s.trans_b ? 4 : route == kGemvVec4 ? 256 : 64));  // folds past the limit
    grid.z = static_cast<uint32_t>(nb);
    uint32_t lim = g.ctx().info().max_workgroups_per_dim;
    if (grid.x > lim || grid.y > lim || grid.z > lim)
      fail_call(*call, ErrorKind::Limit, "dispatch grid " + std::to_string(grid.x) + "x" + std::to_string(grid.y) + "x" +
                                            std::to_string(grid.z) + " for M=" + std::to_string(pr.M) + " N=" +
                                            std::to_string(pr.N) + " batch=" + std::to_string(nb) +
                                            " exceeds maxComputeWorkgroupsPerDimension " + std::to_string(lim));
    bool empty = pr.M == 0 || pr.N == 0 || nb == 0;
    // Inactive routes get no pipeline so they are neither recorded nor profiled.
    for (int r = 0; r < nroutes; ++r) {
      Step& st = node->steps[first + r];
      bool on = r == route && !empty;
      st.pipeline = on ? (*pipe_arr)[r] : nullptr;
      st.grid = on ? grid : gpu::Grid{0, 1, 1};
    }
  };
}

// Bias strides over [M, N] for a bias broadcastable to it (PyTorch addmm rules).
void bias_strides(const format::VkOpCall& call, const std::vector<int64_t>& bd, int64_t M, int64_t N, Problem& pr) {
  if (bd.size() > 2) fail_call(call, ErrorKind::InvalidArgument, "bias " + shape_str(bd) + " has rank > 2");
  std::vector<int64_t> mn{M, N};
  bool ok = true;
  for (size_t i = 0; i < bd.size(); ++i) ok = ok && (bd[i] == 1 || bd[i] == mn[i + 2 - bd.size()]);
  if (!ok)
    fail_call(call, ErrorKind::InvalidArgument, "bias " + shape_str(bd) + " does not broadcast to " + shape_str(mn));
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

void build_linear(OpContext& oc) {
  Graph& g = oc.g;
  Spec s;
  s.a = oc.arg(0);
  s.b = oc.arg(1);
  int32_t bias = oc.arg(2);
  if (!g.is_null(bias)) s.bias = bias;
  s.trans_b = true;
  const Tensor& w = g.tensor(s.b);
  if (w.rank() != 2) oc.fail(ErrorKind::InvalidArgument, "weight must be 2-D [N, K], got " + shape_str(w.dims));
  if (g.tensor(s.a).rank() < 1) oc.fail(ErrorKind::InvalidArgument, "input must have rank >= 1");
  if (s.bias >= 0) {
    const Tensor& tb = g.tensor(s.bias);
    if (tb.rank() != 1 || (tb.dims[0] != w.dims[0] && tb.dims[0] != 1))
      oc.fail(ErrorKind::InvalidArgument, "bias " + shape_str(tb.dims) + " must be [" + std::to_string(w.dims[0]) + "]");
  }
  const format::VkOpCall* call = &oc.call;
  int32_t a = s.a, b = s.b, bi = s.bias;
  s.shape = [a, b, bi, call](Graph& g) {
    const auto& ad = g.tensor(a).dims;
    const auto& wd = g.tensor(b).dims;
    Problem pr;
    pr.K = wd[1];
    pr.N = wd[0];
    if (ad.back() != pr.K)
      fail_call(*call, ErrorKind::InvalidArgument, "input " + shape_str(ad) + " and weight " + shape_str(wd) +
                                                       " disagree on in_features");
    pr.M = numel(ad) / std::max<int64_t>(pr.K, 1);
    if (pr.K == 0) pr.M = numel(std::vector<int64_t>(ad.begin(), ad.end() - 1));
    pr.out_dims = ad;
    pr.out_dims.back() = pr.N;
    if (bi >= 0) bias_strides(*call, g.tensor(bi).dims, pr.M, pr.N, pr);
    return pr;
  };
  build_gemm(oc, s);
}

// mm ([M,K] x [K,N]) and bmm ([B,M,K] x [B,K,N], equal batches): `rank` is 2 or 3.
void build_plain_mm(OpContext& oc, int64_t rank) {
  Spec s;
  s.a = oc.arg(0);
  s.b = oc.arg(1);
  Graph& g = oc.g;
  const char* what = rank == 2 ? "mm needs 2-D operands, got " : "bmm needs 3-D operands, got ";
  if (g.tensor(s.a).rank() != rank || g.tensor(s.b).rank() != rank)
    oc.fail(ErrorKind::InvalidArgument, what + shape_str(g.tensor(s.a).dims) + " and " + shape_str(g.tensor(s.b).dims));
  const format::VkOpCall* call = &oc.call;
  int32_t a = s.a, b = s.b;
  s.shape = [a, b, call, rank](Graph& g) {
    const auto& ad = g.tensor(a).dims;
    const auto& bd = g.tensor(b).dims;
    int64_t o = rank - 2;  // leading batch dims
    if (ad[o + 1] != bd[o] || (o && ad[0] != bd[0]))
      fail_call(*call, ErrorKind::InvalidArgument, "shapes " + shape_str(ad) + " and " + shape_str(bd) +
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

void build_addmm(OpContext& oc) {
  Graph& g = oc.g;
  Spec s;
  s.bias = oc.arg(0);
  s.a = oc.arg(1);
  s.b = oc.arg(2);
  s.beta = g.opt_number(oc.arg(3)).value_or(1.0);
  s.alpha = g.opt_number(oc.arg(4)).value_or(1.0);
  if (g.tensor(s.a).rank() != 2 || g.tensor(s.b).rank() != 2)
    oc.fail(ErrorKind::InvalidArgument, "addmm needs 2-D mat1/mat2, got " + shape_str(g.tensor(s.a).dims) + " and " +
                                            shape_str(g.tensor(s.b).dims));
  const format::VkOpCall* call = &oc.call;
  int32_t a = s.a, b = s.b, bi = s.bias;
  s.shape = [a, b, bi, call](Graph& g) {
    const auto& ad = g.tensor(a).dims;
    const auto& bd = g.tensor(b).dims;
    if (ad[1] != bd[0])
      fail_call(*call, ErrorKind::InvalidArgument, "shapes " + shape_str(ad) + " and " + shape_str(bd) + " cannot be multiplied");
    Problem pr;
    pr.M = ad[0];
    pr.K = ad[1];
    pr.N = bd[1];
    pr.out_dims = {pr.M, pr.N};
    bias_strides(*call, g.tensor(bi).dims, pr.M, pr.N, pr);
    return pr;
  };
  build_gemm(oc, s);
}

// torch.matmul: 1-D operands get a dim prepended (first) / appended (second) and removed from the
// result; leading dims broadcast.
void build_matmul(OpContext& oc) {
  Graph& g = oc.g;
  Spec s;
  s.a = oc.arg(0);
  s.b = oc.arg(1);
  if (g.tensor(s.a).rank() < 1 || g.tensor(s.b).rank() < 1)
    oc.fail(ErrorKind::InvalidArgument, "both arguments to matmul need to be at least 1-D");
  const format::VkOpCall* call = &oc.call;
  int32_t a = s.a, b = s.b;
  s.shape = [a, b, call](Graph& g) {
    auto ad = g.tensor(a).dims;
    auto bd = g.tensor(b).dims;
    bool a1 = ad.size() == 1, b1 = bd.size() == 1;
    if (a1) ad.insert(ad.begin(), 1);
    if (b1) bd.push_back(1);
    Problem pr;
    pr.M = ad[ad.size() - 2];
    pr.K = ad.back();
    pr.N = bd.back();
    if (bd[bd.size() - 2] != pr.K)
      fail_call(*call, ErrorKind::InvalidArgument, "shapes " + shape_str(g.tensor(a).dims) + " and " +
                                                       shape_str(g.tensor(b).dims) + " cannot be multiplied");
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
ETW_REGISTER_OP("aten.mm.default", build_mm);
ETW_REGISTER_OP("aten.bmm.default", build_bmm);
ETW_REGISTER_OP("aten.addmm.default", build_addmm);
ETW_REGISTER_OP("aten.matmul.default", build_matmul);

}  // namespace
}  // namespace etwebgpu::ops
