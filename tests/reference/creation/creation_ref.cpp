#include "reference/creation/creation_ref.h"

#include <cmath>
#include <stdexcept>

namespace etwebgpu::ref {

namespace {
void put(HostTensor& r, int64_t i, double v, DType dtype) {
  switch (dtype) {
    case DType::Float32: r.as<double>()[i] = static_cast<double>(static_cast<float>(v)); break;
    case DType::Int32: r.as<int32_t>()[i] = static_cast<int32_t>(std::trunc(v)); break;
    case DType::Bool: r.data[i] = v != 0.0; break;
    default: throw std::runtime_error("creation ref: unsupported dtype");
  }
}
DType result_type(DType d) { return d == DType::Float32 ? DType::Float64 : d; }
}  // namespace

HostTensor full(std::vector<int64_t> shape, double v, DType dtype) {
  HostTensor r(result_type(dtype), std::move(shape));
  for (int64_t i = 0; i < r.numel(); ++i) put(r, i, v, dtype);
  return r;
}

HostTensor arange(double start, double end, double step, DType dtype) {
  int64_t n = static_cast<int64_t>(std::ceil((end - start) / step));
  HostTensor r(result_type(dtype), {n});
  for (int64_t i = 0; i < n; ++i) put(r, i, start + static_cast<double>(i) * step, dtype);
  return r;
}

HostTensor grid_priors(int64_t h, int64_t w, int64_t stride, double offset) {
  HostTensor r(DType::Float64, {h * w, 2});
  double* p = r.as<double>();
  const float off = static_cast<float>(offset), st = static_cast<float>(stride);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      p[2 * (y * w + x)] = static_cast<double>((static_cast<float>(x) + off) * st);
      p[2 * (y * w + x) + 1] = static_cast<double>((static_cast<float>(y) + off) * st);
    }
  return r;
}

}  // namespace etwebgpu::ref
