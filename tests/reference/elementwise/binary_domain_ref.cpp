#include "reference/elementwise/binary_domain_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "reference/broadcast.h"

namespace etwebgpu::ref {

namespace {

// ATen's floor division of floating values: from fmod, so that a == b * q + r holds exactly.
double floor_div(double a, double b) {
  if (b == 0) return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  if (div - fl > 0.5) fl += 1;
  return fl;
}

int64_t floor_div_int(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

template <class F>
HostTensor map2(const HostTensor& a, const HostTensor& b, DType out, F f) {
  auto o = broadcast(a.shape, b.shape);
  auto av = a.to_f64(), bv = b.to_f64();
  HostTensor r(out, o);
  for (int64_t i = 0; i < r.numel(); ++i) {
    double v = f(av[broadcast_index(i, o, a.shape)], bv[broadcast_index(i, o, b.shape)]);
    if (out == DType::Bool) r.data[i] = v != 0;
    else if (out == DType::Int32) r.as<int32_t>()[i] = static_cast<int32_t>(v);
    else r.as<double>()[i] = v;
  }
  return r;
}

}  // namespace

HostTensor div_rounding(const HostTensor& a, const HostTensor& b, const std::string& mode) {
  if (mode != "trunc" && mode != "floor") throw std::invalid_argument("rounding mode " + mode);
  bool ints = a.dtype == DType::Int32 && b.dtype == DType::Int32;
  return map2(a, b, ints ? DType::Int32 : DType::Float64, [&](double x, double y) {
    if (ints) {
      if (y == 0) throw std::invalid_argument("integer division by zero (PyTorch raises)");
      auto xi = static_cast<int64_t>(x), yi = static_cast<int64_t>(y);
      return static_cast<double>(mode == "trunc" ? xi / yi : floor_div_int(xi, yi));
    }
    return mode == "trunc" ? std::trunc(x / y) : floor_div(x, y);
  });
}

HostTensor logical(char op, const HostTensor& a, const HostTensor& b) {
  return map2(a, b, DType::Bool, [&](double x, double y) {
    bool p = x != 0, q = y != 0;  // NaN != 0 is true
    return static_cast<double>(op == '&' ? (p && q) : (p || q));
  });
}

HostTensor compare_scalar(const std::string& op, const HostTensor& a, double s) {
  HostTensor sc = HostTensor::from<double>(DType::Float64, {}, {s});
  return map2(a, sc, DType::Bool, [&](double x, double y) {
    if (op == "eq") return double(x == y);
    if (op == "ne") return double(x != y);
    if (op == "lt") return double(x < y);
    if (op == "le") return double(x <= y);
    if (op == "gt") return double(x > y);
    if (op == "ge") return double(x >= y);
    throw std::invalid_argument("comparison " + op);
  });
}

HostTensor min_max(char op, const HostTensor& a, const HostTensor& b) {
  return map2(a, b, DType::Float64, [&](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::quiet_NaN();
    return op == '<' ? std::min(x, y) : std::max(x, y);
  });
}

}  // namespace etwebgpu::ref
