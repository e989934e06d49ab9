// Epilogue fusion at load: a conv or GEMM whose output feeds exactly one float elementwise call
// (one op, or a chain fuse_elementwise already merged), directly or through contiguous views,
// takes that call's work into its own store, so the pair is one dispatch. The producer call keeps
// its name and arguments and gains, before its output, the consumer's expression and other tensor
// operands (ops/epilogue.h has the form its builder reads); it runs at the consumer's position and
// writes the consumer's output, or, across a view, its own output, which the view then yields as
// the consumer's.
//
// Ops whose builders read an epilogue register with ETW_REGISTER_EPILOGUE_HOST; the pass knows
// no op by name. Left alone: a producer output used twice or kept (graph output, state), a
// consumer whose output has another shape or dtype than the producer's (broadcast up, a
// conversion), more other operands than the host binds (kMaxEpilogueInputs), or a consumer so far down the chain
// that a call in between touches the producer's inputs.
#pragma once
#include <string>
#include <vector>

#include "format/ir.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

// Extra tensor inputs of one epilogue: conv and GEMM kernels bind 4 tensors, and 8 storage
// buffers per stage is the default limit.
inline constexpr size_t kMaxEpilogueInputs = 3;

class EpilogueHosts {
 public:
  static EpilogueHosts& global();
  void add(const std::string& name, size_t max_inputs) { hosts_.emplace_back(name, max_inputs); }
  bool has(const std::string& name) const;
  // The extra inputs the host's kernels have bindings left for (0 for an op that is no host).
  size_t max_inputs(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, size_t>> hosts_;
};

struct EpilogueHostRegistration {
  EpilogueHostRegistration(const char* name, size_t max_inputs) { EpilogueHosts::global().add(name, max_inputs); }
};
#define ETW_REGISTER_EPILOGUE_HOST(name) ETW_REGISTER_EPILOGUE_HOST_BINDING(name, ::etwebgpu::graph::kMaxEpilogueInputs)
// A host whose kernels bind more tensors of their own: at most `max_inputs` extra inputs.
#define ETW_REGISTER_EPILOGUE_HOST_BINDING(name, max_inputs) \
  static ::etwebgpu::graph::EpilogueHostRegistration ETW_CONCAT(etw_epi_reg_, __COUNTER__)(name, max_inputs)

struct EpilogueStats {
  size_t fused = 0;  // producers that took a consumer
};

// Rewrites `ir.chain` in place (appending one Expr value per fusion); run after
// fuse_elementwise, whose fused calls it takes as consumers. `g` reads arguments for the
// term parsers; its tensors must be set up for every value of `ir`.
EpilogueStats fuse_epilogues(Graph& g, format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
