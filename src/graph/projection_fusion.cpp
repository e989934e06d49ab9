#include "graph/projection_fusion.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/attention_fusion.h"
#include "graph/fusion.h"
#include "graph/memory_plan.h"

namespace etwebgpu::graph {
namespace {

using format::VkDType;
using format::VkValueKind;

struct Projection {
  size_t call;     // chain index of the linear
  int32_t w, b, y;  // weight, bias (-1: none), output
  int64_t n;
};

bool f32_constant(const format::VkGraphIR& ir, int32_t id, size_t rank) {
  const auto& v = ir.values[id];
  return v.kind == VkValueKind::Tensor && v.tensor.dtype == VkDType::Float32 && v.tensor.is_constant() &&
         static_cast<size_t>(v.tensor.constant_id) < ir.constants.size() && v.tensor.dims.size() == rank &&
         ir.constants[v.tensor.constant_id].data.size() >= static_cast<size_t>(numel(v.tensor.dims)) * 4;
}

// Layout entries of operand `t` (0 q, 1 k, 2 v) of a fixed attention layout (kFusedAttentionOp).
struct Operand {
  int64_t b, heads, rows, width;
  int64_t* at;  // offset, batch, head, row stride
};
Operand operand(std::vector<int64_t>& l, int t) {
  int64_t heads = t == 0 ? l[1] : l[2], rows = t == 0 ? l[3] : l[4], width = t == 2 ? l[6] : l[5];
  return {l[0], heads, rows, width, &l[7 + 4 * t]};
}

// Whether operand t of layout l reads a [M, n] tensor row by row: rows of n, every head inside.
// (A layout is checked when its op is built, after this pass: entries outside [0, 2^32) are left
// to that check, and the arithmetic here is wide enough for any entry below 2^32.)
bool row_by_row(std::vector<int64_t>& l, int t, int64_t m, int64_t n) {
  if (l.size() != kLayoutInts) return false;
  for (int64_t x : l)
    if (x < 0 || x > int64_t(UINT32_MAX)) return false;
  Operand o = operand(l, t);
  const int64_t* a = o.at;
  using wide = __int128;
  if (o.heads < 1 || o.width < 1) return false;
  return a[3] == n && wide(a[0]) + wide(o.heads - 1) * a[2] + o.width <= n &&
         (o.b == 1 || wide(a[1]) == wide(o.rows) * n) && wide(o.b) * o.rows <= m;
}

}  // namespace

ProjectionFusionStats fuse_projections(format::VkGraphIR& ir, const UseDef& ix) {
  ProjectionFusionStats stats;
  // The calls reading y with the argument slot naming it (SIZE_MAX: inside a ValueList).
  auto reads = [&](int32_t y) {
    std::vector<std::pair<size_t, size_t>> r;
    for (size_t i : ix.readers(y)) {
      const auto& c = ir.chain[i];
      for (size_t a = 0; a + 1 < c.args.size(); ++a)
        if (c.args[a] == y) r.push_back({i, a});
        else if (ir.values[c.args[a]].kind == VkValueKind::ValueList &&
                 std::count(ir.values[c.args[a]].ids.begin(), ir.values[c.args[a]].ids.end(), y))
          r.push_back({i, SIZE_MAX});
    }
    return r;
  };
  std::map<int32_t, std::vector<std::pair<size_t, size_t>>> reads_of;  // of the candidates' outputs

  // Candidate linears by input.
  std::map<int32_t, std::vector<Projection>> by_input;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    const auto& c = ir.chain[i];
    if (c.name != "aten.linear.default" || c.args.size() != 4) continue;
    int32_t x = c.args[0], w = c.args[1], b = c.args[2], y = c.args[3];
    if (ir.values[x].kind != VkValueKind::Tensor || ir.values[x].tensor.dtype != VkDType::Float32) continue;
    if (!f32_constant(ir, w, 2)) continue;
    int64_t n = ir.values[w].tensor.dims[0], k = ir.values[w].tensor.dims[1];
    bool no_bias = ir.values[b].kind == VkValueKind::Null;
    if (!no_bias && !(f32_constant(ir, b, 1) && ir.values[b].tensor.dims[0] == n)) continue;
    const auto& yd = ir.values[y].tensor.dims;
    if (ir.values[y].kind != VkValueKind::Tensor || ir.values[y].tensor.dtype != VkDType::Float32 || yd.empty() ||
        yd.back() != n || ix.pinned(y) || ix.producer(y) != i || ir.values[x].tensor.dims.back() != k)
      continue;
    // Read only as q, k or v of fused attention calls laid out row by row.
    int64_t m = numel(yd) / std::max<int64_t>(n, 1);
    reads_of[y] = reads(y);
    bool ok = !reads_of[y].empty();
    for (auto [r, slot] : reads_of[y]) {
      const auto& rc = ir.chain[r];
      ok = ok && rc.name == kFusedAttentionOp && rc.args.size() == 8 && slot <= 2 &&
           ir.values[rc.args[6]].kind == VkValueKind::IntList &&
           row_by_row(ir.values[rc.args[6]].ints, static_cast<int>(slot), m, n);
    }
    if (ok) by_input[x].push_back({i, w, no_bias ? -1 : b, y, n});
  }

