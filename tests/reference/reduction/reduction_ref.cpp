#include "reference/reduction/reduction_ref.h"

#include <cmath>
#include <limits>

namespace etwebgpu::ref {

HostTensor reduce(Reduce op, const HostTensor& x, std::vector<int64_t> dims, bool keepdim) {
  int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<bool> red(r, dims.empty());
  for (int64_t d : dims) red[d < 0 ? d + r : d] = true;
  std::vector<int64_t> os, kept_shape;
  for (int64_t d = 0; d < r; ++d) {
    if (!red[d]) os.push_back(x.shape[d]), kept_shape.push_back(x.shape[d]);
    else if (keepdim) os.push_back(1);
  }
  bool integer = x.dtype == DType::Int32 || x.dtype == DType::Int64 || x.dtype == DType::Bool;
  DType odt = DType::Float64;
  if (op == Reduce::Argmax || op == Reduce::Argmin) odt = DType::Int32;
  else if (op == Reduce::Any || op == Reduce::All) odt = DType::Bool;
  else if (integer && op != Reduce::Mean) odt = DType::Int32;
  HostTensor out(odt, os);
  int64_t n_out = numel(kept_shape);
  auto v = x.to_f64();
  std::vector<double> acc(n_out), cnt(n_out, 0);
  std::vector<int64_t> arg(n_out, -1);
  std::vector<int64_t> strides(r, 1);
  for (int64_t d = r - 2; d >= 0; --d) strides[d] = strides[d + 1] * x.shape[d + 1];
  for (int64_t i = 0; i < x.numel(); ++i) {
    // Output index (C order over kept dims) and position inside the reduced sub-space (C order).
    int64_t o = 0, k = 0;
    for (int64_t d = 0; d < r; ++d) {
      int64_t c = (i / strides[d]) % x.shape[d];
      if (red[d]) k = k * x.shape[d] + c;
      else o = o * x.shape[d] + c;
    }
    double val = v[i];
    bool first = cnt[o] == 0;
    cnt[o] += 1;
    switch (op) {
      case Reduce::Sum:
      case Reduce::Mean: acc[o] = first ? val : acc[o] + val; break;
      case Reduce::Amax:
      case Reduce::Amin:  // NaN propagates
        if (first || (!std::isnan(acc[o]) && (std::isnan(val) || (op == Reduce::Amax ? val > acc[o] : val < acc[o]))))
          acc[o] = val;
        break;
      case Reduce::Argmax:
      case Reduce::Argmin: {
        bool better;
        if (first) better = true;
        else if (std::isnan(acc[o])) better = false;  // the first NaN stays
        else if (std::isnan(val)) better = true;
        else better = op == Reduce::Argmax ? val > acc[o] : val < acc[o];
        if (better) acc[o] = val, arg[o] = k;
        break;
      }
      case Reduce::Any: acc[o] = first ? (val != 0) : (acc[o] || val != 0); break;
      case Reduce::All: acc[o] = first ? (val != 0) : (acc[o] && val != 0); break;
    }
  }
  for (int64_t o = 0; o < n_out; ++o) {
    double a = acc[o];
    if (cnt[o] == 0) a = op == Reduce::All ? 1 : 0;
    if (op == Reduce::Mean) a = cnt[o] ? a / cnt[o] : std::numeric_limits<double>::quiet_NaN();
    if (odt == DType::Float64) out.as<double>()[o] = a;
    else if (odt == DType::Bool) out.data[o] = a != 0;
    else out.as<int32_t>()[o] = (op == Reduce::Argmax || op == Reduce::Argmin) ? static_cast<int32_t>(arg[o])
                                                                               : static_cast<int32_t>(a);
  }
  return out;
}

HostTensor cumsum(const HostTensor& x, int64_t dim) {
  int64_t r = static_cast<int64_t>(x.shape.size());
  if (dim < 0) dim += r;
  bool integer = x.dtype == DType::Int32 || x.dtype == DType::Int64 || x.dtype == DType::Bool;
  HostTensor out(integer ? DType::Int32 : DType::Float64, x.shape);
  int64_t len = r ? x.shape[dim] : 1, inner = 1;
  for (int64_t d = dim + 1; d < r; ++d) inner *= x.shape[d];
  auto v = x.to_f64();
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = (i / inner) % len;
    double prev = 0;
    if (k > 0) prev = integer ? out.as<int32_t>()[i - inner] : out.as<double>()[i - inner];
    if (integer) out.as<int32_t>()[i] = static_cast<int32_t>(prev + v[i]);
    else out.as<double>()[i] = prev + v[i];
  }
  return out;
}

}  // namespace etwebgpu::ref
