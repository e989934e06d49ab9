// Common-subexpression elimination at load: a call with the same operator, the same arguments
// and the same input values as an earlier call computes the same tensor, so it is dropped and its
// output's readers read the earlier output instead (ExecuTorch's Llama recomputes each layer's
// mask from input_pos: scalar_tensor, index.Tensor of the causal mask, where ...).
//
// Only calls that are pure functions of their arguments qualify: one tensor output written by
// that call alone, inputs that hold one value for the whole run (written at most once, no program
// state), and no operator that writes an argument in place, reads randomness or scatters into a
// buffer. Constants with equal dtype, dims and bytes count as one value. Runs on the IR before
// any builder (Graph::build, LoadOptions::fuse).
#pragma once
#include <cstddef>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

struct CseStats {
  size_t calls_removed = 0;
};

// Rewrites `ir.chain` (and the ValueLists naming a dropped output) in place.
CseStats eliminate_common_subexpressions(format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
