// aten unary elementwise ops (math, activations, clamp family, bitwise/logical not).
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
};

struct Params {
  uint32_t n = 0;
  int32_t i0 = 0, i1 = 0;
  uint32_t pad = 0;
  float f0 = 0.f, f1 = 0.f;
  uint32_t pad2[2] = {0, 0};
};
static_assert(sizeof(Params) == 32);

// Which input dtypes an op takes besides float (float ops also take int/bool inputs when the
// output is float: PyTorch promotes them).
bool int_ok(UnOp op) { return op == kAbs || op == kNeg || op == kRelu || op == kClamp || op == kBitwiseNot; }

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
  uint32_t dt = 0, in_int = 0;
  Params p;
  if (op == kLogicalNot) {
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
    in_int = is_float(it) ? 0 : 1;
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
  }

  gpu::Constants c{{"OP", double(op)}, {"DT", double(dt)}, {"IN_INT", double(in_int)}};
  const auto& pipe = g.ctx().pipeline("elementwise_unary", "main", c);
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(x)}, {1, &g.buffer(out)}, {2, u->buf}}, 0));
  Step* s = &oc.node.steps.back();
  std::string name = oc.call.name;
  oc.node.resize = [&g, x, out, u, s, p, name] {
    Tensor& to = g.tensor(out);
    const auto& d = g.tensor(x).dims;
    if (numel(d) > to.max_numel())
      throw Error(ErrorKind::InvalidArgument, name + ": output " + shape_str(d) + " exceeds its bound " + shape_str(to.max_dims));
    to.dims = d;
    Params q = p;
    q.n = static_cast<uint32_t>(to.numel());
    u->write(g, q);
    set_groups(g, *s, groups_for(to.numel()));
  };
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

}  // namespace
}  // namespace etwebgpu::ops
