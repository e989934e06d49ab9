#include "reference/indexing/indexing_ref.h"

#include <stdexcept>

#include "reference/memory/memory_ref.h"

namespace etwebgpu::ref {

static int64_t nel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// index.Tensor: [-n, n) with negatives wrapped once.
static int64_t wrap(double v, int64_t n) {
  int64_t i = static_cast<int64_t>(v);
  if (i < 0) i += n;
  if (i < 0 || i >= n) throw std::runtime_error("index out of range");
  return i;
}

// embedding, index_select, gather: [0, n) only, negatives are errors.
static int64_t in_range(double v, int64_t n) {
  int64_t i = static_cast<int64_t>(v);
  if (i < 0 || i >= n) throw std::runtime_error("index out of range");
  return i;
}

static HostTensor make(DType kind, std::vector<int64_t> shape, std::vector<double> v) {
  Nd o;
  o.kind = kind;
  o.shape = std::move(shape);
  o.v = std::move(v);
  return o.host();
}

HostTensor embedding(const HostTensor& wh, const HostTensor& ih) {
  Nd w = Nd::of(wh), ix = Nd::of(ih);
  auto os = ix.shape;
  os.push_back(w.shape[1]);
  std::vector<double> v;
  for (double k : ix.v)
    for (int64_t d = 0; d < w.shape[1]; ++d) v.push_back(w.at({in_range(k, w.shape[0]), d}));
  return make(w.kind, os, v);
}

HostTensor index_select(const HostTensor& xh, int64_t dim, const HostTensor& ih) {
  Nd x = Nd::of(xh), ix = Nd::of(ih);
  if (dim < 0) dim += x.shape.size();
  auto os = x.shape;
  os[dim] = static_cast<int64_t>(ix.v.size());
  std::vector<double> v(nel(os));
  for (int64_t i = 0; i < nel(os); ++i) {
    auto c = coords(i, os);
    c[dim] = in_range(ix.v[c[dim]], x.shape[dim]);
    v[i] = x.at(c);
  }
  return make(x.kind, os, v);
}

HostTensor gather(const HostTensor& xh, int64_t dim, const HostTensor& ih) {
  Nd x = Nd::of(xh), ix = Nd::of(ih);
  if (dim < 0) dim += x.shape.size();
  std::vector<double> v(ix.v.size());
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    auto c = coords(i, ix.shape);
    c[dim] = in_range(ix.v[i], x.shape[dim]);
    v[i] = x.at(c);
  }
  return make(x.kind, ix.shape, v);
}

HostTensor index_leading(const HostTensor& xh, const std::vector<HostTensor>& idx) {
  Nd x = Nd::of(xh);
  std::vector<Nd> ix;
  std::vector<int64_t> b;
  for (auto& t : idx) {
    ix.push_back(Nd::of(t));
    // broadcast b with t.shape (right-aligned)
    size_t r = std::max(b.size(), t.shape.size());
    std::vector<int64_t> o(r);
    for (size_t i = 0; i < r; ++i) {
      int64_t p = i + b.size() >= r ? b[i + b.size() - r] : 1;
      int64_t q = i + t.shape.size() >= r ? t.shape[i + t.shape.size() - r] : 1;
      if (p != q && p != 1 && q != 1) throw std::runtime_error("indices do not broadcast");
      o[i] = p == 1 ? q : p;
    }
    b = o;
  }
  size_t k = idx.size();
  std::vector<int64_t> os = b;
  os.insert(os.end(), x.shape.begin() + k, x.shape.end());
  std::vector<double> v(nel(os));
  for (int64_t i = 0; i < nel(os); ++i) {
    auto c = coords(i, os);
    std::vector<int64_t> bc(c.begin(), c.begin() + b.size());
    std::vector<int64_t> xc;
    for (size_t j = 0; j < k; ++j) {
      // the broadcast position read from index j (size-1 dims repeat)
      std::vector<int64_t> jc(ix[j].shape.size());
      for (size_t d = 0; d < jc.size(); ++d) {
        size_t bd = d + b.size() - jc.size();
        jc[d] = ix[j].shape[d] == 1 ? 0 : bc[bd];
      }
      xc.push_back(wrap(ix[j].at(jc), x.shape[j]));
    }
    xc.insert(xc.end(), c.begin() + b.size(), c.end());
    v[i] = x.at(xc);
  }
  return make(x.kind, os, v);
}

}  // namespace etwebgpu::ref
