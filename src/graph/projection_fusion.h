// Projection fusion at load: linears that read the same input and whose outputs only feed fused
// attention calls with a fixed layout (graph/attention_fusion.h) become one linear over their
// weights stacked row-wise; each attention then reads its q, k or v at a column offset of the one
// output. Whisper's and BERT's separate q, k and v projections: three GEMMs of N = 384 over 1500
// rows become one of N = 1152, which fills the GPU better, in one dispatch instead of three.
//
// Taken: aten.linear calls with the same input tensor, float32 constant weights [N_i, K] of one
// K, constant float32 biases [N_i] or none (a missing bias becomes zeros), outputs [M, N_i] that
// are no graph input, output or state and are read only as q, k or v of etwebgpu.attention calls
// whose layout addresses them row by row (row stride N_i, each head within its row). Nothing
// between the first and the last linear writes the input. Runs after attention fusion and CSE
// (which makes the projections' inputs one value), on the IR before any builder.
#pragma once
#include <cstddef>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

struct ProjectionFusionStats {
  size_t groups = 0, linears_removed = 0;
};

// Rewrites `ir` in place: new stacked weight and bias constants (bytes owned by
// ir.owned_bytes), one new output value per group.
ProjectionFusionStats fuse_projections(format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
