// The load rewrite that makes etwebgpu.layer_norm_linear / layer_norm_addmm calls
// (layer_norm_linear.h): a native_layer_norm over the last dim whose output only feeds one
// aten.linear as its input, or one aten.addmm as mat1 (with or without a fused epilogue), directly
// or through contiguous views, its mean and rstd unused, becomes one call at the GEMM's place.
// Only with static shapes, when the GEMM takes the 64x64 or small kernels at its shapes (the only
// ones with the norm prologue) in fewer than kFewTiles tiles: a batch-1 transformer's per-layer
// norms over a few hundred tokens, each a dispatch of its own that the GEMM then reads back.
#include <algorithm>
#include <set>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/rewrite_pipeline.h"
#include "graph/fusion.h"
#include "graph/memory_plan.h"
#include "ops/matmul/layer_norm_linear.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

// Each of the GEMM's column tiles computes its rows' statistics again (a pass over its A rows
// before the k loop). That pays off while the GEMM has few tiles and the norm's own dispatch is the
// larger cost (ViT-tiny: 197 rows, 36-48 tiles, 32.8 -> about 27 us per pair on the H200). At
// Whisper's 1500 rows (432-576 tiles) a first version, with a slower statistics loop, was 20-30 us
// slower than the pair; the present one was not measured there.
constexpr int64_t kFewTiles = 256;

size_t fuse_layer_norm_linear(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  if (!g.options().static_shapes) return 0;
  const size_t n = ir.chain.size();
  auto is = [&](int32_t id, VkValueKind k) { return ir.values[id].kind == k; };

  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& ln = ir.chain[i];
    if (ln.name != "aten.native_layer_norm.default" || ln.args.size() != 6) continue;
    int32_t x = ln.args[0], nw = ln.args[2], nb = ln.args[3], eps = ln.args[4], outs = ln.args[5];
    if (!graph::float_tensor(ir, x) || !is(outs, VkValueKind::ValueList) || ir.values[outs].ids.empty() ||
        !(is(eps, VkValueKind::Double) || is(eps, VkValueKind::Int)))
      continue;
    std::vector<int64_t> shape;  // normalized_shape: an IntList or a ValueList of Ints
    try {
      shape = g.int_list(ln.args[1]);
    } catch (const Error&) {
      continue;  // malformed: its builder reports it
    }
    if (shape.size() != 1) continue;
    const auto& xd = ir.values[x].tensor.dims;
    int64_t K = shape[0];
    if (xd.empty() || xd.back() != K || K <= 0 || K % 4 != 0) continue;
    bool params_ok = true;
    for (int32_t p : {nw, nb})
      params_ok = params_ok && (is(p, VkValueKind::Null) || (graph::float_tensor(ir, p) && numel(ir.values[p].tensor.dims) == K));
    if (!params_ok) continue;
    // The normalised tensor: read by one later call only; mean and rstd by none.
    const auto& o = ir.values[outs].ids;
    int32_t y = o[0];
    if (!graph::float_tensor(ir, y) || ir.values[y].tensor.dims != xd ||
        ir.values[y].tensor.dtype != ir.values[x].tensor.dtype || ix.sole_reader(y, i) == graph::UseDef::npos)
      continue;
    bool stats_unused = true;
    for (size_t k = 1; k < o.size(); ++k)
      if (is(o[k], VkValueKind::Tensor)) stats_unused = stats_unused && ix.unused(o[k]);
    if (!stats_unused) continue;
    // Contiguous views between (squeeze, reshape, clone: the exporter puts one before a 3-D
    // input's linear) stay, reading x instead: they alias it, so the linear reads x's rows.
    std::vector<size_t> views;
    int32_t value = y;
    size_t j = ix.sole_reader(y, i);
    bool chain_ok = true;
    while (chain_ok && graph::is_contiguous_view(ir, ir.chain[j]) && ir.chain[j].args.front() == value) {
      int32_t vo = ir.chain[j].args.back();
      chain_ok = graph::float_tensor(ir, vo) && ir.values[vo].tensor.dtype == ir.values[y].tensor.dtype &&
                 numel(ir.values[vo].tensor.dims) == numel(xd) && ix.sole_reader(vo, j) != graph::UseDef::npos;
      views.push_back(j);
      value = vo;
      if (chain_ok) j = ix.sole_reader(vo, j);
    }
    if (!chain_ok) continue;
    // A linear reading it as its input (weight [N, K]), or an addmm as mat1 (GPT-2's Conv1D:
    // mat2 [K, N], N % 4 == 0 for the vec4 loads along N).
    auto& lin = ir.chain[j];
    const bool linear = lin.name == "aten.linear.default" && lin.args.size() >= 4 && lin.args[0] == value;
    const bool addmm = lin.name == "aten.addmm.default" && lin.args.size() >= 6 && lin.args[1] == value &&
                       ir.values[value].tensor.dims.size() == 2 && graph::float_tensor(ir, lin.args[0]);
    if (!linear && !addmm) continue;
    const size_t at = linear ? 0 : 1, w_at = linear ? 1 : 2;
    bool y_once = true;
    for (size_t a = 0; a < lin.args.size(); ++a) y_once = y_once && (a == at || lin.args[a] != value);
    int32_t w = lin.args[w_at];
    if (!y_once || !graph::float_tensor(ir, w) || ir.values[w].tensor.dims.size() != 2) continue;
    const auto& wd = ir.values[w].tensor.dims;
    if (wd[linear ? 1 : 0] != K || (addmm && wd[1] % 4 != 0)) continue;
    int64_t M = numel(xd) / K, N = wd[linear ? 0 : 1];
    if (!gemm_takes_64x64_tiles(M, N, K, 1) || ceil_div(M, 64) * ceil_div(N, 64) >= kFewTiles) continue;
    // x and the norm's parameters are now read at j: nothing in between may write them, nor may
    // they share the output's storage.
    std::vector<int32_t> reads{x};
    for (int32_t p : {nw, nb})
      if (is(p, VkValueKind::Tensor)) reads.push_back(p);
    int32_t out = lin.args.back();
    bool safe = true;
    for (int32_t r : reads) safe = safe && r != out && !ix.share_memory(out, r) && ix.unchanged_between(r, i, j, views);
    if (!safe) continue;
    format::VkOpCall call;
    call.node_id = lin.node_id;
    call.name = linear ? kLayerNormLinear : kLayerNormAddmm;
    call.args = {views.empty() ? x : value, nw, nb, eps};
    if (addmm) call.args.push_back(lin.args[0]);  // its bias, then mat2, beta, alpha ...
    call.args.insert(call.args.end(), lin.args.begin() + w_at, lin.args.end());
    lin = std::move(call);
    if (!views.empty()) ir.chain[views.front()].args.front() = x;
    removed[i] = true;
    ++fused;
  }
  if (!fused) return 0;
  graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_LOAD_REWRITE(fuse_layer_norm_linear, Patterns);

}  // namespace
}  // namespace etwebgpu::ops
