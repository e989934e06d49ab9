#include "reference/elementwise/elementwise_ref.h"

#include <algorithm>
#include <cmath>
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

// Index of output element `i` in an operand of shape `s` broadcast to `o`.
static int64_t src_index(int64_t i, const std::vector<int64_t>& o, const std::vector<int64_t>& s) {
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

HostTensor binary(BinaryOp op, const HostTensor& a, const HostTensor& b, double alpha) {
  auto o = broadcast(a.shape, b.shape);
  auto av = a.to_f64(), bv = b.to_f64();
  bool cmp = op >= BinaryOp::Eq;
  bool ints = a.dtype == DType::Int32 && b.dtype == DType::Int32 &&
              (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul);
  HostTensor r(cmp ? DType::Bool : ints ? DType::Int32 : DType::Float64, o);
  for (int64_t i = 0; i < r.numel(); ++i) {
    double x = av[src_index(i, o, a.shape)], y = bv[src_index(i, o, b.shape)], v = 0;
    switch (op) {
      case BinaryOp::Add: v = x + alpha * y; break;
      case BinaryOp::Sub: v = x - alpha * y; break;
      case BinaryOp::Mul: v = x * y; break;
      case BinaryOp::Div: v = x / y; break;
      case BinaryOp::Pow: v = std::pow(x, y); break;
      case BinaryOp::Min: v = std::min(x, y); break;
      case BinaryOp::Max: v = std::max(x, y); break;
      case BinaryOp::Eq: v = x == y; break;
      case BinaryOp::Ne: v = x != y; break;
      case BinaryOp::Lt: v = x < y; break;
      case BinaryOp::Le: v = x <= y; break;
      case BinaryOp::Gt: v = x > y; break;
      case BinaryOp::Ge: v = x >= y; break;
      case BinaryOp::LogicalXor: v = (x != 0) != (y != 0); break;
    }
    if (cmp) r.data[i] = v != 0;
    else if (ints) r.as<int32_t>()[i] = static_cast<int32_t>(v);
    else r.as<double>()[i] = v;
  }
  return r;
}

HostTensor bitwise(char op, const HostTensor& a, const HostTensor& b) {
  auto o = broadcast(a.shape, b.shape);
  auto av = a.to_f64(), bv = b.to_f64();
  HostTensor r(a.dtype == DType::Bool ? DType::Bool : DType::Int32, o);
  for (int64_t i = 0; i < r.numel(); ++i) {
    int64_t x = static_cast<int64_t>(av[src_index(i, o, a.shape)]), y = static_cast<int64_t>(bv[src_index(i, o, b.shape)]);
    int64_t v = op == '&' ? (x & y) : op == '|' ? (x | y) : (x ^ y);
    if (r.dtype == DType::Bool) r.data[i] = v != 0;
    else r.as<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return r;
}

}  // namespace etwebgpu::ref
