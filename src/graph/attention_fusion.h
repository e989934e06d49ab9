// Attention fusion at load: the decomposed attention that ExecuTorch exports for a Llama-style
// model (per layer: repeat_kv as unsqueeze -> expand -> view of the K and V caches; K
// transposed; q and k^T scaled; bmm(q, k^T) -> + mask -> softmax -> [zero the rows with no
// visible key] -> bmm(p, v)) becomes one call of `etwebgpu.attention`, which runs it in one
// kernel (two for split-K decode over long caches; ops/attention). Like graph/fusion.h it runs
// on the IR before any builder, when LoadOptions::fuse is on.
//
// Also the attention of ViTs and Whisper-style encoders exported from eager code: q, k and v
// sliced, permuted and reshaped out of the projections' outputs, and the output permuted back to
// [S, H * D] for the next linear. With static shapes those layout calls are absorbed too: the
// fused call reads q, k and v where the projections wrote them and writes its output in the
// consumer's layout (a fixed `layout`, below), so no permute or slice copy is left.
//
// The pattern is checked strictly: shapes and dims at every step, static view sizes, a softmax
// over the last dim, a scale from mul.Scalar factors or mul.Tensor by a one-element constant, a
// mask added with alpha 1 that broadcasts to the scores, and every intermediate value consumed
// only inside the pattern (not a graph input, output or state). Anything else is left alone.
#pragma once
#include <cstddef>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

// [q, k, v, attn_mask (Tensor|Null), scale (Double), zero_masked (Bool), layout (IntList|Null), out].
// layout Null: q [B, H, S_q, D], k [B, Hkv, S_kv, D], v [B, Hkv, S_kv, D_v] and out
// [B, H, S_q, D_v], contiguous at their live shapes; H a multiple of Hkv.
// layout [B, H, Hkv, S_q, S_kv, D, D_v, then (offset, batch, head, row stride) of q, k, v, out]
// (kLayoutInts ints): the four tensors are buffers of any static shape holding element d of row s
// of head h of batch b at offset + b * batch + h * head + s * row + d.
inline constexpr const char* kFusedAttentionOp = "etwebgpu.attention";
inline constexpr size_t kLayoutInts = 23;

struct AttentionFusionStats {
  size_t fused = 0, calls_removed = 0;
};

// Rewrites `ir.chain` in place (appending the new calls' scalar values to `ir.values`). Layout
// calls are absorbed only under `static_shapes` (no program input is dynamic).
AttentionFusionStats fuse_attention(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes);

}  // namespace etwebgpu::graph
