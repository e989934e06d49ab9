#include "program/token_sampler.h"

namespace etwebgpu::graph {

TokenSampler::TokenSampler(gpu::Context& ctx, const gpu::Buffer& logits)
    : ctx_(ctx),
      uniform_(ctx.create_buffer(sizeof(SamplerParams), gpu::BufferKind::Uniform, "sampler.params")),
      result_(ctx.create_buffer(16, gpu::BufferKind::Storage, "sampler.token")),
      pipeline_(ctx.pipeline("token_sampler", "main")),
      bind_group_(ctx.bind_group(pipeline_, {{0, &logits}, {1, &result_}, {2, &uniform_}})) {}

gpu::Command TokenSampler::command(const SamplerParams& p) {
  ctx_.write(uniform_, 0, &p, sizeof p);
  return ctx_.dispatch(pipeline_, bind_group_, gpu::Grid{1, 1, 1});
}

}  // namespace etwebgpu::graph
