// Ternary elementwise ops with full 3-way broadcasting: aten.where.self (condition, self, other)
// and aten.clamp.Tensor (self, min, max; either bound may be None).
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  ShapeU o, c, a, b;
  uint32_t contiguous = 0, pad[3] = {0, 0, 0};
};

// Operands convert to the output's storage type in the shader (int32/bool operand, float output:
// PyTorch's promotion); dtype pairs without such a conversion are refused here.
void require_convertible(const OpContext& oc, int32_t v, VkDType ot, const char* what) {
  VkDType t = oc.g.tensor(v).dtype;
  if (is_float(ot) && (is_float(t) || is_int(t) || is_boolish(t))) return;
  if (is_int(ot) && (is_int(t) || is_boolish(t))) return;  // bool 0/1 are valid int32 values
  if (is_boolish(ot) && is_boolish(t)) return;
  oc.fail(ErrorKind::Unsupported, std::string(what) + " has dtype " + format::vk_dtype_name(t) + " but the output is " +
                                      format::vk_dtype_name(ot));
}

// One ternary kernel over c, a, b (a or b < 0: absent operand, bound to the dummy).
void build_ternary(OpContext& oc, kernel::Kernel k, int32_t c, int32_t a, int32_t b) {
  int32_t out = oc.out();
  auto dims = [](const kernel::Live& l, int32_t v) { return v >= 0 ? l.dims(v) : std::vector<int64_t>{}; };
  oc.output(out, [c, a, b, dims](const kernel::Live& l) {
    const auto dc = dims(l, c), da = dims(l, a), db = dims(l, b);
    try {
      return broadcast_shape(broadcast_shape(dc, da), db);
    } catch (const Error&) {
      throw Error(ErrorKind::InvalidArgument, "operands " + shape_str(dc) + ", " + shape_str(da) + " and " + shape_str(db) +
                                                  " do not broadcast");
    }
  });
  oc.add(k.input("C", c)
             .input("A", a)
             .input("B", b)
             .output("Y", out)
             .params<Params>([c, a, b, out, dims](const kernel::Live& l) {
               const auto& od = l.dims(out);
               const auto dc = dims(l, c), da = dims(l, a), db = dims(l, b);
               Params p;
               p.o = make_shape(od);
               auto sc = broadcast_strides(dc, od), sa = broadcast_strides(da, od), sb = broadcast_strides(db, od);
               p.c = make_shape(od, &sc);
               p.a = make_shape(od, &sa);
               p.b = make_shape(od, &sb);
               p.contiguous = (dc == od && (a < 0 || da == od) && (b < 0 || db == od)) ? 1u : 0u;
               return p;
             })
             .flat(out));
}

void build_where(OpContext& oc) {
  Graph& g = oc.g;
  int32_t c = oc.arg(0), a = oc.arg(1), b = oc.arg(2);
  if (!is_boolish(g.tensor(c).dtype))
    oc.fail(ErrorKind::Unsupported, std::string("condition has dtype ") + format::vk_dtype_name(g.tensor(c).dtype) +
                                        "; it must be bool");
  VkDType ot = g.tensor(oc.out()).dtype;
  require_convertible(oc, a, ot, "self");
  require_convertible(oc, b, ot, "other");
  build_ternary(oc, kernel::Kernel("elementwise_where", "main"), c, a, b);
}

// clamp.Tensor: [self, min Tensor?, max Tensor?, out]; the output dtype is the promoted one.
void build_clamp_tensor(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), lo = g.is_null(oc.arg(1)) ? -1 : oc.arg(1), hi = g.is_null(oc.arg(2)) ? -1 : oc.arg(2);
  if (lo < 0 && hi < 0) oc.fail(ErrorKind::InvalidArgument, "at least one of min and max must not be None");
  VkDType ot = g.tensor(oc.out()).dtype;
  if (!is_float(ot) && !is_int(ot))
    oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) + " (float or int only)");
  require_convertible(oc, x, ot, "self");
  if (lo >= 0) require_convertible(oc, lo, ot, "min");
  if (hi >= 0) require_convertible(oc, hi, ot, "max");
  build_ternary(oc, kernel::Kernel("elementwise_where", "clamp_main").constant("DT", is_float(ot) ? 0.0 : 1.0), x, lo, hi);
}

ETW_REGISTER_OP("aten.where.self", build_where);
ETW_REGISTER_OP("aten.clamp.Tensor", build_clamp_tensor);

}  // namespace
}  // namespace etwebgpu::ops
