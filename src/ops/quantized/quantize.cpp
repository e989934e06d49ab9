// Quantize / dequantize (quantized_decomposed, as PT2E exports and ExecuTorch's Vulkan partitioner
// emit them) and the int8 elementwise ops et_vk.q8ta_add / q8ta_relu. Semantics are PyTorch's
// reference (torch/ao/quantization/fx/_decomposed.py, backends/vulkan/custom_ops_lib.py):
// * quantize_per_tensor[.tensor] [x, scale, zero_point, quant_min, quant_max, dtype, out]:
//   clamp(round_half_even(x * f32(1 / scale)) + zero_point, quant_min, quant_max) as int8 / uint8.
// * dequantize_per_tensor[.tensor] [x, scale, zero_point, quant_min, quant_max, dtype, out_dtype, out]:
//   (x - zero_point) * scale in float32.
// * quantize_per_channel [x, scales, zero_points, axis, quant_min, quant_max, dtype, out] and
//   dequantize_per_channel [x, scales, zero_points?, axis, quant_min, quant_max, dtype, out_dtype, out]:
//   the same with channel x.shape[axis]'s parameters.
// * et_vk.q8ta_add [a, b, a_scale, a_zp, b_scale, b_zp, out_scale, out_zp, alpha, out] and
//   et_vk.q8ta_relu [x, in_scale, in_zp, out_scale, out_zp, out]: dequantize, a + alpha * b (or
//   relu), quantize to int8 [-128, 127].
// Scales and zero points given as numbers are checked at load (a positive finite scale; a zero
// point inside [quant_min, quant_max]; quant_min <= quant_max inside the dtype's range): a bad one
// is a Format error naming the op and the value. Int8 outputs are written four to a word.
#include <cmath>
#include <limits>

#include "ops/op_common.h"
#include "ops/quantized/q8_common.h"

namespace etwebgpu::ops {
namespace {

using q8::positive_scale;
using q8::quant_range;
using q8::zp_arg;

struct QParams {
  uint32_t n = 0, inner = 1, channels = 1;
  int32_t qmin = 0, qmax = 0;
  float scale = 1.f, inv_scale = 1.f;
  int32_t zp = 0;
};
static_assert(sizeof(QParams) == 32);

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// Checks the values of a constant scale / zero-point tensor (tensors computed at run time are
// used as they come, like PyTorch does).
void check_constant_qparams(const OpContext& oc, int32_t s, int32_t z, int32_t qmin, int32_t qmax) {
  Graph& g = oc.g;
  if (g.tensor(s).constant_id >= 0) {
    if (g.tensor(s).dtype != VkDType::Float32) oc.fail(ErrorKind::Unsupported, "scales must be float32");
    const auto v = q8::f32_values(oc, s);
    for (size_t i = 0; i < v.size(); ++i)
      if (!(std::isfinite(v[i]) && v[i] > 0))
        oc.fail(ErrorKind::Format, "scale " + num(v[i]) + " (channel " + std::to_string(i) + ") is not a positive finite number");
  }
  if (z >= 0 && g.tensor(z).constant_id >= 0) {  // int32 / int64 / int8 / uint8 (checked by the caller)
    const auto v = q8::int_values(oc, z);
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] < qmin || v[i] > qmax)
        oc.fail(ErrorKind::Format, "zero point " + std::to_string(v[i]) + " (channel " + std::to_string(i) +
                                       ") is outside [" + std::to_string(qmin) + ", " + std::to_string(qmax) + "]");
  }
}

enum class Granularity { TensorNumbers, TensorTensors, Channel };

