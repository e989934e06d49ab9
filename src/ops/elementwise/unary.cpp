// aten unary elementwise ops (math, trig/hyperbolic, activations, clamp family, bitwise/logical not,
// sign, isinf/isnan, identity copies).
// One flat kernel (elementwise_unary.wgsl) with the op as an override constant.
#include <cmath>
#include <limits>

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

void build_unary(OpContext& oc, UnOp op) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  VkDType it = g.tensor(x).dtype, ot = g.tensor(out).dtype;
  require_same_numel(oc, x, out);
  uint32_t dt = 0;
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

ETW_REGISTER_OP("aten.abs.default", build<kAbs>);
ETW_REGISTER_OP("aten.neg.default", build<kNeg>);
ETW_REGISTER_OP("aten.exp.default", build<kExp>);
ETW_REGISTER_OP("aten.sqrt.default", build<kSqrt>);
ETW_REGISTER_OP("aten.rsqrt.default", build<kRsqrt>);
ETW_REGISTER_OP("aten.sin.default", build<kSin>);
ETW_REGISTER_OP("aten.cos.default", build<kCos>);
ETW_REGISTER_OP("aten.tanh.default", build<kTanh>);
ETW_REGISTER_OP("aten.round.default", build<kRound>);
ETW_REGISTER_OP("aten.sigmoid.default", build<kSigmoid>);
ETW_REGISTER_OP("aten.relu.default", build<kRelu>);
ETW_REGISTER_OP("aten.gelu.default", build<kGeluErf>);
ETW_REGISTER_OP("aten.silu.default", build<kSilu>);
ETW_REGISTER_OP("aten.hardswish.default", build<kHardswish>);
ETW_REGISTER_OP("aten.hardtanh.default", build<kClamp>);
ETW_REGISTER_OP("aten.clamp.default", build<kClamp>);
ETW_REGISTER_OP("aten.leaky_relu.default", build<kLeakyRelu>);
ETW_REGISTER_OP("aten.log.default", build<kLog>);
ETW_REGISTER_OP("aten.reciprocal.default", build<kReciprocal>);
ETW_REGISTER_OP("aten.floor.default", build<kFloor>);
ETW_REGISTER_OP("aten.ceil.default", build<kCeil>);
ETW_REGISTER_OP("aten.trunc.default", build<kTrunc>);
ETW_REGISTER_OP("aten.bitwise_not.default", build<kBitwiseNot>);
ETW_REGISTER_OP("aten.logical_not.default", build<kLogicalNot>);
ETW_REGISTER_OP("aten.acos.default", build<kAcos>);
ETW_REGISTER_OP("aten.acosh.default", build<kAcosh>);
ETW_REGISTER_OP("aten.asin.default", build<kAsin>);
ETW_REGISTER_OP("aten.asinh.default", build<kAsinh>);
ETW_REGISTER_OP("aten.atan.default", build<kAtan>);
ETW_REGISTER_OP("aten.atanh.default", build<kAtanh>);
ETW_REGISTER_OP("aten.cosh.default", build<kCosh>);
ETW_REGISTER_OP("aten.sinh.default", build<kSinh>);
ETW_REGISTER_OP("aten.tan.default", build<kTan>);
ETW_REGISTER_OP("aten.erf.default", build<kErf>);
ETW_REGISTER_OP("aten.expm1.default", build<kExpm1>);
ETW_REGISTER_OP("aten.log10.default", build<kLog10>);
ETW_REGISTER_OP("aten.log1p.default", build<kLog1p>);
ETW_REGISTER_OP("aten.log2.default", build<kLog2>);
ETW_REGISTER_OP("aten.logit.default", build<kLogit>);
ETW_REGISTER_OP("aten.elu.default", build<kElu>);
ETW_REGISTER_OP("aten.sign.default", build<kSign>);
ETW_REGISTER_OP("aten.isinf.default", build<kIsinf>);
ETW_REGISTER_OP("aten.isnan.default", build<kIsnan>);
ETW_REGISTER_OP("aten._conj_physical.default", build<kIdentity>);

}  // namespace
}  // namespace etwebgpu::ops
