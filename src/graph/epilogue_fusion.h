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
// conversion), more than kMaxEpilogueInputs other operands, or a consumer so far down the chain
// that a call in between touches the producer's inputs.
#pragma once
#include <string>
#include <vector>

#include "format/ir.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

class EpilogueHosts {
 public:
  static EpilogueHosts& global();
  void add(const std::string& name) { names_.push_back(name); }
  bool has(const std::string& name) const;

 private:
  std::vector<std::string> names_;
};

struct EpilogueHostRegistration {
  explicit EpilogueHostRegistration(const char* name) { EpilogueHosts::global().add(name); }
};
#define ETW_REGISTER_EPILOGUE_HOST(name) \
  static ::etwebgpu::graph::EpilogueHostRegistration ETW_CONCAT(etw_epi_reg_, __COUNTER__)(name)

// Extra tensor inputs of one epilogue: conv and GEMM kernels bind 4 tensors, and 8 storage
// buffers per stage is the default limit.
inline constexpr size_t kMaxEpilogueInputs = 3;

struct EpilogueStats {
  size_t fused = 0;  // producers that took a consumer
};

// Rewrites `ir.chain` in place (appending one Expr value per fusion); run after
// fuse_elementwise, whose fused calls it takes as consumers. `g` reads arguments for the
// term parsers; its tensors must be set up for every value of `ir`.
EpilogueStats fuse_epilogues(Graph& g, format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
