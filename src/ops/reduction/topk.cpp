// aten.topk.default: the k largest (or smallest) elements along a dim with their int64 indices.
#include <algorithm>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t n = 0, len = 0, inner = 1, k = 0;
};

// [self, k, dim, largest, sorted, ValueList(values, indices)]. sorted=False leaves the order
// unspecified in PyTorch; the kernel always returns sorted order, which satisfies both.
void build_topk(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0);
  const auto outs = g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::InvalidArgument, "expects 2 outputs (values, indices), got " + std::to_string(outs.size()));
  int32_t values = outs[0], indices = outs[1];
  Tensor& tx = g.tensor(x);
  bool in_float = is_float(tx.dtype);
  if (!in_float && !is_int(tx.dtype)) oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(tx.dtype));
  if (is_float(g.tensor(values).dtype) != in_float || is_int(g.tensor(values).dtype) == in_float)
    oc.fail(ErrorKind::Unsupported, "values dtype must match the input's");
  if (!is_int(g.tensor(indices).dtype)) oc.fail(ErrorKind::Unsupported, "indices must be an integer tensor");
  int64_t k = g.integer(oc.arg(1));
  if (k < 0) oc.fail(ErrorKind::InvalidArgument, "k " + std::to_string(k) + " is negative");
  int64_t rank = tx.rank();
  // A 0-dim tensor takes dim 0 or -1, like a 1-element vector.
  int64_t dim = norm_dim(oc, g.integer(oc.arg(2)), std::max<int64_t>(rank, 1));
  if (rank == 0) dim = 0;
  bool largest = g.boolean(oc.arg(3));
  const auto& pipe = g.ctx().pipeline("reduction_topk", "main", {{"LARGEST", largest ? 1.0 : 0.0}, {"IS_INT", in_float ? 0.0 : 1.0}});
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(x)}, {1, &g.buffer(values)}, {2, &g.buffer(indices)}, {3, u->buf}}, 0));
  Step* s = &oc.node.steps.back();
  oc.node.resize = [&g, x, values, indices, u, s, k, dim, &call = oc.call] {
    const auto& in = g.tensor(x).dims;
    int64_t len = in.empty() ? 1 : in[dim];
    if (k > len)
      fail_call(call, ErrorKind::InvalidArgument, "k " + std::to_string(k) + " is larger than dim " + std::to_string(dim) +
                                                      " of " + shape_str(in));
    std::vector<int64_t> od = in;
    if (!od.empty()) od[dim] = k;
    for (int32_t o : {values, indices}) {
      Tensor& to = g.tensor(o);
      if (numel(od) > to.max_numel()) fail_call(call, ErrorKind::InvalidArgument, "output " + shape_str(od) + " exceeds its bound " + shape_str(to.max_dims));
      to.dims = od;
    }
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(dim) + 1; d < in.size(); ++d) inner *= in[d];
    u->write(g, Params{static_cast<uint32_t>(numel(in)), static_cast<uint32_t>(len), static_cast<uint32_t>(inner), static_cast<uint32_t>(k)});
    set_groups(g, *s, k > 0 ? groups_for(numel(in)) : 0);
  };
}

ETW_REGISTER_OP("aten.topk.default", build_topk);

}  // namespace
}  // namespace etwebgpu::ops
