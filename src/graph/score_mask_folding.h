// Two constant adds before a softmax folded into one, at load: timm's Swin adds the relative
// position bias to the attention scores, views them per window, adds the shifted-window mask and
// views them back:
//   s1 = add(x, bias)  -> view ... -> s2 = add(., mask) -> view ... -> softmax(s, -1)
// Both are constants once the bias gather is evaluated (graph/constant_evaluation.h), so this
// becomes softmax(add(x, bias + mask)) with the sum precomputed in x's shape: one add instead of
// two, and the pattern graph/attention_fusion.h fuses (scores + one mask -> softmax).
//
// The sum is reassociated, (x + b) + m against x + (b + m), so the scores may differ in the last
// bit of their magnitude; only scores a softmax reads are folded, where that is far inside its
// tolerance. Taken when every tensor between x and the softmax is float32, read only by the next
// call of the pattern and neither pinned nor aliased, the views are contiguous reinterpretations,
// x is not broadcast by either add, both constants broadcast into their adds, and the sum fits
// kMaxFoldedMaskBytes.
#pragma once
#include <cstddef>
#include <cstdint>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

inline constexpr uint64_t kMaxFoldedMaskBytes = 4ull << 20;

// Rewrites `ir` in place (appending one constant per fold); returns the folds.
size_t fold_score_masks(format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
