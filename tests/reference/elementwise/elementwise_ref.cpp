#include "reference/elementwise/elementwise_ref.h"

#include "reference/broadcast.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace etwebgpu::ref {

HostTensor binary(BinaryOp op, const HostTensor& a, const HostTensor& b, double alpha) {
  auto o = broadcast(a.shape, b.shape);
  auto av = a.to_f64(), bv = b.to_f64();
  bool cmp = op >= BinaryOp::Eq;
  bool ints = a.dtype == DType::Int32 && b.dtype == DType::Int32 &&
              (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul);
  HostTensor r(cmp ? DType::Bool : ints ? DType::Int32 : DType::Float64, o);
  for (int64_t i = 0; i < r.numel(); ++i) {
    double x = av[broadcast_index(i, o, a.shape)], y = bv[broadcast_index(i, o, b.shape)], v = 0;
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
    int64_t x = static_cast<int64_t>(av[broadcast_index(i, o, a.shape)]), y = static_cast<int64_t>(bv[broadcast_index(i, o, b.shape)]);
    int64_t v = op == '&' ? (x & y) : op == '|' ? (x | y) : (x ^ y);
    if (r.dtype == DType::Bool) r.data[i] = v != 0;
    else r.as<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return r;
}

}  // namespace etwebgpu::ref
