// Attention fusion at load: the decomposed attention that ExecuTorch exports for a Llama-style
// model (per layer: repeat_kv as unsqueeze -> expand -> view of the K and V caches; K
// transposed; q and k^T scaled; bmm(q, k^T) -> + mask -> softmax -> [zero the rows with no
// visible key] -> bmm(p, v)) becomes one call of `etwebgpu.attention`, which runs it in one
// kernel (two for split-K decode over long caches; ops/attention). Like graph/fusion.h it runs
// on the IR before any builder, when LoadOptions::fuse is on.
//
// The pattern is checked strictly: shapes and dims at every step, static view sizes, a softmax
// over the last dim, a scale from mul.Scalar factors only, a mask added with alpha 1 that
// broadcasts to the scores, and every intermediate value consumed only inside the pattern (not a
// graph input, output or state). Anything else is left alone.
#pragma once
#include <cstddef>

#include "format/ir.h"

namespace etwebgpu::graph {

// [q [B, H, S_q, D], k [B, Hkv, S_kv, D], v [B, Hkv, S_kv, D_v], attn_mask (Tensor|Null),
// scale (Double), zero_masked (Bool), out [B, H, S_q, D_v]]; H a multiple of Hkv.
inline constexpr const char* kFusedAttentionOp = "etwebgpu.attention";

struct AttentionFusionStats {
  size_t fused = 0, calls_removed = 0;
};

// Rewrites `ir.chain` in place (appending the new calls' scalar values to `ir.values`).
AttentionFusionStats fuse_attention(format::VkGraphIR& ir);

}  // namespace etwebgpu::graph
