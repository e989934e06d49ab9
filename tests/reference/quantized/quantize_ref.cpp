#include "reference/quantized/quantize_ref.h"

#include <algorithm>
#include <cmath>

namespace etwebgpu::ref {
namespace {

int64_t channel_of(const std::vector<int64_t>& shape, int64_t axis, int64_t i, size_t channels) {
  if (channels == 1) return 0;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  return (i / inner) % shape[axis];
}

float to_f32_value(const HostTensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::Float32: return t.as<float>()[i];
    case DType::Int8: return static_cast<float>(t.as<int8_t>()[i]);
    case DType::UInt8: return static_cast<float>(t.as<uint8_t>()[i]);
    case DType::Int32: return static_cast<float>(t.as<int32_t>()[i]);
    default: return NAN;
  }
}

// float32(round_half_even(v * inv) + zp) clamped: what PyTorch's float32 ops give.
int64_t quantize_one(float v, float inv, int64_t zp, int64_t qmin, int64_t qmax) {
  float p = v * inv;
  float r = std::nearbyint(p);  // default rounding mode: to nearest, ties to even
  float q = r + static_cast<float>(zp);
  return static_cast<int64_t>(std::clamp<float>(q, static_cast<float>(qmin), static_cast<float>(qmax)));
}

}  // namespace

HostTensor quantize_affine(const HostTensor& x, const std::vector<double>& scales, const std::vector<int64_t>& zps,
                           int64_t axis, int64_t qmin, int64_t qmax, DType out) {
  HostTensor y(out, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = channel_of(x.shape, axis, i, scales.size());
    // Per tensor: 1.0 / scale in double, then float32; per channel PyTorch divides float32 tensors.
    float inv = scales.size() == 1 ? static_cast<float>(1.0 / scales[0]) : 1.0f / static_cast<float>(scales[c]);
    int64_t q = quantize_one(to_f32_value(x, i), inv, zps[c], qmin, qmax);
    if (out == DType::Int8) y.as<int8_t>()[i] = static_cast<int8_t>(q);
    else y.as<uint8_t>()[i] = static_cast<uint8_t>(q);
  }
  return y;
}

HostTensor dequantize_affine(const HostTensor& q, const std::vector<double>& scales, const std::vector<int64_t>& zps,
                             int64_t axis) {
  HostTensor y(DType::Float32, q.shape);
  for (int64_t i = 0; i < q.numel(); ++i) {
    int64_t c = channel_of(q.shape, axis, i, scales.size());
    y.as<float>()[i] = (to_f32_value(q, i) - static_cast<float>(zps[c])) * static_cast<float>(scales[c]);
  }
  return y;
}

HostTensor q8ta_elementwise(const HostTensor& a, double sa, int64_t za, const HostTensor* b, double sb, int64_t zb,
                            double so, int64_t zo, double alpha) {
  HostTensor y(DType::Int8, a.shape);
  const float inv = static_cast<float>(1.0 / so);
  for (int64_t i = 0; i < a.numel(); ++i) {
    float da = (to_f32_value(a, i) - static_cast<float>(za)) * static_cast<float>(sa);
    float v;
    if (b) {
      float db = (to_f32_value(*b, i) - static_cast<float>(zb)) * static_cast<float>(sb);
      float ab = static_cast<float>(alpha) * db;
      v = da + ab;
    } else {
      v = std::max(da, 0.0f);
    }
    y.as<int8_t>()[i] = static_cast<int8_t>(quantize_one(v, inv, zo, -128, 127));
  }
  return y;
}

}  // namespace etwebgpu::ref
