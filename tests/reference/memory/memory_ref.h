// fp64 references for the memory family, written from PyTorch's documented semantics by walking
// output coordinates (never from the WGSL). Results keep the input's kind: Float64 for float
// inputs, Int64 for integer inputs (exact comparison), Bool for bool.
#pragma once
#include <optional>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// A tensor as doubles plus shape: the working form of every reference.
struct Nd {
  std::vector<int64_t> shape;
  std::vector<double> v;
  DType kind = DType::Float64;  // Float64, Int64 or Bool
  static Nd of(const HostTensor& t);
  HostTensor host() const;
  double at(const std::vector<int64_t>& c) const;  // row-major, range-checked
};
// Coordinates of flat index i in shape s.
std::vector<int64_t> coords(int64_t i, const std::vector<int64_t>& s);

HostTensor permute(const HostTensor& x, std::vector<int64_t> dims);
HostTensor slice(const HostTensor& x, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step);
HostTensor select(const HostTensor& x, int64_t dim, int64_t index);
HostTensor cat(const std::vector<HostTensor>& xs, int64_t dim);
HostTensor expand(const HostTensor& x, const std::vector<int64_t>& size);
HostTensor repeat(const HostTensor& x, const std::vector<int64_t>& repeats);
HostTensor flip(const HostTensor& x, std::vector<int64_t> dims);
HostTensor constant_pad(const HostTensor& x, const std::vector<int64_t>& pad, double value);
HostTensor pixel_shuffle(const HostTensor& x, int64_t r);
HostTensor pixel_unshuffle(const HostTensor& x, int64_t r);
std::vector<HostTensor> split_with_sizes(const HostTensor& x, const std::vector<int64_t>& sizes, int64_t dim);
HostTensor reshape(const HostTensor& x, std::vector<int64_t> shape);  // same values, new shape

}  // namespace etwebgpu::ref
