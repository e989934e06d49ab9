#include "reference/strided/as_strided_ref.h"

namespace etwebgpu::ref {

HostTensor as_strided(const HostTensor& x, const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                      int64_t storage_offset) {
  auto xv = x.to_f64();
  HostTensor r(DType::Float64, size);
  for (int64_t i = 0; i < r.numel(); ++i) {
    int64_t rem = i, src = storage_offset;
    for (int64_t d = static_cast<int64_t>(size.size()) - 1; d >= 0; --d) {
      src += (rem % size[d]) * stride[d];
      rem /= size[d];
    }
    r.as<double>()[i] = xv[static_cast<size_t>(src)];
  }
  return r;
}

}  // namespace etwebgpu::ref
