// aten binary elementwise ops (arithmetic, comparison, logic) with PyTorch broadcasting.
// Routes (chosen per run from live shapes; force_route "binary" = "vec4" | "general" pins them
// where the vec4 kernel exists): float add/sub/mul/div whose operands are contiguous with the
// output's shape (or a scalar) and whose element count divides by 4 take
// elementwise_binary_vec4.wgsl (vec4 bindings, 4 vec4 per invocation); everything else takes the
// general broadcasting kernel binary.wgsl. Both compute the same f32 expressions.
#include <algorithm>
#include <cmath>

#include "graph/fusion.h"
#include "ops/elementwise/elementwise_ops.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Vec4Params {
  uint32_t n4 = 0;
  float alpha = 1.f, scalar = 0.f;
  uint32_t pad = 0;
};
constexpr uint32_t kVec4Per = 4;  // vec4 per invocation

struct Params {
  ShapeU o, a, b;
  float alpha = 1.f, scalar = 0.f;
  uint32_t contiguous = 0;
  int32_t iscalar = 0;  // the scalar operand of an integer op (exact past 2^24, unlike `scalar`)
};

// Layout of the serialized call: which args are self/other/alpha, whether other is a scalar.
struct Form {
  BinaryOp op;
  bool scalar_other = false;  // other is an Int/Double value, not a tensor
  int alpha_arg = -1;         // index of alpha, if any
  bool mode_arg = false;      // div.Tensor_mode: args[2] is the rounding mode
  bool scalar_first = false;  // pow.Scalar: args[0] is the scalar, args[1] the tensor
};

// A binary call's operands and arguments, checked.
struct Args {
  int32_t a, b, out;
  BinaryOp op;
  bool cmp, a_float, b_float, compute_float;
  double alpha, scalar;
  int32_t iscalar;
};

Args binary_args(const OpContext& oc, Form f) {
  Graph& g = oc.g;
  int32_t a = oc.arg(0), b = oc.arg(1), out = oc.out();
  if (f.scalar_first) std::swap(a, b);
  BinaryOp op = f.op;
  if (f.mode_arg) {
    int32_t m = oc.arg(2);
    if (!g.is_null(m)) {
      std::string mode = g.string(m);
      if (mode == "trunc") op = BinaryOp::DivTrunc;
      else if (mode == "floor") op = BinaryOp::DivFloor;
      else oc.fail(ErrorKind::Unsupported, "rounding_mode '" + mode + "'");
    }
  }
  Tensor& ta = g.tensor(a);
  Tensor& to = g.tensor(out);
  bool cmp = is_comparison(op);
  bool a_float = is_float(ta.dtype);
  bool b_float = f.scalar_other ? (g.kind(b) == format::VkValueKind::Double) : is_float(g.tensor(b).dtype);
  bool out_float = is_float(to.dtype);
  if (!cmp && !out_float && !is_int(to.dtype) && !is_boolish(to.dtype))
    oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(to.dtype));
  if (cmp && !is_boolish(to.dtype)) oc.fail(ErrorKind::Unsupported, "comparison output must be bool");
  // Compute in f32 if anything is floating point (PyTorch promotion), else in i32.
  bool compute_float = cmp ? (a_float || b_float) : out_float;
  if (!compute_float &&
      (op == BinaryOp::Div || op == BinaryOp::Pow || op == BinaryOp::PowScalarBase || op == BinaryOp::Atan2))
    oc.fail(ErrorKind::Unsupported, "integer true division / pow / atan2 must produce a float output");
  if (compute_float && (op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor))
    oc.fail(ErrorKind::Unsupported, "bitwise op on floats");
  if (!compute_float && !cmp && (a_float || b_float))
    oc.fail(ErrorKind::Unsupported, "float operands with an integer output");
  double alpha = f.alpha_arg >= 0 ? g.number(oc.arg(f.alpha_arg)) : 1.0;
  double scalar = f.scalar_other ? g.number(b) : 0.0;
  if (f.scalar_other && !compute_float && !cmp && scalar != std::trunc(scalar))
    oc.fail(ErrorKind::Unsupported, "fractional scalar " + std::to_string(scalar) + " with an integer output");
  // Integer scalars saturate to the int32 range (tensors are int32 words on the GPU).
  int32_t iscalar = static_cast<int32_t>(std::clamp(std::isnan(scalar) ? 0.0 : scalar, -2147483648.0, 2147483647.0));
  return Args{a, b, out, op, cmp, a_float, b_float, compute_float, alpha, scalar, iscalar};
}

