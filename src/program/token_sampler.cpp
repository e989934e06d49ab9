#include "program/token_sampler.h"

#include <algorithm>

#include "kernel/kernel.h"

namespace etwebgpu::graph {
namespace {

// Logits per workgroup of the first passes (eight an invocation), and the largest top_k they
// take (its candidates, blocks x top_k, are about 1/8 of the vocabulary).
constexpr uint32_t kBlock = 2048;
constexpr uint32_t kMaxTopK = 256;

// Workgroup memory of the pick over MASS_BLOCKS: its reductions' 3 KiB and 136 bytes a block.
uint32_t mass_blocks_fitting(uint32_t workgroup_storage) {
  return workgroup_storage > 3328 ? (workgroup_storage - 3328) / 136 : 0;
}

// The sampler's kernels as kernel declarations, for their generated preambles (typed logits) and
// binding slots: the pick, and the first passes over blocks. They run outside any graph node, so
// their params functions are never called: commands() writes them.
kernel::Kernel sampler_kernel(const gpu::Buffer& result, const gpu::Buffer& part, SamplerPass pass, uint32_t mass_blocks) {
  kernel::Kernel k("token_sampler");
  k.input("L", 0);
  if (pass == SamplerPass::Pick) k.buffer("OUT", result, "u32", kernel::Access::ReadWrite);
  if (pass == SamplerPass::ArgmaxBlocks) k.define("ARGMAX_BLOCKS");
  if (pass == SamplerPass::TopkBlocks) k.define("TOPK_BLOCKS");
  if (pass == SamplerPass::MassBlocks) k.define("MASS_BLOCKS");
  k.constant("BLOCK", kBlock);
  if (pass == SamplerPass::Pick) k.constant("MAXB", std::max<uint32_t>(mass_blocks, 1));
  k.buffer("PART", part, "u32", pass == SamplerPass::Pick ? kernel::Access::Read : kernel::Access::ReadWrite)
      .params<SamplerParams>([](const kernel::Live&) { return SamplerParams{}; })
      .groups([](const kernel::Live&) { return kernel::Groups::grid(1, 1); });
  return k;
}

}  // namespace

TokenSampler::Stage TokenSampler::stage(SamplerPass pass, const gpu::Buffer& logits, kernel::Storage storage) {
  kernel::Kernel k = sampler_kernel(result_, part_, pass, mass_blocks_);
  const gpu::Pipeline& p = ctx_.pipeline_from_source(k.source({storage}), k.entry(), k.constants(), k.shader());
  const gpu::Buffer& uniform = pass == SamplerPass::Pick ? uniform_ : blocks_uniform_;
  kernel::Kernel::Slots s = k.slots();
  std::vector<gpu::Binding> e{{s.tensor[0], &logits}, {s.uniform, &uniform}};
  // Slots in declaration order: OUT then PART (the pick), or PART alone.
  for (size_t i = 0; i < s.buffer.size(); ++i) e.push_back({s.buffer[i], pass != SamplerPass::Pick || i == 1 ? &part_ : &result_});
  return Stage{&p, ctx_.bind_group(p, e)};
}

TokenSampler::TokenSampler(gpu::Context& ctx, const gpu::Buffer& logits, kernel::Storage storage, uint32_t vocab)
    : ctx_(ctx),
      vocab_(vocab),
      uniform_(ctx.create_buffer(sizeof(SamplerParams), gpu::BufferKind::Uniform, "sampler.params")),
      blocks_uniform_(ctx.create_buffer(sizeof(SamplerParams), gpu::BufferKind::Uniform, "sampler.block_params")),
      blocks_((vocab + kBlock - 1) / kBlock),
      mass_blocks_(blocks_ <= mass_blocks_fitting(ctx.info().max_workgroup_storage) ? blocks_ : 0),
      result_(ctx.create_buffer(16, gpu::BufferKind::Storage, "sampler.token")),
      // A top-k pass's candidates, or a mass pass's (max, mass) pairs and sorted keys and masses.
      part_(ctx.create_buffer(uint64_t{blocks_} * std::max<uint64_t>(kMaxTopK * 8, 8 + kBlock * 8) + 16,
                              gpu::BufferKind::Storage, "sampler.blocks")) {
  if (!kernel::is_float(storage))
    throw Error(ErrorKind::Unsupported, std::string("token sampling needs float logits, got ") + kernel::storage_name(storage));
  pick_ = stage(SamplerPass::Pick, logits, storage);
  argmax_ = stage(SamplerPass::ArgmaxBlocks, logits, storage);
  topk_ = stage(SamplerPass::TopkBlocks, logits, storage);
  mass_ = stage(SamplerPass::MassBlocks, logits, storage);
}

void TokenSampler::commands(SamplerParams p, std::vector<gpu::Command>& cmds) {
  if (p.n > vocab_)
    throw Error(ErrorKind::Internal, "token sampling over " + std::to_string(p.n) + " logits, the sampler was made for " +
                                         std::to_string(vocab_));
  const uint32_t blocks = (p.n + kBlock - 1) / kBlock;
  const Stage* first = nullptr;
  SamplerParams pick = p, pass = p;
  pick.blocks = 0;
  pass.blocks = blocks;
  const bool all_k = p.top_k == 0 || p.top_k >= p.n;
  if (p.sample == 0) {
    first = &argmax_;
    pick.blocks = blocks;
  } else if (!all_k && p.top_k <= kMaxTopK && blocks > 1) {
    first = &topk_;
    pick.blocks = blocks;
    pick.n = blocks * p.top_k;  // the candidates, read by the pick as its logits
    pick.offset = 0;
  } else if (all_k && blocks > 1 && blocks <= mass_blocks_) {
    // top-p or temperature alone: each block's max and mass (and for top-p its sorted keys);
    // the pick then reads the logits of one block.
    first = &mass_;
    pass.top_k = pick.top_k = 0;
    pick.blocks = blocks;
  }
  if (first) {
    ctx_.write(blocks_uniform_, 0, &pass, sizeof pass);
    cmds.push_back(ctx_.dispatch(*first->pipeline, first->bind_group, gpu::Grid{blocks, 1, 1}));
  }
  ctx_.write(uniform_, 0, &pick, sizeof pick);
  cmds.push_back(ctx_.dispatch(*pick_.pipeline, pick_.bind_group, gpu::Grid{1, 1, 1}));
}

}  // namespace etwebgpu::graph
