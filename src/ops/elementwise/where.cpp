// aten.where.self: select with full 3-way broadcasting (condition, self, other -> output).
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  ShapeU o, c, a, b;
  uint32_t contiguous = 0, pad[3] = {0, 0, 0};
};

// Whether an operand's words need converting to the output's (int32/bool operand, float output).
uint32_t needs_int_to_float(const OpContext& oc, int32_t v, VkDType ot, const char* what) {
  VkDType t = oc.g.tensor(v).dtype;
  if (is_float(ot)) {
    if (is_float(t)) return 0;
    if (is_int(t) || is_boolish(t)) return 1;
  } else if (is_int(ot)) {
    if (is_int(t) || is_boolish(t)) return 0;  // bool words are 0/1, already valid int32 words
  } else if (is_boolish(ot)) {
    if (is_boolish(t)) return 0;
  }
  oc.fail(ErrorKind::Unsupported, std::string(what) + " has dtype " + format::vk_dtype_name(t) + " but the output is " +
                                      format::vk_dtype_name(ot));
}

void build_where(OpContext& oc) {
  Graph& g = oc.g;
  int32_t c = oc.arg(0), a = oc.arg(1), b = oc.arg(2), out = oc.out();
  if (!is_boolish(g.tensor(c).dtype))
    oc.fail(ErrorKind::Unsupported, std::string("condition has dtype ") + format::vk_dtype_name(g.tensor(c).dtype) +
                                        "; it must be bool");
  VkDType ot = g.tensor(out).dtype;
  uint32_t a_int = needs_int_to_float(oc, a, ot, "self"), b_int = needs_int_to_float(oc, b, ot, "other");
  const auto& pipe = g.ctx().pipeline("elementwise_where", "main", {{"A_INT", double(a_int)}, {"B_INT", double(b_int)}});
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  oc.node.steps.push_back(g.make_step(
      pipe, {{0, &g.buffer(c)}, {1, &g.buffer(a)}, {2, &g.buffer(b)}, {3, &g.buffer(out)}, {4, u->buf}}, 0));
  Step* s = &oc.node.steps.back();
  std::string name = oc.call.name;
  oc.node.resize = [&g, c, a, b, out, u, s, name] {
    const auto &dc = g.tensor(c).dims, &da = g.tensor(a).dims, &db = g.tensor(b).dims;
    std::vector<int64_t> od;
    try {
      od = broadcast_shape(broadcast_shape(dc, da), db);
    } catch (const Error& e) {
      throw Error(ErrorKind::InvalidArgument, name + ": condition " + shape_str(dc) + ", self " + shape_str(da) +
                                                  " and other " + shape_str(db) + " do not broadcast");
    }
    Tensor& to = g.tensor(out);
    if (numel(od) > to.max_numel())
      throw Error(ErrorKind::InvalidArgument, name + ": output " + shape_str(od) + " exceeds its bound " + shape_str(to.max_dims));
    to.dims = od;
    Params p;
    p.o = make_shape(od);
    auto sc = broadcast_strides(dc, od), sa = broadcast_strides(da, od), sb = broadcast_strides(db, od);
    p.c = make_shape(od, &sc);
    p.a = make_shape(od, &sa);
    p.b = make_shape(od, &sb);
    p.contiguous = (dc == od && da == od && db == od) ? 1u : 0u;
    u->write(g, p);
    set_groups(g, *s, groups_for(numel(od)));
  };
}

ETW_REGISTER_OP("aten.where.self", build_where);

}  // namespace
}  // namespace etwebgpu::ops
