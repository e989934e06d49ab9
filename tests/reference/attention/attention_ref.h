// fp64 references for attention ops, from PyTorch semantics:
// sdpa = softmax(q @ k^T * scale + mask) @ v (custom_ops_lib.sdpa_impl / F.scaled_dot_product_attention).
#pragma once
#include <optional>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// q [B..., H, Sq, D], k [B..., Hk, Skv, D], v [B..., Hk, Skv, Dv] with Hk == H or 1 (matmul
// broadcasting); mask broadcastable to [B..., H, Sq, Skv], float (added) or bool (keep = true);
// scale defaults to 1/sqrt(D). Returns float64 [B..., H, Sq, Dv].
HostTensor sdpa(const HostTensor& q, const HostTensor& k, const HostTensor& v, const HostTensor* mask,
                std::optional<double> scale);

// Llama sdpa_with_kv_cache: q [1, S, Hq, D]; keys/values [1, L, Hkv, D] hold the whole cache
// content after the update (L >= start_pos + S); causal: query s sees keys [0, start_pos + s].
HostTensor sdpa_kv_causal(const HostTensor& q, const HostTensor& keys, const HostTensor& values, int64_t start_pos,
                          std::optional<double> scale);

// The heads of an attention operand as a projection writes them: rows of `width` values ([S,
// width] or [1, S, width], any dtype), head h at columns offset + h * d .. + d. Returns float64
// [1, heads, S, d].
HostTensor split_heads(const HostTensor& rows, int64_t width, int64_t heads, int64_t d, int64_t offset = 0);

// [1, H, S, D] back to rows [S, H * D] (float64), as the next linear reads an attention's output.
HostTensor merge_heads(const HostTensor& o);

}  // namespace etwebgpu::ref
