// Host-side tensors exchanged with a Model: dtype, shape and contiguous row-major bytes.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace etwebgpu {

enum class DType : uint8_t { Float32, Int32, Int64, Bool, UInt8, Int8, Float16, Float64 };
const char* dtype_name(DType t);
size_t dtype_size(DType t);

int64_t numel(const std::vector<int64_t>& shape);  // 1 for a 0-dim shape; throws on overflow/negative
std::string shape_str(const std::vector<int64_t>& shape);

struct HostTensor {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // numel(shape) * dtype_size(dtype) bytes, C order

  HostTensor() = default;
  HostTensor(DType t, std::vector<int64_t> s);  // zero-filled
  template <class T>
  static HostTensor from(DType t, std::vector<int64_t> s, const std::vector<T>& v) {
    HostTensor h(t, std::move(s));
    size_t n = std::min(h.data.size(), v.size() * sizeof(T));
    if (n) std::memcpy(h.data.data(), v.data(), n);  // empty vectors may hold null pointers
    return h;
  }
  int64_t numel() const { return etwebgpu::numel(shape); }
  template <class T> T* as() { return reinterpret_cast<T*>(data.data()); }
  template <class T> const T* as() const { return reinterpret_cast<const T*>(data.data()); }
  // Values converted to double (for comparisons and references).
  std::vector<double> to_f64() const;
};

}  // namespace etwebgpu
