#include "graph/layout_trace.h"

#include <algorithm>
#include <cstring>

#include "graph/memory_plan.h"

namespace etwebgpu::graph {

namespace {

using format::VkDType;
using format::VkValueKind;
using Dims = std::vector<int64_t>;

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

std::optional<int64_t> int_arg(const format::VkGraphIR& ir, int32_t id) {
  const auto& v = ir.values[id];
  if (v.kind == VkValueKind::Int) return v.int_val;
  return std::nullopt;
}

std::optional<int64_t> axis(const format::VkGraphIR& ir, int32_t id, size_t rank) {
  auto d = int_arg(ir, id);
  const int64_t r = static_cast<int64_t>(rank);
  if (!d || *d < -r || *d >= r) return std::nullopt;
  return *d < 0 ? *d + r : *d;
}

// The integer data of a constant index tensor (int32 or int64), or nullopt.
std::optional<std::vector<int64_t>> constant_indices(const format::VkGraphIR& ir, int32_t id) {
  const auto& v = ir.values[id];
  if (v.kind != VkValueKind::Tensor || !v.tensor.is_constant() || v.tensor.dims.size() > 1) return std::nullopt;
  const auto cid = static_cast<size_t>(v.tensor.constant_id);
  if (cid >= ir.constants.size()) return std::nullopt;
  const size_t n = static_cast<size_t>(count(v.tensor.dims));
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

// Strides of contiguous dims.
Dims strides_of(const Dims& d) {
  Dims s(d.size(), 1);
  for (size_t k = d.size(); k-- > 1;) s[k - 1] = s[k] * d[k];
  return s;
}

// out[i] = in[offset + sum(coord_k(i) * stride_k)] over out dims `od`.
std::vector<int64_t> gather(const std::vector<int64_t>& in, const Dims& od, const Dims& st, int64_t offset) {
  std::vector<int64_t> out(static_cast<size_t>(count(od)));
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
  if (is_contiguous_view(ir, c)) return true;
  const std::string& n = c.name;
  if (n == "aten.permute_copy.default" || n == "aten.permute.default")
    return c.args.size() == 3 && ir.values[c.args[1]].kind == VkValueKind::IntList;
  if (n == "aten.slice_copy.Tensor") return c.args.size() == 6;
  if (n == "aten.select_copy.int") return c.args.size() == 4;
  if (n == "aten.expand_copy.default") return c.args.size() == 4 && ir.values[c.args[1]].kind == VkValueKind::IntList;
  if (n == "aten.index_select.default") return c.args.size() == 4 && constant_indices(ir, c.args[2]).has_value();
  return false;
}

std::optional<std::vector<int64_t>> trace_layouts(const format::VkGraphIR& ir, int32_t src,
                                                  const std::vector<const format::VkOpCall*>& calls) {
  Dims d = ir.values[src].tensor.dims;
  std::vector<int64_t> cur(static_cast<size_t>(count(d)));
  for (size_t i = 0; i < cur.size(); ++i) cur[i] = static_cast<int64_t>(i);
  for (const format::VkOpCall* c : calls) {
    if (!is_traceable_layout(ir, *c)) return std::nullopt;
    const Dims& od = ir.values[c->args.back()].tensor.dims;
    const Dims cs = strides_of(d);
    const std::string& n = c->name;
    if (is_contiguous_view(ir, *c)) {
      if (count(od) != count(d)) return std::nullopt;  // same order, new dims
    } else if (n == "aten.permute_copy.default" || n == "aten.permute.default") {
      const Dims& p = ir.values[c->args[1]].ints;
      if (p.size() != d.size()) return std::nullopt;
      Dims pd, ps;
      std::vector<bool> seen(d.size(), false);
      for (int64_t v : p) {
        const int64_t r = static_cast<int64_t>(d.size());
        const int64_t k = v < 0 ? v + r : v;
        if (k < 0 || k >= r || seen[k]) return std::nullopt;
        seen[k] = true;
        pd.push_back(d[k]), ps.push_back(cs[k]);
      }
      if (pd != od) return std::nullopt;
      cur = gather(cur, pd, ps, 0);
    } else if (n == "aten.slice_copy.Tensor") {
      auto dim = axis(ir, c->args[1], d.size());
      const auto& sv = ir.values[c->args[2]];
      const auto& ev = ir.values[c->args[3]];
      const auto& stv = ir.values[c->args[4]];
      auto bound = [&](const format::VkValue& v, int64_t dflt) -> std::optional<int64_t> {
        if (v.kind == VkValueKind::Null) return dflt;
        if (v.kind == VkValueKind::Int) return v.int_val;
        return std::nullopt;
      };
      if (!dim) return std::nullopt;
      const int64_t size = d[*dim];
      auto s = bound(sv, 0), e = bound(ev, size), step = bound(stv, 1);
      if (!s || !e || !step || *step < 1) return std::nullopt;
      int64_t a = *s < 0 ? *s + size : *s, b = *e < 0 ? *e + size : *e;
      a = std::clamp<int64_t>(a, 0, size), b = std::clamp<int64_t>(b, 0, size);
      const int64_t len = b > a ? (b - a + *step - 1) / *step : 0;
      Dims sd = d, ss = cs;
      sd[*dim] = len;
      ss[*dim] *= *step;
      if (sd != od) return std::nullopt;
      cur = gather(cur, sd, ss, a * cs[*dim]);
    } else if (n == "aten.select_copy.int") {
      auto dim = axis(ir, c->args[1], d.size());
      auto idx = int_arg(ir, c->args[2]);
      if (!dim || !idx || *idx < -d[*dim] || *idx >= d[*dim]) return std::nullopt;
      const int64_t at = *idx < 0 ? *idx + d[*dim] : *idx;
      Dims sd = d, ss = cs;
      sd.erase(sd.begin() + *dim), ss.erase(ss.begin() + *dim);
      if (sd != od) return std::nullopt;
      cur = gather(cur, sd, ss, at * cs[*dim]);
    } else if (n == "aten.expand_copy.default") {
      const Dims& size = ir.values[c->args[1]].ints;
      if (size.size() < d.size() || size.size() != od.size()) return std::nullopt;
      const size_t lead = size.size() - d.size();
      Dims ss(size.size(), 0);
      for (size_t k = 0; k < size.size(); ++k) {
        if (k < lead) {
          if (size[k] != od[k]) return std::nullopt;
          continue;
        }
        const int64_t in = d[k - lead];
        const int64_t want = size[k] == -1 ? in : size[k];
        if (want != od[k] || (in != 1 && in != want)) return std::nullopt;
        ss[k] = in == 1 ? 0 : cs[k - lead];
      }
      cur = gather(cur, od, ss, 0);
    } else {  // index_select
      auto dim = axis(ir, c->args[1], d.size());
      auto idx = constant_indices(ir, c->args[2]);
      if (!dim || !idx) return std::nullopt;
      Dims sd = d;
      sd[*dim] = static_cast<int64_t>(idx->size());
      if (sd != od) return std::nullopt;
      std::vector<int64_t> out(static_cast<size_t>(count(sd)));
      int64_t inner = 1, outer = 1;
      for (size_t k = *dim + 1; k < d.size(); ++k) inner *= d[k];
      for (size_t k = 0; k < static_cast<size_t>(*dim); ++k) outer *= d[k];
      const int64_t m = static_cast<int64_t>(idx->size());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < m; ++j) {
          int64_t at = (*idx)[j];
          if (at < -d[*dim] || at >= d[*dim]) return std::nullopt;
          if (at < 0) at += d[*dim];
          for (int64_t e = 0; e < inner; ++e) out[(o * m + j) * inner + e] = cur[(o * d[*dim] + at) * inner + e];
        }
      cur = std::move(out);
    }
    d = od;
  }
  return cur;
}

}  // namespace etwebgpu::graph
