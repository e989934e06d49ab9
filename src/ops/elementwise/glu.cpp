// aten.glu.default (gated linear unit): first half along dim times the sigmoid of the second half.
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t n = 0, half_inner = 0, pad[2] = {0, 0};
};

// [self, dim, out]
void build_glu(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  Tensor& tx = g.tensor(x);
  if (!is_float(tx.dtype) || !is_float(g.tensor(out).dtype))
    oc.fail(ErrorKind::Unsupported, std::string("dtype ") + format::vk_dtype_name(tx.dtype) + " -> " +
                                        format::vk_dtype_name(g.tensor(out).dtype) + " (float only)");
  if (tx.rank() == 0) oc.fail(ErrorKind::InvalidArgument, "glu does not support 0-dim tensors");
  int64_t dim = norm_dim(oc, g.integer(oc.arg(1)), tx.rank());
  const auto& pipe = g.ctx().pipeline("elementwise_glu", "main");
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(x)}, {1, &g.buffer(out)}, {2, u->buf}}, 0));
  Step* s = &oc.node.steps.back();
  oc.node.resize = [&g, x, out, u, s, dim, &call = oc.call] {
    std::vector<int64_t> od = g.tensor(x).dims;
    if (od[dim] % 2 != 0)
      fail_call(call, ErrorKind::InvalidArgument, "halving dimension " + std::to_string(dim) + " of " + shape_str(od) + " must be even");
    od[dim] /= 2;
    Tensor& to = g.tensor(out);
    if (numel(od) > to.max_numel()) fail_call(call, ErrorKind::InvalidArgument, "output " + shape_str(od) + " exceeds its bound " + shape_str(to.max_dims));
    to.dims = od;
    int64_t half_inner = 1;
    for (size_t d = static_cast<size_t>(dim); d < od.size(); ++d) half_inner *= od[d];
    u->write(g, Params{static_cast<uint32_t>(numel(od)), static_cast<uint32_t>(half_inner), {0, 0}});
    set_groups(g, *s, half_inner ? groups_for(numel(od)) : 0);
  };
}

ETW_REGISTER_OP("aten.glu.default", build_glu);

}  // namespace
}  // namespace etwebgpu::ops