// Shared by the six quantize / dequantize spellings: `quantize` maps float x to int8/uint8 out,
// otherwise int x to float out.
void build_affine(OpContext& oc, bool quantize, Granularity gran) {
  Graph& g = oc.g;
  const int32_t x = oc.arg(0), out = oc.out();
  const int32_t q = quantize ? out : x;  // the quantized side
  if (quantize) {
    require_dtype(oc, x, {VkDType::Float32, VkDType::Float16}, "input");
    require_dtype(oc, out, {VkDType::Int8, VkDType::UInt8}, "output");
  } else {
    require_dtype(oc, x, {VkDType::Int8, VkDType::UInt8, VkDType::Int32}, "input");
    require_dtype(oc, out, {VkDType::Float32, VkDType::Float16}, "output");
  }
  const size_t qmin_arg = gran == Granularity::Channel ? 4 : 3;
  auto [qmin, qmax] = quant_range(oc, qmin_arg, q);
  QParams base;
  base.qmin = qmin;
  base.qmax = qmax;
  int32_t s = -1, z = -1, axis = 0;
  if (gran == Granularity::TensorNumbers) {
    base.scale = positive_scale(oc, g.number(oc.arg(1)), "scale");
    base.inv_scale = static_cast<float>(1.0 / g.number(oc.arg(1)));  // PyTorch: x * (1.0 / scale) in float32
    base.zp = zp_arg(oc, oc.arg(2), "zero_point", qmin, qmax);
  } else {
    s = oc.arg(1);
    z = g.is_null(oc.arg(2)) ? -1 : oc.arg(2);
    if (!g.is_tensor(s)) oc.fail(ErrorKind::InvalidArgument, "scales must be a tensor");
    if (z < 0 && quantize) oc.fail(ErrorKind::InvalidArgument, "zero_points must be a tensor");
    if (z >= 0 && !g.is_tensor(z)) oc.fail(ErrorKind::InvalidArgument, "zero_points must be a tensor or None");
    require_dtype(oc, s, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "scales");
    if (z >= 0) require_dtype(oc, z, {VkDType::Int32, VkDType::Int64, VkDType::Int8, VkDType::UInt8}, "zero_points");
    check_constant_qparams(oc, s, z, qmin, qmax);
    const auto& dx = g.tensor(x).max_dims;
    if (gran == Granularity::Channel) {
      axis = static_cast<int32_t>(norm_dim(oc, g.integer(oc.arg(3)), static_cast<int64_t>(dx.size())));
      if (g.tensor(s).max_numel() != dx[axis] || (z >= 0 && g.tensor(z).max_numel() != dx[axis]))
        oc.fail(ErrorKind::Format, "scales " + shape_str(g.tensor(s).max_dims) + " / zero_points " +
                                       (z >= 0 ? shape_str(g.tensor(z).max_dims) : std::string("None")) + " do not hold one value per channel of dim " +
                                       std::to_string(axis) + " of " + shape_str(dx));
    } else if (g.tensor(s).max_numel() != 1 || (z >= 0 && g.tensor(z).max_numel() != 1)) {
      oc.fail(ErrorKind::Format, "scale " + shape_str(g.tensor(s).max_dims) + " and zero_point must hold one value each");
    }
  }
  oc.output_like(out, x);
  kernel::Kernel k("quantize_affine");
  k.define(quantize ? "QUANTIZE" : "DEQUANTIZE").input("X", x).input("S", s).input("Z", z).output("Y", out);
  k.params<QParams>([x, base, gran, axis](const kernel::Live& l) {
    QParams p = base;
    p.n = kernel::u32(l.numel(x), "element count");
    if (gran == Granularity::Channel) {
      const auto& d = l.dims(x);
      int64_t inner = 1;
      for (size_t i = axis + 1; i < d.size(); ++i) inner *= d[i];
      p.inner = kernel::u32(std::max<int64_t>(inner, 1), "channel stride");
      p.channels = kernel::u32(d[axis], "channel count");
    } else {
      p.inner = std::max<uint32_t>(p.n, 1);
    }
    return p;
  });
  k.flat(out, quantize ? 4 : 1);  // quantize: one invocation per output word
  oc.add(k);
}

void build_quantize_per_tensor(OpContext& oc) { build_affine(oc, true, Granularity::TensorNumbers); }
void build_quantize_per_tensor_t(OpContext& oc) { build_affine(oc, true, Granularity::TensorTensors); }
void build_dequantize_per_tensor(OpContext& oc) { build_affine(oc, false, Granularity::TensorNumbers); }
void build_dequantize_per_tensor_t(OpContext& oc) { build_affine(oc, false, Granularity::TensorTensors); }
void build_quantize_per_channel(OpContext& oc) { build_affine(oc, true, Granularity::Channel); }
void build_dequantize_per_channel(OpContext& oc) { build_affine(oc, false, Granularity::Channel); }

ETW_REGISTER_OP("quantized_decomposed.quantize_per_tensor.default", build_quantize_per_tensor);
ETW_REGISTER_OP("quantized_decomposed.quantize_per_tensor.tensor", build_quantize_per_tensor_t);
ETW_REGISTER_OP("quantized_decomposed.dequantize_per_tensor.default", build_dequantize_per_tensor);
ETW_REGISTER_OP("quantized_decomposed.dequantize_per_tensor.tensor", build_dequantize_per_tensor_t);
ETW_REGISTER_OP("quantized_decomposed.quantize_per_channel.default", build_quantize_per_channel);
ETW_REGISTER_OP("quantized_decomposed.dequantize_per_channel.default", build_dequantize_per_channel);

