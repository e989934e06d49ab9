// fp64 references and packers for the 4-bit group-wise (q4gsw) and channel-wise (qcs4w) symmetric
// ops, written from ExecuTorch's backends/vulkan custom_ops_lib.py reference implementations and
// its weight packers (FuseQuantizedOpsTransform for qcs4w).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// q: int values in [-8, 7], row-major [rows, cols]. Linear packing: byte j of a row =
// (q[2j+1] + 8) << 4 | (q[2j] + 8), the row padded with zeros to a multiple of `pad_to` values.
std::vector<uint8_t> pack_q4_linear(const std::vector<int8_t>& q, int64_t rows, int64_t cols, int64_t pad_to);
// Embedding packing: byte j = (q[2j] + 8) << 4 | (q[2j+1] + 8) (cols even).
std::vector<uint8_t> pack_q4_embedding(const std::vector<int8_t>& q, int64_t rows, int64_t cols);

// Channel-wise packing (linear_qcs4w): byte j of a row = (q[2j] + 8) << 4 | (q[2j+1] + 8), an odd
// row padded with q = 0: [rows, ceil(cols / 2)].
std::vector<uint8_t> pack_q4_channelwise(const std::vector<int8_t>& q, int64_t rows, int64_t cols);

// y[..., n] = sum_k x[..., k] * q[n, k] * scales[k / gs][n] (+ bias[n]); scales [groups, scol].
HostTensor linear_q4gsw(const HostTensor& x, const std::vector<int8_t>& q, int64_t N, int64_t K,
                        const std::vector<float>& scales, int64_t scol, int64_t gs, const std::vector<float>* bias);
// y[..., n] = sum_k x[..., k] * q[n, k] * scales[n].
HostTensor linear_qcs4w(const HostTensor& x, const std::vector<int8_t>& q, int64_t N, int64_t K,
                        const std::vector<float>& scales);
// out[idx..., d] = q[idx, d] * scales[idx][d / gs] (scales [V, D/gs]; one value when single).
HostTensor embedding_q4gsw(const std::vector<int8_t>& q, int64_t V, int64_t D, const std::vector<float>& scales,
                           int64_t gs, bool single_scale, const HostTensor& indices);

}  // namespace etwebgpu::ref
