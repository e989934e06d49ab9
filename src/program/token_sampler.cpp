#include "program/token_sampler.h"

#include <algorithm>
#include <optional>

#include "kernel/kernel.h"

namespace etwebgpu::graph {
namespace {

// Logits per workgroup of the first passes (eight an invocation), and the largest top_k they
// take (its candidates, blocks x top_k, are about 1/8 of the vocabulary).
constexpr uint32_t kBlock = 2048;
constexpr uint32_t kMaxTopK = 256;

// Workgroup memory of the pick over MASS_BLOCKS: its reductions' 3 KiB and 140 bytes a block.
uint32_t mass_blocks_fitting(uint32_t workgroup_storage) {
  return workgroup_storage > 3328 ? (workgroup_storage - 3328) / 140 : 0;
}

// The sampler's kernels as kernel declarations, for their generated preambles (typed logits) and
// binding slots: the pick, and the first passes over blocks. They run outside any graph node, so
// their params functions are never called: commands() writes them.
kernel::Kernel sampler_kernel(const gpu::Buffer& result, const gpu::Buffer& part, SamplerPass pass, uint32_t mass_blocks) {
  kernel::Kernel k("token_sampler");
  k.input("L", 0);
  const bool pick = pass == SamplerPass::Pick || pass == SamplerPass::PickMass;
  if (pick) k.buffer("OUT", result, "u32", kernel::Access::ReadWrite);
  if (pass == SamplerPass::ArgmaxBlocks) k.define("ARGMAX_BLOCKS");
  if (pass == SamplerPass::TopkBlocks) k.define("TOPK_BLOCKS");
  if (pass == SamplerPass::MassBlocks) k.define("MASS_BLOCKS");
  if (pass == SamplerPass::PickMass) k.define("PICK_MASS").constant("MAXB", std::max<uint32_t>(mass_blocks, 1));
  k.constant("BLOCK", kBlock);
  k.buffer("PART", part, "u32", pick ? kernel::Access::Read : kernel::Access::ReadWrite)
      .params<SamplerParams>([](const kernel::Live&) { return SamplerParams{}; })
      .groups([](const kernel::Live&) { return kernel::Groups::grid(1, 1); });
  return k;
}

}  // namespace

// Made when a pick first needs it: a greedy model never compiles the sampling kernels.
const TokenSampler::Stage& TokenSampler::stage(SamplerPass pass) {
  std::optional<Stage>& st = stages_[static_cast<size_t>(pass)];
  if (st) return *st;
  const bool pick = pass == SamplerPass::Pick || pass == SamplerPass::PickMass;
  kernel::Kernel k = sampler_kernel(result_, part_, pass, mass_blocks_);
  const gpu::Pipeline& p = ctx_.pipeline_from_source(k.source({storage_}), k.entry(), k.constants(), k.shader());
  const gpu::Buffer& uniform = pick ? uniform_ : blocks_uniform_;
  kernel::Kernel::Slots s = k.slots();
  std::vector<gpu::Binding> e{{s.tensor[0], &logits_}, {s.uniform, &uniform}};
  // Slots in declaration order: OUT then PART (the picks), or PART alone.
  for (size_t i = 0; i < s.buffer.size(); ++i) e.push_back({s.buffer[i], !pick || i == 1 ? &part_ : &result_});
  st = Stage{&p, ctx_.bind_group(p, e)};
  return *st;
}

TokenSampler::TokenSampler(gpu::Context& ctx, const gpu::Buffer& logits, kernel::Storage storage, uint32_t vocab)
    : ctx_(ctx),
      logits_(logits),
      storage_(storage),
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
}

// Which kernels a pick with `p` runs, with the parameters of each.
TokenSampler::Plan TokenSampler::plan(const SamplerParams& p) const {
  if (p.n > vocab_)
    throw Error(ErrorKind::Internal, "token sampling over " + std::to_string(p.n) + " logits, the sampler was made for " +
                                         std::to_string(vocab_));
  Plan r{SamplerPass::Pick, SamplerPass::Pick, p, p, (p.n + kBlock - 1) / kBlock};
  r.pick.blocks = 0;
  r.pass.blocks = r.blocks;
  const bool all_k = p.top_k == 0 || p.top_k >= p.n;
  if (p.sample == 0) {
    r.first = SamplerPass::ArgmaxBlocks;
    r.pick.blocks = r.blocks;
  } else if (!all_k && p.top_k <= kMaxTopK && r.blocks > 1) {
    r.first = SamplerPass::TopkBlocks;
    r.pick.blocks = r.blocks;
    r.pick.n = r.blocks * p.top_k;  // the candidates, read by the pick as its logits
    r.pick.offset = 0;
  } else if (r.blocks > 1 && r.blocks <= mass_blocks_) {
    // top-k above kMaxTopK, top-p or temperature alone: each block's max and mass (and, for top-k
    // or top-p, its sorted keys); the pick then reads the logits of one block.
    r.first = SamplerPass::MassBlocks;
    r.last = SamplerPass::PickMass;
    if (all_k) r.pass.top_k = r.pick.top_k = 0;
    r.pick.blocks = r.blocks;
  }
  return r;
}

void TokenSampler::prepare(const SamplerParams& p) {
  Plan r = plan(p);
  if (r.first != SamplerPass::Pick) stage(r.first);
  stage(r.last);
}

void TokenSampler::commands(SamplerParams p, std::vector<gpu::Command>& cmds) {
  Plan r = plan(p);
  if (r.first != SamplerPass::Pick) {
    const Stage& s = stage(r.first);
    ctx_.write(blocks_uniform_, 0, &r.pass, sizeof r.pass);
    cmds.push_back(ctx_.dispatch(*s.pipeline, s.bind_group, gpu::Grid{r.blocks, 1, 1}));
  }
  const Stage& s = stage(r.last);
  ctx_.write(uniform_, 0, &r.pick, sizeof r.pick);
  cmds.push_back(ctx_.dispatch(*s.pipeline, s.bind_group, gpu::Grid{1, 1, 1}));
}

}  // namespace etwebgpu::graph