void build_binary(OpContext& oc, Form f) {
  Graph& g = oc.g;
  const Args r = binary_args(oc, f);
  const int32_t a = r.a, b = r.b, out = r.out, iscalar = r.iscalar;
  const BinaryOp op = r.op;
  const bool cmp = r.cmp, a_float = r.a_float, b_float = r.b_float, compute_float = r.compute_float;
  const double alpha = r.alpha, scalar = r.scalar;

  oc.output(out, [a, b, scalar_other = f.scalar_other](const kernel::Live& l) {
    return broadcast_shape(l.dims(a), scalar_other ? std::vector<int64_t>{} : l.dims(b));
  });
  // Whether no operand broadcasts this run: every offset is the flat index.
  auto contiguous = [a, b, out, scalar_other = f.scalar_other](const kernel::Live& l) {
    return l.dims(a) == l.dims(out) && (scalar_other || l.dims(b) == l.dims(out));
  };
  float falpha = static_cast<float>(alpha), fscalar = static_cast<float>(scalar);
  int32_t bt = f.scalar_other ? -1 : b;  // a scalar operand binds the dummy

  // vec4 fast path: float arithmetic without int->float promotion of an operand.
  const std::string forced = pinned_route(oc, "binary", {"vec4", "general"});
  // A vec4 binding needs the buffer to hold one whole vec4 of its storage type.
  auto holds_vec4 = [&g](int32_t id) {
    const Tensor& t = g.tensor(id);
    return t.bytes(t.max_numel()) >= 4 * kernel::element_bytes(t.storage);
  };
  bool vec4_ok = compute_float && !cmp &&
                 (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div) && a_float &&
                 (f.scalar_other || b_float) && forced != "general" && holds_vec4(a) && holds_vec4(out) &&
                 (f.scalar_other || holds_vec4(b));
  auto use_vec4 = [vec4_ok, contiguous, out](const kernel::Live& l) {
    return vec4_ok && contiguous(l) && l.numel(out) % 4 == 0;
  };

  oc.add(kernel::Kernel("binary")
             .prelude(binary_ops_wgsl())
             .constant("OP", code(op))
             .constant("DT", compute_float ? 0.0 : 1.0)
             .constant("B_SCALAR", f.scalar_other ? 1.0 : 0.0)
             .input("A", a)
             .input("B", bt)
             .output("Y", out)
             .params<Params>([a, b, out, contiguous, falpha, fscalar, iscalar, scalar_other = f.scalar_other](const kernel::Live& l) {
               const auto& od = l.dims(out);
               std::vector<int64_t> bd = scalar_other ? std::vector<int64_t>{} : l.dims(b);
               Params p;
               p.o = make_shape(od);
               auto sa = broadcast_strides(l.dims(a), od);
               p.a = make_shape(od, &sa);
               auto sb = broadcast_strides(bd, od);
               p.b = make_shape(od, &sb);
               p.alpha = falpha;
               p.scalar = fscalar;
               p.iscalar = iscalar;
               p.contiguous = contiguous(l) ? 1u : 0u;
               return p;
             })
             .flat(out)
             .when([use_vec4](const kernel::Live& l) { return !use_vec4(l); })
             .variant(f.scalar_other ? "scalar" : "tensor"));
  if (vec4_ok)
    oc.add(kernel::Kernel("elementwise_binary_vec4")
               .prelude(binary_op_codes_wgsl())
               .constant("OP", code(op))
               .constant("B_SCALAR", f.scalar_other ? 1.0 : 0.0)
               .constant("PER", kVec4Per)
               .input("A", a, true)
               .input("B", bt, true)
               .output("Y", out, true)
               .params<Vec4Params>([out, falpha, fscalar](const kernel::Live& l) {
                 return Vec4Params{kernel::u32(l.numel(out) / 4, "vec4 count"), falpha, fscalar, 0};
               })
               .flat(out, 4 * kVec4Per)
               .when(use_vec4)
               .variant("vec4"));
}

