#include "reference/indexing/advanced_index_ref.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "reference/broadcast.h"
#include "reference/memory/memory_ref.h"

namespace etwebgpu::ref {
namespace {

int64_t nel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

int64_t flat(const std::vector<int64_t>& c, const std::vector<int64_t>& s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + c[d];
  return f;
}

// PyTorch broadcasting (right-aligned; a size-1 dim takes the other size, including 0).
std::vector<int64_t> bcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> o(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1) throw std::runtime_error("shape mismatch: indexing tensors could not be broadcast together");
    o[i] = x == 1 ? y : x;
  }
  return o;
}

// One entry of the index list after bool masks were expanded: nullopt = full slice.
using Entries = std::vector<std::optional<Nd>>;

// Expands boolean masks into their nonzero() coordinate tensors and pads with None to x's rank.
Entries expand_entries(const std::vector<int64_t>& xs, const IndexList& indices) {
  Entries e;
  for (const auto& t : indices) {
    if (!t) {
      e.push_back(std::nullopt);
      continue;
    }
    if (t->dtype == DType::Bool || t->dtype == DType::UInt8) {
      Nd m = Nd::of(*t);
      size_t k = e.size();
      if (k + m.shape.size() > xs.size()) throw std::runtime_error("too many indices for tensor");
      for (size_t d = 0; d < m.shape.size(); ++d)
        if (m.shape[d] != xs[k + d]) throw std::runtime_error("mask shape does not match the indexed dims");
      std::vector<Nd> cols(m.shape.size());
      for (auto& c : cols) c.kind = DType::Int64;
      for (int64_t i = 0; i < nel(m.shape); ++i) {
        if (m.v[i] == 0) continue;
        auto c = coords(i, m.shape);
        for (size_t d = 0; d < c.size(); ++d) cols[d].v.push_back(static_cast<double>(c[d]));
      }
      for (auto& c : cols) {
        c.shape = {static_cast<int64_t>(c.v.size())};
        e.push_back(std::move(c));
      }
    } else if (t->dtype == DType::Int32 || t->dtype == DType::Int64) {
      e.push_back(Nd::of(*t));
    } else {
      throw std::runtime_error("tensors used as indices must be long, int or bool");
    }
  }
  if (e.size() > xs.size()) throw std::runtime_error("too many indices for tensor");
  while (e.size() < xs.size()) e.push_back(std::nullopt);
  return e;
}

// Where each result coordinate reads self: the plan of PyTorch's result layout.
struct Plan {
  std::vector<int64_t> r;       // result shape
  std::vector<int64_t> b;       // broadcast shape of the index tensors
  size_t b_at = 0;              // where B sits in r
  std::vector<int64_t> r_dim;   // per self dim: its coordinate's position in r (-1 for indexed dims)
};

Plan make_plan(const std::vector<int64_t>& xs, const Entries& e) {
  Plan p;
  std::vector<size_t> pos;
  for (size_t d = 0; d < e.size(); ++d)
    if (e[d]) {
      pos.push_back(d);
      p.b = bcast(p.b, e[d]->shape);  // throws when they do not broadcast
    }
  if (pos.empty()) throw std::runtime_error("no index tensor");
  bool adjacent = pos.back() - pos.front() + 1 == pos.size();
  p.r_dim.assign(xs.size(), -1);
  if (adjacent) {
    // x[:, i, j, :] -> [x0, *B, x3]
    for (size_t d = 0; d < pos.front(); ++d) {
      p.r_dim[d] = static_cast<int64_t>(p.r.size());
      p.r.push_back(xs[d]);
    }
    p.b_at = p.r.size();
    p.r.insert(p.r.end(), p.b.begin(), p.b.end());
    for (size_t d = pos.back() + 1; d < xs.size(); ++d) {
      p.r_dim[d] = static_cast<int64_t>(p.r.size());
      p.r.push_back(xs[d]);
    }
  } else {
    // x[i, :, j] -> [*B, x1]
    p.b_at = 0;
    p.r = p.b;
    for (size_t d = 0; d < xs.size(); ++d)
      if (!e[d]) {
        p.r_dim[d] = static_cast<int64_t>(p.r.size());
        p.r.push_back(xs[d]);
      }
  }
  return p;
}

// Self coordinate read by result coordinate rc.
std::vector<int64_t> self_coord(const std::vector<int64_t>& xs, const Entries& e, const Plan& p,
                                const std::vector<int64_t>& rc) {
  std::vector<int64_t> bc(rc.begin() + static_cast<long>(p.b_at), rc.begin() + static_cast<long>(p.b_at + p.b.size()));
  std::vector<int64_t> c(xs.size());
  for (size_t d = 0; d < xs.size(); ++d) {
    if (!e[d]) {
      c[d] = rc[static_cast<size_t>(p.r_dim[d])];
      continue;
    }
    const Nd& ix = *e[d];
    // Broadcast: right-aligned, size-1 dims repeat.
    std::vector<int64_t> jc(ix.shape.size());
    for (size_t k = 0; k < jc.size(); ++k) jc[k] = ix.shape[k] == 1 ? 0 : bc[k + bc.size() - jc.size()];
    auto v = static_cast<int64_t>(ix.at(jc));
    if (v < 0) v += xs[d];
    if (v < 0 || v >= xs[d])
      throw std::runtime_error("index " + std::to_string(static_cast<int64_t>(ix.at(jc))) + " is out of bounds for dimension " +
                               std::to_string(d) + " with size " + std::to_string(xs[d]));
    c[d] = v;
  }
  return c;
}

}  // namespace

std::vector<int64_t> index_shape(const std::vector<int64_t>& xs, const IndexList& indices) {
  return make_plan(xs, expand_entries(xs, indices)).r;
}

HostTensor index_tensor(const HostTensor& xh, const IndexList& indices) {
  Nd x = Nd::of(xh);
  Entries e = expand_entries(x.shape, indices);
  Plan p = make_plan(x.shape, e);
  Nd o;
  o.kind = x.kind;
  o.shape = p.r;
  o.v.resize(static_cast<size_t>(nel(p.r)));
  for (int64_t i = 0; i < nel(p.r); ++i) o.v[static_cast<size_t>(i)] = x.at(self_coord(x.shape, e, p, coords(i, p.r)));
  return o.host();
}

HostTensor index_put(const HostTensor& xh, const IndexList& indices, const HostTensor& vh, bool accumulate) {
  Nd x = Nd::of(xh), val = Nd::of(vh);
  Entries e = expand_entries(x.shape, indices);
  Plan p = make_plan(x.shape, e);
  if (bcast(val.shape, p.r) != p.r) throw std::runtime_error("shape mismatch: values cannot be broadcast to indexing result");
  Nd o = x;
  for (int64_t i = 0; i < nel(p.r); ++i) {
    int64_t at = flat(self_coord(x.shape, e, p, coords(i, p.r)), x.shape);
    double v = val.v[static_cast<size_t>(broadcast_index(i, p.r, val.shape))];
    double& dst = o.v[static_cast<size_t>(at)];
    if (!accumulate) dst = v;
    else if (o.kind == DType::Bool) dst = (dst != 0 || v != 0) ? 1 : 0;
    else dst += v;
  }
  return o.host();
}

}  // namespace etwebgpu::ref
