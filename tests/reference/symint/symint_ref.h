// Python int semantics for SymInt arithmetic.
#pragma once
#include <cstdint>

namespace etwebgpu::ref {
// a // b as Python computes it: the floor of the exact quotient (rounds toward -inf).
inline int64_t py_floordiv(int64_t a, int64_t b) {
  long double q = static_cast<long double>(a) / static_cast<long double>(b);
  int64_t f = static_cast<int64_t>(q);
  if (static_cast<long double>(f) > q) --f;
  return f;
}
}  // namespace etwebgpu::ref
