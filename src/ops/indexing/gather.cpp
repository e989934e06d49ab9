// Gather-like indexing ops (embedding, index_select, gather) through indexing_gather.wgsl. Index
// tensors are int32/int64 (one i32 word each), checked as PyTorch does ([0, size), no wrapping); a
// bad one is reported through the graph's IndexCheck and the run raises Error(InvalidArgument)
// naming the op and the index.
#include <functional>
#include <memory>

#include "graph/index_check.h"
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using graph::IndexCheck;
using mem::fail_at;
using mem::set_out;

// WGSL: struct Params { o: Shape, s: Shape, dim, n_idx, inner, src_dim, site, pad0, pad1, pad2: u32 }
struct IndexParams {
  ShapeU o, s;
  uint32_t dim = 0, n_idx = 0, inner = 1, src_dim = 1, site = 0, pad0 = 0, pad1 = 0, pad2 = 0;
};
static_assert(sizeof(IndexParams) == 192);

enum IndexMode : uint32_t { kSelect = 0, kGather = 1 };

struct IStep {
  size_t step = 0;
  std::shared_ptr<Uniform<IndexParams>> u;
  uint32_t site = 0;  // IndexCheck site of the indices this step reads
};

// `dim`: the dimension the step's indices select in, for the out-of-range error.
IStep add_index_step(OpContext& oc, IndexMode mode, const gpu::Buffer& src, const gpu::Buffer& idx,
                     const gpu::Buffer& out, const char* variant, int64_t dim = 0) {
  Graph& g = oc.g;
  if (&src == &out || &idx == &out)
    oc.fail(ErrorKind::Unsupported, "an input and the output share one memory object");
  IStep s;
  s.u = std::make_shared<Uniform<IndexParams>>();
  s.u->init(g, oc.call.name);
  s.site = g.index_check().add_site(mem::who(oc), dim, IndexCheck::Negatives::Reject);
  const auto& p = g.ctx().pipeline("indexing_gather", "main", {{"MODE", static_cast<double>(mode)}});
  oc.node.steps.push_back(
      g.make_step(p, {{0, &src}, {1, &idx}, {2, &out}, {3, s.u->buf}, g.index_check().binding()}, 0, variant));
  s.step = oc.node.steps.size() - 1;
  return s;
}

void write_index(Graph& g, Step& step, const IStep& s, IndexParams p) {
  p.site = s.site;
  s.u->write(g, p);
  set_groups(g, step, groups_for(p.o.numel));
}

uint32_t u32_of(const std::string& w, int64_t v, const char* what) {
  if (v < 0 || v > static_cast<int64_t>(UINT32_MAX))
    fail_at(w, ErrorKind::Limit, std::string(what) + " " + std::to_string(v) + " does not fit 32 bits");
  return static_cast<uint32_t>(v);
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

// MODE 0 over (outer, n_idx, inner) selecting in `dim` of src; `geom(out_dims&, outer&, src_dim&,
// inner&)` from live dims.
void build_select_like(OpContext& oc, int32_t src, int32_t idx, int64_t dim, const char* variant,
                       std::function<void(std::vector<int64_t>&, int64_t&, int64_t&, int64_t&)> geom) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  mem::require_same_words(oc, src, out, "the source");
  IStep s = add_index_step(oc, kSelect, g.buffer(src), g.buffer(idx), g.buffer(out), variant, dim);
  graph::Node* node = &oc.node;
  std::string w = mem::who(oc);
  oc.node.resize = [&g, out, idx, s, node, w, geom] {
    std::vector<int64_t> od;
    int64_t outer = 1, src_dim = 1, inner = 1;
    geom(od, outer, src_dim, inner);
    set_out(g, w, out, od);
    IndexParams p;
    p.o = make_shape(od);
    p.n_idx = u32_of(w, g.tensor(idx).numel(), "index count");
    p.inner = u32_of(w, inner, "inner size");
    p.src_dim = u32_of(w, src_dim, "indexed dim");
    if (src_dim > INT32_MAX) fail_at(w, ErrorKind::Limit, "indexed dim exceeds int32");
    write_index(g, node->steps[s.step], s, p);
  };
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
  build_select_like(oc, wt, ix, 0, "embedding", [&g, wt, ix](std::vector<int64_t>& od, int64_t& outer, int64_t& sd, int64_t& inner) {
    const auto& wd = g.tensor(wt).dims;
    od = g.tensor(ix).dims;
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
  build_select_like(oc, x, ix, d, "index_select", [&g, x, ix, d](std::vector<int64_t>& od, int64_t& outer, int64_t& sd, int64_t& inner) {
    const auto& xd = g.tensor(x).dims;
    od = xd;
    od[d] = g.tensor(ix).numel();
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
  IStep s = add_index_step(oc, kGather, g.buffer(x), g.buffer(ix), g.buffer(out), "gather", d);
  graph::Node* node = &oc.node;
  std::string w = mem::who(oc);
  oc.node.resize = [&g, x, ix, out, d, s, node, w] {
    const auto& xd = g.tensor(x).dims;
    const auto& id = g.tensor(ix).dims;
    for (size_t i = 0; i < xd.size() && i < id.size(); ++i)
      if (static_cast<int64_t>(i) != d && id[i] > xd[i])
        fail_at(w, ErrorKind::InvalidArgument, "index " + shape_str(id) + " is larger than self " + shape_str(xd) +
                                                   " outside dim " + std::to_string(d));
    set_out(g, w, out, id);
    IndexParams p;
    p.o = make_shape(id);
    p.s = make_shape(xd);
    p.dim = xd.empty() ? 0xffffffffu : static_cast<uint32_t>(d);
    p.src_dim = u32_of(w, xd.empty() ? 1 : xd[d], "indexed dim");
    write_index(g, node->steps[s.step], s, p);
  };
}

ETW_REGISTER_OP("aten.embedding.default", build_embedding);
ETW_REGISTER_OP("aten.index_select.default", build_index_select);
ETW_REGISTER_OP("aten.gather.default", build_gather);

}  // namespace
}  // namespace etwebgpu::ops
