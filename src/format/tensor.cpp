#include "etwebgpu/tensor.h"

#include <cmath>
#include <limits>

#include "etwebgpu/error.h"

namespace etwebgpu {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Float16: return "float16";
    case DType::Float64: return "float64";
  }
  return "unknown";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::UInt8: return 1;
    case DType::Int8: return 1;
    case DType::Float16: return 2;
    case DType::Float64: return 8;
  }
  throw Error(ErrorKind::InvalidArgument, "dtype_size: unknown dtype " + std::to_string(int(t)));
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(ErrorKind::InvalidArgument, "negative dimension in shape " + shape_str(shape));
    if (__builtin_mul_overflow(n, d, &n))
      throw Error(ErrorKind::InvalidArgument, "element count of shape " + shape_str(shape) + " overflows");
  }
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

HostTensor::HostTensor(DType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
  const int64_t n = etwebgpu::numel(shape);
  const size_t es = dtype_size(t);
  if (n > 0 && static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / es)
    throw Error(ErrorKind::InvalidArgument, "byte size of shape " + shape_str(shape) + " overflows");
  data.assign(static_cast<size_t>(n) * es, 0);
}

namespace {
double half_to_double(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(static_cast<double>(mant), -24);  // subnormal
  else if (exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
  return sign ? -v : v;
}
}  // namespace

std::vector<double> HostTensor::to_f64() const {
  const size_t es = dtype_size(dtype);
  const size_t n = data.size() / es;
  std::vector<double> out(n);
  const uint8_t* p = data.data();
  for (size_t i = 0; i < n; ++i, p += es) {
    switch (dtype) {
      case DType::Float32: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case DType::Int32: { int32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case DType::Int64: { int64_t v; std::memcpy(&v, p, 8); out[i] = static_cast<double>(v); break; }
      case DType::Bool: out[i] = *p ? 1.0 : 0.0; break;
      case DType::UInt8: out[i] = *p; break;
      case DType::Int8: out[i] = static_cast<int8_t>(*p); break;
      case DType::Float16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = half_to_double(v); break; }
      case DType::Float64: { double v; std::memcpy(&v, p, 8); out[i] = v; break; }
    }
  }
  return out;
}

}  // namespace etwebgpu
