// The load-time rewrites as one ordered pass list (graph/rewrite_pipeline.h, docs/REWRITES.md).
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "graph/rewrite_pipeline.h"

using namespace etwebgpu::graph;

namespace {

// Every pass is listed once, phases never go back, and the graph passes and the op families'
// passes run in the order their inputs need: constants evaluated before the patterns that take
// them (a mask built from constants is the attention's constant mask), the score masks folded
// before the attention that takes their sum, attention before CSE (which would merge its scale
// and mask calls across layers), the elementwise chains before the epilogues that take them, the
// 8da4w qparams pattern before the SwiGLU pairing, the projections before the rotary fold.
TEST(RewritePipeline, EveryPassRunsOnceInPhaseOrder) {
  const auto passes = RewritePipeline::global().passes();
  std::set<std::string> names;
  for (size_t i = 0; i < passes.size(); ++i) {
    EXPECT_TRUE(names.insert(passes[i].name).second) << passes[i].name << " is listed twice";
    if (i) {
      EXPECT_LE(static_cast<int>(passes[i - 1].phase), static_cast<int>(passes[i].phase)) << passes[i].name;
    }
  }
  auto at = [&](const std::string& name) {
    auto it = std::find_if(passes.begin(), passes.end(), [&](const RewritePass& p) { return name == p.name; });
    EXPECT_NE(it, passes.end()) << name << " is not in the pipeline";
    return it - passes.begin();
  };
  const char* order[] = {"split_packed_memory", "fold_constants", "constant_calls", "score_masks", "attention", "common_subexpressions",
                         "inverse_permutes", "identity_layouts", "cat_prefixes", "cat_layouts", "batch_norm_affine", "linear_projections", "decoder_patterns", "elementwise_chains",
                         "epilogues", "fuse_choose_qparams", "pair_swiglu_projections", "fuse_q4gsw_projections",
                         "fold_rope_into_projections", "input_norms", "norm_selects"};
  for (size_t i = 1; i < std::size(order); ++i) EXPECT_LT(at(order[i - 1]), at(order[i])) << order[i - 1] << " before " << order[i];
  // The BatchNorm fold runs after constant evaluation (LeViT's bmm weight is one) and before the
  // epilogues (the residual add after it becomes the linear's).
  EXPECT_LT(at("constant_calls"), at("fold_batch_norm_into_linear"));
  EXPECT_LT(at("fold_batch_norm_into_linear"), at("epilogues"));
  // An addmm by a constant becomes a linear after constant evaluation (which may make its weight)
  // and before the passes that take linears: the q/k/v stacking, the epilogues, the LayerNorm.
  EXPECT_LT(at("constant_calls"), at("addmm_as_linear"));
  EXPECT_LT(at("addmm_as_linear"), at("linear_projections"));
  EXPECT_LT(at("addmm_as_linear"), at("epilogues"));
  EXPECT_LT(at("addmm_as_linear"), at("fuse_layer_norm_linear"));
  // A BatchNorm becomes an affine only where no fold took it.
  EXPECT_LT(at("fold_batch_norm_into_linear"), at("batch_norm_affine"));
  for (const char* p : {"fuse_layer_norm_linear", "fuse_squeeze_excite", "fuse_q8_requant_clamp", "fuse_qparams_projections"}) at(p);
  // An input norm goes to the linear the projection, SwiGLU and rotary passes made, before its epilogue's
  // arguments (which it sees in place); a norm no GEMV took reads its selected row in place last.
  EXPECT_EQ(passes[passes.size() - 2].name, std::string("input_norms"));
  EXPECT_EQ(passes.back().name, std::string("norm_selects"));
  // A conv's prologue is taken after its epilogue, whose inputs it counts against the bindings.
  EXPECT_LT(at("epilogues"), at("conv_prologues"));
  // A conv stores channels-last only where no epilogue took its output (the epilogue's operands
  // would be read in the stored order).
  EXPECT_LT(at("epilogues"), at("conv_channels_last"));
  // A channel shuffle becomes one call before cat_layouts would make a kernel per piece of it, and
  // a conv stores it after the epilogues gave the conv its relu.
  EXPECT_LT(at("channel_shuffles"), at("cat_layouts"));
  EXPECT_LT(at("epilogues"), at("conv_shuffles"));
  // A fused call writes a permute's output after the epilogues (its views keep it from being one).
  EXPECT_LT(at("epilogues"), at("fused_output_permutes"));
  // A depthwise conv joins the 1x1 conv after it once the patterns named that conv (a shuffle it
  // stores, a prologue it reads) and the epilogues gave the depthwise conv its activation.
}

}  // namespace
