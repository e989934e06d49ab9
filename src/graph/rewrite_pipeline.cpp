#include "graph/rewrite_pipeline.h"

#include <algorithm>

#include "graph/attention_fusion.h"
#include "graph/cat_folding.h"
#include "graph/constant_evaluation.h"
#include "graph/constant_folding.h"
#include "graph/cse.h"
#include "graph/decoder_fusion.h"
#include "graph/epilogue_fusion.h"
#include "graph/fusion.h"
#include "graph/graph.h"
#include "graph/memory_plan.h"
#include "graph/layout_folding.h"
#include "graph/projection_fusion.h"
#include "graph/score_mask_folding.h"

namespace etwebgpu::graph {

RewritePipeline& RewritePipeline::global() {
  static RewritePipeline p;
  return p;
}

void RewritePipeline::add(RewritePass p) { passes_.push_back(p); }

std::vector<RewritePass> RewritePipeline::passes() const {
  auto sorted = passes_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const RewritePass& a, const RewritePass& b) { return a.phase < b.phase; });
  return sorted;
}

std::vector<std::pair<std::string, size_t>> run_rewrite_pipeline(Graph& g, format::VkGraphIR& ir,
                                                                  const std::function<void()>& after_pass) {
  std::vector<std::pair<std::string, size_t>> counts;
  for (const RewritePass& p : RewritePipeline::global().passes()) {
    const UseDef index(ir);
    counts.emplace_back(p.name, p.run(g, ir, index));
    after_pass();
  }
  return counts;
}

namespace {

// The graph-level passes (each in its own file under graph/), in the order they run.
size_t split_packed_memory(Graph&, format::VkGraphIR& ir, const UseDef&) { return split_packed_memory_objects(ir); }
size_t fold_constants(Graph&, format::VkGraphIR& ir, const UseDef& ix) { return fold_constant_conversions(ir, ix).calls_removed; }
size_t constant_calls(Graph& g, format::VkGraphIR& ir, const UseDef& ix) { return evaluate_constant_calls(g, ir, ix); }
size_t score_masks(Graph&, format::VkGraphIR& ir, const UseDef& ix) { return fold_score_masks(ir, ix); }
size_t attention(Graph& g, format::VkGraphIR& ir, const UseDef& ix) { return fuse_attention(ir, ix, g.options().static_shapes).fused; }
size_t common_subexpressions(Graph&, format::VkGraphIR& ir, const UseDef& ix) {
  return eliminate_common_subexpressions(ir, ix).calls_removed;
}
size_t inverse_permutes(Graph&, format::VkGraphIR& ir, const UseDef& ix) { return fold_inverse_permutes(ir, ix); }
size_t identity_layouts(Graph& g, format::VkGraphIR& ir, const UseDef&) {
  return fold_identity_layouts(ir, g.options().static_shapes);
}
size_t cat_prefixes(Graph&, format::VkGraphIR& ir, const UseDef& ix) { return reuse_cat_prefixes(ir, ix); }
size_t channel_shuffles(Graph& g, format::VkGraphIR& ir, const UseDef& ix) {
  return fold_channel_shuffles(ir, ix, g.options().static_shapes);
}
size_t cat_layouts(Graph& g, format::VkGraphIR& ir, const UseDef& ix) {
  return push_layouts_into_cats(ir, ix, g.options().static_shapes);
}
size_t linear_projections(Graph&, format::VkGraphIR& ir, const UseDef& ix) { return fuse_projections(ir, ix).groups; }
size_t decoder_patterns(Graph&, format::VkGraphIR& ir, const UseDef& ix) {
  const auto s = fuse_decoder_patterns(ir, ix);
  return s.rms_norms + s.ropes;
}
size_t layout_chains(Graph& g, format::VkGraphIR& ir, const UseDef& ix) {
  return collapse_layout_chains(ir, ix, g.options().static_shapes);
}
size_t row_layouts(Graph& g, format::VkGraphIR& ir, const UseDef& ix) {
  return move_row_layouts_before_rowwise(ir, ix, g.options().static_shapes);
}
size_t elementwise_chains(Graph& g, format::VkGraphIR& ir, const UseDef& ix) { return fuse_elementwise(g, ir, ix).groups; }
size_t epilogues(Graph& g, format::VkGraphIR& ir, const UseDef& ix) { return fuse_epilogues(g, ir, ix).fused; }

ETW_REGISTER_LOAD_REWRITE(split_packed_memory, Prepare);
ETW_REGISTER_LOAD_REWRITE(fold_constants, Prepare);
ETW_REGISTER_LOAD_REWRITE(constant_calls, Prepare);
ETW_REGISTER_LOAD_REWRITE(score_masks, Attention);
ETW_REGISTER_LOAD_REWRITE(attention, Attention);
ETW_REGISTER_LOAD_REWRITE(common_subexpressions, Simplify);
ETW_REGISTER_LOAD_REWRITE(inverse_permutes, Simplify);
ETW_REGISTER_LOAD_REWRITE(identity_layouts, Simplify);
ETW_REGISTER_LOAD_REWRITE(cat_prefixes, Simplify);
ETW_REGISTER_LOAD_REWRITE(channel_shuffles, Simplify);
ETW_REGISTER_LOAD_REWRITE(cat_layouts, Simplify);
ETW_REGISTER_LOAD_REWRITE(linear_projections, Linears);
ETW_REGISTER_LOAD_REWRITE(decoder_patterns, Decoder);
ETW_REGISTER_LOAD_REWRITE(elementwise_chains, Elementwise);
ETW_REGISTER_LOAD_REWRITE(layout_chains, Elementwise);
ETW_REGISTER_LOAD_REWRITE(row_layouts, Elementwise);
ETW_REGISTER_LOAD_REWRITE(epilogues, Epilogues);

}  // namespace
}  // namespace etwebgpu::graph
