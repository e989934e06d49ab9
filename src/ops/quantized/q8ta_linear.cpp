// Int8 linears with 8-bit channel-wise symmetric weights (ExecuTorch Vulkan, custom_ops_lib.py and
// patterns/quantized_linear.py):
// * et_vk.q8ta_linear / et_vk.q8ta_linear_gemv [x, input_scale, input_zero_point, weights,
//   weight_sums, weight_scales, output_scale, output_zero_point, bias, activation, out]: static
//   int8 input and output. weights int8 [N, K], weight_sums int32 [N padded to 4] (= sum_k w[n, k],
//   checked at load), weight_scales / bias f32 [N padded to 4]. Integer accumulation, then
//   y = acc * input_scale * weight_scale[n] + bias[n], relu, y_q = clamp(round(y * f32(1 /
//   output_scale)) + output_zero_point, -128, 127). Routes: "dot4" (dot4I8Packed, K a multiple of
//   4) and "portable"; force_route "q8ta_linear" pins one (both ops). Fewer than kSplitKWords
//   output words (a classifier head at batch 1: 250 words would be 4 workgroups) take the split-K
//   kernel, one workgroup per word (variants "dot4_split_k" / "portable_split_k").
// * et_vk.linear_q8ta_q8csw [x, input_scale, input_zero_point, weights, weight_sums,
//   weight_scales, bias, out]: float input and output, computed as ExecuTorch's reference does:
//   out = x @ (w * weight_scales)^T + bias, the input quantization arguments checked but not applied.
#include "ops/quantized/q8_common.h"

