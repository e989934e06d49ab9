#include "reference/conversion/conversion_ref.h"

#include <cmath>
#include <stdexcept>

namespace etwebgpu::ref {

HostTensor convert(const HostTensor& x, DType to) {
  auto v = x.to_f64();
  HostTensor r(to == DType::Float32 ? DType::Float64 : to, x.shape);
  for (size_t i = 0; i < v.size(); ++i) {
    switch (to) {
      case DType::Float32: r.as<double>()[i] = static_cast<double>(static_cast<float>(v[i])); break;
      case DType::Int32: r.as<int32_t>()[i] = static_cast<int32_t>(std::trunc(v[i])); break;
      case DType::Bool: r.data[i] = v[i] != 0.0; break;
      default: throw std::runtime_error("convert: unsupported target dtype");
    }
  }
  return r;
}

}  // namespace etwebgpu::ref