  std::vector<bool> removed(ir.chain.size(), false);
  std::vector<std::optional<format::VkOpCall>> replacement(ir.chain.size());
  for (auto& [x, group] : by_input) {
    if (group.size() < 2) continue;
    int64_t k = ir.values[group[0].w].tensor.dims[1];
    bool same_k = true;
    for (const auto& p : group) same_k = same_k && ir.values[p.w].tensor.dims[1] == k;
    // The input keeps its value from the first linear to the last.
    size_t first = group.front().call, last = group.back().call;
    if (!same_k || !ix.unchanged_between(x, first, last)) continue;
    // Stacked weight and bias.
    int64_t ntot = 0;
    bool any_bias = false;
    for (const auto& p : group) ntot += p.n, any_bias = any_bias || p.b >= 0;
    auto wbytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(ntot * k) * 4);
    auto bbytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(ntot) * 4, 0);
    std::vector<int64_t> col(group.size());
    int64_t off = 0;
    for (size_t g = 0; g < group.size(); ++g) {
      const auto& p = group[g];
      col[g] = off;
      std::memcpy(wbytes->data() + off * k * 4, ir.constants[ir.values[p.w].tensor.constant_id].data.data(),
                  static_cast<size_t>(p.n * k) * 4);
      if (p.b >= 0)
        std::memcpy(bbytes->data() + off * 4, ir.constants[ir.values[p.b].tensor.constant_id].data.data(),
                    static_cast<size_t>(p.n) * 4);
      off += p.n;
    }
    int32_t w = add_owned_constant(ir, wbytes, VkDType::Float32, {ntot, k});
    int32_t b = -1;
    if (any_bias) {
      b = add_owned_constant(ir, bbytes, VkDType::Float32, {ntot});
    } else {
      ir.values.push_back(format::VkValue{});  // Null
      b = static_cast<int32_t>(ir.values.size() - 1);
    }
    format::VkValue yv = ir.values[group[0].y];
    yv.tensor.dims.back() = ntot;
    yv.tensor.mem_obj_id = -1;
    ir.values.push_back(std::move(yv));
    int32_t y = static_cast<int32_t>(ir.values.size() - 1);
    // The attention calls read the stacked output at each projection's column offset.
    for (size_t g = 0; g < group.size(); ++g) {
      const auto& p = group[g];
      for (auto [r, slot] : reads_of[p.y]) {
        auto& rc = ir.chain[r];
        // Each call gets its own layout value (another call may share the list).
        format::VkValue lv = ir.values[rc.args[6]];
        Operand o = operand(lv.ints, static_cast<int>(slot));
        o.at[0] += col[g];
        o.at[1] = o.b == 1 ? o.at[1] : o.rows * ntot;
        o.at[3] = ntot;
        ir.values.push_back(std::move(lv));
        rc.args[6] = static_cast<int32_t>(ir.values.size() - 1);
        rc.args[slot] = y;
      }
    }
    format::VkOpCall call = ir.chain[first];
    call.args = {x, w, b, y};
    replacement[first] = std::move(call);
    for (const auto& p : group)
      if (p.call != first) removed[p.call] = true;
    ++stats.groups;
    stats.linears_removed += group.size() - 1;
  }
  if (stats.groups) splice_calls(ir, removed, replacement);
  return stats;
}

}  // namespace etwebgpu::graph
