// Constant evaluation at load: calls whose result is the same on every run (every tensor they
// read is constant data or such a call's result; no SymInt argument; a pure op) run once, in a
// graph of their own with the same kernels, and their results read by other calls become
// constants. Swin's rolls (arange, add, fmod feeding a gather), relative-position-bias gathers of
// constant tables and masks built from constants then cost no dispatch per run.
#pragma once
#include <cstddef>
#include <cstdint>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

class Graph;

// A result above this many bytes stays computed on every run: as a constant it would hold device
// memory for the whole life of the model instead of sharing planned storage.
inline constexpr uint64_t kMaxEvaluatedBytes = 4ull << 20;
// And the evaluated calls' results together (the constants made are a subset): the evaluation's
// own graph holds them at once.
inline constexpr uint64_t kMaxEvaluatedTotalBytes = 64ull << 20;

// Rewrites `ir` in place: the evaluated calls leave the chain, and the results other calls read
// become constants (bytes owned by ir.owned_bytes). Returns the calls removed. When the
// evaluation fails (an op that does not build, an index out of range), nothing changes and the
// calls stay for their builders and runs to report.
size_t evaluate_constant_calls(Graph& g, format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
