// aten binary elementwise ops (arithmetic, comparison, logic) with PyTorch broadcasting.
// Routes (chosen per run from live shapes; force_route "binary" = "vec4" | "general" pins them
// where the vec4 kernel exists): float add/sub/mul/div whose operands are contiguous with the
// output's shape (or a scalar) and whose element count divides by 4 take
// elementwise_binary_vec4.wgsl (array<vec4<f32>>, 4 vec4 per invocation); everything else takes
// the general broadcasting kernel binary.wgsl. Both compute the same f32 expressions.
#include <algorithm>
#include <cmath>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using graph::Node;

enum BinOp : uint32_t {
  kAdd = 0, kSub = 1, kMul = 2, kDiv = 3, kDivTrunc = 4, kDivFloor = 5, kPow = 6, kMin = 7, kMax = 8,
  kEq = 10, kNe = 11, kLt = 12, kLe = 13, kGt = 14, kGe = 15, kLogicalXor = 16, kLogicalAnd = 20, kLogicalOr = 21,
  kBitAnd = 22, kBitOr = 23, kBitXor = 24, kAtan2 = 9, kFmod = 25, kRemainder = 26, kRsub = 27,
  kPowScalarBase = 28,
};

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
  BinOp op;
  bool scalar_other = false;  // other is an Int/Double value, not a tensor
  int alpha_arg = -1;         // index of alpha, if any
  bool mode_arg = false;      // div.Tensor_mode: args[2] is the rounding mode
  bool scalar_first = false;  // pow.Scalar: args[0] is the scalar, args[1] the tensor
};

