// Cats folded at load: layout calls after a cat pushed onto its parts, and a cat that lists an
// earlier cat's parts reading that cat instead. Both leave cats that elementwise fusion
// (graph/fusion.h) evaluates in one kernel, where the cat builder makes a dispatch per part.
#pragma once
#include <cstddef>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

// etwebgpu.channel_shuffle [parts ValueList, outs ValueList]: two parts [N, C, ...] of one shape
// interleaved along dim 1 (channel 2c + g is part g's channel c: a cat, then view, transpose,
// view) and that tensor [N, 2C, ...] split along dim 1 into the outputs in order (one or two).
inline constexpr const char* kChannelShuffle = "etwebgpu.channel_shuffle";

// ShuffleNet's channel shuffle, cat((a, b), 1) then layout calls each read only by the next
// whose result is the interleave (traced on the host, graph/layout_trace.h), then optionally a
// split of it along dim 1 into two pieces, becomes one etwebgpu.channel_shuffle call writing the
// pieces: one dispatch where cat_layouts makes one per piece. Float, static shapes; the outputs get
// storage of their own (they are written at the cat's place now). Before cat_layouts. Returns the
// shuffles rewritten.
size_t fold_channel_shuffles(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes);

// Layouts after a cat pushed onto its parts: y = L(cat(p_0, ..., p_n)) for layout calls L that
// keep each part's elements in one block along one dim (reshapes that keep or split the cat dim,
// permutes, slices and selects of other dims, a split into pieces, a last reshape that merges the
// cat dim) becomes cat(L(p_0), ..., L(p_n)), a cat per piece. Elementwise fusion then reads the
// parts through the pushed layouts (views) and evaluates each cat in one kernel. ShuffleNet's
// channel shuffle (cat, view, permute, view, split: five dispatches) becomes one per piece. Float
// cats of at most kMaxFusedInputs parts, every intermediate read once and not pinned or aliased,
// the parts unchanged until the last call, and some call moving elements; static shapes only.
// Returns the cats rewritten.
size_t push_layouts_into_cats(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes);

// Cats of cats: cat(p_0, ..., p_k, q, ...) after x = cat(p_0, ..., p_k) along the same dim reads x
// in place of its parts (the longest earlier cat that fits). DenseNet concatenates every feature
// of a block before each layer: layer l's cat of l + 1 parts (a dispatch each) becomes the cat of
// the previous one and the newest feature, which elementwise fusion makes one kernel. The same
// bytes are read. Taken when x and the parts it replaces hold at the later cat what they held at
// the earlier one.
size_t reuse_cat_prefixes(format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
