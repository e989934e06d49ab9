// fp64 references for rotary embeddings (Llama apply_rotary_emb; HF apply_rotary_pos_emb).
#pragma once
#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// x [..., S, H, D]; cos/sin [S, D/2]: complex multiply of (x[2i], x[2i+1]) by (cos_i, sin_i).
HostTensor rope_interleaved(const HostTensor& x, const HostTensor& cos, const HostTensor& sin);
// x [..., S, H, D]; cos/sin [max_seq, D] read at row start_pos + s: x * cos + rotate_half(x) * sin,
// rotate_half(x) = cat(-x[D/2:], x[:D/2]).
HostTensor rope_hf(const HostTensor& x, const HostTensor& cos, const HostTensor& sin, int64_t start_pos);

}  // namespace etwebgpu::ref
