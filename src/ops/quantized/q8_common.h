// Helpers shared by the int8 linear builders (q8ta_linear.cpp, dq8ca_linear.cpp,
// choose_qparams.cpp): argument checks and the dot4 / portable route choice.
#pragma once
#include <cmath>
#include <cstring>
#include <string>
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
  Graph& g = oc.g;
  std::string route;
  if (auto it = g.options().force_route.find(key); it != g.options().force_route.end()) route = it->second;
  if (!route.empty() && route != "dot4" && route != "portable")
    oc.fail(ErrorKind::InvalidArgument,
            std::string("force_route ") + key + " must be \"dot4\" or \"portable\", got \"" + route + "\"");
  const bool have = g.ctx().info().packed_dot4;
  if (route == "dot4" && !have)
    oc.fail(ErrorKind::Unsupported, std::string("force_route ") + key + " = \"dot4\" needs the adapter's packed_4x8_integer_dot_product");
  return route.empty() ? have : route == "dot4";
}

}  // namespace etwebgpu::ops::q8
