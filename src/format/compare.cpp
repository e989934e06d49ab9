#include "etwebgpu/compare.h"

#include <cmath>
#include <cstdio>

namespace etwebgpu {

namespace {
bool is_integer(DType t) { return t == DType::Int32 || t == DType::Int64 || t == DType::Bool || t == DType::UInt8 || t == DType::Int8; }
}

CompareResult compare_tensors(const HostTensor& got, const HostTensor& exp, double atol, double rtol, NanPolicy nan) {
  CompareResult r;
  char buf[512];
  if (got.shape != exp.shape) {
    r.message = "shape mismatch: got " + shape_str(got.shape) + ", expected " + shape_str(exp.shape);
    return r;
  }
  bool int_cmp = is_integer(exp.dtype);
  // float32 vs float64 goldens compare numerically; integer outputs must stay integer.
  if (int_cmp != is_integer(got.dtype)) {
    r.message = std::string("dtype mismatch: got ") + dtype_name(got.dtype) + ", expected " + dtype_name(exp.dtype);
    return r;
  }
  auto g = got.to_f64();
  auto e = exp.to_f64();
  double worst_ratio = -1;
  for (size_t i = 0; i < g.size(); ++i) {
    double err = std::fabs(g[i] - e[i]);
    bool nan_ok = nan == NanPolicy::MatchExpectedNan && std::isnan(g[i]) && std::isnan(e[i]);
    double tol = int_cmp ? 0.0 : atol + rtol * std::fabs(e[i]);
    bool bad = nan_ok ? false : (std::isnan(g[i]) || std::isnan(e[i]) || err > tol);
    // An infinity on either side matches only the same infinity (atol + rtol * inf would accept anything).
    if (!std::isnan(g[i]) && !std::isnan(e[i]) && (std::isinf(g[i]) || std::isinf(e[i]))) {
      bad = g[i] != e[i];
      err = bad ? INFINITY : 0;
    }
    if (!std::isnan(err) && err > r.max_abs_err) r.max_abs_err = err;
    double ratio = bad ? (std::isnan(err) || std::isinf(err) ? INFINITY : err / (tol > 0 ? tol : 1e-300))
                       : (tol > 0 && std::isfinite(tol) ? err / tol : 0);
    if (bad) ++r.mismatches;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      r.worst_index = static_cast<int64_t>(i);
      r.worst_got = g[i];
      r.worst_expected = e[i];
    }
  }
  r.ok = r.mismatches == 0;
  if (r.ok)
    std::snprintf(buf, sizeof buf, "ok: %zu elements, max |err| %.3g", g.size(), r.max_abs_err);
  else
    std::snprintf(buf, sizeof buf, "MISMATCH: %lld of %zu elements out of tolerance (atol %.3g, rtol %.3g); worst at %lld: got %.9g expected %.9g",
                  (long long)r.mismatches, g.size(), atol, rtol, (long long)r.worst_index, r.worst_got, r.worst_expected);
  r.message = buf;
  return r;
}

}  // namespace etwebgpu
