#include "graph/layout_view.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "etwebgpu/tensor.h"

namespace etwebgpu::graph {

using format::VkExprView;
using format::VkValueKind;
using Dims = std::vector<int64_t>;

namespace {

// A static list: an IntList, or a ValueList of static integers (no SymInt).
std::optional<Dims> static_ints(const format::VkGraphIR& ir, int32_t id) {
  const auto& v = ir.values[id];
  if (v.kind == VkValueKind::IntList) return v.ints;
  if (v.kind != VkValueKind::ValueList) return std::nullopt;
  Dims r;
  for (int32_t e : v.ids) {
    std::optional<int64_t> x = static_int(ir, e);
    if (!x) return std::nullopt;
    r.push_back(*x);
  }
  return r;
}

// Dim d of rank r, negative counting from the end.
std::optional<int64_t> axis(std::optional<int64_t> d, int64_t r) {
  if (!d) return std::nullopt;
  int64_t k = *d < 0 ? *d + r : *d;
  return k >= 0 && k < r ? std::optional<int64_t>(k) : std::nullopt;
}

bool is_null(const format::VkGraphIR& ir, int32_t id) { return ir.values[id].kind == VkValueKind::Null; }

// The ops, each with its argument count (output included).
const std::vector<std::pair<std::string, size_t>>& ops() {
  static const std::vector<std::pair<std::string, size_t>> list = {
      {"aten.permute_copy.default", 3},   {"aten.permute.default", 3},         {"aten.t_copy.default", 2},
      {"aten.transpose_copy.int", 4},     {"aten.slice_copy.Tensor", 6},       {"aten.narrow_copy.default", 5},
      {"aten.select_copy.int", 4},        {"aten.expand_copy.default", 4},     {"aten.unsqueeze_copy.default", 3},
      {"aten.squeeze_copy.dim", 3},       {"aten.squeeze_copy.dims", 3},       {"aten.squeeze_copy.default", 2},
      {"aten.view_copy.default", 3},      {"aten._unsafe_view.default", 3},    {"aten.flip.default", 3},
      {"aten.clone.default", 3},          {"aten.alias_copy.default", 2},      {"aten.detach_copy.default", 2},
      {"aten.lift_fresh_copy.default", 2},
  };
  return list;
}

// The view of the call's output, before its dims are checked against the serialized ones.
std::optional<VkExprView> apply(const format::VkGraphIR& ir, const format::VkOpCall& c, VkExprView v) {
  const std::string& op = c.name;
  const auto& a = c.args;
  const int64_t r = static_cast<int64_t>(v.dims.size());
  if (op == "aten.permute_copy.default" || op == "aten.permute.default") {
    std::optional<Dims> p = static_ints(ir, a[1]);
    if (!p || static_cast<int64_t>(p->size()) != r) return std::nullopt;
    VkExprView t;
    t.offset = v.offset;
    std::set<int64_t> seen;
    for (int64_t d : *p) {
      std::optional<int64_t> k = axis(d, r);
      if (!k || !seen.insert(*k).second) return std::nullopt;
      t.dims.push_back(v.dims[*k]);
      t.strides.push_back(v.strides[*k]);
    }
    return t;
  }
  if (op == "aten.t_copy.default" || op == "aten.transpose_copy.int") {
    if (op == "aten.t_copy.default" && r > 2) return std::nullopt;
    // A 0-d tensor takes dims 0 and -1.
    std::optional<int64_t> d0 = op == "aten.t_copy.default" ? 0 : axis(static_int(ir, a[1]), std::max<int64_t>(r, 1));
    std::optional<int64_t> d1 = op == "aten.t_copy.default" ? std::max<int64_t>(r - 1, 0)
                                                              : axis(static_int(ir, a[2]), std::max<int64_t>(r, 1));
    if (!d0 || !d1) return std::nullopt;
    if (r > 0) {
      std::swap(v.dims[*d0], v.dims[*d1]);
      std::swap(v.strides[*d0], v.strides[*d1]);
    }
    return v;
  }
  if (op == "aten.slice_copy.Tensor") {
    std::optional<int64_t> d = axis(static_int(ir, a[1]), r);
    std::optional<int64_t> start = is_null(ir, a[2]) ? 0 : static_int(ir, a[2]);
    std::optional<int64_t> end = is_null(ir, a[3]) ? std::optional<int64_t>(INT64_MAX) : static_int(ir, a[3]);
    std::optional<int64_t> step = is_null(ir, a[4]) ? 1 : static_int(ir, a[4]);
    if (!d || !start || !end || !step || *step < 1) return std::nullopt;
    // PyTorch: a negative bound wraps once, then both clamp to [0, size]; end before start is empty.
    const int64_t n = v.dims[*d];
    int64_t s = *start < 0 ? *start + n : *start, e = *end < 0 ? *end + n : *end;
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    v.offset += s * v.strides[*d];
    v.dims[*d] = e > s ? (e - s + *step - 1) / *step : 0;
    v.strides[*d] *= *step;
    return v;
  }
  if (op == "aten.narrow_copy.default") {
    std::optional<int64_t> d = axis(static_int(ir, a[1]), r), start = static_int(ir, a[2]), len = static_int(ir, a[3]);
    if (!d || !start || !len) return std::nullopt;
    const int64_t n = v.dims[*d];
    if (*start < -n || *start > n) return std::nullopt;
    const int64_t s = *start < 0 ? *start + n : *start;
    if (*len < 0 || s + *len > n) return std::nullopt;
    v.offset += s * v.strides[*d];
    v.dims[*d] = *len;
    return v;
  }
  if (op == "aten.select_copy.int") {
    std::optional<int64_t> d = axis(static_int(ir, a[1]), r), index = static_int(ir, a[2]);
    if (!d || !index) return std::nullopt;
    const int64_t n = v.dims[*d];
    if (*index < -n || *index >= n) return std::nullopt;  // PyTorch raises: the builder reports it
    v.offset += (*index < 0 ? *index + n : *index) * v.strides[*d];
    v.dims.erase(v.dims.begin() + *d);
    v.strides.erase(v.strides.begin() + *d);
    return v;
  }
  if (op == "aten.expand_copy.default") {
    std::optional<Dims> size = static_ints(ir, a[1]);
    if (!size || static_cast<int64_t>(size->size()) < r) return std::nullopt;
    const size_t lead = size->size() - static_cast<size_t>(r);
    VkExprView t;
    t.offset = v.offset;
    for (size_t i = 0; i < size->size(); ++i) {
      int64_t want = (*size)[i];
      if (i < lead) {  // a new leading dim: every index reads the same elements
        if (want < 0) return std::nullopt;
        t.dims.push_back(want);
        t.strides.push_back(0);
        continue;
      }
      const int64_t have = v.dims[i - lead];
      if (want == -1) want = have;
      if (want < 0 || (want != have && have != 1)) return std::nullopt;
      t.dims.push_back(want);
      t.strides.push_back(want != have ? 0 : v.strides[i - lead]);
    }
    return t;
  }
  if (op == "aten.unsqueeze_copy.default") {
    std::optional<int64_t> d = axis(static_int(ir, a[1]), r + 1);
    if (!d) return std::nullopt;
    v.dims.insert(v.dims.begin() + *d, 1);
    v.strides.insert(v.strides.begin() + *d, 0);
    return v;
  }
  if (op == "aten.squeeze_copy.dim" || op == "aten.squeeze_copy.dims" || op == "aten.squeeze_copy.default") {
    // As the builder: listed dims (every dim for .default) of size 1 go; a 0-d tensor takes 0 and -1.
    std::set<int64_t> drop;
    if (op == "aten.squeeze_copy.default") {
      for (int64_t k = 0; k < r; ++k) drop.insert(k);
    } else {
      std::optional<Dims> listed = op == "aten.squeeze_copy.dims" ? static_ints(ir, a[1]) : std::nullopt;
      if (op == "aten.squeeze_copy.dim")
        if (std::optional<int64_t> d = static_int(ir, a[1])) listed = Dims{*d};
      if (!listed) return std::nullopt;
      for (int64_t d : *listed) {
        std::optional<int64_t> k = axis(d, std::max<int64_t>(r, 1));
        if (!k) return std::nullopt;
        drop.insert(*k);
      }
    }
    VkExprView t;
    t.offset = v.offset;
    for (int64_t k = 0; k < r; ++k)
      if (!drop.count(k) || v.dims[k] != 1) t.dims.push_back(v.dims[k]), t.strides.push_back(v.strides[k]);
    return t;
  }
  if (op == "aten.view_copy.default" || op == "aten._unsafe_view.default") {
    std::optional<Dims> size = static_ints(ir, a[1]);
    if (!size) return std::nullopt;
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < size->size(); ++i) {
      if ((*size)[i] == -1 && infer < 0) infer = static_cast<int64_t>(i);
      else if ((*size)[i] < 0) return std::nullopt;
      else known *= (*size)[i];
    }
    if (infer >= 0) {
      if (known == 0 || numel(v.dims) % known != 0) return std::nullopt;
      (*size)[infer] = numel(v.dims) / known;
    }
    if (!reshape_view(v, *size)) return std::nullopt;
    return v;
  }
  if (op == "aten.flip.default") {
    std::optional<Dims> dims = static_ints(ir, a[1]);
    if (!dims) return std::nullopt;
    std::set<int64_t> seen;
    for (int64_t d : *dims) {
      std::optional<int64_t> k = axis(d, r);
      if (!k || !seen.insert(*k).second) return std::nullopt;
      // Index i reads n - 1 - i: start at the last element and walk back.
      if (v.dims[*k] > 0) v.offset += (v.dims[*k] - 1) * v.strides[*k];
      v.strides[*k] = -v.strides[*k];
    }
    return v;
  }
  if (op == "aten.clone.default" && !is_null(ir, a[1])) return std::nullopt;  // a memory format: not a plain copy
  return v;  // clone, alias_copy, detach_copy, lift_fresh_copy: the elements as they are
}

}  // namespace

