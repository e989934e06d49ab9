// aten unary elementwise ops (math, trig/hyperbolic, activations, clamp family, bitwise/logical not,
// sign, isinf/isnan, identity copies).
// One flat kernel (elementwise_unary.wgsl) with the op's code (elementwise_ops.h) as an override
// constant.
#include <cmath>
#include <limits>

#include "graph/fusion.h"
#include "ops/elementwise/elementwise_ops.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t n = 0;
  int32_t i0 = 0, i1 = 0;
  uint32_t pad = 0;
  float f0 = 0.f, f1 = 0.f, f2 = 0.f;
  uint32_t pad2 = 0;
};
static_assert(sizeof(Params) == 32);

// Which input dtypes an op takes besides float (float ops also take int/bool inputs when the
// output is float: PyTorch promotes them).
bool int_ok(UnaryOp op) {
  return op == UnaryOp::Abs || op == UnaryOp::Neg || op == UnaryOp::Relu || op == UnaryOp::Clamp ||
         op == UnaryOp::BitwiseNot || op == UnaryOp::Sign;
}

// double -> f32 saturating to +-inf (a C++ cast of an out-of-range double is undefined).
float to_f32(double v) {
  if (std::isnan(v)) return std::numeric_limits<float>::quiet_NaN();
  if (v > std::numeric_limits<float>::max()) return std::numeric_limits<float>::infinity();
  if (v < -std::numeric_limits<float>::max()) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

// Reads an optional clamp bound for an int32 tensor: integral, saturated to the int32 range.
int32_t int_bound(const OpContext& oc, std::optional<double> v, int32_t dflt, const char* what) {
  if (!v) return dflt;
  if (std::isnan(*v) || *v != std::trunc(*v))
    oc.fail(ErrorKind::Unsupported, std::string(what) + " " + std::to_string(*v) +
                                        " is not integral; clamping an int32 tensor to it gives a float result, "
                                        "which needs a float32 output");
  double c = std::clamp(*v, -2147483648.0, 2147483647.0);
  return static_cast<int32_t>(c);
}

// Checks a unary call and reads its arguments: the op (gelu's mode may change it), the compute
// type `dt` (0 f32, 1 i32, 2 bool) and the uniform's argument fields.
Params unary_args(const OpContext& oc, UnaryOp& op, uint32_t& dt) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  VkDType it = g.tensor(x).dtype, ot = g.tensor(out).dtype;
  require_same_numel(oc, x, out);
  dt = 0;
  Params p;
  if (op == UnaryOp::Isinf || op == UnaryOp::Isnan) {
    if (!is_boolish(ot)) oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) + "; isinf/isnan produce bool");
    if (!is_float(it) && !is_int(it) && !is_boolish(it))
      oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(it));
    dt = is_float(it) ? 0 : 1;
  } else if (op == UnaryOp::Identity) {
    // _conj_physical of a real tensor: the same words (complex dtypes do not exist here).
    if (is_float(it) != is_float(ot) || is_int(it) != is_int(ot) || is_boolish(it) != is_boolish(ot))
      oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) + " differs from input dtype " +
                                          format::vk_dtype_name(it));
  } else if (op == UnaryOp::Sign && is_boolish(it)) {
    if (!is_boolish(ot)) oc.fail(ErrorKind::Unsupported, std::string("sign of a bool tensor into ") + format::vk_dtype_name(ot));
    dt = 2;
  } else if (op == UnaryOp::LogicalNot) {
    if (!is_boolish(ot)) oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) + "; logical_not produces bool");
    if (!is_float(it) && !is_int(it) && !is_boolish(it))
      oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(it));
    dt = is_float(it) ? 0 : 1;
  } else if (op == UnaryOp::BitwiseNot) {
    if (!is_int(it) && !is_boolish(it))
      oc.fail(ErrorKind::Unsupported, std::string("bitwise_not of a ") + format::vk_dtype_name(it) + " tensor (int or bool only)");
    if (is_int(it) != is_int(ot)) oc.fail(ErrorKind::Unsupported, "output dtype differs from input dtype");
    dt = is_int(it) ? 1 : 2;
  } else if (is_float(ot)) {
    if (!is_float(it) && !is_int(it) && !is_boolish(it))
      oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(it));
    if (!is_float(it) && int_ok(op))
      oc.fail(ErrorKind::Unsupported, std::string("int input with a ") + format::vk_dtype_name(ot) + " output");
  } else if (is_int(ot) && int_ok(op)) {
    if (!is_int(it)) oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(it) + " with an int output");
    dt = 1;
  } else {
    oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) +
                                        (int_ok(op) ? " (f32 or i32 only)" : " (float only)"));
  }

  // Op arguments (schema positions after self).
  if (op == UnaryOp::GeluErf) {
    std::string mode = g.is_null(oc.arg(1)) ? "none" : g.string(oc.arg(1));
    if (mode == "tanh") op = UnaryOp::GeluTanh;
    else if (mode != "none") oc.fail(ErrorKind::Unsupported, "gelu approximate='" + mode + "' (none or tanh)");
  } else if (op == UnaryOp::LeakyRelu) {
    double slope = oc.nargs() > 2 ? g.opt_number(oc.arg(1)).value_or(0.01) : 0.01;
    p.f0 = to_f32(slope);
  } else if (op == UnaryOp::Clamp) {
    // clamp: [self, min, max, out] (Null = unbounded); hardtanh: same positions, defaults -1/1.
    bool hardtanh = oc.call.name == "aten.hardtanh.default";
    std::optional<double> lo = g.opt_number(oc.arg(1)), hi = g.opt_number(oc.arg(2));
    if (hardtanh) {
      lo = lo.value_or(-1.0);
      hi = hi.value_or(1.0);
    } else if (!lo && !hi) {
      oc.fail(ErrorKind::InvalidArgument, "at least one of min and max must not be None");
    }
    if (dt == 1) {
      p.i0 = int_bound(oc, lo, std::numeric_limits<int32_t>::min(), "min");
      p.i1 = int_bound(oc, hi, std::numeric_limits<int32_t>::max(), "max");
    } else {
      p.f0 = lo ? to_f32(*lo) : -std::numeric_limits<float>::infinity();
      p.f1 = hi ? to_f32(*hi) : std::numeric_limits<float>::infinity();
    }
  } else if (op == UnaryOp::Logit) {
    // logit: [self, eps, out]; eps None (or negative, as in ATen) = no clamping. The bounds are
    // eps and 1 - eps computed in the tensor's dtype, as ATen does.
    std::optional<double> eps = g.opt_number(oc.arg(1));
    if (eps && *eps >= 0) {
      p.i0 = 1;
      p.f0 = to_f32(*eps);
      p.f1 = 1.0f - p.f0;
    }
  } else if (op == UnaryOp::Elu) {
    // elu: [self, alpha, scale, input_scale, out].
    p.f0 = to_f32(g.opt_number(oc.arg(1)).value_or(1.0));
    p.f1 = to_f32(g.opt_number(oc.arg(2)).value_or(1.0));
    p.f2 = to_f32(g.opt_number(oc.arg(3)).value_or(1.0));
  }
  return p;
}