namespace etwebgpu::ops {
namespace {

struct Q8taParams {
  uint32_t m, n, k, total, words, aligned, has_bias, relu;
  int32_t izp, ozp;
  float iscale, oscale_inv;
};
static_assert(sizeof(Q8taParams) == 48);

// Below this many output words the one-invocation-per-word kernel launches under 128 workgroups of
// 64, too few to fill a GPU; the split-K kernel then spreads each word's K over a workgroup.
constexpr int64_t kSplitKWords = 8192;

struct CswParams {
  uint32_t m, n, k, total, has_bias, pad0, pad1, pad2;
};
static_assert(sizeof(CswParams) == 32);

// The weight checks both ops share: int8 [N, K] constant, sums int32 [>= N] equal to the weights'
// row sums, scales f32 [>= N] finite and positive, bias f32 [>= N] or Null. Returns K.
int64_t check_weights(OpContext& oc, int32_t x, int32_t w, int32_t sums, int32_t sc, int32_t bias, int32_t out) {
  Graph& g = oc.g;
  require_dtype(oc, w, {VkDType::Int8}, "weights");
  require_dtype(oc, sums, {VkDType::Int32}, "weight_sums");
  require_dtype(oc, sc, {VkDType::Float32}, "weight_scales");
  q8::require_const(oc, w, "weights");
  q8::require_const(oc, sums, "weight_sums");
  q8::require_const(oc, sc, "weight_scales");
  const auto& tx = g.tensor(x);
  const auto& tw = g.tensor(w);
  const auto& to = g.tensor(out);
  if (tx.rank() < 1 || to.rank() != tx.rank())
    oc.fail(ErrorKind::Format, "input " + shape_str(tx.max_dims) + " and out " + shape_str(to.max_dims) + " ranks differ");
  int64_t K = tx.max_dims.back(), N = to.max_dims.back();
  if (K < 1 || N < 1) oc.fail(ErrorKind::Format, "input and out need features, got K = " + std::to_string(K) + ", N = " + std::to_string(N));
  if (tw.rank() != 2 || tw.max_dims[0] != N || tw.max_dims[1] != K)
    oc.fail(ErrorKind::Format, "weights must be [" + std::to_string(N) + ", " + std::to_string(K) + "], got " + shape_str(tw.max_dims));
  if (g.tensor(sums).max_numel() < N)
    oc.fail(ErrorKind::Format, "weight_sums " + shape_str(g.tensor(sums).max_dims) + " has fewer than N = " + std::to_string(N) + " values");
  if (g.tensor(sc).max_numel() < N)
    oc.fail(ErrorKind::Format, "weight_scales " + shape_str(g.tensor(sc).max_dims) + " has fewer than N = " + std::to_string(N) + " values");
  q8::check_scales(oc, q8::f32_values(oc, sc), static_cast<size_t>(N), "weight_scales");
  auto wq = q8::int_values(oc, w);
  auto ws = q8::int_values(oc, sums);
  for (int64_t n = 0; n < N; ++n) {
    int64_t s = 0;
    for (int64_t k = 0; k < K; ++k) s += wq[n * K + k];
    if (s != ws[n])
      oc.fail(ErrorKind::Format, "weight_sums[" + std::to_string(n) + "] = " + std::to_string(ws[n]) + " but the weights' row sums to " +
                                     std::to_string(s));
  }
  if (!g.is_null(bias)) {
    require_dtype(oc, bias, {VkDType::Float32}, "bias");
    if (g.tensor(bias).max_numel() < N)
      oc.fail(ErrorKind::Format, "bias " + shape_str(g.tensor(bias).max_dims) + " has fewer than N = " + std::to_string(N) + " values");
  }
  oc.output(out, [x, K, N](const kernel::Live& l) {
    const auto& dx = l.dims(x);
    if (dx.back() != K) throw Error(ErrorKind::InvalidArgument, "input " + shape_str(dx) + " must end in K = " + std::to_string(K));
    std::vector<int64_t> od = dx;
    od.back() = N;
    return od;
  });
  return K;
}

void build_q8ta_linear(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() != 11) oc.fail(ErrorKind::Format, "expects 11 arguments, got " + std::to_string(oc.nargs()));
  int32_t x = oc.arg(0), w = oc.arg(3), sums = oc.arg(4), sc = oc.arg(5), bias = oc.arg(8), out = oc.out();
  require_dtype(oc, x, {VkDType::Int8}, "input");
  require_dtype(oc, out, {VkDType::Int8}, "out");
  const double iscale = q8::scale_arg(oc, oc.arg(1), "input_scale");
  const int32_t izp = q8::zp_arg(oc, oc.arg(2), "input_zero_point");
  const double oscale = q8::scale_arg(oc, oc.arg(6), "output_scale");
  const int32_t ozp = q8::zp_arg(oc, oc.arg(7), "output_zero_point");
  std::string act = g.is_null(oc.arg(9)) ? "none" : g.string(oc.arg(9));
  if (act != "none" && act != "relu") oc.fail(ErrorKind::Format, "activation must be \"none\" or \"relu\", got \"" + act + "\"");
  const int64_t K = check_weights(oc, x, w, sums, sc, bias, out);
  const int64_t N = g.tensor(out).max_dims.back();
  const bool dot4 = q8::use_dot4(oc, "q8ta_linear");
  const bool has_bias = !g.is_null(bias);
  Q8taParams base{0, static_cast<uint32_t>(N), static_cast<uint32_t>(K), 0, 0, K % 4 == 0 ? 1u : 0u,
                  has_bias ? 1u : 0u, act == "relu" ? 1u : 0u, izp, ozp, static_cast<float>(iscale),
                  static_cast<float>(1.0 / oscale)};
  const int64_t max_words = ceil_div(g.tensor(x).max_numel() / K * N, 4);
  const bool split = max_words < kSplitKWords;
  kernel::Kernel k("q8ta_linear");
  if (dot4) k.define("DOT4");
  if (split) k.define("SPLIT_K");
  oc.add(k.input("X", x)
             .input("W", w)
             .input("WSUM", sums)
             .input("WS", sc)
             .input("BIAS", has_bias ? bias : -1)
             .output("O", out)
             .constant("WG", 64)
             .params<Q8taParams>([x, base](const kernel::Live& l) {
               Q8taParams p = base;
               p.m = kernel::u32(l.numel(x) / base.k, "rows");
               p.total = kernel::u32(static_cast<int64_t>(p.m) * base.n, "outputs");
               p.words = static_cast<uint32_t>(ceil_div(p.total, 4));
               return p;
             })
             .groups([x, K, N, split](const kernel::Live& l) {
               const uint64_t words = ceil_div(static_cast<uint64_t>(l.numel(x) / K * N), 4);
               return kernel::Groups::linear(split ? words : ceil_div(words, 64));
             })
             .variant(std::string(dot4 ? "dot4" : "portable") + (split ? "_split_k" : "")));
}

void build_linear_q8ta_q8csw(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() != 8) oc.fail(ErrorKind::Format, "expects 8 arguments, got " + std::to_string(oc.nargs()));
  int32_t x = oc.arg(0), w = oc.arg(3), sums = oc.arg(4), sc = oc.arg(5), bias = oc.arg(6), out = oc.out();
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16}, "out");
  q8::scale_arg(oc, oc.arg(1), "input_scale");
  q8::zp_arg(oc, oc.arg(2), "input_zero_point");
  const int64_t K = check_weights(oc, x, w, sums, sc, bias, out);
  const int64_t N = g.tensor(out).max_dims.back();
  const bool has_bias = !g.is_null(bias);
  CswParams base{0, static_cast<uint32_t>(N), static_cast<uint32_t>(K), 0, has_bias ? 1u : 0u, 0, 0, 0};
  oc.add(kernel::Kernel("q8csw_linear_f32")
             .input("X", x)
             .input("W", w)
             .input("WS", sc)
             .input("BIAS", has_bias ? bias : -1)
             .output("O", out)
             .params<CswParams>([x, base](const kernel::Live& l) {
               CswParams p = base;
               p.m = kernel::u32(l.numel(x) / base.k, "rows");
               p.total = kernel::u32(static_cast<int64_t>(p.m) * base.n, "outputs");
               return p;
             })
             .flat(out)
             .variant("f32"));
}

ETW_REGISTER_OP("et_vk.q8ta_linear.default", build_q8ta_linear);
ETW_REGISTER_OP("et_vk.q8ta_linear_gemv.default", build_q8ta_linear);
ETW_REGISTER_OP("et_vk.linear_q8ta_q8csw.default", build_linear_q8ta_q8csw);

}  // namespace
}  // namespace etwebgpu::ops
