// Static-int8 convolutions (ExecuTorch Vulkan's q8ta ops, backends/vulkan custom_ops_lib.py and
// patterns/quantized_convolution.py):
// et_vk.q8ta_conv2d / q8ta_conv2d_pw / q8ta_conv2d_dw [x, input_scale, input_zero_point, weights,
//   weight_sums, weight_scales, output_scale, output_zero_point, bias, kernel_size, stride, padding,
//   dilation, groups, activation, out]
// x and out int8 NCHW; x_f = (x_q - izp) * iscale; w_f[oc] = w_q * wscale[oc];
// out = conv2d(x_f, w_f, bias), relu if activation == "relu",
// y_q = clamp(round_half_even(out * f32(1 / oscale)) + ozp, -128, 127).
// Weights: general and pw int8 [OC, K_pad], K = KH*KW*ICg in (kh, kw, ic) order, K_pad = K rounded
// up to 4 (zeros); dw int8 [KH, KW, OC]. weight_scales / bias / weight_sums padded to OC rounded
// up to 4 (the first OC are used). weight_sums[oc] = sum of the row's w_q: recomputed here from the
// weights and compared with the file's.
// Kernels accumulate in int32: acc = sum x_q * w_q (padding taps read x_q = izp), then
// out = f32(acc - izp * wsum[oc]) * (iscale * wscale[oc]) + bias[oc]; the per-channel factors
// (QF: scale and bias, QC: izp * wsum) are computed on the host at load.
// Routes: general and pw run q8ta_conv_gemm (tiled implicit GEMM over packed int8 words,
// dot4I8Packed where the adapter has it, a portable shift/multiply dot otherwise; whole output words
// when OH*OW % 4 == 0, element stores otherwise); dw runs q8ta_conv_dw (one output word per
// invocation). Few output tiles and a long K: split-K, the ranges adding int32 sums atomically into
// scratch (gemm_split_*), then q8ta_conv_finalize requantizes (exact: integer sums).
// force_route "q8ta_conv" = "dot4" | "portable".
#include <cmath>
#include <cstring>

#include "ops/op_common.h"
#include "ops/quantized/q8_common.h"

