#include "reference/memory/view_ref.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace etwebgpu::ref {
namespace {

int64_t nel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}
int64_t wrap(int64_t d, int64_t r) { return d < 0 ? d + r : d; }

// Output of shape `os`, element at c = f(c); keeps x's kind.
HostTensor make(const Nd& x, const std::vector<int64_t>& os, const std::function<double(const std::vector<int64_t>&)>& f) {
  Nd o;
  o.kind = x.kind;
  o.shape = os;
  o.v.resize(static_cast<size_t>(nel(os)));
  for (int64_t i = 0; i < nel(os); ++i) o.v[i] = f(coords(i, os));
  return o.host();
}

}  // namespace

HostTensor transpose(const HostTensor& xt, int64_t d0, int64_t d1) {
  Nd x = Nd::of(xt);
  int64_t r = static_cast<int64_t>(x.shape.size());
  if (r == 0) return x.host();
  d0 = wrap(d0, r), d1 = wrap(d1, r);
  auto os = x.shape;
  std::swap(os[d0], os[d1]);
  return make(x, os, [&](std::vector<int64_t> c) {
    std::swap(c[d0], c[d1]);
    return x.at(c);
  });
}

HostTensor narrow(const HostTensor& xt, int64_t dim, int64_t start, int64_t length) {
  Nd x = Nd::of(xt);
  dim = wrap(dim, static_cast<int64_t>(x.shape.size()));
  if (start < 0) start += x.shape[dim];
  auto os = x.shape;
  os[dim] = length;
  return make(x, os, [&](std::vector<int64_t> c) {
    c[dim] += start;
    return x.at(c);
  });
}

HostTensor diagonal(const HostTensor& xt, int64_t offset, int64_t d1, int64_t d2) {
  Nd x = Nd::of(xt);
  int64_t r = static_cast<int64_t>(x.shape.size());
  d1 = wrap(d1, r), d2 = wrap(d2, r);
  // Element k of the diagonal is x[.., i = k + max(-offset, 0), .., j = k + max(offset, 0), ..].
  int64_t i0 = std::max<int64_t>(-offset, 0), j0 = std::max<int64_t>(offset, 0);
  int64_t len = std::max<int64_t>(std::min(x.shape[d1] - i0, x.shape[d2] - j0), 0);
  std::vector<int64_t> os;
  for (int64_t d = 0; d < r; ++d)
    if (d != d1 && d != d2) os.push_back(x.shape[d]);
  os.push_back(len);
  return make(x, os, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> ic(r);
    size_t k = 0;
    for (int64_t d = 0; d < r; ++d)
      if (d != d1 && d != d2) ic[d] = c[k++];
    ic[d1] = c.back() + i0;
    ic[d2] = c.back() + j0;
    return x.at(ic);
  });
}

HostTensor unfold(const HostTensor& xt, int64_t dim, int64_t size, int64_t step) {
  Nd x = Nd::of(xt);
  int64_t r = static_cast<int64_t>(x.shape.size());
  dim = wrap(dim, r);
  auto os = x.shape;
  os[dim] = (x.shape[dim] - size) / step + 1;
  os.push_back(size);
  return make(x, os, [&](std::vector<int64_t> c) {
    int64_t k = c.back();
    c.pop_back();
    c[dim] = c[dim] * step + k;
    return x.at(c);
  });
}

HostTensor roll(const HostTensor& xt, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  Nd x = Nd::of(xt);
  if (dims.empty()) {  // flattened roll, shape restored
    Nd o = x;
    int64_t n = nel(x.shape);
    for (int64_t i = 0; i < n; ++i) o.v[((i + shifts[0]) % n + n) % n] = x.v[i];
    return o.host();
  }
  Nd cur = x;
  for (size_t k = 0; k < dims.size(); ++k) {  // one dim after another, as documented
    int64_t d = wrap(dims[k], static_cast<int64_t>(x.shape.size()));
    Nd next = cur;
    for (int64_t i = 0; i < nel(x.shape); ++i) {
      auto c = coords(i, x.shape);
      int64_t n = x.shape[d];
      c[d] = ((c[d] + shifts[k]) % n + n) % n;
      int64_t off = 0;
      for (size_t j = 0; j < c.size(); ++j) off = off * x.shape[j] + c[j];
      next.v[off] = cur.v[i];
    }
    cur = next;
  }
  return cur.host();
}

