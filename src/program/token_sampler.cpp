#include "program/token_sampler.h"

#include "kernel/kernel.h"

namespace etwebgpu::graph {
namespace {

// Logits per workgroup of the greedy first pass (ARGMAX_BLOCKS): eight loads an invocation.
constexpr uint32_t kBlock = 2048;
// Room for the blocks' candidates of a vocabulary up to 2^24 tokens.
constexpr uint32_t kMaxBlocks = (1u << 24) / kBlock;

// The sampler's two kernels as kernel declarations, for their generated preambles (typed logits)
// and binding slots: the greedy first pass over blocks (`blocks`), and the pick. They run outside
// any graph node, so their params functions are never called: command() writes them.
kernel::Kernel sampler_kernel(const gpu::Buffer& result, const gpu::Buffer& part, bool blocks) {
  kernel::Kernel k("token_sampler");
  k.input("L", 0);
  if (blocks) {
    k.define("ARGMAX_BLOCKS").constant("BLOCK", kBlock);
  } else {
    k.buffer("OUT", result, "u32", kernel::Access::ReadWrite);
  }
  k.buffer("PART", part, "u32", blocks ? kernel::Access::ReadWrite : kernel::Access::Read)
      .params<SamplerParams>([](const kernel::Live&) { return SamplerParams{}; })
      .groups([](const kernel::Live&) { return kernel::Groups::grid(1, 1); });
  return k;
}

const gpu::Pipeline& sampler_pipeline(gpu::Context& ctx, const gpu::Buffer& result, const gpu::Buffer& part,
                                      kernel::Storage storage, bool blocks) {
  if (!kernel::is_float(storage))
    throw Error(ErrorKind::Unsupported, std::string("token sampling needs float logits, got ") + kernel::storage_name(storage));
  kernel::Kernel k = sampler_kernel(result, part, blocks);
  return ctx.pipeline_from_source(k.source({storage}), k.entry(), k.constants(), k.shader());
}

gpu::BindGroup sampler_bind_group(gpu::Context& ctx, const gpu::Pipeline& p, const gpu::Buffer& logits, const gpu::Buffer& result,
                                  const gpu::Buffer& part, const gpu::Buffer& uniform, bool blocks) {
  kernel::Kernel::Slots s = sampler_kernel(result, part, blocks).slots();
  std::vector<gpu::Binding> e{{s.tensor[0], &logits}, {s.uniform, &uniform}};
  // Slots in declaration order: PART alone (blocks), or OUT then PART.
  for (size_t i = 0; i < s.buffer.size(); ++i) e.push_back({s.buffer[i], blocks || i == 1 ? &part : &result});
  return ctx.bind_group(p, e);
}

}  // namespace

TokenSampler::TokenSampler(gpu::Context& ctx, const gpu::Buffer& logits, kernel::Storage storage)
    : ctx_(ctx),
      uniform_(ctx.create_buffer(sizeof(SamplerParams), gpu::BufferKind::Uniform, "sampler.params")),
      result_(ctx.create_buffer(16, gpu::BufferKind::Storage, "sampler.token")),
      part_(ctx.create_buffer(uint64_t{kMaxBlocks} * 8, gpu::BufferKind::Storage, "sampler.blocks")),
      pipeline_(sampler_pipeline(ctx, result_, part_, storage, false)),
      blocks_pipeline_(sampler_pipeline(ctx, result_, part_, storage, true)),
      bind_group_(sampler_bind_group(ctx, pipeline_, logits, result_, part_, uniform_, false)),
      blocks_bind_group_(sampler_bind_group(ctx, blocks_pipeline_, logits, result_, part_, uniform_, true)) {}

void TokenSampler::commands(SamplerParams p, std::vector<gpu::Command>& cmds) {
  const uint32_t blocks = (p.n + kBlock - 1) / kBlock;
  if (p.sample == 0 && blocks > kMaxBlocks)
    throw Error(ErrorKind::Limit, "token sampling: a vocabulary of " + std::to_string(p.n) + " tokens exceeds the sampler's " +
                                      std::to_string(uint64_t{kMaxBlocks} * kBlock));
  p.blocks = p.sample == 0 ? blocks : 0;
  ctx_.write(uniform_, 0, &p, sizeof p);
  if (p.sample == 0) cmds.push_back(ctx_.dispatch(blocks_pipeline_, blocks_bind_group_, gpu::Grid{blocks, 1, 1}));
  cmds.push_back(ctx_.dispatch(pipeline_, bind_group_, gpu::Grid{1, 1, 1}));
}

}  // namespace etwebgpu::graph
