// aten unary elementwise ops (math, trig/hyperbolic, activations, clamp family, bitwise/logical not,
// sign, isinf/isnan, identity copies).
// One flat kernel (elementwise_unary.wgsl) with the op as an override constant.
#include <cmath>
#include <limits>

#include "graph/fusion.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

enum UnOp : uint32_t {
  kAbs = 0, kNeg = 1, kExp = 2, kSqrt = 3, kRsqrt = 4, kSin = 5, kCos = 6, kTanh = 7, kRound = 8,
  kSigmoid = 9, kRelu = 10, kGeluErf = 11, kGeluTanh = 12, kSilu = 13, kHardswish = 14, kClamp = 15,
  kLeakyRelu = 16, kLog = 17, kReciprocal = 18, kFloor = 19, kCeil = 20, kTrunc = 21,
  kBitwiseNot = 30, kLogicalNot = 31,
  kAcos = 40, kAcosh = 41, kAsin = 42, kAsinh = 43, kAtan = 44, kAtanh = 45, kCosh = 46, kSinh = 47, kTan = 48,
  kErf = 49, kExpm1 = 50, kLog10 = 51, kLog1p = 52, kLog2 = 53, kLogit = 54, kElu = 55, kSign = 56,
  kIsinf = 60, kIsnan = 61, kIdentity = 62,
};

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
bool int_ok(UnOp op) {
  return op == kAbs || op == kNeg || op == kRelu || op == kClamp || op == kBitwiseNot || op == kSign;
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
Params unary_args(const OpContext& oc, UnOp& op, uint32_t& dt) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  VkDType it = g.tensor(x).dtype, ot = g.tensor(out).dtype;
  require_same_numel(oc, x, out);
  dt = 0;
  Params p;
  if (op == kIsinf || op == kIsnan) {
    if (!is_boolish(ot)) oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) + "; isinf/isnan produce bool");
    if (!is_float(it) && !is_int(it) && !is_boolish(it))
      oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(it));
    dt = is_float(it) ? 0 : 1;
  } else if (op == kIdentity) {
    // _conj_physical of a real tensor: the same words (complex dtypes do not exist here).
    if (is_float(it) != is_float(ot) || is_int(it) != is_int(ot) || is_boolish(it) != is_boolish(ot))
      oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) + " differs from input dtype " +
                                          format::vk_dtype_name(it));
  } else if (op == kSign && is_boolish(it)) {
    if (!is_boolish(ot)) oc.fail(ErrorKind::Unsupported, std::string("sign of a bool tensor into ") + format::vk_dtype_name(ot));
    dt = 2;
  } else if (op == kLogicalNot) {
    if (!is_boolish(ot)) oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(ot) + "; logical_not produces bool");
    if (!is_float(it) && !is_int(it) && !is_boolish(it))
      oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(it));
    dt = is_float(it) ? 0 : 1;
  } else if (op == kBitwiseNot) {
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
  if (op == kGeluErf) {
    std::string mode = g.is_null(oc.arg(1)) ? "none" : g.string(oc.arg(1));
    if (mode == "tanh") op = kGeluTanh;
    else if (mode != "none") oc.fail(ErrorKind::Unsupported, "gelu approximate='" + mode + "' (none or tanh)");
  } else if (op == kLeakyRelu) {
    double slope = oc.nargs() > 2 ? g.opt_number(oc.arg(1)).value_or(0.01) : 0.01;
    p.f0 = to_f32(slope);
  } else if (op == kClamp) {
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
  } else if (op == kLogit) {
    // logit: [self, eps, out]; eps None (or negative, as in ATen) = no clamping. The bounds are
    // eps and 1 - eps computed in the tensor's dtype, as ATen does.
    std::optional<double> eps = g.opt_number(oc.arg(1));
    if (eps && *eps >= 0) {
      p.i0 = 1;
      p.f0 = to_f32(*eps);
      p.f1 = 1.0f - p.f0;
    }
  } else if (op == kElu) {
    // elu: [self, alpha, scale, input_scale, out].
    p.f0 = to_f32(g.opt_number(oc.arg(1)).value_or(1.0));
    p.f1 = to_f32(g.opt_number(oc.arg(2)).value_or(1.0));
    p.f2 = to_f32(g.opt_number(oc.arg(3)).value_or(1.0));
  }
  return p;
}

