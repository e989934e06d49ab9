// The load-time rewrites as one ordered pass list (docs/REWRITES.md). Every rewrite of the IR
// before Graph builds its nodes is a pass here: the graph-level ones (rewrite_pipeline.cpp) and
// those an op family registers next to its builder (ETW_REGISTER_LOAD_REWRITE). Passes run by
// phase, then in registration order within a phase; each sees the IR the passes before it left.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "format/ir.h"
#include "graph/op_registry.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

class Graph;

enum class RewritePhase : int {
  Prepare = 0,      // the delegate's memory packing undone, constant conversions folded
  Attention = 1,    // q @ k^T / softmax / @ v chains (holding elementwise and mask calls CSE would merge)
  Simplify = 2,     // common subexpressions, layouts that move nothing, BN after linear (before epilogues take the add after it)
  Norms = 3,        // inference BatchNorms the folds left become per-channel affines (elementwise)
  Linears = 4,      // fp32 projections of one input stacked
  Decoder = 5,      // RMSNorm and RoPE written out in aten ops
  Elementwise = 6,  // elementwise chains into one kernel (typed expressions)
  Epilogues = 7,    // elementwise consumers into the conv / GEMM before them
  Patterns = 8,     // op-family patterns over those calls (8da4w qparams, int8 clamps, squeeze-excite)
  Activations = 9,  // activations taken into the linears before them (SwiGLU: gate and up paired)
  Projections = 10, // quantized linears of one input become one multi-output call
  Rotary = 11,      // rotary embeddings taken into the multi-output q/k/v linear before them
  InputNorms = 12,  // RMSNorms taken into the one-row 4-bit GEMV that reads them (ops/norm/input_norm.h)
  SelectedRows = 13, // RMSNorms of one selected slice read it in place (the norms no GEMV took)
};

// A pass rewrites `ir` in place (it may append values, constants and calls) and returns how many
// groups it rewrote. `g` reads arguments for term parsers and the load options; its tensors
// describe every value the passes before added. `index` is `ir` as the pass found it: the pass
// matches its patterns and checks them with it, then rewrites.
using LoadRewrite = size_t (*)(Graph& g, format::VkGraphIR& ir, const UseDef& index);
struct RewritePass {
  const char* name;
  RewritePhase phase;
  LoadRewrite run;
};

class RewritePipeline {
 public:
  static RewritePipeline& global();
  void add(RewritePass p);
  // In the order they run.
  std::vector<RewritePass> passes() const;

 private:
  std::vector<RewritePass> passes_;
};

struct RewritePassRegistration {
  explicit RewritePassRegistration(RewritePass p) { RewritePipeline::global().add(p); }
};
#define ETW_REGISTER_LOAD_REWRITE(fn, phase)                                         \
  static ::etwebgpu::graph::RewritePassRegistration ETW_CONCAT(etw_rewrite_reg_, __COUNTER__)( \
      ::etwebgpu::graph::RewritePass{#fn, ::etwebgpu::graph::RewritePhase::phase, fn})

// Runs every pass in order; `after_pass` runs after each (Graph describes the values it added).
// Returns each pass's name and count, in order.
std::vector<std::pair<std::string, size_t>> run_rewrite_pipeline(Graph& g, format::VkGraphIR& ir,
                                                                  const std::function<void()>& after_pass);

}  // namespace etwebgpu::graph
