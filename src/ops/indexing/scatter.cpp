// scatter.src, scatter.value, scatter_add through indexing_scatter.wgsl (a deterministic gather
// over the output). PyTorch's shape rules: index, self and src have one rank; index.size(d) <=
// src.size(d) for every d and <= self.size(d) for d != dim. Index values must lie in
// [0, self.size(dim)) (no wrapping, as in PyTorch); others are not written.
#include <algorithm>
#include <cmath>

#include "graph/index_check.h"
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  ShapeU o, ix, src;
  uint32_t dim = 0, value = 0, site = 0, pad1 = 0;
};
static_assert(sizeof(Params) == 256);

// [self, dim, index, src|value, out]; `use_src` false reads the scalar value instead of src.
void build_scatter_impl(OpContext& oc, bool add, bool use_src) {
  Graph& g = oc.g;
  int32_t self = oc.arg(0), ix = oc.arg(2), src = oc.arg(3), out = oc.out();
  mem::require_tensor(oc, self, "self");
  mem::require_tensor(oc, ix, "index");
  require_dtype(oc, ix, {VkDType::Int32, VkDType::Int64}, "index");
  mem::require_same_words(oc, self, out, "self");
  mem::require_distinct(oc, self, out);
  mem::require_distinct(oc, ix, out);
  int64_t r = g.tensor(self).rank();
  int64_t dim = norm_dim(oc, mem::int_arg(oc, oc.arg(1), "dim"), std::max<int64_t>(r, 1));  // 0-d: 0 or -1
  VkDType ot = g.tensor(out).dtype;
  uint32_t value = 0;
  if (use_src) {
    mem::require_tensor(oc, src, "src");
    mem::require_same_words(oc, src, out, "src");
    mem::require_distinct(oc, src, out);
  } else {
    value = scalar_word(oc, g.number(src), ot, "value");
  }
  // PyTorch's scatter rejects indices outside [0, size) (no wrapping).
  uint32_t site = g.index_check().add_site(mem::who(oc), dim, graph::IndexCheck::Negatives::Reject);
  auto check = [self, ix, src, dim, use_src](const kernel::Live& l) {
    const auto& sd = l.dims(self);
    const auto& id = l.dims(ix);
    const std::vector<int64_t>& srcd = use_src ? l.dims(src) : id;
    if (numel(id) == 0) return;  // PyTorch skips the shape checks: out = self
    if (id.size() != sd.size() || srcd.size() != sd.size())
      throw Error(ErrorKind::InvalidArgument, "index " + shape_str(id) + ", self " + shape_str(sd) +
                                                  (use_src ? " and src " + shape_str(srcd) : std::string()) +
                                                  " must have the same number of dimensions");
    for (size_t d = 0; d < sd.size(); ++d) {
      if (id[d] > srcd[d] || (static_cast<int64_t>(d) != dim && id[d] > sd[d]))
        throw Error(ErrorKind::InvalidArgument, "expected index " + shape_str(id) + " to be no larger than self " +
                                                    shape_str(sd) + " apart from dimension " + std::to_string(dim) +
                                                    (use_src ? " and to be no larger than src " + shape_str(srcd) : std::string()));
    }
  };
  oc.output(out, [self, check](const kernel::Live& l) {
    check(l);
    return l.dims(self);
  });
  oc.add(kernel::Kernel("indexing_scatter")
             .constant("ADD", add ? 1 : 0)
             .constant("USE_SRC", use_src ? 1 : 0)
             .input("SELF", self)
             .input("IDX", ix)
             .input("SRC", use_src ? src : -1)
             .output("O", out)
             .fixed(g.index_check().binding())
             .params<Params>([self, ix, src, dim, use_src, value, site](const kernel::Live& l) {
               const auto& id = l.dims(ix);
               // A 0-d tensor is scattered as a 1-element vector.
               auto one = [](std::vector<int64_t> v) { return v.empty() ? std::vector<int64_t>{1} : v; };
               std::vector<int64_t> o1 = one(l.dims(self)), i1 = one(id), s1 = one(use_src ? l.dims(src) : id);
               Params p;
               p.o = make_shape(o1);
               if (numel(id) > 0) {  // an empty index leaves ix.numel == 0: nothing is scattered
                 p.ix = make_shape(i1);
                 auto ss = contiguous_strides(s1);
                 p.src = make_shape(i1, &ss);
               }
               p.dim = static_cast<uint32_t>(dim);
               p.value = value;
               p.site = site;
               return p;
             })
             .flat(out)
             .variant(add ? "scatter_add" : "scatter"));
}

void build_scatter_src(OpContext& oc) { build_scatter_impl(oc, false, true); }
void build_scatter_value(OpContext& oc) { build_scatter_impl(oc, false, false); }
void build_scatter_add(OpContext& oc) { build_scatter_impl(oc, true, true); }

ETW_REGISTER_OP("aten.scatter.src", build_scatter_src);
ETW_REGISTER_OP("aten.scatter.value", build_scatter_value);
ETW_REGISTER_OP("aten.scatter_add.default", build_scatter_add);

}  // namespace
}  // namespace etwebgpu::ops
