// A Llama-3.2-1B-shape decoder with 4-bit group-wise weights, built in memory with the public
// builder API only (include/etwebgpu/builder.h). The op sequence is the one ExecuTorch's Vulkan
// Llama export emits with its custom ops: et_vk.embedding_q4gsw, et_vk.rms_norm, et_vk.linear_q4gsw
// (every projection and the output head), et_vk.apply_rotary_emb (interleaved, Meta layout) on the
// frequency rows picked by input_pos, sdpa_with_kv_cache (update_cache + custom_sdpa fused) and a
// SiLU-gated MLP. One token per run: tokens int64 [1, 1] and input_pos int64 [1] in, logits
// [1, vocab] out. The KV caches [1, context, kv_heads, head_dim] per layer are program state
// (ProgramBuilder::mutable_tensor, zeros) that the delegate writes in place, so they carry from one
// Model::run to the next and Model::reset_state() clears them.
// Shared by the benchmark (q4_llama.cpp) and its test (tests/program/q4_llama_test.cpp), which
// checks the program against an fp64 CPU evaluation of the same weights.
#pragma once
#include <cstdint>
#include <vector>

namespace etwebgpu::bench {

struct Q4LlamaConfig {
  int64_t vocab = 128256, dim = 2048, layers = 16, heads = 32, kv_heads = 8, ffn = 8192;
  int64_t context = 1024;  // KV cache positions
  int64_t group = 32;      // 4-bit quantization group size along K
  double eps = 1e-5, rope_theta = 500000.0;
  uint64_t seed = 1;
  int64_t head_dim() const { return heads > 0 ? dim / heads : 0; }
};

// Throws etwebgpu::Error(InvalidArgument) naming the first field that cannot form the decoder.
void validate(const Q4LlamaConfig& c);

// A linear weight in the et_vk.linear_q4gsw layout: packed [n, k/2] with byte j of row r holding
// q[r, 2j] in the low nibble and q[r, 2j+1] in the high one (each stored as q + 8); scales
// [k/group, n_pad] (transposed, n padded to a multiple of 8 with zeros).
struct Q4Linear {
  int64_t n = 0, k = 0, n_pad = 0;
  std::vector<uint8_t> packed;
  std::vector<float> scales;
  int q(int64_t r, int64_t c) const;  // the 4-bit value, in [-8, 7]
  double weight(int64_t r, int64_t c, int64_t group) const { return q(r, c) * double(scales[(c / group) * n_pad + r]); }
};

// The token table in the et_vk.embedding_q4gsw layout: packed [vocab, dim/2] with q[v, 2j] in the
// HIGH nibble (the other order from the linear layout); scales [vocab, dim/group].
struct Q4Embedding {
  int64_t vocab = 0, dim = 0;
  std::vector<uint8_t> packed;
  std::vector<float> scales;
  int q(int64_t v, int64_t c) const;
  double weight(int64_t v, int64_t c, int64_t group) const {
    return q(v, c) * double(scales[v * (dim / group) + c / group]);
  }
};

struct Q4LlamaLayer {
  std::vector<float> attn_norm, ffn_norm;
  Q4Linear wq, wk, wv, wo, w_gate, w_up, w_down;
};

struct Q4LlamaWeights {
  Q4Embedding embedding;
  std::vector<Q4LlamaLayer> layers;
  std::vector<float> final_norm;
  Q4Linear output;
  std::vector<float> freqs_cos, freqs_sin;  // [context, head_dim/2]: cos/sin(pos * theta^(-2i/head_dim))
};

// Random weights from c.seed (a cheap PRNG over the packed bytes, so the 1B shape takes about a
// second). Scales are ~1/(4 sqrt(K)) per group so activations stay O(1) through every layer.
Q4LlamaWeights make_q4_llama_weights(const Q4LlamaConfig& c);

// The .pte bytes. Takes the weights by value: callers that need them afterwards pass a copy.
std::vector<uint8_t> build_q4_llama_pte(const Q4LlamaConfig& c, Q4LlamaWeights w);

}  // namespace etwebgpu::bench
