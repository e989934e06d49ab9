#include "reference/distance/distance_ref.h"

#include <cmath>
#include <vector>

#include "reference/broadcast.h"

namespace etwebgpu::ref {

namespace {
double pnorm(const double* a, const double* b, int64_t m, double p) {
  double acc = 0;
  for (int64_t k = 0; k < m; ++k) {
    double d = std::fabs(a[k] - b[k]);
    if (p == 0) acc += d != 0;
    else if (std::isinf(p)) acc = std::fmax(acc, d);
    else acc += std::pow(d, p);
  }
  if (p == 0 || std::isinf(p)) return acc;
  return std::pow(acc, 1 / p);
}
}  // namespace

HostTensor cdist(const HostTensor& x1, const HostTensor& x2, double p) {
  size_t r1 = x1.shape.size(), r2 = x2.shape.size();
  int64_t P = x1.shape[r1 - 2], R = x2.shape[r2 - 2], M = x1.shape[r1 - 1];
  std::vector<int64_t> b1(x1.shape.begin(), x1.shape.end() - 2), b2(x2.shape.begin(), x2.shape.end() - 2);
  auto ob = broadcast(b1, b2);
  auto v1 = x1.to_f64(), v2 = x2.to_f64();
  std::vector<double> out;
  for (int64_t b = 0; b < numel(ob); ++b) {
    int64_t i1 = broadcast_index(b, ob, b1), i2 = broadcast_index(b, ob, b2);
    for (int64_t i = 0; i < P; ++i)
      for (int64_t j = 0; j < R; ++j) out.push_back(pnorm(&v1[(i1 * P + i) * M], &v2[(i2 * R + j) * M], M, p));
  }
  auto os = ob;
  os.push_back(P);
  os.push_back(R);
  return HostTensor::from(DType::Float64, os, out);
}

HostTensor pdist(const HostTensor& x, double p) {
  int64_t N = x.shape[0], M = x.shape[1];
  auto v = x.to_f64();
  std::vector<double> out;
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = i + 1; j < N; ++j) out.push_back(pnorm(&v[i * M], &v[j * M], M, p));
  return HostTensor::from(DType::Float64, {static_cast<int64_t>(out.size())}, out);
}

}  // namespace etwebgpu::ref
