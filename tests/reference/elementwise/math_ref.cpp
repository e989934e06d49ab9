#include "reference/elementwise/math_ref.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "reference/broadcast.h"

namespace etwebgpu::ref {

namespace {
bool is_int_dtype(DType t) { return t == DType::Int32 || t == DType::Int64; }
bool is_float_dtype(DType t) { return t == DType::Float32 || t == DType::Float64 || t == DType::Float16; }

HostTensor f64_tensor(const std::vector<int64_t>& shape, const std::vector<double>& v) {
  return HostTensor::from(DType::Float64, shape, v);
}

double sign(double x) { return static_cast<double>((0 < x) - (x < 0)); }  // NaN -> 0, as ATen

// Python floor division and modulo of doubles (PyTorch's div_floor / remainder of floats).
double py_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}
double py_floordiv(double a, double b) {
  if (b == 0) return a / b;
  double m = std::fmod(a, b);
  double d = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
  if (d == 0) return std::copysign(0.0, a / b);
  double f = std::floor(d);
  if (d - f > 0.5) f += 1;
  return f;
}
int64_t int_floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t int_mod(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}
}  // namespace

HostTensor math(MathOp op, const HostTensor& x) {
  auto v = x.to_f64();
  if (op == MathOp::Sign && is_int_dtype(x.dtype)) {
    HostTensor r(DType::Int32, x.shape);
    for (size_t i = 0; i < v.size(); ++i) r.as<int32_t>()[i] = static_cast<int32_t>(sign(v[i]));
    return r;
  }
  std::vector<double> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    double a = v[i];
    switch (op) {
      case MathOp::Acos: o[i] = std::acos(a); break;
      case MathOp::Acosh: o[i] = std::acosh(a); break;
      case MathOp::Asin: o[i] = std::asin(a); break;
      case MathOp::Asinh: o[i] = std::asinh(a); break;
      case MathOp::Atan: o[i] = std::atan(a); break;
      case MathOp::Atanh: o[i] = std::atanh(a); break;
      case MathOp::Cosh: o[i] = std::cosh(a); break;
      case MathOp::Sinh: o[i] = std::sinh(a); break;
      case MathOp::Tan: o[i] = std::tan(a); break;
      case MathOp::Erf: o[i] = std::erf(a); break;
      case MathOp::Expm1: o[i] = std::expm1(a); break;
      case MathOp::Log10: o[i] = std::log10(a); break;
      case MathOp::Log1p: o[i] = std::log1p(a); break;
      case MathOp::Log2: o[i] = std::log2(a); break;
      case MathOp::Sign: o[i] = sign(a); break;
    }
  }
  return f64_tensor(x.shape, o);
}

HostTensor logit(const HostTensor& x, std::optional<double> eps) {
  auto v = x.to_f64();
  std::vector<double> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    double z = v[i];
    if (eps && *eps >= 0 && !std::isnan(z)) z = z < *eps ? *eps : (z > 1 - *eps ? 1 - *eps : z);
    o[i] = std::log(z / (1 - z));
  }
  return f64_tensor(x.shape, o);
}

