// Helpers shared by the int8 builders (quantize.cpp, q8ta_conv.cpp, q8ta_linear.cpp,
// dq8ca_linear.cpp, choose_qparams.cpp): argument checks, the clamp arguments a fused ReLU6 carries
// and the dot4 / portable route choice.
#pragma once
#include <cmath>
#include <cstring>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_common.h"

namespace etwebgpu::ops::q8 {

inline std::string num_str(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

inline void require_const(const OpContext& oc, int32_t id, const std::string& what) {
  if (oc.g.tensor(id).constant_id < 0) oc.fail(ErrorKind::Unsupported, what + " must be a constant tensor");
}

// A quantization scale argument (Double): finite and positive, else a Format error naming it.
inline double scale_arg(const OpContext& oc, int32_t id, const std::string& what) {
  double s = oc.g.number(id);
  if (!std::isfinite(s) || s <= 0) oc.fail(ErrorKind::Format, what + " must be finite and positive, got " + num_str(s));
  return s;
}
// A zero point argument (Int) within [lo, hi], else a Format error naming it.
inline int32_t zp_arg(const OpContext& oc, int32_t id, const std::string& what, int64_t lo = -128, int64_t hi = 127) {
  int64_t z = oc.g.integer(id);
  if (z < lo || z > hi)
    oc.fail(ErrorKind::Format, what + " " + std::to_string(z) + " is outside [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
  return static_cast<int32_t>(z);
}

// A scale given as a number: positive and finite, as float32 too (PyTorch computes in float32).
inline float positive_scale(const OpContext& oc, double s, const std::string& what) {
  if (!(std::isfinite(s) && s > 0 && static_cast<float>(s) > 0 && std::isfinite(static_cast<float>(s)))) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", s);
    oc.fail(ErrorKind::Format, what + " " + b + " is not a positive finite number");
  }
  return static_cast<float>(s);
}

// quant_min / quant_max (arguments qmin_arg, qmin_arg + 1) inside the range of the quantized
// tensor `q`'s dtype (int8, uint8 or int32).
inline std::pair<int32_t, int32_t> quant_range(const OpContext& oc, size_t qmin_arg, int32_t q) {
  const VkDType t = oc.g.tensor(q).dtype;
  int64_t lo = INT32_MIN, hi = INT32_MAX;
  if (t == VkDType::Int8) lo = -128, hi = 127;
  else if (t == VkDType::UInt8) lo = 0, hi = 255;
  else if (t != VkDType::Int32)
    oc.fail(ErrorKind::Unsupported, std::string("quantized tensor of dtype ") + format::vk_dtype_name(t) + " (int8, uint8 or int32)");
  int64_t qmin = oc.g.integer(oc.arg(qmin_arg)), qmax = oc.g.integer(oc.arg(qmin_arg + 1));
  if (qmin > qmax || qmin < lo || qmax > hi)
    oc.fail(ErrorKind::Format, "quant_min " + std::to_string(qmin) + " / quant_max " + std::to_string(qmax) +
                                   " is not a range inside the " + format::vk_dtype_name(t) + " range [" + std::to_string(lo) +
                                   ", " + std::to_string(hi) + "]");
  return {static_cast<int32_t>(qmin), static_cast<int32_t>(qmax)};
}

// The arguments of an etwebgpu.q8ta_clamp from `first` on: [in_scale, in_zp, lo, hi, out_scale,
// out_zp, quant_min, quant_max] (q8_requant_fusion.cpp makes them; `out` is the int8 result).
struct ClampArgs {
  float in_scale;
  int32_t in_zp;
  float lo, hi, inv_out_scale;
  int32_t out_zp, qmin, qmax;
};
inline ClampArgs clamp_args(const OpContext& oc, size_t first, int32_t out) {
  const Graph& g = oc.g;
  auto [qmin, qmax] = quant_range(oc, first + 6, out);
  ClampArgs c;
  c.in_scale = positive_scale(oc, g.number(oc.arg(first)), "input scale");
  c.in_zp = zp_arg(oc, oc.arg(first + 1), "input zero_point");
  const double lo = g.number(oc.arg(first + 2)), hi = g.number(oc.arg(first + 3));
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) {
    char b[80];
    std::snprintf(b, sizeof b, "clamp bounds %.9g, %.9g", lo, hi);
    oc.fail(ErrorKind::Format, b);
  }
  c.lo = static_cast<float>(lo);
  c.hi = static_cast<float>(hi);
  positive_scale(oc, g.number(oc.arg(first + 4)), "output scale");
  c.inv_out_scale = static_cast<float>(1.0 / g.number(oc.arg(first + 4)));
  c.out_zp = zp_arg(oc, oc.arg(first + 5), "output zero_point", qmin, qmax);
  c.qmin = qmin;
  c.qmax = qmax;
  return c;
}

// Integer constant values (int8 / int32 / int64 tensors) as serialized.
inline std::vector<int64_t> int_values(const OpContext& oc, int32_t id) {
  const auto& t = oc.g.tensor(id);
  auto bytes = oc.g.constant_bytes(id);
  size_t n = static_cast<size_t>(t.max_numel());
  std::vector<int64_t> v(n);
  size_t el = t.dtype == VkDType::Int8 || t.dtype == VkDType::UInt8 ? 1 : t.dtype == VkDType::Int32 ? 4 : 8;
  if (bytes.size() < n * el) oc.fail(ErrorKind::Format, "constant data is shorter than its shape");
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = bytes.data() + i * el;
    if (t.dtype == VkDType::Int8) v[i] = static_cast<int8_t>(*p);
    else if (t.dtype == VkDType::UInt8) v[i] = *p;
    else if (el == 4) { int32_t x; std::memcpy(&x, p, 4); v[i] = x; }
    else { int64_t x; std::memcpy(&x, p, 8); v[i] = x; }
  }
  return v;
}
// Float32 constant values as serialized.
inline std::vector<float> f32_values(const OpContext& oc, int32_t id) {
  auto bytes = oc.g.constant_bytes(id);
  size_t n = static_cast<size_t>(oc.g.tensor(id).max_numel());
  if (bytes.size() < n * 4) oc.fail(ErrorKind::Format, "constant data is shorter than its shape");
  std::vector<float> v(n);
  std::memcpy(v.data(), bytes.data(), n * 4);
  return v;
}
// Per-channel weight scales: the first `n` values finite and positive.
inline void check_scales(const OpContext& oc, const std::vector<float>& s, size_t n, const std::string& what) {
  for (size_t i = 0; i < n && i < s.size(); ++i)
    if (!std::isfinite(s[i]) || s[i] <= 0)
      oc.fail(ErrorKind::Format, what + "[" + std::to_string(i) + "] must be finite and positive, got " + num_str(s[i]));
}

// The integer kernels' route: "dot4" (WGSL dot4I8Packed, where the adapter has it) or "portable";
// LoadOptions::force_route[key] pins one.
inline bool use_dot4(const OpContext& oc, const char* key) {
  const std::string route = pinned_route(oc, key, {"dot4", "portable"});
  const bool have = oc.g.ctx().info().packed_dot4;
  if (route == "dot4" && !have)
    oc.fail(ErrorKind::Unsupported, std::string("force_route ") + key + " = \"dot4\" needs the adapter's packed_4x8_integer_dot_product");
  return route.empty() ? have : route == "dot4";
}

}  // namespace etwebgpu::ops::q8