template <BinaryOp OP, bool SCALAR = false, int ALPHA = -1, bool MODE = false, bool SCALAR_FIRST = false>
void build(OpContext& oc) {
  build_binary(oc, Form{OP, SCALAR, ALPHA, MODE, SCALAR_FIRST});
}

// Float arithmetic of float operands, as a term of a fused elementwise kernel (graph/fusion.h).
template <BinaryOp OP, bool SCALAR = false, int ALPHA = -1, bool MODE = false, bool SCALAR_FIRST = false>
std::optional<graph::FusedTerm> term(const OpContext& oc) {
  Args r = binary_args(oc, Form{OP, SCALAR, ALPHA, MODE, SCALAR_FIRST});
  if (r.cmp || !r.compute_float || !r.a_float || (!SCALAR && !r.b_float) || !is_float(oc.g.tensor(r.out).dtype)) return std::nullopt;
  graph::FusedTerm t;
  t.binary = true;
  t.op = code(r.op);
  t.x = r.a;
  t.y = SCALAR ? -1 : r.b;
  t.c[0] = static_cast<float>(r.alpha);
  t.c[1] = static_cast<float>(r.scalar);
  return t;
}

ETW_REGISTER_OP("aten.add.Tensor", (build<BinaryOp::Add, false, 2>));
ETW_REGISTER_FUSABLE("aten.add.Tensor", (term<BinaryOp::Add, false, 2>));
ETW_REGISTER_OP("aten.sub.Tensor", (build<BinaryOp::Sub, false, 2>));
ETW_REGISTER_FUSABLE("aten.sub.Tensor", (term<BinaryOp::Sub, false, 2>));
ETW_REGISTER_OP("aten.add.Scalar", (build<BinaryOp::Add, true, 2>));
ETW_REGISTER_FUSABLE("aten.add.Scalar", (term<BinaryOp::Add, true, 2>));
ETW_REGISTER_OP("aten.sub.Scalar", (build<BinaryOp::Sub, true, 2>));
ETW_REGISTER_FUSABLE("aten.sub.Scalar", (term<BinaryOp::Sub, true, 2>));
ETW_REGISTER_OP("aten.mul.Tensor", build<BinaryOp::Mul>);
ETW_REGISTER_FUSABLE("aten.mul.Tensor", term<BinaryOp::Mul>);
ETW_REGISTER_OP("aten.mul.Scalar", (build<BinaryOp::Mul, true>));
ETW_REGISTER_FUSABLE("aten.mul.Scalar", (term<BinaryOp::Mul, true>));
ETW_REGISTER_OP("aten.div.Tensor", build<BinaryOp::Div>);
ETW_REGISTER_FUSABLE("aten.div.Tensor", term<BinaryOp::Div>);
ETW_REGISTER_OP("aten.div.Scalar", (build<BinaryOp::Div, true>));
ETW_REGISTER_FUSABLE("aten.div.Scalar", (term<BinaryOp::Div, true>));
ETW_REGISTER_OP("aten.div.Tensor_mode", (build<BinaryOp::Div, false, -1, true>));
ETW_REGISTER_FUSABLE("aten.div.Tensor_mode", (term<BinaryOp::Div, false, -1, true>));
ETW_REGISTER_OP("aten.pow.Tensor_Tensor", build<BinaryOp::Pow>);
ETW_REGISTER_FUSABLE("aten.pow.Tensor_Tensor", term<BinaryOp::Pow>);
ETW_REGISTER_OP("aten.pow.Tensor_Scalar", (build<BinaryOp::Pow, true>));
ETW_REGISTER_FUSABLE("aten.pow.Tensor_Scalar", (term<BinaryOp::Pow, true>));
ETW_REGISTER_OP("aten.minimum.default", build<BinaryOp::Min>);
ETW_REGISTER_FUSABLE("aten.minimum.default", term<BinaryOp::Min>);
ETW_REGISTER_OP("aten.maximum.default", build<BinaryOp::Max>);
ETW_REGISTER_FUSABLE("aten.maximum.default", term<BinaryOp::Max>);
ETW_REGISTER_OP("aten.eq.Tensor", build<BinaryOp::Eq>);
ETW_REGISTER_OP("aten.ne.Tensor", build<BinaryOp::Ne>);
ETW_REGISTER_OP("aten.lt.Tensor", build<BinaryOp::Lt>);
ETW_REGISTER_OP("aten.le.Tensor", build<BinaryOp::Le>);
ETW_REGISTER_OP("aten.gt.Tensor", build<BinaryOp::Gt>);
ETW_REGISTER_OP("aten.ge.Tensor", build<BinaryOp::Ge>);
ETW_REGISTER_OP("aten.eq.Scalar", (build<BinaryOp::Eq, true>));
ETW_REGISTER_OP("aten.ne.Scalar", (build<BinaryOp::Ne, true>));
ETW_REGISTER_OP("aten.lt.Scalar", (build<BinaryOp::Lt, true>));
ETW_REGISTER_OP("aten.le.Scalar", (build<BinaryOp::Le, true>));
ETW_REGISTER_OP("aten.gt.Scalar", (build<BinaryOp::Gt, true>));
ETW_REGISTER_OP("aten.ge.Scalar", (build<BinaryOp::Ge, true>));
ETW_REGISTER_OP("aten.logical_and.default", build<BinaryOp::LogicalAnd>);
ETW_REGISTER_OP("aten.logical_or.default", build<BinaryOp::LogicalOr>);
ETW_REGISTER_OP("aten.bitwise_and.Tensor", build<BinaryOp::BitAnd>);
ETW_REGISTER_OP("aten.bitwise_or.Tensor", build<BinaryOp::BitOr>);
ETW_REGISTER_OP("aten.bitwise_xor.Tensor", build<BinaryOp::BitXor>);
ETW_REGISTER_OP("aten.logical_xor.default", build<BinaryOp::LogicalXor>);
ETW_REGISTER_OP("aten.atan2.default", build<BinaryOp::Atan2>);
ETW_REGISTER_FUSABLE("aten.atan2.default", term<BinaryOp::Atan2>);
ETW_REGISTER_OP("aten.fmod.Tensor", build<BinaryOp::Fmod>);
ETW_REGISTER_FUSABLE("aten.fmod.Tensor", term<BinaryOp::Fmod>);
ETW_REGISTER_OP("aten.fmod.Scalar", (build<BinaryOp::Fmod, true>));
ETW_REGISTER_FUSABLE("aten.fmod.Scalar", (term<BinaryOp::Fmod, true>));
ETW_REGISTER_OP("aten.remainder.Tensor", build<BinaryOp::Remainder>);
ETW_REGISTER_FUSABLE("aten.remainder.Tensor", term<BinaryOp::Remainder>);
ETW_REGISTER_OP("aten.remainder.Scalar", (build<BinaryOp::Remainder, true>));
ETW_REGISTER_FUSABLE("aten.remainder.Scalar", (term<BinaryOp::Remainder, true>));
ETW_REGISTER_OP("aten.floor_divide.default", build<BinaryOp::DivFloor>);
ETW_REGISTER_FUSABLE("aten.floor_divide.default", term<BinaryOp::DivFloor>);
ETW_REGISTER_OP("aten.div.Scalar_mode", (build<BinaryOp::Div, true, -1, true>));
ETW_REGISTER_FUSABLE("aten.div.Scalar_mode", (term<BinaryOp::Div, true, -1, true>));
ETW_REGISTER_OP("aten.pow.Scalar", (build<BinaryOp::PowScalarBase, true, -1, false, true>));
ETW_REGISTER_FUSABLE("aten.pow.Scalar", (term<BinaryOp::PowScalarBase, true, -1, false, true>));
ETW_REGISTER_OP("aten.rsub.Scalar", (build<BinaryOp::Rsub, true, 2>));
ETW_REGISTER_FUSABLE("aten.rsub.Scalar", (term<BinaryOp::Rsub, true, 2>));
ETW_REGISTER_OP("aten.bitwise_and.Scalar", (build<BinaryOp::BitAnd, true>));
ETW_REGISTER_OP("aten.bitwise_or.Scalar", (build<BinaryOp::BitOr, true>));
ETW_REGISTER_OP("aten.bitwise_xor.Scalar", (build<BinaryOp::BitXor, true>));

}  // namespace
}  // namespace etwebgpu::ops
