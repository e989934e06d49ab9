#include "reference/memory/memory_ref.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace etwebgpu::ref {

static int64_t nel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

static int64_t wrap_dim(int64_t d, int64_t r) { return d < 0 ? d + r : d; }

Nd Nd::of(const HostTensor& t) {
  Nd n;
  n.shape = t.shape;
  n.v = t.to_f64();
  n.kind = (t.dtype == DType::Float32 || t.dtype == DType::Float64) ? DType::Float64
           : t.dtype == DType::Bool                                 ? DType::Bool
                                                                    : DType::Int64;
  return n;
}

HostTensor Nd::host() const {
  HostTensor h(kind, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (kind == DType::Float64) h.as<double>()[i] = v[i];
    else if (kind == DType::Int64) h.as<int64_t>()[i] = static_cast<int64_t>(v[i]);
    else h.data[i] = v[i] != 0;
  }
  return h;
}

std::vector<int64_t> coords(int64_t i, const std::vector<int64_t>& s) {
  std::vector<int64_t> c(s.size());
  for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}

double Nd::at(const std::vector<int64_t>& c) const {
  if (c.size() != shape.size()) throw std::runtime_error("rank mismatch");
  int64_t off = 0;
  for (size_t d = 0; d < c.size(); ++d) {
    if (c[d] < 0 || c[d] >= shape[d]) throw std::runtime_error("coordinate out of range");
    off = off * shape[d] + c[d];
  }
  return v[off];
}

// Output of shape `os` whose element at c is f(c).
static HostTensor build(DType kind, const std::vector<int64_t>& os, const std::function<double(const std::vector<int64_t>&)>& f) {
  Nd o;
  o.kind = kind;
  o.shape = os;
  o.v.resize(nel(os));
  for (int64_t i = 0; i < nel(os); ++i) o.v[i] = f(coords(i, os));
  return o.host();
}

HostTensor permute(const HostTensor& xh, std::vector<int64_t> dims) {
  Nd x = Nd::of(xh);
  int64_t r = x.shape.size();
  std::vector<int64_t> os;
  for (auto& d : dims) d = wrap_dim(d, r), os.push_back(x.shape[d]);
  return build(x.kind, os, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> ic(r);
    for (int64_t i = 0; i < r; ++i) ic[dims[i]] = c[i];  // out.shape[i] = in.shape[dims[i]]
    return x.at(ic);
  });
}

HostTensor slice(const HostTensor& xh, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  Nd x = Nd::of(xh);
  dim = wrap_dim(dim, x.shape.size());
  int64_t n = x.shape[dim];
  int64_t s = start.value_or(0), e = end.value_or(n);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::min(std::max<int64_t>(s, 0), n);
  e = std::min(std::max<int64_t>(e, 0), n);
  int64_t len = e > s ? (e - s + step - 1) / step : 0;
  auto os = x.shape;
  os[dim] = len;
  return build(x.kind, os, [&](std::vector<int64_t> c) {
    c[dim] = s + c[dim] * step;
    return x.at(c);
  });
}

HostTensor select(const HostTensor& xh, int64_t dim, int64_t index) {
  Nd x = Nd::of(xh);
  dim = wrap_dim(dim, x.shape.size());
  if (index < 0) index += x.shape[dim];
  auto os = x.shape;
  os.erase(os.begin() + dim);
  return build(x.kind, os, [&](std::vector<int64_t> c) {
    c.insert(c.begin() + dim, index);
    return x.at(c);
  });
}

HostTensor cat(const std::vector<HostTensor>& xs, int64_t dim) {
  std::vector<Nd> n;
  for (auto& x : xs) n.push_back(Nd::of(x));
  dim = wrap_dim(dim, n[0].shape.size());
  auto os = n[0].shape;
  os[dim] = 0;
  for (auto& x : n) os[dim] += x.shape[dim];
  return build(n[0].kind, os, [&](std::vector<int64_t> c) {
    for (auto& x : n) {
      if (c[dim] < x.shape[dim]) return x.at(c);
      c[dim] -= x.shape[dim];
    }
    throw std::runtime_error("cat: past the end");
  });
}

