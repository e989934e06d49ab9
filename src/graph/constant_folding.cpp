#include "graph/constant_folding.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"

namespace etwebgpu::graph {
namespace {

using format::VkDType;
using format::VkValueKind;

bool folds(const std::string& op) {
  return op == "aten._to_copy.default" || op == "dim_order_ops._to_dim_order_copy.default" ||
         op == "dim_order_ops._clone_dim_order.default" || op == "aten.clone.default";
}

// Element i of serialized bytes of dtype t, or nullopt for a dtype this pass does not read.
std::optional<double> element(const uint8_t* p, int64_t i, VkDType t) {
  switch (t) {
    case VkDType::Float32: { float f; std::memcpy(&f, p + 4 * i, 4); return f; }
    case VkDType::Float64: { double d; std::memcpy(&d, p + 8 * i, 8); return d; }
    case VkDType::Int32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case VkDType::Int64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }
    case VkDType::Int8: return static_cast<int8_t>(p[i]);
    case VkDType::UInt8: return p[i];
    case VkDType::Bool: return p[i] ? 1.0 : 0.0;
    default: return std::nullopt;
  }
}

// `n` elements of `src` (dtype `from`) as serialized bytes of `to` (Float32 or Int32).
std::optional<std::vector<uint8_t>> convert(format::ByteSpan src, int64_t n, VkDType from, VkDType to) {
  if (src.size() < static_cast<size_t>(n) * format::vk_dtype_size(from)) return std::nullopt;
  std::vector<uint8_t> out(static_cast<size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    if (from == to) {  // bit for bit (NaN payloads, -0)
      std::memcpy(out.data() + 4 * i, src.data() + 4 * i, 4);
      continue;
    }
    auto v = element(src.data(), i, from);
    if (!v) return std::nullopt;
    if (to == VkDType::Float32) {
      float f = static_cast<float>(*v);
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      double t = std::trunc(*v);
      if (!(t >= INT32_MIN && t <= INT32_MAX)) return std::nullopt;  // NaN or out of range
      int32_t k = static_cast<int32_t>(t);
      std::memcpy(out.data() + 4 * i, &k, 4);
    }
  }
  return out;
}

}  // namespace

std::optional<double> constant_element(const format::VkGraphIR& ir, int32_t value_id, int64_t i) {
  if (value_id < 0 || static_cast<size_t>(value_id) >= ir.values.size()) return std::nullopt;
  const auto& v = ir.values[value_id];
  if (v.kind != VkValueKind::Tensor || !v.tensor.is_constant() ||
      static_cast<size_t>(v.tensor.constant_id) >= ir.constants.size() || i < 0 || i >= numel(v.tensor.dims) ||
      v.tensor.dtype == VkDType::Unset)
    return std::nullopt;
  const auto& data = ir.constants[v.tensor.constant_id].data;
  if (data.size() < static_cast<size_t>(i + 1) * format::vk_dtype_size(v.tensor.dtype)) return std::nullopt;
  return element(data.data(), i, v.tensor.dtype);
}

std::optional<double> scalar_constant(const format::VkGraphIR& ir, int32_t value_id) {
  if (value_id < 0 || static_cast<size_t>(value_id) >= ir.values.size()) return std::nullopt;
  const auto& t = ir.values[value_id].tensor;
  if (ir.values[value_id].kind != VkValueKind::Tensor || numel(t.dims) != 1 ||
      (t.dtype != VkDType::Float32 && t.dtype != VkDType::Float64))
    return std::nullopt;
  return constant_element(ir, value_id, 0);
}

FoldStats fold_constant_conversions(format::VkGraphIR& ir, const UseDef& ix) {
  FoldStats stats;
  const size_t nv = ir.values.size();

  // Constant data behind a tensor: its own, or a prepack's source of the same dtype.
  std::vector<int32_t> data_of(nv, -1);  // value id -> the constant value holding its data
  for (size_t v = 0; v < nv; ++v)
    if (ix.tensor(static_cast<int32_t>(v)) && ir.values[v].tensor.is_constant() &&
        static_cast<size_t>(ir.values[v].tensor.constant_id) < ir.constants.size())
      data_of[v] = static_cast<int32_t>(v);

  std::vector<bool> removed(ir.chain.size(), false);
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    const auto& c = ir.chain[i];
    if (c.args.size() < 2) continue;
    int32_t in = c.args.front(), out = c.args.back();
    if (!ix.tensor(in) || !ix.tensor(out) || ix.producer(out) != i || ix.pinned(out) || ix.pinned(in) || data_of[in] < 0)
      continue;
    const auto& ti = ir.values[in].tensor;
    auto& to = ir.values[out].tensor;
    if (c.name == "et_vk.prepack.default") {
      if (ti.dtype != to.dtype || ti.dims != to.dims) continue;
      // A weight's prepack stays (one GPU write at load; a copy as a constant would hold its bytes
      // twice). A scalar's becomes a constant, which fusion reads as a literal (GPT-2's GELU
      // multiplies by four of them, one binding each otherwise).
      if (numel(to.dims) != 1 || to.is_constant()) {
        data_of[out] = data_of[in];
        continue;
      }
      const auto& src = ir.constants[ir.values[data_of[in]].tensor.constant_id].data;
      const size_t size = format::vk_dtype_size(to.dtype);
      if (size == 0 || src.size() < size) continue;
      make_constant(ir, out, std::make_shared<const std::vector<uint8_t>>(src.data(), src.data() + size));
      data_of[out] = out;
      removed[i] = true;
      ++stats.calls_removed;
      continue;
    }
    if (!folds(c.name) || to.is_constant() || numel(ti.dims) != numel(to.dims)) continue;
    if (to.dtype != VkDType::Float32 && to.dtype != VkDType::Int32) continue;
    const auto& src = ir.values[data_of[in]].tensor;
    auto bytes = convert(ir.constants[src.constant_id].data, numel(to.dims), src.dtype, to.dtype);
    if (!bytes) continue;
    make_constant(ir, out, std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)));
    data_of[out] = out;
    removed[i] = true;
    ++stats.calls_removed;
  }
  if (!stats.calls_removed) return stats;
  drop_calls(ir, removed);
  return stats;
}

}  // namespace etwebgpu::graph
