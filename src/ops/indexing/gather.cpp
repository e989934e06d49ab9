// Gather-like indexing ops (embedding, index_select, gather) through indexing_gather.wgsl. Index
// tensors are int32/int64 (one i32 word each), checked as PyTorch does ([0, size), no wrapping); a
// bad one is reported through the graph's IndexCheck and the run raises Error(InvalidArgument)
// naming the op and the index.
#include <functional>

#include "graph/index_check.h"
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using graph::IndexCheck;

// WGSL: struct Params { o: Shape, s: Shape, dim, n_idx, inner, src_dim, site, pad0, pad1, pad2: u32 }
struct IndexParams {
  ShapeU o, s;
  uint32_t dim = 0, n_idx = 0, inner = 1, src_dim = 1, site = 0, pad0 = 0, pad1 = 0, pad2 = 0;
};
static_assert(sizeof(IndexParams) == 192);

enum IndexMode : uint32_t { kSelect = 0, kGather = 1 };

// One indexing_gather kernel reading `src` at the indices `idx`; `params` fills the geometry
// from live dims. `dim`: the dimension the indices select in, for the out-of-range error.
void add_index_kernel(OpContext& oc, IndexMode mode, int32_t src, int32_t idx, int32_t out, const char* variant, int64_t dim,
                      std::function<IndexParams(const kernel::Live&)> params) {
  Graph& g = oc.g;
  if (&g.buffer(src) == &g.buffer(out) || &g.buffer(idx) == &g.buffer(out))
    oc.fail(ErrorKind::Unsupported, "an input and the output share one memory object");
  uint32_t site = g.index_check().add_site(mem::who(oc), dim, IndexCheck::Negatives::Reject);
  oc.add(kernel::Kernel("indexing_gather")
             .constant("MODE", mode)
             .input("SRC", src)
             .input("IDX", idx)
             .output("OUT", out)
             .fixed(g.index_check().binding())
             .params<IndexParams>([site, params](const kernel::Live& l) {
               IndexParams p = params(l);
               p.site = site;
               return p;
             })
             .flat(out)
             .variant(variant));
}

void require_index(const OpContext& oc, int32_t id, const char* what) {
  mem::require_tensor(oc, id, what);
  require_dtype(oc, id, {VkDType::Int32, VkDType::Int64}, what);
}

int64_t prod(const std::vector<int64_t>& d, size_t a, size_t b) {
  int64_t p = 1;
  for (size_t i = a; i < b; ++i) p *= d[i];
  return p;
}

// MODE 0 over (outer, n_idx, inner) selecting in `dim` of src; `geom(live, out_dims&, outer&,
// src_dim&, inner&)` from live dims.
using Geom = std::function<void(const kernel::Live&, std::vector<int64_t>&, int64_t&, int64_t&, int64_t&)>;
void build_select_like(OpContext& oc, int32_t src, int32_t idx, int64_t dim, const char* variant, Geom geom) {
  int32_t out = oc.out();
  mem::require_same_words(oc, src, out, "the source");
  oc.output(out, [geom](const kernel::Live& l) {
    std::vector<int64_t> od;
    int64_t outer = 1, src_dim = 1, inner = 1;
    geom(l, od, outer, src_dim, inner);
    return od;
  });
  add_index_kernel(oc, kSelect, src, idx, out, variant, dim, [geom, idx](const kernel::Live& l) {
    std::vector<int64_t> od;
    int64_t outer = 1, src_dim = 1, inner = 1;
    geom(l, od, outer, src_dim, inner);
    if (src_dim > INT32_MAX) throw Error(ErrorKind::Limit, "indexed dim exceeds int32");
    IndexParams p;
    p.o = make_shape(od);
    p.n_idx = kernel::u32(l.numel(idx), "index count");
    p.inner = kernel::u32(inner, "inner size");
    p.src_dim = kernel::u32(src_dim, "indexed dim");
    return p;
  });
}

