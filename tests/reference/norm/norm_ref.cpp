#include "reference/norm/norm_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace etwebgpu::ref {

namespace {
HostTensor f64_like(const std::vector<int64_t>& shape) { return HostTensor(DType::Float64, shape); }
int64_t prod(const std::vector<int64_t>& s, size_t a, size_t b) {
  int64_t p = 1;
  for (size_t i = a; i < b; ++i) p *= s[i];
  return p;
}
// Mean and biased variance of n values.
void moments(const double* v, int64_t n, int64_t stride, double& mean, double& var) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += v[k * stride];
  mean = s / n;
  double q = 0;
  for (int64_t k = 0; k < n; ++k) q += (v[k * stride] - mean) * (v[k * stride] - mean);
  var = q / n;
}
}  // namespace

HostTensor softmax(const HostTensor& x, int64_t dim, bool log) {
  auto v = x.to_f64();
  int64_t r = static_cast<int64_t>(x.shape.size());
  if (dim < 0) dim += r;
  int64_t len = r ? x.shape[dim] : 1, inner = r ? prod(x.shape, dim + 1, r) : 1, outer = r ? prod(x.shape, 0, dim) : 1;
  auto out = f64_like(x.shape);
  double* o = out.as<double>();
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = a * len * inner + i;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < len; ++k) m = std::max(m, v[base + k * inner]);
      double s = 0;
      for (int64_t k = 0; k < len; ++k) s += std::exp(v[base + k * inner] - m);
      for (int64_t k = 0; k < len; ++k) {
        double e = v[base + k * inner] - m;
        o[base + k * inner] = log ? e - std::log(s) : std::exp(e) / s;
      }
    }
  return out;
}

HostTensor batch_norm(const HostTensor& x, const std::vector<double>& mean, const std::vector<double>& var,
                      const std::vector<double>& weight, const std::vector<double>& bias, double eps) {
  auto v = x.to_f64();
  int64_t C = x.shape[1], inner = prod(x.shape, 2, x.shape.size());
  auto out = f64_like(x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = (i / inner) % C;
    double y = (v[i] - mean[c]) / std::sqrt(var[c] + eps);
    if (!weight.empty()) y *= weight[c];
    if (!bias.empty()) y += bias[c];
    out.as<double>()[i] = y;
  }
  return out;
}

HostTensor layer_norm(const HostTensor& x, int64_t norm_dims, const std::vector<double>& weight,
                      const std::vector<double>& bias, double eps, std::vector<double>* mean_out,
                      std::vector<double>* rstd_out) {
  auto v = x.to_f64();
  size_t r = x.shape.size();
  int64_t len = prod(x.shape, r - norm_dims, r), rows = prod(x.shape, 0, r - norm_dims);
  auto out = f64_like(x.shape);
  for (int64_t row = 0; row < rows; ++row) {
    double m, var;
    moments(&v[row * len], len, 1, m, var);
    double rs = 1.0 / std::sqrt(var + eps);
    if (mean_out) mean_out->push_back(m);
    if (rstd_out) rstd_out->push_back(rs);
    for (int64_t k = 0; k < len; ++k) {
      double y = (v[row * len + k] - m) * rs;
      if (!weight.empty()) y *= weight[k];
      if (!bias.empty()) y += bias[k];
      out.as<double>()[row * len + k] = y;
    }
  }
  return out;
}

HostTensor group_norm(const HostTensor& x, int64_t groups, const std::vector<double>& weight,
                      const std::vector<double>& bias, double eps, std::vector<double>* mean_out,
                      std::vector<double>* rstd_out) {
  auto v = x.to_f64();
  int64_t N = x.shape[0], C = x.shape[1], hw = prod(x.shape, 2, x.shape.size());
  int64_t cpg = C / groups, len = cpg * hw;
  auto out = f64_like(x.shape);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < groups; ++gi) {
      int64_t base = (n * C + gi * cpg) * hw;
      double m, var;
      moments(&v[base], len, 1, m, var);
      double rs = 1.0 / std::sqrt(var + eps);
      if (mean_out) mean_out->push_back(m);
      if (rstd_out) rstd_out->push_back(rs);
      for (int64_t k = 0; k < len; ++k) {
        int64_t c = gi * cpg + k / hw;
        double y = (v[base + k] - m) * rs;
        if (!weight.empty()) y *= weight[c];
        if (!bias.empty()) y += bias[c];
        out.as<double>()[base + k] = y;
      }
    }
  return out;
}

HostTensor rms_norm(const HostTensor& x, const std::vector<double>& weight, double eps) {
  auto v = x.to_f64();
  int64_t len = x.shape.back(), rows = x.numel() / len;
  auto out = f64_like(x.shape);
  for (int64_t row = 0; row < rows; ++row) {
    double s = 0;
    for (int64_t k = 0; k < len; ++k) s += v[row * len + k] * v[row * len + k];
    double rs = 1.0 / std::sqrt(s / len + eps);
    for (int64_t k = 0; k < len; ++k)
      out.as<double>()[row * len + k] = v[row * len + k] * rs * (weight.empty() ? 1.0 : weight[k]);
  }
  return out;
}

}  // namespace etwebgpu::ref
