// The load rewrite that makes etwebgpu.q8ta_clamp calls: a static-int8 export keeps an activation
// that ExecuTorch's q8ta operators do not take (ReLU6: MobileNetV2 has 35) as three calls,
//   dequantize_per_tensor(q, s1, z1) -> hardtanh / clamp / relu -> quantize_per_tensor(s2, z2),
// three dispatches and two float tensors. One int8 -> int8 kernel does the same float32 operations
// in the same order (q8ta_elementwise.wgsl, CLAMP), so the result is bit-identical. Only when the
// float tensors are read by the next call alone and are neither graph inputs, outputs nor state.
// Then a q8ta convolution whose int8 output only such a clamp reads takes it into its
// requantization (etwebgpu.q8ta_conv2d*_clamp: the clamp's operations on the conv's int8 value,
// q8ta_conv_requant.wgsl), one dispatch for the three calls and the conv.
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "graph/rewrite_pipeline.h"
#include "graph/fusion.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

// The clamp bounds of an activation call reading `f`, or false when it is not one.
bool activation_bounds(Graph& g, const format::VkGraphIR& ir, const format::VkOpCall& c, double& lo, double& hi) {
  const double inf = std::numeric_limits<double>::infinity();
  auto num = [&](int32_t id, double dflt, double& v) {
    VkValueKind k = ir.values[id].kind;
    if (k == VkValueKind::Null) { v = dflt; return true; }
    if (k != VkValueKind::Double && k != VkValueKind::Int) return false;
    v = g.number(id);
    return !std::isnan(v);
  };
  if (c.name == "aten.relu.default" && c.args.size() == 2) {
    lo = 0, hi = inf;
    return true;
  }
  if (c.name == "aten.hardtanh.default" && c.args.size() == 4) return num(c.args[1], -1.0, lo) && num(c.args[2], 1.0, hi) && lo <= hi;
  if (c.name == "aten.clamp.default" && c.args.size() == 4) return num(c.args[1], -inf, lo) && num(c.args[2], inf, hi) && lo <= hi;
  return false;
}

// q8ta_conv2d[_pw|_dw] -> etwebgpu.q8ta_clamp, the conv's output read by the clamp alone.
size_t fuse_conv_clamp(format::VkGraphIR& ir) {
  const size_t n = ir.chain.size();
  const graph::UseDef ix(ir);  // the chain after the clamps were made
  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    auto& conv = ir.chain[i];
    const auto& cl = ir.chain[i + 1];
    const char* name = conv.name == "et_vk.q8ta_conv2d.default"      ? "etwebgpu.q8ta_conv2d_clamp"
                       : conv.name == "et_vk.q8ta_conv2d_pw.default" ? "etwebgpu.q8ta_conv2d_pw_clamp"
                       : conv.name == "et_vk.q8ta_conv2d_dw.default" ? "etwebgpu.q8ta_conv2d_dw_clamp"
                                                                      : nullptr;
    if (!name || conv.args.size() != 16 || cl.name != "etwebgpu.q8ta_clamp" || cl.args.size() != 10) continue;
    int32_t y = conv.args.back();
    if (cl.args[0] != y || ix.sole_reader(y, i) != i + 1 ||
        ir.values[y].tensor.dims != ir.values[cl.args.back()].tensor.dims)
      continue;
    format::VkOpCall call;
    call.node_id = conv.node_id;
    call.name = name;
    call.args.assign(conv.args.begin(), conv.args.end() - 1);
    call.args.insert(call.args.end(), cl.args.begin() + 1, cl.args.end());
    conv = std::move(call);
    removed[i + 1] = true;
    ++fused;
    ++i;
  }
  if (!fused) return 0;
  graph::drop_calls(ir, removed);
  return fused;
}

size_t fuse_q8_requant_clamp(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  auto only_next = [&](int32_t t, size_t at, size_t next) { return ix.sole_reader(t, at) == next; };
  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t i = 0; i + 2 < n; ++i) {
    const auto& dq = ir.chain[i];
    const auto& act = ir.chain[i + 1];
    auto& qz = ir.chain[i + 2];
    if (dq.name != "quantized_decomposed.dequantize_per_tensor.default" || dq.args.size() != 8 ||
        qz.name != "quantized_decomposed.quantize_per_tensor.default" || qz.args.size() != 7)
      continue;
    double lo, hi;
    if (!activation_bounds(g, ir, act, lo, hi)) continue;
    int32_t q = dq.args[0], f = dq.args.back(), h = act.args.back(), out = qz.args.back();
    if (act.args[0] != f || qz.args[0] != h || !graph::float_tensor(ir, f) || !graph::float_tensor(ir, h) ||
        ir.values[q].kind != VkValueKind::Tensor || ir.values[q].tensor.dtype != format::VkDType::Int8 ||
        ir.values[out].tensor.dtype != format::VkDType::Int8 || ir.values[q].tensor.dims != ir.values[out].tensor.dims ||
        !only_next(f, i, i + 1) || !only_next(h, i + 1, i + 2))
      continue;
    // Scalars only (the .default spellings); the builder checks their values.
    bool scalars = true;
    for (int32_t a : {dq.args[1], dq.args[2], qz.args[1], qz.args[2], qz.args[3], qz.args[4]}) {
      VkValueKind k = ir.values[a].kind;
      scalars = scalars && (k == VkValueKind::Double || k == VkValueKind::Int);
    }
    if (!scalars) continue;
    auto number = [&ir](double v) {
      format::VkValue x;
      x.kind = VkValueKind::Double;
      x.double_val = v;
      ir.values.push_back(x);
      return static_cast<int32_t>(ir.values.size() - 1);
    };
    format::VkOpCall call;
    call.node_id = qz.node_id;
    call.name = "etwebgpu.q8ta_clamp";
    call.args = {q, dq.args[1], dq.args[2], number(lo), number(hi), qz.args[1], qz.args[2], qz.args[3], qz.args[4], out};
    qz = std::move(call);
    removed[i] = removed[i + 1] = true;
    ++fused;
    i += 2;
  }
  if (!fused) return 0;
  graph::drop_calls(ir, removed);
  return fused + fuse_conv_clamp(ir);
}

ETW_REGISTER_LOAD_REWRITE(fuse_q8_requant_clamp, Patterns);

}  // namespace
}  // namespace etwebgpu::ops
