#include "reference/quantized/q8_linear_ref.h"

#include <algorithm>
#include <cfenv>
#include <cmath>

namespace etwebgpu::ref {

std::vector<double> q8ta_linear_prequant(const std::vector<int8_t>& x, int64_t M, int64_t K, double iscale, int64_t izp,
                                         const std::vector<int8_t>& w, int64_t N, const std::vector<float>& ws,
                                         const std::vector<float>* bias, bool relu, double oscale) {
  std::vector<double> out(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (double(x[m * K + k]) - double(izp)) * double(float(iscale)) * double(w[n * K + k]) * double(ws[n]);
      if (bias) acc += (*bias)[n];
      if (relu) acc = std::max(acc, 0.0);
      out[m * N + n] = acc * double(float(1.0 / oscale));
    }
  return out;
}

int8_t q8_requantize(double v, int64_t ozp) {
  double r = std::nearbyint(v) + double(ozp);  // default rounding mode: half to even (torch.round)
  return static_cast<int8_t>(std::clamp(r, -128.0, 127.0));
}

HostTensor linear_q8csw(const HostTensor& x, const std::vector<int8_t>& w, int64_t N, int64_t K,
                        const std::vector<float>& ws, const std::vector<float>* bias) {
  auto xv = x.to_f64();
  int64_t M = static_cast<int64_t>(xv.size()) / K;
  auto shape = x.shape;
  shape.back() = N;
  HostTensor o(DType::Float64, shape);
  double* od = o.as<double>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += xv[m * K + k] * double(w[n * K + k]) * double(ws[n]);
      od[m * N + n] = acc + (bias ? double((*bias)[n]) : 0.0);
    }
  return o;
}

void choose_qparams_rows(const std::vector<float>& x, int64_t rows, int64_t K, const std::string& mapping, int64_t qmin,
                         int64_t qmax, double eps, std::vector<float>* scale, std::vector<int32_t>* zp) {
  scale->assign(rows, 0.f);
  zp->assign(rows, 0);
  const float feps = static_cast<float>(eps);
  for (int64_t r = 0; r < rows; ++r) {
    float mn = x[r * K], mx = x[r * K];
    for (int64_t k = 1; k < K; ++k) {
      mn = std::min(mn, x[r * K + k]);
      mx = std::max(mx, x[r * K + k]);
    }
    const float min_neg = std::min(mn, 0.f), max_pos = std::max(mx, 0.f);
    if (mapping == "SYMMETRIC") {
      float s = std::max(-min_neg, max_pos) / static_cast<float>(double(qmax - qmin) / 2.0);
      (*scale)[r] = std::max(s, feps);
      (*zp)[r] = static_cast<int32_t>(double(qmax + qmin + 1) / 2.0);
    } else {
      float s = std::max((max_pos - min_neg) / static_cast<float>(qmax - qmin), feps);
      float z = static_cast<float>(qmin) - std::nearbyint(min_neg / s);
      z = std::clamp(z, static_cast<float>(qmin), static_cast<float>(qmax));
      (*scale)[r] = s;
      (*zp)[r] = static_cast<int32_t>(z);
    }
  }
}

int32_t quantize_affine_value(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax) {
  const float inv = 1.0f / scale;
  const float q = std::nearbyint(x * inv) + static_cast<float>(zp);
  return static_cast<int32_t>(std::clamp(q, static_cast<float>(qmin), static_cast<float>(qmax)));
}

HostTensor linear_dq8ca_q4gsw(const HostTensor& x, const std::vector<float>& scale, const std::vector<int32_t>& zp,
                              const std::vector<int8_t>& q, int64_t N, int64_t K, const std::vector<float>& ws, int64_t srow,
                              int64_t gs) {
  auto xv = x.to_f64();
  int64_t M = static_cast<int64_t>(xv.size()) / K;
  auto shape = x.shape;
  shape.back() = N;
  HostTensor o(DType::Float64, shape);
  double* od = o.as<double>();
  for (int64_t m = 0; m < M; ++m) {
    std::vector<double> xd(K);
    for (int64_t k = 0; k < K; ++k)
      xd[k] = double(quantize_affine_value(static_cast<float>(xv[m * K + k]), scale[m], zp[m], -128, 127) - zp[m]) * double(scale[m]);
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += xd[k] * double(q[n * K + k]) * double(ws[(k / gs) * srow + n]);
      od[m * N + n] = acc;
    }
  }
  return o;
}

}  // namespace etwebgpu::ref
