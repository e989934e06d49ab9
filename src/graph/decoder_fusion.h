// Decoder patterns rewritten at load into one kernel each (LoadOptions::fuse):
//
// RMSNorm, as ExecuTorch's Llama writes it without the et_vk op:
//   sq = mul(x, x); m = mean.dim(sq, [-1], keepdim); v = add(m, eps); r = rsqrt(v);
//   y = mul(x, r) [; out = mul(y, weight)]
// becomes et_vk.rms_norm.default(x, weight | None, eps, out) (one workgroup per row), when eps is
// a number or a one-element constant (a prepacked one is a constant by then: graph/constant_folding.h).
//
// Interleaved rotary embedding (Llama's apply_rotary_emb on a [.., S, H, D/2, 2] view of x):
//   a = squeeze(slice(x, -1, 0, 1)); b = squeeze(slice(x, -1, 1, 2));
//   re = a * cos - b * sin; im = a * sin + b * cos; out = cat([unsqueeze(re, -1), unsqueeze(im, -1)], -1)
// becomes etwebgpu.rope_interleaved(x, cos, sin, out) (ops/rope), when cos and sin broadcast as
// [.., S, 1, D/2] against a [.., S, H, D/2].
//
// Every intermediate must be read only inside the pattern (not a graph output or program state),
// and the inputs must still hold their values at the pattern's last call, where the replacement
// runs.
#pragma once
#include <cstddef>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

inline constexpr const char* kRopeInterleavedOp = "etwebgpu.rope_interleaved";

struct DecoderFusionStats {
  size_t rms_norms = 0, ropes = 0, calls_removed = 0;
};

// Rewrites `ir.chain` in place; appends the scalar values the new calls need.
DecoderFusionStats fuse_decoder_patterns(format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
