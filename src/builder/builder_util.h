// Internal helpers shared by the graph and program builders.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "etwebgpu/error.h"
#include "etwebgpu/tensor.h"
#include "format/ir.h"

namespace etwebgpu::builder_detail {

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

[[noreturn]] inline void invalid(const std::string& msg) { throw Error(ErrorKind::InvalidArgument, msg); }

// Byte size of a tensor; rejects negative or overflowing shapes as InvalidArgument.
inline uint64_t tensor_nbytes(DType t, const std::vector<int64_t>& dims, const char* what) {
  uint64_t n = dtype_size(t);
  for (int64_t d : dims) {
    if (d < 0) invalid(std::string(what) + ": negative dimension in " + shape_str(dims));
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) invalid(std::string(what) + ": shape " + shape_str(dims) + " overflows");
  }
  return n;
}

inline format::VkDType to_vk(DType t) {
  switch (t) {
    case DType::Float32: return format::VkDType::Float32;
    case DType::Int32: return format::VkDType::Int32;
    case DType::Int64: return format::VkDType::Int64;
    case DType::Bool: return format::VkDType::Bool;
    case DType::UInt8: return format::VkDType::UInt8;
    case DType::Int8: return format::VkDType::Int8;
    case DType::Float16: return format::VkDType::Float16;
    case DType::Float64: return format::VkDType::Float64;
  }
  invalid("unknown dtype");
}

inline format::ScalarType to_scalar(DType t) {
  switch (t) {
    case DType::Float32: return format::ScalarType::Float;
    case DType::Int32: return format::ScalarType::Int;
    case DType::Int64: return format::ScalarType::Long;
    case DType::Bool: return format::ScalarType::Bool;
    case DType::UInt8: return format::ScalarType::Byte;
    case DType::Int8: return format::ScalarType::Char;
    case DType::Float16: return format::ScalarType::Half;
    case DType::Float64: return format::ScalarType::Double;
  }
  invalid("unknown dtype");
}

}  // namespace etwebgpu::builder_detail
