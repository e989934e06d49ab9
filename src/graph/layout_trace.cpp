#include "graph/layout_trace.h"

#include <algorithm>
#include <cstring>

#include "etwebgpu/tensor.h"
#include "graph/layout_view.h"

namespace etwebgpu::graph {

namespace {

using format::VkDType;
using format::VkValueKind;
using Dims = std::vector<int64_t>;

// The integer data of a constant index tensor (int32 or int64), or nullopt.
std::optional<std::vector<int64_t>> constant_indices(const format::VkGraphIR& ir, int32_t id) {
  const auto& v = ir.values[id];
  if (v.kind != VkValueKind::Tensor || !v.tensor.is_constant() || v.tensor.dims.size() > 1) return std::nullopt;
  const auto cid = static_cast<size_t>(v.tensor.constant_id);
  if (cid >= ir.constants.size()) return std::nullopt;
  const size_t n = static_cast<size_t>(numel(v.tensor.dims));
  const auto& data = ir.constants[cid].data;
  std::vector<int64_t> out(n);
  if (v.tensor.dtype == VkDType::Int64 && data.size() >= n * 8) {
    std::memcpy(out.data(), data.data(), n * 8);
  } else if (v.tensor.dtype == VkDType::Int32 && data.size() >= n * 4) {
    for (size_t i = 0; i < n; ++i) {
      int32_t x;
      std::memcpy(&x, data.data() + i * 4, 4);
      out[i] = x;
    }
  } else {
    return std::nullopt;
  }
  return out;
}

bool tensor(const format::VkGraphIR& ir, int32_t id) {
  return id >= 0 && static_cast<size_t>(id) < ir.values.size() && ir.values[id].kind == VkValueKind::Tensor;
}

// out[i] = in[offset + sum(coord_k(i) * stride_k)] over out dims `od`.
std::vector<int64_t> gather(const std::vector<int64_t>& in, const Dims& od, const Dims& st, int64_t offset) {
  std::vector<int64_t> out(static_cast<size_t>(numel(od)));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i), off = offset;
    for (size_t k = od.size(); k-- > 0;) {
      off += (rem % od[k]) * st[k];
      rem /= od[k];
    }
    out[i] = in[static_cast<size_t>(off)];
  }
  return out;
}

}  // namespace

bool is_traceable_layout(const format::VkGraphIR& ir, const format::VkOpCall& c) {
  if (c.args.size() < 2 || !tensor(ir, c.args.front()) || !tensor(ir, c.args.back())) return false;
  for (int32_t a : c.args)
    if (a < 0 || static_cast<size_t>(a) >= ir.values.size()) return false;
  if (layout_op(c.name)) return view_through(ir, c, contiguous_view(ir.values[c.args.front()].tensor.dims)).has_value();
  return c.name == "aten.index_select.default" && c.args.size() == 4 && constant_indices(ir, c.args[2]).has_value();
}

std::optional<std::vector<int64_t>> trace_layouts(const format::VkGraphIR& ir, int32_t src,
                                                  const std::vector<const format::VkOpCall*>& calls) {
  Dims d = ir.values[src].tensor.dims;
  std::vector<int64_t> cur(static_cast<size_t>(numel(d)));
  for (size_t i = 0; i < cur.size(); ++i) cur[i] = static_cast<int64_t>(i);
  for (const format::VkOpCall* c : calls) {
    if (c->args.size() < 2 || !tensor(ir, c->args.front()) || !tensor(ir, c->args.back())) return std::nullopt;
    const Dims& od = ir.values[c->args.back()].tensor.dims;
    if (layout_op(c->name)) {  // affine: graph/layout_view.h's map of the output over the input
      auto v = view_through(ir, *c, contiguous_view(d));
      if (!v || v->dims != od) return std::nullopt;
      cur = gather(cur, v->dims, v->strides, v->offset);
    } else if (c->name == "aten.index_select.default" && c->args.size() == 4) {
      const auto& dv = ir.values[c->args[1]];
      auto idx = constant_indices(ir, c->args[2]);
      const int64_t r = static_cast<int64_t>(d.size());
      if (dv.kind != VkValueKind::Int || dv.int_val < -r || dv.int_val >= r || !idx) return std::nullopt;
      const size_t dim = static_cast<size_t>(dv.int_val < 0 ? dv.int_val + r : dv.int_val);
      Dims sd = d;
      sd[dim] = static_cast<int64_t>(idx->size());
      if (sd != od) return std::nullopt;
      std::vector<int64_t> out(static_cast<size_t>(numel(sd)));
      int64_t inner = 1, outer = 1;
      for (size_t k = dim + 1; k < d.size(); ++k) inner *= d[k];
      for (size_t k = 0; k < dim; ++k) outer *= d[k];
      const int64_t m = static_cast<int64_t>(idx->size());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < m; ++j) {
          int64_t at = (*idx)[j];
          if (at < -d[dim] || at >= d[dim]) return std::nullopt;
          if (at < 0) at += d[dim];
          for (int64_t e = 0; e < inner; ++e) out[(o * m + j) * inner + e] = cur[(o * d[dim] + at) * inner + e];
        }
      cur = std::move(out);
    } else {
      return std::nullopt;
    }
    d = od;
  }
  return cur;
}

}  // namespace etwebgpu::graph