// embedding [weight, indices, padding_idx, scale_grad_by_freq, sparse, out]: out = indices.shape + [D].
// padding_idx / scale_grad_by_freq / sparse only affect gradients.
void build_embedding(OpContext& oc) {
  Graph& g = oc.g;
  int32_t wt = oc.arg(0), ix = oc.arg(1);
  mem::require_tensor(oc, wt, "weight");
  require_index(oc, ix, "indices");
  if (g.tensor(wt).rank() != 2)
    oc.fail(ErrorKind::InvalidArgument, "weight must be 2-D, got " + shape_str(g.tensor(wt).max_dims));
  build_select_like(oc, wt, ix, 0, "embedding", [wt, ix](const kernel::Live& l, std::vector<int64_t>& od, int64_t& outer,
                                                        int64_t& sd, int64_t& inner) {
    const auto& wd = l.dims(wt);
    od = l.dims(ix);
    od.push_back(wd[1]);
    outer = 1, sd = wd[0], inner = wd[1];
  });
}

// index_select [self, dim, index (0-d or 1-D), out].
void build_index_select(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), ix = oc.arg(2);
  mem::require_tensor(oc, x, "self");
  require_index(oc, ix, "index");
  int64_t r = g.tensor(x).rank();
  if (r == 0) oc.fail(ErrorKind::Unsupported, "0-d self is not supported");
  if (g.tensor(ix).rank() > 1)
    oc.fail(ErrorKind::InvalidArgument, "index must be 0-D or 1-D, got " + shape_str(g.tensor(ix).max_dims));
  int64_t d = norm_dim(oc, mem::int_arg(oc, oc.arg(1), "dim"), r);
  build_select_like(oc, x, ix, d, "index_select", [x, ix, d](const kernel::Live& l, std::vector<int64_t>& od, int64_t& outer,
                                                             int64_t& sd, int64_t& inner) {
    const auto& xd = l.dims(x);
    od = xd;
    od[d] = l.numel(ix);
    outer = prod(xd, 0, d), sd = xd[d], inner = prod(xd, d + 1, xd.size());
  });
}

// gather [self, dim, index, sparse_grad, out]: out has index's shape.
void build_gather(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), ix = oc.arg(2), out = oc.out();
  mem::require_tensor(oc, x, "self");
  require_index(oc, ix, "index");
  mem::require_same_words(oc, x, out, "self");
  int64_t r = g.tensor(x).rank();
  int64_t d = norm_dim(oc, mem::int_arg(oc, oc.arg(1), "dim"), r);
  if (g.tensor(ix).rank() != r && !(r == 0 && g.tensor(ix).rank() <= 1))
    oc.fail(ErrorKind::InvalidArgument, "index " + shape_str(g.tensor(ix).max_dims) + " and self " +
                                            shape_str(g.tensor(x).max_dims) + " must have the same number of dims");
  oc.output(out, [x, ix, d](const kernel::Live& l) {
    const auto& xd = l.dims(x);
    const auto& id = l.dims(ix);
    for (size_t i = 0; i < xd.size() && i < id.size(); ++i)
      if (static_cast<int64_t>(i) != d && id[i] > xd[i])
        throw Error(ErrorKind::InvalidArgument, "index " + shape_str(id) + " is larger than self " + shape_str(xd) +
                                                    " outside dim " + std::to_string(d));
    return id;
  });
  add_index_kernel(oc, kGather, x, ix, out, "gather", d, [x, ix, d](const kernel::Live& l) {
    const auto& xd = l.dims(x);
    IndexParams p;
    p.o = make_shape(l.dims(ix));
    p.s = make_shape(xd);
    p.dim = xd.empty() ? 0xffffffffu : static_cast<uint32_t>(d);
    p.src_dim = kernel::u32(xd.empty() ? 1 : xd[d], "indexed dim");
    return p;
  });
}

ETW_REGISTER_OP("aten.embedding.default", build_embedding);
ETW_REGISTER_OP("aten.index_select.default", build_index_select);
ETW_REGISTER_OP("aten.gather.default", build_gather);

}  // namespace
}  // namespace etwebgpu::ops
