// The load rewrite that folds an RMSNorm into the 4-bit linears reading it (q4gsw_gemv_rows.h
// FoldedInput::Norm): et_vk.rms_norm(x, weight, eps) -> y, where y is read only as the input of linears that
// take a folded norm (linear_q4gsw, its multi-output form, the 8da4w linears that choose their own
// activation parameters), goes; each of those linears reads ValueList [x, weight, eps, y] instead
// and normalizes x's row as its GEMV reads it. A decode step of a Llama loses one dispatch per
// norm (two per layer and the final one: each was a one-workgroup kernel of a few us of work and
// a dependent dispatch's latency). The GEMM routes (several rows, prefill) still run the norm's
// kernel into y first.
//
// Runs late (after the q/k/v projections became one multi-output call, so the attention norm has
// one reader): y must be no graph output or state, and nothing between the norm and its last
// reader may name x or the weight other than those readers.
#include <algorithm>
#include <set>
#include <vector>

#include "graph/epilogue_fusion.h"
#include "graph/fusion.h"
#include "ops/op_common.h"
#include "ops/quantized/q4gsw_gemv_rows.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

size_t fold_rms_norm_into_linears(Graph&, format::VkGraphIR& ir) {
  const size_t n = ir.chain.size();
  const auto mentions = graph::tensor_mentions(ir);
  const std::set<int32_t> pinned = graph::pinned_values(ir);
  auto mem = [&](int32_t id) { return ir.values[id].tensor.is_constant() ? -1 : ir.values[id].tensor.mem_obj_id; };
  std::vector<bool> removed(n, false);
  std::vector<int32_t> ts;
  size_t fused = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& norm = ir.chain[i];
    if (norm.name != "et_vk.rms_norm.default" || norm.args.size() != 4) continue;
    const int32_t x = norm.args[0], w = norm.args[1], eps = norm.args[2], y = norm.args[3];
    if (!graph::float_tensor(ir, x) || !graph::float_tensor(ir, y) || pinned.count(y) ||
        ir.values[x].tensor.dims.empty() || ir.values[x].tensor.dims != ir.values[y].tensor.dims ||
        ir.values[x].tensor.dtype != ir.values[y].tensor.dtype || ir.values[x].tensor.dims.back() % 8 != 0 ||
        !(ir.values[eps].kind == VkValueKind::Double || ir.values[eps].kind == VkValueKind::Int))
      continue;
    const bool weighted = ir.values[w].kind != VkValueKind::Null;
    if (weighted && (!graph::float_tensor(ir, w) || numel(ir.values[w].tensor.dims) != ir.values[x].tensor.dims.back())) continue;
    // y: written here, then read only as the input (argument 0, nowhere else) of takers, directly
    // or through contiguous clones of it (the export gives q, k and v, and gate and up, clones of
    // the norm's output) that only takers read; those clones go.
    std::vector<std::pair<size_t, int32_t>> readers;  // (call, the normalized value it reads)
    std::vector<size_t> clones;
    auto taker = [&](size_t at, int32_t v) {
      const auto& c = ir.chain[at];
      if (removed[at] || !q4::takes_folded_input(c.name) || c.args[0] != v) return false;
      graph::tensors_of(ir, c, ts);
      return std::count(ts.begin(), ts.end(), v) == 1;
    };
    const auto& uses = mentions[y];
    bool readers_ok = uses.size() >= 2 && uses[0] == i;
    for (size_t u = 1; u < uses.size() && readers_ok; ++u) {
      const auto& c = ir.chain[uses[u]];
      if (c.name == "aten.clone.default" && c.args.size() == 3 && c.args[0] == y && ir.values[c.args[1]].kind == VkValueKind::Null &&
          graph::float_tensor(ir, c.args[2]) && ir.values[c.args[2]].tensor.dims == ir.values[y].tensor.dims &&
          ir.values[c.args[2]].tensor.dtype == ir.values[y].tensor.dtype && !pinned.count(c.args[2])) {
        const auto& cu = mentions[c.args[2]];
        readers_ok = cu.size() >= 2 && cu[0] == uses[u];
        for (size_t k = 1; k < cu.size() && readers_ok; ++k) {
          readers_ok = taker(cu[k], c.args[2]);
          readers.emplace_back(cu[k], c.args[2]);
        }
        clones.push_back(uses[u]);
      } else {
        readers_ok = taker(uses[u], y);
        readers.emplace_back(uses[u], y);
      }
    }
    if (!readers_ok || readers.empty()) continue;
    // x and the weight are now read at each reader: nothing in between may name them (or share
    // their storage), nor may a reader name them otherwise.
    std::vector<int32_t> reads{x};
    if (weighted) reads.push_back(w);
    size_t last = 0;
    for (const auto& r : readers) last = std::max(last, r.first);
    bool safe = true;
    for (size_t q = i + 1; q <= last && safe; ++q) {
      if (removed[q] || std::count(clones.begin(), clones.end(), q)) continue;
      graph::tensors_of(ir, ir.chain[q], ts);
      for (int32_t t : ts)
        for (int32_t r : reads)
          if (t == r || (mem(r) >= 0 && mem(t) == mem(r))) safe = false;
    }
    if (!safe) continue;
    for (const auto& [at, v] : readers) ir.chain[at].args[0] = graph::add_value_list(ir, {x, w, eps, v});
    for (size_t c : clones) removed[c] = true;
    removed[i] = true;
    ++fused;
  }
  if (!fused) return 0;
  graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_LOAD_REWRITE(fold_rms_norm_into_linears, Norms);

}  // namespace
}  // namespace etwebgpu::ops
