#include "reference/reduction/stats_ref.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace etwebgpu::ref {

namespace {
// The values each output element reduces (C order over kept dims), and the output shape.
struct Groups {
  std::vector<std::vector<double>> values;
  std::vector<int64_t> out_shape;
};
Groups group(const HostTensor& x, std::vector<int64_t> dims, bool keepdim) {
  int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<bool> red(r, dims.empty());
  for (int64_t d : dims) red[d < 0 ? d + r : d] = true;
  Groups g;
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < r; ++d) {
    if (!red[d]) g.out_shape.push_back(x.shape[d]), kept.push_back(x.shape[d]);
    else if (keepdim) g.out_shape.push_back(1);
  }
  g.values.resize(static_cast<size_t>(numel(kept)));
  std::vector<int64_t> strides(r, 1);
  for (int64_t d = r - 2; d >= 0; --d) strides[d] = strides[d + 1] * x.shape[d + 1];
  auto v = x.to_f64();
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t o = 0;
    for (int64_t d = 0; d < r; ++d)
      if (!red[d]) o = o * x.shape[d] + (i / strides[d]) % x.shape[d];
    g.values[o].push_back(v[i]);
  }
  return g;
}
}  // namespace

HostTensor var(const HostTensor& x, std::vector<int64_t> dims, double correction, bool keepdim) {
  Groups g = group(x, std::move(dims), keepdim);
  HostTensor out(DType::Float64, g.out_shape);
  for (size_t o = 0; o < g.values.size(); ++o) {
    const auto& vals = g.values[o];
    double n = static_cast<double>(vals.size()), mean = 0, sq = 0;
    for (double v : vals) mean += v;
    mean /= n;
    for (double v : vals) sq += (v - mean) * (v - mean);
    out.as<double>()[o] = sq / std::max(0.0, n - correction);
  }
  return out;
}

HostTensor prod(const HostTensor& x, std::vector<int64_t> dims, bool keepdim) {
  Groups g = group(x, std::move(dims), keepdim);
  bool integer = x.dtype == DType::Int32 || x.dtype == DType::Int64 || x.dtype == DType::Bool;
  HostTensor out(integer ? DType::Int32 : DType::Float64, g.out_shape);
  for (size_t o = 0; o < g.values.size(); ++o) {
    if (integer) {
      uint32_t p = 1;  // unsigned: wraps modulo 2^32 like the int32 words
      for (double v : g.values[o]) p *= static_cast<uint32_t>(static_cast<int32_t>(v));
      out.as<int32_t>()[o] = static_cast<int32_t>(p);
    } else {
      double p = 1;
      for (double v : g.values[o]) p *= v;
      out.as<double>()[o] = p;
    }
  }
  return out;
}

}  // namespace etwebgpu::ref

namespace etwebgpu::ref {

std::pair<HostTensor, HostTensor> topk(const HostTensor& x, int64_t k, int64_t dim, bool largest) {
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (dim < 0) dim += rank;
  int64_t len = rank ? x.shape[dim] : 1, inner = 1, outer = 1;
  for (int64_t d = dim + 1; d < rank; ++d) inner *= x.shape[d];
  for (int64_t d = 0; d < dim; ++d) outer *= x.shape[d];
  std::vector<int64_t> o = x.shape;
  if (rank) o[dim] = k;
  bool integer = x.dtype == DType::Int32 || x.dtype == DType::Int64;
  HostTensor vals(integer ? DType::Int32 : DType::Float64, o), idx(DType::Int32, o);
  auto v = x.to_f64();
  // a ahead of b: larger (NaN largest), or smaller when !largest.
  auto greater = [](double a, double b) { return (std::isnan(a) && !std::isnan(b)) || a > b; };
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t in = 0; in < inner; ++in) {
      std::vector<int64_t> order(static_cast<size_t>(len));
      for (int64_t j = 0; j < len; ++j) order[j] = j;
      auto at = [&](int64_t j) { return v[(a * len + j) * inner + in]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return largest ? greater(at(p), at(q)) : greater(at(q), at(p));
      });
      for (int64_t r = 0; r < k; ++r) {
        int64_t dst = (a * k + r) * inner + in;
        if (integer) vals.as<int32_t>()[dst] = static_cast<int32_t>(at(order[r]));
        else vals.as<double>()[dst] = at(order[r]);
        idx.as<int32_t>()[dst] = static_cast<int32_t>(order[r]);
      }
    }
  return {vals, idx};
}

}  // namespace etwebgpu::ref
