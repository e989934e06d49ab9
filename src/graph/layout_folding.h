// Layout calls that move nothing, folded at load into contiguous clones, which memory planning
// turns into aliases (no dispatch).
//
// Inverse permute pairs: y = permute_copy(permute_copy(x, p1), p2) with p2 undoing
// p1 is x again, so the pair becomes one contiguous clone of x, which memory planning turns into
// an alias (no dispatch). ExecuTorch's Llama recipe writes three such pairs per layer: q, k and v
// go to [B, H, S, D] for the KV-cache update and back to [B, S, H, D] for custom_sdpa.
//
// Taken when the middle tensor is read by the second permute alone and is no graph input, output
// or state, and no call between the two names x (so x still holds its value there).
#pragma once
#include <cstddef>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

// Rewrites `ir.chain` in place (appending one Null value when it folds); returns the pairs folded.
size_t fold_inverse_permutes(format::VkGraphIR& ir, const UseDef& ix);

// Identity layouts: a slice_copy that keeps every element (start 0, end past the dim, step 1), a
// constant_pad_nd of all-zero pads, an expand_copy to its input's own shape and a cat of one tensor. timm's Swin writes
// three such slices and a zero pad per block (`pad` to a window multiple, `[:, :H, :W, :]` back).
// Only when no program input is dynamic (`static_shapes`), so serialized dims are the live ones;
// bounds must be plain Ints (a SymInt changes at run time). Returns the calls folded.
size_t fold_identity_layouts(format::VkGraphIR& ir, bool static_shapes);

// Layout chains collapsed into one gather: a chain of layout calls (graph/layout_trace.h) of which
// two or more copy (permutes, slices, index_selects ...; views cost nothing) becomes one
// index_select by a constant table, traced on the host: of whole rows when the chain keeps the
// last dim in place (Swin's roll, pad and window partition: two index_selects and a permute), else
// of elements. Each intermediate is read only by the next call and neither pinned nor aliased;
// the source holds its value until the chain's end. Static shapes only. Returns the chains
// collapsed.
size_t collapse_layout_chains(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes);

// Row layouts moved before the row-wise op that makes their input: y = op(x) (a LayerNorm over the
// last dim, a linear), then layout calls that move whole rows of y (views keeping the last dim,
// permutes keeping it last, index_selects and slices of other dims: Swin's window partition and
// reverse, as permutes or as the gathers layout_chains makes), become the same calls on x and the
// op after them. The op then meets its reader: a LayerNorm the linear after it
// (ops/matmul/layer_norm_linear.cpp), a linear the residual add after it (its epilogue). Taken
// where the calls keep or drop rows (never add any), x's rows are no longer than y's, every
// intermediate is read once and not pinned or aliased, x holds its value until the last call, and
// a LayerNorm's statistics are unread. Static shapes only. Returns the ops moved.
size_t move_row_layouts_before_rowwise(format::VkGraphIR& ir, const UseDef& ix, bool static_shapes);


}  // namespace etwebgpu::graph