void build_unary(OpContext& oc, UnaryOp op) {
  int32_t x = oc.arg(0), out = oc.out();
  uint32_t dt = 0;
  Params p = unary_args(oc, op, dt);
  oc.output_like(out, x);
  oc.add(kernel::Kernel("elementwise_unary")
             .prelude(unary_ops_wgsl())
             .constant("OP", code(op))
             .constant("DT", dt)
             .input("X", x)
             .output("Y", out)
             .params<Params>([p, out](const kernel::Live& l) {
               Params q = p;
               q.n = kernel::u32(l.numel(out), "element count");
               return q;
             })
             .flat(out));
}

template <UnaryOp OP>
void build(OpContext& oc) {
  build_unary(oc, OP);
}

// A float op of a float tensor, as a term of a fused elementwise kernel (graph/fusion.h).
template <UnaryOp OP>
std::optional<graph::FusedTerm> term(const OpContext& oc) {
  UnaryOp op = OP;
  uint32_t dt = 0;
  Params p = unary_args(oc, op, dt);
  if (dt != 0 || !is_unary_f32(code(op)) || !is_float(oc.g.tensor(oc.arg(0)).dtype) ||
      !is_float(oc.g.tensor(oc.out()).dtype))
    return std::nullopt;
  graph::FusedTerm t;
  t.op = code(op);
  t.x = oc.arg(0);
  t.c[0] = p.f0;
  t.c[1] = p.f1;
  t.c[2] = p.f2;
  t.c[3] = static_cast<float>(p.i0);
  return t;
}

