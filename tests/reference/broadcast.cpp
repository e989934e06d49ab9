#include "reference/broadcast.h"

#include <algorithm>
#include <stdexcept>

namespace etwebgpu::ref {

std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> o(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1) throw std::runtime_error("not broadcastable");
    o[i] = std::max(x, y);
  }
  return o;
}

int64_t broadcast_index(int64_t i, const std::vector<int64_t>& o, const std::vector<int64_t>& s) {
  int64_t idx = 0, mul = 1;
  for (int64_t d = static_cast<int64_t>(o.size()) - 1; d >= 0; --d) {
    int64_t c = i % o[d];
    i /= o[d];
    int64_t sd = d - static_cast<int64_t>(o.size() - s.size());
    if (sd >= 0) {
      if (s[sd] != 1) idx += c * mul;
      mul *= s[sd];
    }
  }
  return idx;
}

}  // namespace etwebgpu::ref