namespace etwebgpu::ops {
namespace {

struct QConvParams {
  uint32_t b, ic, h, w;
  uint32_t oc, oh, ow, g;
  uint32_t icg, ocg, k, kw;
  uint32_t sh, sw, ph, pw;
  uint32_t dh, dw, nq, n;
  int32_t izp, ozp;
  float inv;
  uint32_t relu;
  uint32_t splits, steps, pad0, pad1;
  // A fused etwebgpu.q8ta_clamp (q8_requant_fusion.cpp): y -> clamp((y - post_zp_in) * post_scale,
  // lo, hi) requantized by 1 / post_inv_scale + post_zp, clamped to [post_qmin, post_qmax].
  uint32_t post;
  int32_t post_zp_in;
  float post_scale, post_lo, post_hi, post_inv;
  int32_t post_zp;
  float post_qmin, post_qmax;
  uint32_t pad2[3];
};
static_assert(sizeof(QConvParams) == 160);

enum class QKind { General, Pointwise, Depthwise };

void need_dtype(const OpContext& oc, int32_t id, VkDType want, const char* what) {
  if (!oc.g.is_tensor(id)) oc.fail(ErrorKind::Format, std::string(what) + " must be a tensor");
  VkDType t = oc.g.tensor(id).dtype;
  if (t != want)
    oc.fail(ErrorKind::Format, std::string(what) + " must be " + format::vk_dtype_name(want) + ", got " + format::vk_dtype_name(t));
}
void need_constant(const OpContext& oc, int32_t id, const char* what) {
  if (oc.g.tensor(id).constant_id < 0) oc.fail(ErrorKind::Format, std::string(what) + " must be a constant tensor");
}

using q8::num_str;

template <class T>
std::vector<T> constant_values(const OpContext& oc, int32_t id, const char* what) {
  auto bytes = oc.g.constant_bytes(id);
  int64_t n = oc.g.tensor(id).max_numel();
  if (static_cast<int64_t>(bytes.size()) < n * static_cast<int64_t>(sizeof(T)))
    oc.fail(ErrorKind::Format, std::string(what) + " holds " + std::to_string(bytes.size()) + " bytes, its shape needs " +
                                   std::to_string(n * sizeof(T)));
  std::vector<T> v(static_cast<size_t>(n));
  if (n) std::memcpy(v.data(), bytes.data(), static_cast<size_t>(n) * sizeof(T));
  return v;
}

// `post`: the call is etwebgpu.q8ta_conv2d*_clamp, the conv's 15 arguments then a q8ta_clamp's
// [in_scale, in_zp, lo, hi, out_scale, out_zp, quant_min, quant_max] applied to its int8 result.
void build_q8ta_conv(OpContext& oc, QKind kind, bool post = false) {
  Graph& g = oc.g;
  const size_t nargs = post ? 24 : 16;
  if (oc.nargs() != nargs) oc.fail(ErrorKind::Format, "expected " + std::to_string(nargs) + " arguments, got " + std::to_string(oc.nargs()));
  const int32_t x = oc.arg(0), w = oc.arg(3), ws = oc.arg(4), sc = oc.arg(5), bias = oc.arg(8), out = oc.out();
  need_dtype(oc, x, VkDType::Int8, "x");
  need_dtype(oc, out, VkDType::Int8, "out");
  need_dtype(oc, w, VkDType::Int8, "weights");
  need_dtype(oc, ws, VkDType::Int32, "weight_sums");
  need_dtype(oc, sc, VkDType::Float32, "weight_scales");
  need_constant(oc, w, "weights");
  need_constant(oc, ws, "weight_sums");
  need_constant(oc, sc, "weight_scales");
  const bool has_bias = !g.is_null(bias);
  if (has_bias) {
    need_dtype(oc, bias, VkDType::Float32, "bias");
    need_constant(oc, bias, "bias");
  }
  const double iscale = g.number(oc.arg(1)), oscale = g.number(oc.arg(6));
  const int64_t izp = g.integer(oc.arg(2)), ozp = g.integer(oc.arg(7));
  auto check_scale = [&](double s, const char* what) {
    if (!std::isfinite(s) || s <= 0) oc.fail(ErrorKind::Format, std::string(what) + " must be positive and finite, got " + num_str(s));
  };
  auto check_zp = [&](int64_t z, const char* what) {
    if (z < -128 || z > 127) oc.fail(ErrorKind::Format, std::string(what) + " must be in [-128, 127], got " + std::to_string(z));
  };
  check_scale(iscale, "input_scale");
  check_zp(izp, "input_zero_point");
  check_scale(oscale, "output_scale");
  check_zp(ozp, "output_zero_point");
  const std::string act = g.string(oc.arg(14));
  if (act != "relu" && act != "none") oc.fail(ErrorKind::Format, "activation must be \"relu\" or \"none\", got \"" + act + "\"");

  auto pair = [&](int32_t id, const char* what, int64_t lo) {
    auto v = g.int_list(id);
    if (v.size() == 1) v.push_back(v[0]);
    if (v.size() != 2) oc.fail(ErrorKind::Format, std::string(what) + " must hold 2 values, got " + std::to_string(v.size()));
    for (auto e : v)
      if (e < lo) oc.fail(ErrorKind::Format, std::string(what) + " value " + std::to_string(e) + " is below " + std::to_string(lo));
    return v;
  };
  const auto ks = pair(oc.arg(9), "kernel_size", 1), st = pair(oc.arg(10), "stride", 1), pd = pair(oc.arg(11), "padding", 0),
             dl = pair(oc.arg(12), "dilation", 1);
  const int64_t groups = g.integer(oc.arg(13));

  const auto& tx = g.tensor(x);
  const auto& to = g.tensor(out);
  if (tx.rank() != 4) oc.fail(ErrorKind::Format, "x must be NCHW (rank 4), got " + shape_str(tx.max_dims));
  if (to.rank() != 4) oc.fail(ErrorKind::Format, "out must be NCHW (rank 4), got " + shape_str(to.max_dims));
  const int64_t IC = tx.max_dims[1], OC = to.max_dims[1], KH = ks[0], KW = ks[1];
  if (groups < 1 || IC % groups != 0 || OC % groups != 0)
    oc.fail(ErrorKind::Format, "groups " + std::to_string(groups) + " must divide the input channels " + std::to_string(IC) +
                                   " and the output channels " + std::to_string(OC));
  const int64_t ICg = IC / groups, OCg = OC / groups;
  const int64_t OCpad = (OC + 3) / 4 * 4;
  int64_t K = KH * KW * ICg, Kpad = (K + 3) / 4 * 4;
  const auto& tw = g.tensor(w);
  if (kind == QKind::Depthwise) {
    if (groups != OC || ICg != 1 || OC != IC)
      oc.fail(ErrorKind::Format, "depthwise needs groups == in channels == out channels, got groups " + std::to_string(groups) +
                                     ", " + std::to_string(IC) + " in, " + std::to_string(OC) + " out");
    if (tw.max_dims != std::vector<int64_t>{KH, KW, OC})
      oc.fail(ErrorKind::Format, "weights must be [KH, KW, OC] = " + shape_str({KH, KW, OC}) + ", got " + shape_str(tw.max_dims));
    Kpad = K;
  } else {
    if (kind == QKind::Pointwise && (KH != 1 || KW != 1))
      oc.fail(ErrorKind::Format, "pointwise needs a 1x1 kernel, got " + std::to_string(KH) + "x" + std::to_string(KW));
    if (tw.max_dims != std::vector<int64_t>{OC, Kpad})
      oc.fail(ErrorKind::Format, "weights must be [OC, K_pad] = " + shape_str({OC, Kpad}) + " (K = " + std::to_string(KH) + "*" +
                                     std::to_string(KW) + "*" + std::to_string(ICg) + "), got " + shape_str(tw.max_dims));
  }
  auto need_len = [&](int32_t id, const char* what) {
    const auto& t = g.tensor(id);
    if (t.rank() != 1 || t.max_dims[0] < OC)
      oc.fail(ErrorKind::Format, std::string(what) + " must be 1-D with at least OC = " + std::to_string(OC) + " values, got " +
                                     shape_str(t.max_dims));
  };
  need_len(ws, "weight_sums");
  need_len(sc, "weight_scales");
  if (has_bias) need_len(bias, "bias");

  // Weight sums from the weights, checked against the file's; per-channel factors.
  const auto wq = constant_values<int8_t>(oc, w, "weights");
  const auto file_sums = constant_values<int32_t>(oc, ws, "weight_sums");
  const auto scales = constant_values<float>(oc, sc, "weight_scales");
  std::vector<float> bvals;
  if (has_bias) bvals = constant_values<float>(oc, bias, "bias");
  std::vector<float> qf(static_cast<size_t>(OCpad) * 2, 0.f);
  std::vector<int32_t> qc(static_cast<size_t>(OCpad), 0);
  for (int64_t o = 0; o < OC; ++o) {
    int64_t s = 0;
    if (kind == QKind::Depthwise) {
      for (int64_t t = 0; t < KH * KW; ++t) s += wq[t * OC + o];
    } else {
      for (int64_t k = 0; k < Kpad; ++k) s += wq[o * Kpad + k];
    }
    if (s != file_sums[o])
      oc.fail(ErrorKind::Format, "weight_sums[" + std::to_string(o) + "] is " + std::to_string(file_sums[o]) +
                                     ", the weights of channel " + std::to_string(o) + " sum to " + std::to_string(s));
    const float ws_o = scales[o];
    if (!std::isfinite(ws_o) || ws_o <= 0)
      oc.fail(ErrorKind::Format, "weight_scales[" + std::to_string(o) + "] must be positive and finite, got " + num_str(ws_o));
    if (has_bias && !std::isfinite(bvals[o]))
      oc.fail(ErrorKind::Format, "bias[" + std::to_string(o) + "] is not finite: " + num_str(bvals[o]));
    qf[o * 2] = static_cast<float>(static_cast<double>(static_cast<float>(iscale)) * static_cast<double>(ws_o));
    qf[o * 2 + 1] = has_bias ? bvals[o] : 0.f;
    qc[o] = static_cast<int32_t>(izp * s);
  }
  gpu::Buffer& qf_buf = g.make_scratch(qf.size() * 4, oc.call.name + " channel factors");
  g.ctx().write(qf_buf, 0, qf.data(), qf.size() * 4);
  gpu::Buffer& qc_buf = g.make_scratch(qc.size() * 4, oc.call.name + " zero-point terms");
  g.ctx().write(qc_buf, 0, qc.data(), qc.size() * 4);

  const bool dot4 = q8::use_dot4(oc, "q8ta_conv");  // dot4I8Packed or the portable dot

  QConvParams base{};
  base.oc = static_cast<uint32_t>(OC);
  base.g = static_cast<uint32_t>(groups);
  base.icg = static_cast<uint32_t>(ICg);
  base.ocg = static_cast<uint32_t>(OCg);
  base.k = static_cast<uint32_t>(K);
  base.kw = static_cast<uint32_t>(Kpad / 4);
  base.sh = static_cast<uint32_t>(st[0]);
  base.sw = static_cast<uint32_t>(st[1]);
  base.ph = static_cast<uint32_t>(pd[0]);
  base.pw = static_cast<uint32_t>(pd[1]);
  base.dh = static_cast<uint32_t>(dl[0]);
  base.dw = static_cast<uint32_t>(dl[1]);
  base.izp = static_cast<int32_t>(izp);
  base.ozp = static_cast<int32_t>(ozp);
  base.inv = static_cast<float>(1.0 / oscale);
  base.relu = act == "relu" ? 1u : 0u;
  if (post) {
    const q8::ClampArgs c = q8::clamp_args(oc, 15, out);  // checked as etwebgpu.q8ta_clamp checks them
    base.post = 1;
    base.post_zp_in = c.in_zp;
    base.post_scale = c.in_scale;
    base.post_lo = c.lo;
    base.post_hi = c.hi;
    base.post_inv = c.inv_out_scale;
    base.post_zp = c.out_zp;
    base.post_qmin = static_cast<float>(c.qmin);
    base.post_qmax = static_cast<float>(c.qmax);
  }

  auto out_hw = [base, KH, KW](int64_t H, int64_t W) {
    int64_t oh = (H + 2 * int64_t(base.ph) - int64_t(base.dh) * (KH - 1) - 1) / int64_t(base.sh) + 1;
    int64_t ow = (W + 2 * int64_t(base.pw) - int64_t(base.dw) * (KW - 1) - 1) / int64_t(base.sw) + 1;
    return std::pair<int64_t, int64_t>{oh, ow};
  };
  {
    auto [oh, ow] = out_hw(tx.max_dims[2], tx.max_dims[3]);
    if (oh < 1 || ow < 1)
      oc.fail(ErrorKind::Format, "the kernel does not fit the input " + shape_str(tx.max_dims) + " with this padding");
  }
  oc.output(out, [x, OC, out_hw](const kernel::Live& l) {
    const auto& d = l.dims(x);
    auto [oh, ow] = out_hw(d[2], d[3]);
    if (oh < 1 || ow < 1) throw Error(ErrorKind::InvalidArgument, "the kernel does not fit the input " + shape_str(d));
    return std::vector<int64_t>{d[0], OC, oh, ow};
  });
  auto params = [x, out, base](const kernel::Live& l) {
    const auto& d = l.dims(x);
    const auto& o = l.dims(out);
    QConvParams p = base;
    p.b = kernel::u32(d[0], "batch");
    p.ic = kernel::u32(d[1], "input channels");
    p.h = kernel::u32(d[2], "input height");
    p.w = kernel::u32(d[3], "input width");
    p.oh = kernel::u32(o[2], "output height");
    p.ow = kernel::u32(o[3], "output width");
    p.n = kernel::u32(d[0] * o[2] * o[3], "output pixels");
    p.nq = kernel::u32((l.numel(out) + 3) / 4, "output words");
    return p;
  };

  const std::string dv = dot4 ? "dot4" : "portable";
  if (kind == QKind::Depthwise) {
    oc.add(kernel::Kernel("q8ta_conv_dw")
               .constant("KHC", static_cast<double>(KH))
               .constant("KWC", static_cast<double>(KW))
               .input("XQ", x)
               .input("WQ", w)
               .buffer("QF", qf_buf, "vec2<f32>", kernel::Access::Read)
               .buffer("QC", qc_buf, "i32", kernel::Access::Read)
               .output("YQ", out)
               .params<QConvParams>(params)
               .groups([params](const kernel::Live& l) {
                 return kernel::Groups::linear(kernel::ceil_div(params(l).nq, 256));
               })
               .variant("dw"));
    return;
  }
  // Tile: 16*TM output channels x 64 pixels per workgroup. TM shrinks while the grid has too few
  // workgroups to fill a large GPU; past that, K is split into ranges summed atomically (SPLIT).
  const int64_t max_n = tx.max_dims[0] * to.max_dims[2] * to.max_dims[3];
  const uint32_t lim = g.ctx().info().max_workgroups_per_dim;
  if (static_cast<uint64_t>(ceil_div(max_n, 64)) > lim)
    oc.fail(ErrorKind::Limit, std::to_string(max_n) + " output pixels exceed the grid limit");
  constexpr uint64_t kTargetGroups = 512;
  uint32_t tm = 8;
  auto tiles = [&](uint32_t t) { return ceil_div(OCg, 16 * t) * ceil_div(max_n, 64) * static_cast<uint64_t>(groups); };
  while (tm > 1 && (16 * tm / 2 >= static_cast<uint32_t>(OCg) || tiles(tm) < kTargetGroups)) tm /= 2;
  const uint64_t ksteps = ceil_div(Kpad / 4, 16);
  uint64_t splits = 1;
  if (tiles(tm) < kTargetGroups / 2 && ksteps >= 8)
    splits = std::min<uint64_t>({ceil_div(kTargetGroups, tiles(tm)), ksteps / 4, 32});
  const uint64_t steps_per = ceil_div(ksteps, splits);
  splits = ceil_div(ksteps, steps_per);
  if (groups * splits > lim) oc.fail(ErrorKind::Limit, "groups x K ranges exceed the grid limit");
  base.splits = static_cast<uint32_t>(splits);
  base.steps = static_cast<uint32_t>(steps_per);
  auto grid = [params, tm, splits](const kernel::Live& l) {
    QConvParams p = params(l);
    return kernel::Groups::grid(kernel::ceil_div(p.n, 64), kernel::ceil_div(p.ocg, 16 * tm), p.g * splits);
  };
  auto gemm = [&]() {
    kernel::Kernel k("q8ta_conv_gemm");
    if (dot4) k.define("DOT4");
    k.constant("KHC", static_cast<double>(KH)).constant("KWC", static_cast<double>(KW)).constant("TM", tm);
    k.input("XQ", x).input("WQ", w);
    return k;
  };
  auto params2 = [params, base](const kernel::Live& l) {
    QConvParams p = params(l);
    p.splits = base.splits;
    p.steps = base.steps;
    return p;
  };
  if (splits > 1) {
    gpu::Buffer& acc = g.make_scratch(static_cast<uint64_t>(OC) * max_n * 4, oc.call.name + " split-K sums");
    oc.add(gemm()
               .define("SPLIT")
               .buffer("ACC", acc, "atomic<i32>", kernel::Access::ReadWrite)
               .params<QConvParams>(params2)
               .groups(grid)
               .variant("gemm_split_" + dv));
    oc.add(kernel::Kernel("q8ta_conv_finalize")
               .buffer("QF", qf_buf, "vec2<f32>", kernel::Access::Read)
               .buffer("QC", qc_buf, "i32", kernel::Access::Read)
               .buffer("ACC", acc, "atomic<i32>", kernel::Access::ReadWrite)
               .output("YQ", out)
               .params<QConvParams>(params2)
               .groups([params](const kernel::Live& l) {
                 return kernel::Groups::linear(kernel::ceil_div(params(l).nq, 256));
               })
               .variant("split_finalize"));
    return;
  }
  auto whole = [&]() {
    return gemm()
        .buffer("QF", qf_buf, "vec2<f32>", kernel::Access::Read)
        .buffer("QC", qc_buf, "i32", kernel::Access::Read)
        .output("YQ", out)
        .params<QConvParams>(params2)
        .groups(grid);
  };
  // Whole output words where every (image, channel) plane is a whole number of words.
  auto words = [out](const kernel::Live& l) { return (l.dims(out)[2] * l.dims(out)[3]) % 4 == 0; };
  oc.add(whole().define("WORDS").when(words).variant("gemm_words_" + dv));
  oc.add(whole().when([words](const kernel::Live& l) { return !words(l); }).variant("gemm_elems_" + dv));
}

void build_q8ta_conv2d(OpContext& oc) { build_q8ta_conv(oc, QKind::General); }
void build_q8ta_conv2d_pw(OpContext& oc) { build_q8ta_conv(oc, QKind::Pointwise); }
void build_q8ta_conv2d_dw(OpContext& oc) { build_q8ta_conv(oc, QKind::Depthwise); }

ETW_REGISTER_OP("et_vk.q8ta_conv2d.default", build_q8ta_conv2d);
ETW_REGISTER_OP("et_vk.q8ta_conv2d_pw.default", build_q8ta_conv2d_pw);
ETW_REGISTER_OP("et_vk.q8ta_conv2d_dw.default", build_q8ta_conv2d_dw);
void build_q8ta_conv2d_clamp(OpContext& oc) { build_q8ta_conv(oc, QKind::General, true); }
void build_q8ta_conv2d_pw_clamp(OpContext& oc) { build_q8ta_conv(oc, QKind::Pointwise, true); }
void build_q8ta_conv2d_dw_clamp(OpContext& oc) { build_q8ta_conv(oc, QKind::Depthwise, true); }
ETW_REGISTER_OP("etwebgpu.q8ta_conv2d_clamp", build_q8ta_conv2d_clamp);
ETW_REGISTER_OP("etwebgpu.q8ta_conv2d_pw_clamp", build_q8ta_conv2d_pw_clamp);
ETW_REGISTER_OP("etwebgpu.q8ta_conv2d_dw_clamp", build_q8ta_conv2d_dw_clamp);

}  // namespace
}  // namespace etwebgpu::ops