void build_binary(OpContext& oc, Form f) {
  Graph& g = oc.g;
  int32_t a = oc.arg(0), b = oc.arg(1), out = oc.out();
  if (f.scalar_first) std::swap(a, b);
  BinOp op = f.op;
  if (f.mode_arg) {
    int32_t m = oc.arg(2);
    if (!g.is_null(m)) {
      std::string mode = g.string(m);
      if (mode == "trunc") op = kDivTrunc;
      else if (mode == "floor") op = kDivFloor;
      else oc.fail(ErrorKind::Unsupported, "rounding_mode '" + mode + "'");
    }
  }
  Tensor& ta = g.tensor(a);
  Tensor& to = g.tensor(out);
  bool cmp = op >= kEq && op <= kLogicalOr;
  bool a_float = is_float(ta.dtype);
  bool b_float = f.scalar_other ? (g.kind(b) == format::VkValueKind::Double) : is_float(g.tensor(b).dtype);
  bool out_float = is_float(to.dtype);
  if (!cmp && !out_float && !is_int(to.dtype) && !is_boolish(to.dtype))
    oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(to.dtype));
  if (cmp && !is_boolish(to.dtype)) oc.fail(ErrorKind::Unsupported, "comparison output must be bool");
  // Compute in f32 if anything is floating point (PyTorch promotion), else in i32.
  bool compute_float = cmp ? (a_float || b_float) : out_float;
  if (!compute_float && (op == kDiv || op == kPow || op == kPowScalarBase || op == kAtan2))
    oc.fail(ErrorKind::Unsupported, "integer true division / pow / atan2 must produce a float output");
  if (compute_float && (op == kBitAnd || op == kBitOr || op == kBitXor)) oc.fail(ErrorKind::Unsupported, "bitwise op on floats");
  if (!compute_float && !cmp && (a_float || b_float))
    oc.fail(ErrorKind::Unsupported, "float operands with an integer output");
  double alpha = f.alpha_arg >= 0 ? g.number(oc.arg(f.alpha_arg)) : 1.0;
  double scalar = f.scalar_other ? g.number(b) : 0.0;
  if (f.scalar_other && !compute_float && !cmp && scalar != std::trunc(scalar))
    oc.fail(ErrorKind::Unsupported, "fractional scalar " + std::to_string(scalar) + " with an integer output");
  // Integer scalars saturate to the int32 range (tensors are int32 words on the GPU).
  int32_t iscalar = static_cast<int32_t>(std::clamp(std::isnan(scalar) ? 0.0 : scalar, -2147483648.0, 2147483647.0));

  gpu::Constants c{{"OP", op}, {"DT", compute_float ? 0.0 : 1.0}, {"B_SCALAR", f.scalar_other ? 1.0 : 0.0},
                   {"A_INT", compute_float && !a_float ? 1.0 : 0.0},
                   {"B_INT", compute_float && !f.scalar_other && !b_float ? 1.0 : 0.0}};
  const auto& pipe = g.ctx().pipeline("binary", "main", c);
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  const gpu::Buffer& bb = f.scalar_other ? g.dummy_buffer() : g.buffer(b);
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(a)}, {1, &bb}, {2, &g.buffer(out)}, {3, u->buf}}, 0,
                                      f.scalar_other ? "scalar" : "tensor"));
  size_t general = oc.node.steps.size() - 1;
  // vec4 fast path: float arithmetic without int->float promotion of an operand.
  std::string forced;
  if (auto it = g.options().force_route.find("binary"); it != g.options().force_route.end()) forced = it->second;
  if (!forced.empty() && forced != "vec4" && forced != "general")
    oc.fail(ErrorKind::InvalidArgument, "force_route binary must be \"vec4\" or \"general\", got \"" + forced + "\"");
  bool vec4_ok = compute_float && !cmp && (op == kAdd || op == kSub || op == kMul || op == kDiv) && a_float &&
                 (f.scalar_other || b_float) && forced != "general" &&
                 // vec4 bindings need 16 bytes: only when the maximum shapes hold at least a vec4
                 ta.max_numel() >= 4 && to.max_numel() >= 4 && (f.scalar_other || g.tensor(b).max_numel() >= 4);
  std::shared_ptr<Uniform<Vec4Params>> u4;
  size_t fast = SIZE_MAX;
  if (vec4_ok) {
    const auto& p4 = g.ctx().pipeline("elementwise_binary_vec4", "main",
                                      {{"OP", op}, {"B_SCALAR", f.scalar_other ? 1.0 : 0.0}, {"PER", kVec4Per}});
    u4 = std::make_shared<Uniform<Vec4Params>>();
    u4->init(g, oc.call.name + ".vec4");
    fast = oc.node.steps.size();
    oc.node.steps.push_back(
        g.make_step(p4, {{0, &g.buffer(a)}, {1, &bb}, {2, &g.buffer(out)}, {3, u4->buf}}, 0, "vec4"));
  }
  Node* node = &oc.node;
  bool scalar_other = f.scalar_other;
  oc.node.resize = [&g, a, b, out, u, u4, node, general, fast, alpha, scalar, iscalar, scalar_other, &oc_call = oc.call] {
    Step* step = &node->steps[general];
    Tensor& ta = g.tensor(a);
    std::vector<int64_t> bd = scalar_other ? std::vector<int64_t>{} : g.tensor(b).dims;
    std::vector<int64_t> od = broadcast_shape(ta.dims, bd);
    Tensor& to = g.tensor(out);
    if (numel(od) > to.max_numel())
      throw Error(ErrorKind::InvalidArgument, oc_call.name + ": output " + shape_str(od) + " exceeds its bound " +
                                                  shape_str(to.max_dims));
    to.dims = od;
    Params p;
    p.o = make_shape(od);
    auto sa = broadcast_strides(ta.dims, od);
    p.a = make_shape(od, &sa);
    auto sb = broadcast_strides(bd, od);
    p.b = make_shape(od, &sb);
    p.alpha = static_cast<float>(alpha);
    p.scalar = static_cast<float>(scalar);
    p.iscalar = iscalar;
    p.contiguous = (ta.dims == od && (scalar_other || bd == od)) ? 1u : 0u;
    u->write(g, p);
    bool use_vec4 = fast != SIZE_MAX && p.contiguous && numel(od) % 4 == 0;
    set_groups(g, *step, use_vec4 ? 0 : groups_for(numel(od)));
    if (fast != SIZE_MAX) {
      uint64_t n4 = static_cast<uint64_t>(numel(od)) / 4;
      if (use_vec4) u4->write(g, Vec4Params{static_cast<uint32_t>(n4), p.alpha, p.scalar, 0});
      set_groups(g, node->steps[fast], use_vec4 ? groups_for(n4, kWorkgroupSize * kVec4Per) : 0);
    }
  };
}

