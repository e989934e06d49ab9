#include "reference/elementwise/unary_ref.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <stdexcept>

#include "reference/elementwise/elementwise_ref.h"

namespace etwebgpu::ref {

namespace {
bool is_int_dtype(DType t) { return t == DType::Int32 || t == DType::Int64; }

double f_op(UnaryOp op, double x, std::optional<double> lo, std::optional<double> hi) {
  const double nan = std::nan("");
  switch (op) {
    case UnaryOp::Abs: return std::fabs(x);
    case UnaryOp::Neg: return -x;
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Sqrt: return std::sqrt(x);
    case UnaryOp::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOp::Sin: return std::sin(x);
    case UnaryOp::Cos: return std::cos(x);
    case UnaryOp::Tanh: return std::tanh(x);
    case UnaryOp::Round: return std::nearbyint(x);  // default rounding mode: half to even
    case UnaryOp::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::Relu: return std::isnan(x) ? x : (x < 0 ? 0.0 : x);
    case UnaryOp::GeluErf: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case UnaryOp::GeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case UnaryOp::Silu: return x / (1.0 + std::exp(-x));
    case UnaryOp::Hardswish: return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case UnaryOp::Clamp: {
      if (std::isnan(x)) return x;
      double r = x;
      if (lo && r < *lo) r = *lo;
      if (hi && r > *hi) r = *hi;
      return r;
    }
    case UnaryOp::LeakyRelu: return x >= 0 ? x : lo.value_or(0.01) * x;
    case UnaryOp::Log: return std::log(x);
    case UnaryOp::Reciprocal: return 1.0 / x;
    case UnaryOp::Floor: return std::floor(x);
    case UnaryOp::Ceil: return std::ceil(x);
    case UnaryOp::Trunc: return std::trunc(x);
    default: return nan;
  }
}
}  // namespace

HostTensor unary(UnaryOp op, const HostTensor& x, std::optional<double> lo, std::optional<double> hi) {
  auto v = x.to_f64();
  if (op == UnaryOp::LogicalNot) {
    HostTensor r(DType::Bool, x.shape);
    for (size_t i = 0; i < v.size(); ++i) r.data[i] = v[i] == 0.0;
    return r;
  }
  if (op == UnaryOp::BitwiseNot) {
    if (x.dtype == DType::Bool) {
      HostTensor r(DType::Bool, x.shape);
      for (size_t i = 0; i < v.size(); ++i) r.data[i] = v[i] == 0.0;
      return r;
    }
    HostTensor r(DType::Int32, x.shape);
    for (size_t i = 0; i < v.size(); ++i) r.as<int32_t>()[i] = ~static_cast<int32_t>(v[i]);
    return r;
  }
  bool int_result = is_int_dtype(x.dtype) &&
                    (op == UnaryOp::Abs || op == UnaryOp::Neg || op == UnaryOp::Relu || op == UnaryOp::Clamp);
  if (int_result) {
    HostTensor r(DType::Int32, x.shape);
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t a = static_cast<int64_t>(v[i]), o = a;
      switch (op) {
        case UnaryOp::Abs: o = a < 0 ? -a : a; break;
        case UnaryOp::Neg: o = -a; break;
        case UnaryOp::Relu: o = a < 0 ? 0 : a; break;
        default:
          if (lo && o < *lo) o = static_cast<int64_t>(*lo);
          if (hi && o > *hi) o = static_cast<int64_t>(*hi);
      }
      r.as<int32_t>()[i] = static_cast<int32_t>(o);
    }
    return r;
  }
  HostTensor r(DType::Float64, x.shape);
  std::fesetround(FE_TONEAREST);
  for (size_t i = 0; i < v.size(); ++i) r.as<double>()[i] = f_op(op, v[i], lo, hi);
  return r;
}


HostTensor where(const HostTensor& cond, const HostTensor& a, const HostTensor& b) {
  auto o = broadcast(broadcast(cond.shape, a.shape), b.shape);
  auto cv = cond.to_f64(), av = a.to_f64(), bv = b.to_f64();
  bool fl = a.dtype == DType::Float32 || b.dtype == DType::Float32 || a.dtype == DType::Float64 || b.dtype == DType::Float64;
  DType rt = fl ? DType::Float64 : (a.dtype == DType::Bool && b.dtype == DType::Bool ? DType::Bool : DType::Int32);
  HostTensor r(rt, o);
  for (int64_t i = 0; i < r.numel(); ++i) {
    double v = cv[broadcast_index(i, o, cond.shape)] != 0 ? av[broadcast_index(i, o, a.shape)] : bv[broadcast_index(i, o, b.shape)];
    if (rt == DType::Float64) r.as<double>()[i] = v;
    else if (rt == DType::Int32) r.as<int32_t>()[i] = static_cast<int32_t>(v);
    else r.data[i] = v != 0;
  }
  return r;
}

}  // namespace etwebgpu::ref