std::optional<int64_t> static_int(const format::VkGraphIR& ir, int32_t id) {
  const auto& v = ir.values[id];
  if (v.kind == VkValueKind::Int) return v.int_val;
  if (v.kind == VkValueKind::Double && v.double_val == std::floor(v.double_val) && std::fabs(v.double_val) < 0x1p62)
    return static_cast<int64_t>(v.double_val);
  return std::nullopt;
}

VkExprView contiguous_view(const Dims& dims) {
  VkExprView v;
  v.dims = dims;
  v.strides.assign(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) v.strides[i - 1] = v.strides[i] * dims[i];
  return v;
}

bool reshape_view(VkExprView& v, const Dims& to) {
  if (numel(v.dims) != numel(to) || numel(to) == 0) return false;
  Dims st(to.size(), 1);
  int64_t vd = static_cast<int64_t>(to.size()) - 1;
  int64_t chunk = v.strides.empty() ? 1 : v.strides.back(), tn = 1, vn = 1;
  for (int64_t d = static_cast<int64_t>(v.dims.size()) - 1; d >= 0; --d) {
    tn *= v.dims[d];
    if (d == 0 || (v.dims[d - 1] != 1 && v.strides[d - 1] != tn * chunk)) {
      while (vd >= 0 && (vn < tn || to[vd] == 1)) {
        st[vd] = vn * chunk;
        vn *= to[vd];
        --vd;
      }
      if (vn != tn) return false;
      if (d > 0) chunk = v.strides[d - 1], tn = 1, vn = 1;
    }
  }
  while (vd >= 0 && to[vd] == 1) st[vd--] = 1;
  if (vd != -1) return false;
  v.dims = to;
  v.strides = st;
  return true;
}

std::vector<int64_t> normalized_permutation(const std::vector<int64_t>& dims, size_t rank) {
  if (dims.size() != rank) return {};
  std::vector<int64_t> p;
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    int64_t k = d < 0 ? d + static_cast<int64_t>(rank) : d;
    if (k < 0 || k >= static_cast<int64_t>(rank) || !seen.insert(k).second) return {};
    p.push_back(k);
  }
  return p;
}

bool layout_op(const std::string& name) {
  return std::any_of(ops().begin(), ops().end(), [&](const auto& o) { return o.first == name; });
}

std::optional<VkExprView> view_through(const format::VkGraphIR& ir, const format::VkOpCall& c, const VkExprView& in) {
  auto known = std::find_if(ops().begin(), ops().end(), [&](const auto& o) { return o.first == c.name; });
  if (known == ops().end() || c.args.size() != known->second) return std::nullopt;
  const auto& out = ir.values[c.args.back()];
  if (out.kind != VkValueKind::Tensor) return std::nullopt;
  std::optional<VkExprView> v = apply(ir, c, in);
  if (!v || v->dims != out.tensor.dims) return std::nullopt;
  return v;
}

}  // namespace etwebgpu::graph
