// Ternary elementwise ops with full 3-way broadcasting: aten.where.self (condition, self, other)
// and aten.clamp.Tensor (self, min, max; either bound may be None).
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

// One ternary step over c, a, b (a or b < 0: absent operand, bound to the dummy buffer).
void build_ternary(OpContext& oc, const char* entry, const gpu::Constants& consts, int32_t c, int32_t a, int32_t b) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  const auto& pipe = g.ctx().pipeline("elementwise_where", entry, consts);
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  auto buf = [&](int32_t v) { return v >= 0 ? &g.buffer(v) : &g.dummy_buffer(); };
  oc.node.steps.push_back(g.make_step(pipe, {{0, buf(c)}, {1, buf(a)}, {2, buf(b)}, {3, &g.buffer(out)}, {4, u->buf}}, 0));
  Step* s = &oc.node.steps.back();
  std::string name = oc.call.name;
  oc.node.resize = [&g, c, a, b, out, u, s, name] {
    static const std::vector<int64_t> absent;
    auto dims = [&](int32_t v) -> const std::vector<int64_t>& { return v >= 0 ? g.tensor(v).dims : absent; };
    const auto &dc = dims(c), &da = dims(a), &db = dims(b);
    std::vector<int64_t> od;
    try {
      od = broadcast_shape(broadcast_shape(dc, da), db);
    } catch (const Error& e) {
      throw Error(ErrorKind::InvalidArgument, name + ": operands " + shape_str(dc) + ", " + shape_str(da) + " and " +
                                                  shape_str(db) + " do not broadcast");
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
    p.contiguous = (dc == od && (a < 0 || da == od) && (b < 0 || db == od)) ? 1u : 0u;
    u->write(g, p);
    set_groups(g, *s, groups_for(numel(od)));
  };
}

void build_where(OpContext& oc) {
  Graph& g = oc.g;
  int32_t c = oc.arg(0), a = oc.arg(1), b = oc.arg(2);
  if (!is_boolish(g.tensor(c).dtype))
    oc.fail(ErrorKind::Unsupported, std::string("condition has dtype ") + format::vk_dtype_name(g.tensor(c).dtype) +
                                        "; it must be bool");
  VkDType ot = g.tensor(oc.out()).dtype;
  uint32_t a_int = needs_int_to_float(oc, a, ot, "self"), b_int = needs_int_to_float(oc, b, ot, "other");
  build_ternary(oc, "main", {{"A_INT", double(a_int)}, {"B_INT", double(b_int)}}, c, a, b);
}

// clamp.Tensor: [self, min Tensor?, max Tensor?, out]; the output dtype is the promoted one.
void build_clamp_tensor(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), lo = g.is_null(oc.arg(1)) ? -1 : oc.arg(1), hi = g.is_null(oc.arg(2)) ? -1 : oc.arg(2);
  if (lo < 0 && hi < 0) oc.fail(ErrorKind::InvalidArgument, "at least one of min and max must not be None");
  VkDType ot = g.tensor(oc.out()).dtype;
  if (!is_float(ot) && !is_int(ot))
    oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) + " (float or int only)");
  uint32_t x_int = needs_int_to_float(oc, x, ot, "self");
  uint32_t lo_int = lo >= 0 ? needs_int_to_float(oc, lo, ot, "min") : 0;
  uint32_t hi_int = hi >= 0 ? needs_int_to_float(oc, hi, ot, "max") : 0;
  build_ternary(oc, "clamp_main",
                {{"DT", is_float(ot) ? 0.0 : 1.0}, {"C_INT", double(x_int)}, {"A_INT", double(lo_int)}, {"B_INT", double(hi_int)},
                 {"HAS_A", lo >= 0 ? 1.0 : 0.0}, {"HAS_B", hi >= 0 ? 1.0 : 0.0}},
                x, lo, hi);
}

ETW_REGISTER_OP("aten.where.self", build_where);
ETW_REGISTER_OP("aten.clamp.Tensor", build_clamp_tensor);

}  // namespace
}  // namespace etwebgpu::ops
