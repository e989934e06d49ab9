// GPU token sampling over one row of a logits buffer (token_sampler.wgsl): its dispatches appended
// to a model's run (a first pass over blocks of logits for greedy picks, top-k, top-p and
// temperature sampling, then the pick in one workgroup), and a 4-byte read of the chosen token.
#pragma once
#include <cstdint>
#include <optional>

#include "gpu/context.h"
#include "kernel/storage.h"

namespace etwebgpu::graph {

struct SamplerParams {
  uint32_t n = 0;          // vocabulary size
  uint32_t offset = 0;     // first logit of the row, in elements
  uint32_t sample = 0;     // 0 greedy, 1 sample
  uint32_t top_k = 0;      // 0: all
  float inv_temp = 1.f;
  float top_p = 1.f;
  float u = 0.f;           // uniform random number in [0, 1)
  uint32_t blocks = 0;     // set by commands(): the first pass's blocks (0: none)
};
static_assert(sizeof(SamplerParams) == 32);

// The sampler's kernels: the picks (over logits or a first pass's candidates; over a MASS_BLOCKS
// pass), and the first passes over blocks of logits.
enum class SamplerPass { Pick, PickMass, ArgmaxBlocks, TopkBlocks, MassBlocks, Count };

class TokenSampler {
 public:
  // `storage`: how the logits are stored (f32, or f16 at fp16 precision); `vocab`: the most
  // logits a pick reads (the first passes' candidates are sized for it).
  TokenSampler(gpu::Context& ctx, const gpu::Buffer& logits, kernel::Storage storage, uint32_t vocab);
  // Writes the parameters of the next pick and appends its commands to the run's.
  void commands(SamplerParams p, std::vector<gpu::Command>& cmds);
  // Compiles the kernels picks with `p` run (else the first pick compiles them).
  void prepare(const SamplerParams& p);
  // The picked token (a u32 in the first word of result(); the second is 1 when a top-p or
  // temperature pick ran over a first pass's block masses, 0 otherwise), to read back into `dst`
  // after the pick's commands in the same submit.
  gpu::Context::Read read(uint32_t* dst) const { return {&result_, 0, 4, dst}; }
  const gpu::Buffer& result() const { return result_; }

 private:
  struct Stage {
    const gpu::Pipeline* pipeline = nullptr;
    gpu::BindGroup bind_group;
  };
  const Stage& stage(SamplerPass pass);
  struct Plan {
    SamplerPass first, last;  // first == Pick: no first pass
    SamplerParams pass, pick;
    uint32_t blocks;
  };
  Plan plan(const SamplerParams& p) const;

  gpu::Context& ctx_;
  const gpu::Buffer& logits_;
  kernel::Storage storage_;
  uint32_t vocab_;
  gpu::Buffer uniform_, blocks_uniform_;
  uint32_t blocks_;       // first-pass blocks of the vocabulary
  uint32_t mass_blocks_;  // blocks_ where the pick's workgroup memory holds its search, else 0
  gpu::Buffer result_, part_;
  std::optional<Stage> stages_[static_cast<size_t>(SamplerPass::Count)];
};

}  // namespace etwebgpu::graph
