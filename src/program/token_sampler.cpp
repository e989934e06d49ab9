#include "program/token_sampler.h"

#include "kernel/kernel.h"

namespace etwebgpu::graph {
namespace {

// The sampler as a kernel declaration, for its generated preamble (typed logits) and binding slots.
// It runs outside any graph node, so its params function is never called: command() writes them.
kernel::Kernel sampler_kernel(const gpu::Buffer& result) {
  return kernel::Kernel("token_sampler")
      .input("L", 0)
      .buffer("OUT", result, "u32", kernel::Access::ReadWrite)
      .params<SamplerParams>([](const kernel::Live&) { return SamplerParams{}; })
      .groups([](const kernel::Live&) { return kernel::Groups::grid(1, 1); });
}

const gpu::Pipeline& sampler_pipeline(gpu::Context& ctx, const gpu::Buffer& result, kernel::Storage storage) {
  if (!kernel::is_float(storage))
    throw Error(ErrorKind::Unsupported, std::string("token sampling needs float logits, got ") + kernel::storage_name(storage));
  kernel::Kernel k = sampler_kernel(result);
  return ctx.pipeline_from_source(k.source({storage}), k.entry(), k.constants(), k.shader());
}

gpu::BindGroup sampler_bind_group(gpu::Context& ctx, const gpu::Pipeline& p, const gpu::Buffer& logits,
                                  const gpu::Buffer& result, const gpu::Buffer& uniform) {
  kernel::Kernel::Slots s = sampler_kernel(result).slots();
  return ctx.bind_group(p, {{s.tensor[0], &logits}, {s.buffer[0], &result}, {s.uniform, &uniform}});
}

}  // namespace

TokenSampler::TokenSampler(gpu::Context& ctx, const gpu::Buffer& logits, kernel::Storage storage)
    : ctx_(ctx),
      uniform_(ctx.create_buffer(sizeof(SamplerParams), gpu::BufferKind::Uniform, "sampler.params")),
      result_(ctx.create_buffer(16, gpu::BufferKind::Storage, "sampler.token")),
      pipeline_(sampler_pipeline(ctx, result_, storage)),
      bind_group_(sampler_bind_group(ctx, pipeline_, logits, result_, uniform_)) {}

gpu::Command TokenSampler::command(const SamplerParams& p) {
  ctx_.write(uniform_, 0, &p, sizeof p);
  return ctx_.dispatch(pipeline_, bind_group_, gpu::Grid{1, 1, 1});
}

}  // namespace etwebgpu::graph