HostTensor tril(const HostTensor& xt, int64_t diagonal) {
  Nd x = Nd::of(xt);
  size_t r = x.shape.size();
  return make(x, x.shape, [&](const std::vector<int64_t>& c) { return c[r - 1] - c[r - 2] <= diagonal ? x.at(c) : 0.0; });
}

HostTensor stack(const std::vector<HostTensor>& xs, int64_t dim) {
  std::vector<Nd> n;
  for (auto& t : xs) n.push_back(Nd::of(t));
  int64_t r = static_cast<int64_t>(n[0].shape.size());
  dim = wrap(dim, r + 1);
  auto os = n[0].shape;
  os.insert(os.begin() + dim, static_cast<int64_t>(xs.size()));
  return make(n[0], os, [&](std::vector<int64_t> c) {
    int64_t j = c[dim];
    c.erase(c.begin() + dim);
    return n[j].at(c);
  });
}

HostTensor select_scatter(const HostTensor& st, const HostTensor& srct, int64_t dim, int64_t index) {
  Nd self = Nd::of(st), src = Nd::of(srct);
  dim = wrap(dim, static_cast<int64_t>(self.shape.size()));
  if (index < 0) index += self.shape[dim];
  return make(self, self.shape, [&](std::vector<int64_t> c) {
    if (c[dim] != index) return self.at(c);
    c.erase(c.begin() + dim);
    return src.at(c);
  });
}

HostTensor slice_scatter(const HostTensor& st, const HostTensor& srct, int64_t dim, std::optional<int64_t> start,
                         std::optional<int64_t> end, int64_t step) {
  Nd self = Nd::of(st), src = Nd::of(srct);
  dim = wrap(dim, static_cast<int64_t>(self.shape.size()));
  int64_t n = self.shape[dim];
  int64_t s = start.value_or(0), e = end.value_or(n);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, 0, n);
  return make(self, self.shape, [&](std::vector<int64_t> c) {
    int64_t i = c[dim];
    if (i < s || i >= e || (i - s) % step != 0) return self.at(c);
    c[dim] = (i - s) / step;
    return src.at(c);
  });
}

// Padded output; `map(j, n)` gives the input index of output index j (already shifted by the left pad).
static HostTensor pad_with(const HostTensor& xt, const std::vector<int64_t>& pad,
                           const std::function<int64_t(int64_t, int64_t)>& map) {
  Nd x = Nd::of(xt);
  size_t r = x.shape.size(), k = pad.size() / 2;
  auto os = x.shape;
  for (size_t j = 0; j < k; ++j) os[r - 1 - j] += pad[2 * j] + pad[2 * j + 1];
  return make(x, os, [&](std::vector<int64_t> c) {
    for (size_t j = 0; j < k; ++j) {
      size_t d = r - 1 - j;
      c[d] = map(c[d] - pad[2 * j], x.shape[d]);
    }
    return x.at(c);
  });
}

HostTensor reflection_pad(const HostTensor& x, const std::vector<int64_t>& pad) {
  // Mirror at the edge elements themselves (the edge is not repeated): ... x2 x1 | x0 x1 x2 ...
  return pad_with(x, pad, [](int64_t i, int64_t n) {
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
  });
}

HostTensor replication_pad(const HostTensor& x, const std::vector<int64_t>& pad) {
  return pad_with(x, pad, [](int64_t i, int64_t n) { return std::clamp<int64_t>(i, 0, n - 1); });
}

HostTensor broadcast_to(const HostTensor& srct, const std::vector<int64_t>& shape) {
  Nd src = Nd::of(srct);
  size_t r = shape.size(), sr = src.shape.size();
  return make(src, shape, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> sc(sr);
    for (size_t d = 0; d < sr; ++d) sc[d] = src.shape[d] == 1 ? 0 : c[r - sr + d];
    return src.at(sc);
  });
}

}  // namespace etwebgpu::ref
