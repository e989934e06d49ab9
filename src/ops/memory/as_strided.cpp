// aten.as_strided_copy.default [self, size IntList, stride IntList, storage_offset Int|Null, out]:
// a gather through the memory family's generic strided copy shader (mem_strided.wgsl, MODE 0):
// out[c] = self_flat[storage_offset + sum(c_d * stride_d)] over the contiguous storage of self.
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {  // mirrors mem_strided.wgsl's Params
  ShapeU it, src, dst;
  int32_t lo[8] = {0};
  uint32_t src_base = 0, dst_base = 0, fill = 0, pad = 0;
};
static_assert(sizeof(Params) == 288);

void build_as_strided(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  auto size = g.int_list(oc.arg(1));
  auto stride = g.int_list(oc.arg(2));
  int64_t offset = g.is_null(oc.arg(3)) ? 0 : g.integer(oc.arg(3));
  if (size.size() != stride.size())
    oc.fail(ErrorKind::InvalidArgument, "size has " + std::to_string(size.size()) + " dims but stride has " +
                                            std::to_string(stride.size()));
  if (size.size() > kMaxRank) oc.fail(ErrorKind::Limit, "rank above 8");
  int64_t last = offset;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < 0 || stride[d] < 0) oc.fail(ErrorKind::InvalidArgument, "negative size or stride");
    if (size[d] > 0) last += (size[d] - 1) * stride[d];
  }
  if (offset < 0) oc.fail(ErrorKind::InvalidArgument, "negative storage_offset");
  // Runs at load and on every resize (the hook outlives `oc`, so it names the op itself).
  auto check = [&g, x, out, size, last, name = oc.call.name] {
    if (numel(size) > 0 && last >= g.tensor(x).numel())
      throw Error(ErrorKind::InvalidArgument, name + ": reads element " + std::to_string(last) +
                                                  " of an input holding " + std::to_string(g.tensor(x).numel()));
    if (numel(size) > g.tensor(out).max_numel())
      throw Error(ErrorKind::InvalidArgument, name + ": size " + shape_str(size) + " exceeds the output " +
                                                  shape_str(g.tensor(out).max_dims));
  };
  check();
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  const auto& pipe = g.ctx().pipeline("mem_strided", "main", {{"MODE", 0}});
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(x)}, {1, &g.buffer(out)}, {2, u->buf}}, 0, "gather"));
  Step* s = &oc.node.steps.back();
  oc.node.resize = [&g, out, u, s, size, stride, offset, check] {
    check();  // a dynamic input may have shrunk below what the fixed strides read
    g.tensor(out).dims = size;
    Params p;
    p.it = make_shape(size);
    p.src = make_shape(size, &stride);
    p.dst = make_shape(size);
    p.src_base = static_cast<uint32_t>(offset);
    u->write(g, p);
    set_groups(g, *s, groups_for(numel(size)));
  };
}

ETW_REGISTER_OP("aten.as_strided_copy.default", build_as_strided);

}  // namespace
}  // namespace etwebgpu::ops
