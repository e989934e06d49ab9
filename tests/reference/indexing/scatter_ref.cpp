#include "reference/indexing/scatter_ref.h"

#include <stdexcept>

#include "reference/broadcast.h"
#include "reference/memory/memory_ref.h"

namespace etwebgpu::ref {
namespace {

int64_t offset(const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
  int64_t off = 0;
  for (size_t d = 0; d < c.size(); ++d) off = off * shape[d] + c[d];
  return off;
}
int64_t nel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}
// Mask value at coordinate c of `shape` (mask right-aligned, size-1 dims broadcast).
bool mask_at(const Nd& m, const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
  std::vector<int64_t> mc(m.shape.size());
  for (size_t d = 0; d < m.shape.size(); ++d) mc[d] = m.shape[d] == 1 ? 0 : c[shape.size() - m.shape.size() + d];
  return m.at(mc) != 0;
}
}  // namespace

HostTensor scatter(const HostTensor& st, int64_t dim, const HostTensor& it, const HostTensor* srct, double value, bool add) {
  Nd self = Nd::of(st), index = Nd::of(it);
  Nd src = srct ? Nd::of(*srct) : Nd{};
  int64_t r = static_cast<int64_t>(self.shape.size());
  if (dim < 0) dim += std::max<int64_t>(r, 1);
  Nd out = self;
  for (int64_t i = 0; i < nel(index.shape); ++i) {
    auto c = coords(i, index.shape);
    double v = srct ? src.at(c) : value;
    auto t = c;
    if (r > 0) t[dim] = static_cast<int64_t>(index.v[i]);
    if (r > 0 && (t[dim] < 0 || t[dim] >= self.shape[dim])) throw std::runtime_error("index out of range");
    double& o = out.v[offset(t, self.shape)];
    if (!add) o = v;
    else if (self.kind == DType::Bool) o = (o != 0 || v != 0) ? 1 : 0;
    else o += v;
  }
  return out.host();
}

HostTensor masked_fill(const HostTensor& st, const HostTensor& mt, double value) {
  Nd self = Nd::of(st), m = Nd::of(mt);
  Nd out = self;
  for (int64_t i = 0; i < nel(self.shape); ++i)
    if (mask_at(m, coords(i, self.shape), self.shape)) out.v[i] = value;
  return out.host();
}

HostTensor masked_scatter(const HostTensor& st, const HostTensor& mt, const HostTensor& srct) {
  Nd self = Nd::of(st), m = Nd::of(mt), src = Nd::of(srct);
  Nd out = self;
  size_t k = 0;
  for (int64_t i = 0; i < nel(self.shape); ++i)
    if (mask_at(m, coords(i, self.shape), self.shape)) out.v[i] = src.v.at(k++);
  return out.host();
}

HostTensor masked_select(const HostTensor& st, const HostTensor& mt) {
  Nd self = Nd::of(st), m = Nd::of(mt);
  auto shape = broadcast(self.shape, m.shape);
  Nd out;
  out.kind = self.kind;
  for (int64_t i = 0; i < nel(shape); ++i) {
    auto c = coords(i, shape);
    if (!mask_at(m, c, shape)) continue;
    std::vector<int64_t> sc(self.shape.size());
    for (size_t d = 0; d < sc.size(); ++d) sc[d] = self.shape[d] == 1 ? 0 : c[shape.size() - sc.size() + d];
    out.v.push_back(self.at(sc));
  }
  out.shape = {static_cast<int64_t>(out.v.size())};
  return out.host();
}

HostTensor nonzero(const HostTensor& xt) {
  Nd x = Nd::of(xt);
  Nd out;
  out.kind = DType::Int64;
  int64_t n = 0;
  for (int64_t i = 0; i < nel(x.shape); ++i) {
    if (x.v[i] == 0) continue;  // NaN is non-zero
    for (int64_t c : coords(i, x.shape)) out.v.push_back(static_cast<double>(c));
    ++n;
  }
  out.shape = {n, static_cast<int64_t>(x.shape.size())};
  return out.host();
}

HostTensor repeat_interleave(const HostTensor& rt) {
  Nd r = Nd::of(rt);
  Nd out;
  out.kind = DType::Int64;
  for (size_t i = 0; i < r.v.size(); ++i)
    for (int64_t k = 0; k < static_cast<int64_t>(r.v[i]); ++k) out.v.push_back(static_cast<double>(i));
  out.shape = {static_cast<int64_t>(out.v.size())};
  return out.host();
}

}  // namespace etwebgpu::ref
