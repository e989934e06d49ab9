// Text generation over a decoder .pte (ExecuTorch's Llama export and its kind): inputs are token
// ids [1, T] (int64) and the position (int64 [1], or [T] for some exports); the output is logits
// [1, V] or [1, T, V]. The KV cache lives in the program's mutable buffers on the GPU; sampling
// runs on the GPU too (only the chosen token id is read back each step).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "etwebgpu/etwebgpu.h"

namespace etwebgpu {

struct GenerateOptions {
  int max_new_tokens = 64;
  double temperature = 0.0;            // 0: greedy (argmax)
  int top_k = 0;                       // 0: the whole vocabulary
  double top_p = 1.0;                  // nucleus sampling mass (1: off)
  uint64_t seed = 0;
  std::vector<int64_t> stop_tokens;    // generation ends after emitting one of these
  int64_t context_length = 0;          // 0: taken from the model's KV cache
  // Called after each prefill chunk with the prompt tokens run so far and the prompt's length.
  std::function<void(int64_t done, int64_t total)> on_prefill;
};

struct GenerateResult {
  std::vector<int64_t> tokens;         // generated tokens (the prompt excluded)
  std::string stop_reason;             // "max_new_tokens" | "stop_token" | "context_full" | "stopped"
  int64_t context_length = 0;          // positions the model's cache holds
  double prefill_tok_s = 0, decode_tok_s = 0;
};

// Starts a fresh sequence (resets the model's state), runs the prompt from position 0 (in chunks
// as large as the model's token input allows), then decodes one token per run, each run queued
// before the one ahead of it finishes (the token goes from one to the next on the GPU). `on_token`
// sees each new token as it comes and may return false to stop early; it must not run the model
// (generate holds its run lock: that is an Error(InvalidArgument)). Throws Error(InvalidArgument) for an empty prompt, a prompt longer than the
// context or bad options, Error(Unsupported) for a model whose inputs/outputs do not fit the shape
// above.
GenerateResult generate(Model& model, const std::vector<int64_t>& prompt, const GenerateOptions& opts,
                        const std::function<bool(int64_t)>& on_token = {});

}  // namespace etwebgpu
