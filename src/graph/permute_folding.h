// Inverse permute pairs folded at load: y = permute_copy(permute_copy(x, p1), p2) with p2 undoing
// p1 is x again, so the pair becomes one contiguous clone of x, which memory planning turns into
// an alias (no dispatch). ExecuTorch's Llama recipe writes three such pairs per layer: q, k and v
// go to [B, H, S, D] for the KV-cache update and back to [B, S, H, D] for custom_sdpa.
//
// Taken when the middle tensor is read by the second permute alone and is no graph input, output
// or state, and no call between the two names x (so x still holds its value there).
#pragma once
#include <cstddef>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

// Rewrites `ir.chain` in place (appending one Null value when it folds); returns the pairs folded.
size_t fold_inverse_permutes(format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