HostTensor expand(const HostTensor& xh, const std::vector<int64_t>& size) {
  Nd x = Nd::of(xh);
  size_t R = size.size(), r = x.shape.size();
  std::vector<int64_t> os(R);
  for (size_t i = 0; i < R; ++i) os[i] = (i >= R - r && size[i] == -1) ? x.shape[i - (R - r)] : size[i];
  return build(x.kind, os, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> ic(r);
    for (size_t j = 0; j < r; ++j) ic[j] = x.shape[j] == 1 ? 0 : c[j + R - r];
    return x.at(ic);
  });
}

HostTensor repeat(const HostTensor& xh, const std::vector<int64_t>& reps) {
  Nd x = Nd::of(xh);
  size_t R = reps.size(), r = x.shape.size();
  std::vector<int64_t> os(R);
  for (size_t i = 0; i < R; ++i) os[i] = (i < R - r ? 1 : x.shape[i - (R - r)]) * reps[i];
  return build(x.kind, os, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> ic(r);
    for (size_t j = 0; j < r; ++j) ic[j] = c[j + R - r] % x.shape[j];
    return x.at(ic);
  });
}

HostTensor flip(const HostTensor& xh, std::vector<int64_t> dims) {
  Nd x = Nd::of(xh);
  for (auto& d : dims) d = wrap_dim(d, x.shape.size());
  return build(x.kind, x.shape, [&](std::vector<int64_t> c) {
    for (auto d : dims) c[d] = x.shape[d] - 1 - c[d];
    return x.at(c);
  });
}

HostTensor constant_pad(const HostTensor& xh, const std::vector<int64_t>& pad, double value) {
  Nd x = Nd::of(xh);
  size_t r = x.shape.size();
  auto os = x.shape;
  std::vector<int64_t> before(r, 0);
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    size_t d = r - 1 - k;
    before[d] = pad[2 * k];
    os[d] += pad[2 * k] + pad[2 * k + 1];
  }
  double fill = x.kind == DType::Float64 ? value : (x.kind == DType::Bool ? (value != 0) : std::trunc(value));
  return build(x.kind, os, [&](std::vector<int64_t> c) {
    for (size_t d = 0; d < r; ++d) {
      c[d] -= before[d];
      if (c[d] < 0 || c[d] >= x.shape[d]) return fill;
    }
    return x.at(c);
  });
}

HostTensor pixel_shuffle(const HostTensor& xh, int64_t f) {
  Nd x = Nd::of(xh);
  size_t r = x.shape.size();
  auto os = x.shape;
  os[r - 3] /= f * f;
  os[r - 2] *= f;
  os[r - 1] *= f;
  return build(x.kind, os, [&](std::vector<int64_t> c) {
    // out[..., c, h, w] = in[..., c*f*f + (h%f)*f + (w%f), h/f, w/f]
    int64_t ch = c[r - 3], h = c[r - 2], w = c[r - 1];
    c[r - 3] = ch * f * f + (h % f) * f + (w % f);
    c[r - 2] = h / f;
    c[r - 1] = w / f;
    return x.at(c);
  });
}

HostTensor pixel_unshuffle(const HostTensor& xh, int64_t f) {
  Nd x = Nd::of(xh);
  size_t r = x.shape.size();
  auto os = x.shape;
  os[r - 3] *= f * f;
  os[r - 2] /= f;
  os[r - 1] /= f;
  return build(x.kind, os, [&](std::vector<int64_t> c) {
    // out[..., c*f*f + i*f + j, h, w] = in[..., c, h*f + i, w*f + j]
    int64_t ch = c[r - 3], h = c[r - 2], w = c[r - 1];
    int64_t ic = ch / (f * f), i = (ch % (f * f)) / f, j = ch % f;
    c[r - 3] = ic;
    c[r - 2] = h * f + i;
    c[r - 1] = w * f + j;
    return x.at(c);
  });
}

std::vector<HostTensor> split_with_sizes(const HostTensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  std::vector<HostTensor> out;
  int64_t off = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, dim, off, off + s, 1));
    off += s;
  }
  return out;
}

HostTensor reshape(const HostTensor& xh, std::vector<int64_t> shape) {
  Nd x = Nd::of(xh);
  if (nel(shape) != nel(x.shape)) throw std::runtime_error("reshape: element count differs");
  x.shape = std::move(shape);
  return x.host();
}

}  // namespace etwebgpu::ref