#define ETW_UNARY(name, OP)          \
  ETW_REGISTER_OP(name, build<OP>);  \
  ETW_REGISTER_FUSABLE(name, term<OP>)

ETW_UNARY("aten.abs.default", UnaryOp::Abs);
ETW_UNARY("aten.neg.default", UnaryOp::Neg);
ETW_UNARY("aten.exp.default", UnaryOp::Exp);
ETW_UNARY("aten.sqrt.default", UnaryOp::Sqrt);
ETW_UNARY("aten.rsqrt.default", UnaryOp::Rsqrt);
ETW_UNARY("aten.sin.default", UnaryOp::Sin);
ETW_UNARY("aten.cos.default", UnaryOp::Cos);
ETW_UNARY("aten.tanh.default", UnaryOp::Tanh);
ETW_UNARY("aten.round.default", UnaryOp::Round);
ETW_UNARY("aten.sigmoid.default", UnaryOp::Sigmoid);
ETW_UNARY("aten.relu.default", UnaryOp::Relu);
ETW_UNARY("aten.gelu.default", UnaryOp::GeluErf);
ETW_UNARY("aten.silu.default", UnaryOp::Silu);
ETW_UNARY("aten.hardswish.default", UnaryOp::Hardswish);
ETW_UNARY("aten.hardtanh.default", UnaryOp::Clamp);
ETW_UNARY("aten.clamp.default", UnaryOp::Clamp);
ETW_UNARY("aten.leaky_relu.default", UnaryOp::LeakyRelu);
ETW_UNARY("aten.log.default", UnaryOp::Log);
ETW_UNARY("aten.reciprocal.default", UnaryOp::Reciprocal);
ETW_UNARY("aten.floor.default", UnaryOp::Floor);
ETW_UNARY("aten.ceil.default", UnaryOp::Ceil);
ETW_UNARY("aten.trunc.default", UnaryOp::Trunc);
ETW_UNARY("aten.bitwise_not.default", UnaryOp::BitwiseNot);
ETW_UNARY("aten.logical_not.default", UnaryOp::LogicalNot);
ETW_UNARY("aten.acos.default", UnaryOp::Acos);
ETW_UNARY("aten.acosh.default", UnaryOp::Acosh);
ETW_UNARY("aten.asin.default", UnaryOp::Asin);
ETW_UNARY("aten.asinh.default", UnaryOp::Asinh);
ETW_UNARY("aten.atan.default", UnaryOp::Atan);
ETW_UNARY("aten.atanh.default", UnaryOp::Atanh);
ETW_UNARY("aten.cosh.default", UnaryOp::Cosh);
ETW_UNARY("aten.sinh.default", UnaryOp::Sinh);
ETW_UNARY("aten.tan.default", UnaryOp::Tan);
ETW_UNARY("aten.erf.default", UnaryOp::Erf);
ETW_UNARY("aten.expm1.default", UnaryOp::Expm1);
ETW_UNARY("aten.log10.default", UnaryOp::Log10);
ETW_UNARY("aten.log1p.default", UnaryOp::Log1p);
ETW_UNARY("aten.log2.default", UnaryOp::Log2);
ETW_UNARY("aten.logit.default", UnaryOp::Logit);
ETW_UNARY("aten.elu.default", UnaryOp::Elu);
ETW_UNARY("aten.sign.default", UnaryOp::Sign);
ETW_UNARY("aten.isinf.default", UnaryOp::Isinf);
ETW_UNARY("aten.isnan.default", UnaryOp::Isnan);
ETW_UNARY("aten._conj_physical.default", UnaryOp::Identity);

}  // namespace
}  // namespace etwebgpu::ops