HostTensor elu(const HostTensor& x, double alpha, double scale, double input_scale) {
  auto v = x.to_f64();
  std::vector<double> o(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    o[i] = v[i] > 0 ? scale * v[i] : scale * alpha * std::expm1(v[i] * input_scale);
  return f64_tensor(x.shape, o);
}

HostTensor isinf(const HostTensor& x) {
  auto v = x.to_f64();
  HostTensor r(DType::Bool, x.shape);
  for (size_t i = 0; i < v.size(); ++i) r.data[i] = std::isinf(v[i]);
  return r;
}
HostTensor isnan(const HostTensor& x) {
  auto v = x.to_f64();
  HostTensor r(DType::Bool, x.shape);
  for (size_t i = 0; i < v.size(); ++i) r.data[i] = std::isnan(v[i]);
  return r;
}

HostTensor math_binary(MathBinOp op, const HostTensor& a, const HostTensor& b, double alpha) {
  auto o = broadcast(a.shape, b.shape);
  auto va = a.to_f64(), vb = b.to_f64();
  bool floating = is_float_dtype(a.dtype) || is_float_dtype(b.dtype) || op == MathBinOp::Atan2 || op == MathBinOp::Pow;
  int64_t n = numel(o);
  std::vector<double> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double x = va[broadcast_index(i, o, a.shape)], y = vb[broadcast_index(i, o, b.shape)];
    if (floating) {
      switch (op) {
        case MathBinOp::Atan2: r[i] = std::atan2(x, y); break;
        case MathBinOp::Fmod: r[i] = std::fmod(x, y); break;
        case MathBinOp::Remainder: r[i] = py_mod(x, y); break;
        case MathBinOp::FloorDivide: r[i] = py_floordiv(x, y); break;
        case MathBinOp::Rsub: r[i] = y - alpha * x; break;
        case MathBinOp::Pow: r[i] = std::pow(x, y); break;
      }
    } else {
      auto xi = static_cast<int64_t>(x), yi = static_cast<int64_t>(y);
      switch (op) {
        case MathBinOp::Fmod: r[i] = yi == 0 ? 0.0 : static_cast<double>(xi % yi); break;
        case MathBinOp::Remainder: r[i] = static_cast<double>(int_mod(xi, yi)); break;
        case MathBinOp::FloorDivide: r[i] = static_cast<double>(int_floordiv(xi, yi)); break;
        case MathBinOp::Rsub: r[i] = static_cast<double>(yi - static_cast<int64_t>(alpha) * xi); break;
        default: throw std::runtime_error("math_binary: integer form of this op does not exist");
      }
    }
  }
  if (floating) return f64_tensor(o, r);
  HostTensor t(DType::Int32, o);
  for (int64_t i = 0; i < n; ++i) t.as<int32_t>()[i] = static_cast<int32_t>(r[i]);
  return t;
}

}  // namespace etwebgpu::ref

namespace etwebgpu::ref {

HostTensor clamp_tensor(const HostTensor& x, const HostTensor* lo, const HostTensor* hi) {
  std::vector<int64_t> o = x.shape;
  if (lo) o = broadcast(o, lo->shape);
  if (hi) o = broadcast(o, hi->shape);
  auto vx = x.to_f64();
  std::vector<double> vl = lo ? lo->to_f64() : std::vector<double>{}, vh = hi ? hi->to_f64() : std::vector<double>{};
  std::vector<double> r(static_cast<size_t>(numel(o)));
  for (int64_t i = 0; i < numel(o); ++i) {
    double v = vx[broadcast_index(i, o, x.shape)];
    bool nan = std::isnan(v);
    if (lo) {
      double l = vl[broadcast_index(i, o, lo->shape)];
      nan = nan || std::isnan(l);
      v = v < l ? l : v;
    }
    if (hi) {
      double h = vh[broadcast_index(i, o, hi->shape)];
      nan = nan || std::isnan(h);
      v = v > h ? h : v;
    }
    r[i] = nan ? std::nan("") : v;
  }
  return HostTensor::from(DType::Float64, o, r);
}

HostTensor glu(const HostTensor& x, int64_t dim) {
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (dim < 0) dim += rank;
  std::vector<int64_t> o = x.shape;
  o[dim] /= 2;
  int64_t inner = 1, outer = 1;
  for (int64_t d = dim + 1; d < rank; ++d) inner *= x.shape[d];
  for (int64_t d = 0; d < dim; ++d) outer *= x.shape[d];
  auto v = x.to_f64();
  std::vector<double> r;
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t j = 0; j < o[dim]; ++j)
      for (int64_t k = 0; k < inner; ++k) {
        double first = v[(a * x.shape[dim] + j) * inner + k];
        double second = v[(a * x.shape[dim] + j + o[dim]) * inner + k];
        r.push_back(first / (1 + std::exp(-second)));
      }
  return HostTensor::from(DType::Float64, o, r);
}

}  // namespace etwebgpu::ref