template <BinOp OP, bool SCALAR = false, int ALPHA = -1, bool MODE = false, bool SCALAR_FIRST = false>
void build(OpContext& oc) {
  build_binary(oc, Form{OP, SCALAR, ALPHA, MODE, SCALAR_FIRST});
}

ETW_REGISTER_OP("aten.add.Tensor", (build<kAdd, false, 2>));
ETW_REGISTER_OP("aten.sub.Tensor", (build<kSub, false, 2>));
ETW_REGISTER_OP("aten.add.Scalar", (build<kAdd, true, 2>));
ETW_REGISTER_OP("aten.sub.Scalar", (build<kSub, true, 2>));
ETW_REGISTER_OP("aten.mul.Tensor", build<kMul>);
ETW_REGISTER_OP("aten.mul.Scalar", (build<kMul, true>));
ETW_REGISTER_OP("aten.div.Tensor", build<kDiv>);
ETW_REGISTER_OP("aten.div.Scalar", (build<kDiv, true>));
ETW_REGISTER_OP("aten.div.Tensor_mode", (build<kDiv, false, -1, true>));
ETW_REGISTER_OP("aten.pow.Tensor_Tensor", build<kPow>);
ETW_REGISTER_OP("aten.pow.Tensor_Scalar", (build<kPow, true>));
ETW_REGISTER_OP("aten.minimum.default", build<kMin>);
ETW_REGISTER_OP("aten.maximum.default", build<kMax>);
ETW_REGISTER_OP("aten.eq.Tensor", build<kEq>);
ETW_REGISTER_OP("aten.ne.Tensor", build<kNe>);
ETW_REGISTER_OP("aten.lt.Tensor", build<kLt>);
ETW_REGISTER_OP("aten.le.Tensor", build<kLe>);
ETW_REGISTER_OP("aten.gt.Tensor", build<kGt>);
ETW_REGISTER_OP("aten.ge.Tensor", build<kGe>);
ETW_REGISTER_OP("aten.eq.Scalar", (build<kEq, true>));
ETW_REGISTER_OP("aten.ne.Scalar", (build<kNe, true>));
ETW_REGISTER_OP("aten.lt.Scalar", (build<kLt, true>));
ETW_REGISTER_OP("aten.le.Scalar", (build<kLe, true>));
ETW_REGISTER_OP("aten.gt.Scalar", (build<kGt, true>));
ETW_REGISTER_OP("aten.ge.Scalar", (build<kGe, true>));
ETW_REGISTER_OP("aten.logical_and.default", build<kLogicalAnd>);
ETW_REGISTER_OP("aten.logical_or.default", build<kLogicalOr>);
ETW_REGISTER_OP("aten.bitwise_and.Tensor", build<kBitAnd>);
ETW_REGISTER_OP("aten.bitwise_or.Tensor", build<kBitOr>);
ETW_REGISTER_OP("aten.bitwise_xor.Tensor", build<kBitXor>);
ETW_REGISTER_OP("aten.logical_xor.default", build<kLogicalXor>);
ETW_REGISTER_OP("aten.atan2.default", build<kAtan2>);
ETW_REGISTER_OP("aten.fmod.Tensor", build<kFmod>);
ETW_REGISTER_OP("aten.fmod.Scalar", (build<kFmod, true>));
ETW_REGISTER_OP("aten.remainder.Tensor", build<kRemainder>);
ETW_REGISTER_OP("aten.remainder.Scalar", (build<kRemainder, true>));
ETW_REGISTER_OP("aten.floor_divide.default", build<kDivFloor>);
ETW_REGISTER_OP("aten.div.Scalar_mode", (build<kDiv, true, -1, true>));
ETW_REGISTER_OP("aten.pow.Scalar", (build<kPowScalarBase, true, -1, false, true>));
ETW_REGISTER_OP("aten.rsub.Scalar", (build<kRsub, true, 2>));
ETW_REGISTER_OP("aten.bitwise_and.Scalar", (build<kBitAnd, true>));
ETW_REGISTER_OP("aten.bitwise_or.Scalar", (build<kBitOr, true>));
ETW_REGISTER_OP("aten.bitwise_xor.Scalar", (build<kBitXor, true>));

}  // namespace
}  // namespace etwebgpu::ops
