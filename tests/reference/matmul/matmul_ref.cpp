#include "reference/matmul/matmul_ref.h"

#include <algorithm>
#include <stdexcept>

#include "reference/broadcast.h"

namespace etwebgpu::ref {

HostTensor matmul(const HostTensor& a, const HostTensor& b) {
  auto ad = a.shape, bd = b.shape;
  if (ad.empty() || bd.empty()) throw std::runtime_error("matmul needs rank >= 1");
  bool a1 = ad.size() == 1, b1 = bd.size() == 1;
  if (a1) ad.insert(ad.begin(), 1);
  if (b1) bd.push_back(1);
  int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
  if (bd[bd.size() - 2] != K) throw std::runtime_error("inner dims differ");
  std::vector<int64_t> ba(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
  auto bo = broadcast(ba, bb);
  std::vector<int64_t> od = bo;
  if (!a1) od.push_back(M);
  if (!b1) od.push_back(N);
  HostTensor r(DType::Float64, od);
  auto av = a.to_f64(), bv = b.to_f64();
  double* o = r.as<double>();
  int64_t nb = etwebgpu::numel(bo);
  for (int64_t z = 0; z < nb; ++z) {
    int64_t ia = broadcast_index(z, bo, ba) * M * K, ib = broadcast_index(z, bo, bb) * K * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += av[ia + m * K + k] * bv[ib + k * N + n];
        o[(z * M + m) * N + n] = s;
      }
  }
  return r;
}

HostTensor linear(const HostTensor& x, const HostTensor& w, const HostTensor* bias) {
  int64_t N = w.shape[0], K = w.shape[1];
  if (x.shape.back() != K) throw std::runtime_error("in_features differ");
  int64_t M = x.numel() / std::max<int64_t>(K, 1);
  if (K == 0) M = 0;
  auto od = x.shape;
  od.back() = N;
  HostTensor r(DType::Float64, od);
  if (K == 0) M = r.numel() / std::max<int64_t>(N, 1);
  auto xv = x.to_f64(), wv = w.to_f64();
  std::vector<double> bv = bias ? bias->to_f64() : std::vector<double>{};
  double* o = r.as<double>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = bias ? bv[bv.size() == 1 ? 0 : n] : 0.0;
      for (int64_t k = 0; k < K; ++k) s += xv[m * K + k] * wv[n * K + k];
      o[m * N + n] = s;
    }
  return r;
}

HostTensor addmm(const HostTensor& bias, const HostTensor& m1, const HostTensor& m2, double beta, double alpha) {
  HostTensor p = matmul(m1, m2);
  int64_t M = p.shape[0], N = p.shape[1];
  auto bs = bias.shape;
  if (broadcast(bs, {M, N}) != std::vector<int64_t>{M, N}) throw std::runtime_error("bias does not broadcast");
  auto bv = bias.to_f64();
  double* o = p.as<double>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double b = bv[broadcast_index(m * N + n, {M, N}, bs)];
      o[m * N + n] = alpha * o[m * N + n] + (beta == 0.0 ? 0.0 : beta * b);
    }
  return p;
}

}  // namespace etwebgpu::ref