struct Q8Params {
  uint32_t n = 0;
  int32_t za = 0, zb = 0, zo = 0;
  float sa = 1.f, sb = 1.f, inv_so = 1.f, alpha = 1.f;
  float lo = 0.f, hi = 0.f, qmin = -128.f, qmax = 127.f;
};
static_assert(sizeof(Q8Params) == 48);

// The q8ta_elementwise kernel (OP 0 add, 1 relu, 2 clamp) over a's elements, one invocation per
// output word.
void add_q8_elementwise(OpContext& oc, uint32_t op, int32_t a, int32_t b, int32_t out, Q8Params base, const char* variant) {
  oc.output_like(out, a);
  oc.add(kernel::Kernel("q8ta_elementwise")
             .constant("OP", op)
             .input("A", a)
             .input("B", b)
             .output("Y", out)
             .params<Q8Params>([a, base](const kernel::Live& l) {
               Q8Params p = base;
               p.n = kernel::u32(l.numel(a), "element count");
               return p;
             })
             .flat(out, 4)
             .variant(variant));
}

// etwebgpu.q8ta_clamp [x, in_scale, in_zp, lo, hi, out_scale, out_zp, quant_min, quant_max, out]:
// dequantize_per_tensor -> hardtanh / clamp / relu -> quantize_per_tensor as one int8 kernel, made
// at load by ops/quantized/q8_requant_fusion.cpp.
void build_q8ta_clamp(OpContext& oc) {
  const int32_t x = oc.arg(0), out = oc.out();
  require_dtype(oc, x, {VkDType::Int8}, "input");
  require_dtype(oc, out, {VkDType::Int8}, "output");
  const q8::ClampArgs c = q8::clamp_args(oc, 1, out);
  Q8Params base;
  base.sa = c.in_scale;
  base.za = c.in_zp;
  base.lo = c.lo;
  base.hi = c.hi;
  base.inv_so = c.inv_out_scale;
  base.zo = c.out_zp;
  base.qmin = static_cast<float>(c.qmin);
  base.qmax = static_cast<float>(c.qmax);
  add_q8_elementwise(oc, 2, x, -1, out, base, "clamp");
}
ETW_REGISTER_OP("etwebgpu.q8ta_clamp", build_q8ta_clamp);

// q8ta_add (binary) or q8ta_relu: int8 tensors of one shape.
void build_q8ta_elementwise(OpContext& oc, bool add) {
  Graph& g = oc.g;
  const int32_t a = oc.arg(0), b = add ? oc.arg(1) : -1, out = oc.out();
  require_dtype(oc, a, {VkDType::Int8}, add ? "input_a" : "input");
  if (add) require_dtype(oc, b, {VkDType::Int8}, "input_b");
  require_dtype(oc, out, {VkDType::Int8}, "output");
  if (add && g.tensor(a).max_dims != g.tensor(b).max_dims)
    oc.fail(ErrorKind::Unsupported, "inputs " + shape_str(g.tensor(a).max_dims) + " and " + shape_str(g.tensor(b).max_dims) +
                                        " differ in shape (broadcasting int8 adds is not implemented)");
  const size_t p0 = add ? 2 : 1;
  Q8Params base;
  base.sa = positive_scale(oc, g.number(oc.arg(p0)), add ? "input_a_scale" : "input_scale");
  base.za = zp_arg(oc, oc.arg(p0 + 1), add ? "input_a_zero_point" : "input_zero_point");
  size_t o = p0 + 2;
  if (add) {
    base.sb = positive_scale(oc, g.number(oc.arg(p0 + 2)), "input_b_scale");
    base.zb = zp_arg(oc, oc.arg(p0 + 3), "input_b_zero_point", -128, 127);
    o = p0 + 4;
  }
  positive_scale(oc, g.number(oc.arg(o)), "output_scale");
  base.inv_so = static_cast<float>(1.0 / g.number(oc.arg(o)));
  base.zo = zp_arg(oc, oc.arg(o + 1), "output_zero_point", -128, 127);
  if (add) {
    double alpha = g.number(oc.arg(o + 2));
    if (!std::isfinite(alpha)) oc.fail(ErrorKind::Format, "alpha " + num(alpha) + " is not finite");
    base.alpha = static_cast<float>(alpha);
  }
  add_q8_elementwise(oc, add ? 0 : 1, a, b, out, base, add ? "add" : "relu");
}

void build_q8ta_add(OpContext& oc) { build_q8ta_elementwise(oc, true); }
void build_q8ta_relu(OpContext& oc) { build_q8ta_elementwise(oc, false); }

ETW_REGISTER_OP("et_vk.q8ta_add.default", build_q8ta_add);
ETW_REGISTER_OP("et_vk.q8ta_relu.default", build_q8ta_relu);

}  // namespace
}  // namespace etwebgpu::ops
