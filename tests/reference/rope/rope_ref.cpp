#include "reference/rope/rope_ref.h"

namespace etwebgpu::ref {

HostTensor rope_interleaved(const HostTensor& x, const HostTensor& cos, const HostTensor& sin) {
  size_t R = x.shape.size();
  int64_t S = x.shape[R - 3], H = x.shape[R - 2], D = x.shape[R - 1];
  auto xv = x.to_f64(), cv = cos.to_f64(), sv = sin.to_f64();
  HostTensor out(DType::Float64, x.shape);
  double* o = out.as<double>();
  int64_t rows = x.numel() / D;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t s = (r / H) % S;
    for (int64_t i = 0; i < D / 2; ++i) {
      double re = xv[r * D + 2 * i], im = xv[r * D + 2 * i + 1];
      double c = cv[s * (D / 2) + i], sn = sv[s * (D / 2) + i];
      o[r * D + 2 * i] = re * c - im * sn;
      o[r * D + 2 * i + 1] = re * sn + im * c;
    }
  }
  return out;
}

HostTensor rope_hf(const HostTensor& x, const HostTensor& cos, const HostTensor& sin, int64_t start_pos) {
  size_t R = x.shape.size();
  int64_t S = x.shape[R - 3], H = x.shape[R - 2], D = x.shape[R - 1], half = D / 2;
  auto xv = x.to_f64(), cv = cos.to_f64(), sv = sin.to_f64();
  HostTensor out(DType::Float64, x.shape);
  double* o = out.as<double>();
  int64_t rows = x.numel() / D;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t t = (start_pos + (r / H) % S) * D;
    for (int64_t d = 0; d < D; ++d) {
      double rot = d < half ? -xv[r * D + d + half] : xv[r * D + d - half];
      o[r * D + d] = xv[r * D + d] * cv[t + d] + rot * sv[t + d];
    }
  }
  return out;
}

}  // namespace etwebgpu::ref
