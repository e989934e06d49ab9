// A small Llama/Qwen3-style decoder built with GraphBuilder: embedding, N layers of (RMSNorm,
// GQA attention with Qwen3 q/k RMSNorm, HF RoPE, KV caches via sdpa_with_kv_cache, SwiGLU MLP),
// final RMSNorm and LM head. Inputs: tokens int32 [1, S] (dynamic, S <= smax) and the start
// position int32 [1]; output: logits [1, S, vocab]. One .pte serves prefill and decode: the
// sequence length (sym_size.int) and position (select_as_symint) are runtime SymInts.
// Used by the decoder test (tests/ops/attention/) and the benchmarks (bench/).
#pragma once
#include <cstdint>
#include <vector>

namespace etwebgpu::models {

struct DecoderConfig {
  int64_t vocab = 32, dim = 32, heads = 4, kv_heads = 2, head_dim = 8, ffn = 48;
  int64_t cache = 16, smax = 8, layers = 2;
  double eps = 1e-5;
};

struct DecoderLayerWeights {
  // Linear weights are [out, in] row-major, as torch.nn.Linear stores them.
  std::vector<float> attn_norm, q_norm, k_norm, wq, wk, wv, wo, mlp_norm, wg, wu, wd;
};

struct DecoderWeights {
  std::vector<float> emb, final_norm, lm;
  std::vector<float> cos, sin;  // HF rotary tables [cache, head_dim]
  std::vector<DecoderLayerWeights> layers;
};

// Throws etwebgpu::Error(InvalidArgument) when a weight's size does not match the config.
std::vector<uint8_t> build_decoder_pte(const DecoderConfig& c, const DecoderWeights& w);

}  // namespace etwebgpu::models
