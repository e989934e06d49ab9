// What other op families use of the rotary embeddings' kernels (rope.cpp, rope_rotary.wgsl).
#pragma once
#include <cstdint>
#include <functional>

#include "ops/op_common.h"

namespace etwebgpu::ops::rope {

// et_vk.apply_rotary_emb's rotation of q [M, Hq * D] and k [M, Hk * D] into yq and yk of the same
// words: interleaved pairs (2i, 2i + 1) of each head, row m by cos[r + m, i] and sin[r + m, i]
// (tables [rows, D / 2]), r = first_row of the run (none: 0).
kernel::Kernel interleaved_rows(int32_t q, int32_t k, int32_t fc, int32_t fs, int32_t yq, int32_t yk, uint32_t head_dim,
                                std::function<int64_t(const kernel::Live&)> first_row = {});

}  // namespace etwebgpu::ops::rope