void build_unary(OpContext& oc, UnOp op) {
  int32_t x = oc.arg(0), out = oc.out();
  uint32_t dt = 0;
  Params p = unary_args(oc, op, dt);
  oc.output_like(out, x);
  oc.add(kernel::Kernel("elementwise_unary")
             .constant("OP", op)
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

template <UnOp OP>
void build(OpContext& oc) {
  build_unary(oc, OP);
}

// A float op of a float tensor, as a term of a fused elementwise kernel (graph/fusion.h).
template <UnOp OP>
std::optional<graph::FusedTerm> term(const OpContext& oc) {
  UnOp op = OP;
  uint32_t dt = 0;
  Params p = unary_args(oc, op, dt);
  if (dt != 0 || op == kIsinf || op == kIsnan || op == kIdentity || op == kLogicalNot || op == kBitwiseNot ||
      !is_float(oc.g.tensor(oc.arg(0)).dtype) || !is_float(oc.g.tensor(oc.out()).dtype))
    return std::nullopt;
  graph::FusedTerm t;
  t.op = op;
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

ETW_UNARY("aten.abs.default", kAbs);
ETW_UNARY("aten.neg.default", kNeg);
ETW_UNARY("aten.exp.default", kExp);
ETW_UNARY("aten.sqrt.default", kSqrt);
ETW_UNARY("aten.rsqrt.default", kRsqrt);
ETW_UNARY("aten.sin.default", kSin);
ETW_UNARY("aten.cos.default", kCos);
ETW_UNARY("aten.tanh.default", kTanh);
ETW_UNARY("aten.round.default", kRound);
ETW_UNARY("aten.sigmoid.default", kSigmoid);
ETW_UNARY("aten.relu.default", kRelu);
ETW_UNARY("aten.gelu.default", kGeluErf);
ETW_UNARY("aten.silu.default", kSilu);
ETW_UNARY("aten.hardswish.default", kHardswish);
ETW_UNARY("aten.hardtanh.default", kClamp);
ETW_UNARY("aten.clamp.default", kClamp);
ETW_UNARY("aten.leaky_relu.default", kLeakyRelu);
ETW_UNARY("aten.log.default", kLog);
ETW_UNARY("aten.reciprocal.default", kReciprocal);
ETW_UNARY("aten.floor.default", kFloor);
ETW_UNARY("aten.ceil.default", kCeil);
ETW_UNARY("aten.trunc.default", kTrunc);
ETW_UNARY("aten.bitwise_not.default", kBitwiseNot);
ETW_UNARY("aten.logical_not.default", kLogicalNot);
ETW_UNARY("aten.acos.default", kAcos);
ETW_UNARY("aten.acosh.default", kAcosh);
ETW_UNARY("aten.asin.default", kAsin);
ETW_UNARY("aten.asinh.default", kAsinh);
ETW_UNARY("aten.atan.default", kAtan);
ETW_UNARY("aten.atanh.default", kAtanh);
ETW_UNARY("aten.cosh.default", kCosh);
ETW_UNARY("aten.sinh.default", kSinh);
ETW_UNARY("aten.tan.default", kTan);
ETW_UNARY("aten.erf.default", kErf);
ETW_UNARY("aten.expm1.default", kExpm1);
ETW_UNARY("aten.log10.default", kLog10);
ETW_UNARY("aten.log1p.default", kLog1p);
ETW_UNARY("aten.log2.default", kLog2);
ETW_UNARY("aten.logit.default", kLogit);
ETW_UNARY("aten.elu.default", kElu);
ETW_UNARY("aten.sign.default", kSign);
ETW_UNARY("aten.isinf.default", kIsinf);
ETW_UNARY("aten.isnan.default", kIsnan);
ETW_UNARY("aten._conj_physical.default", kIdentity);

}  // namespace
}  // namespace etwebgpu::ops
