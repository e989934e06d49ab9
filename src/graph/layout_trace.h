// Layout calls traced on the host: which source element each element of a chain of layout calls'
// result copies. Rewrites that replace such a chain by an index map a kernel applies (a GEMM
// reading its rows through a table) trace the chain instead of composing each op's map by hand,
// so every layout op the tracer knows composes with every other. The affine ops' maps are
// graph/layout_view.h's; the tracer adds what no stride expresses (index_select by constants).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "format/ir.h"

namespace etwebgpu::graph {

// Whether `c` only moves elements of its first argument, with arguments fixed at load: an affine
// layout call graph/layout_view.h composes (view, permute, slice, select, expand, flip ...), or
// an index_select by a constant index.
bool is_traceable_layout(const format::VkGraphIR& ir, const format::VkOpCall& c);

// For `calls` (each a traceable layout reading the previous one's output, the first reading
// `src`), the flat index into `src` of every element of the last call's output, in its order.
// nullopt when a call's arguments do not fit the dims it is given (left to its builder to report).
std::optional<std::vector<int64_t>> trace_layouts(const format::VkGraphIR& ir, int32_t src,
                                                  const std::vector<const format::VkOpCall*>& calls);

}  // namespace etwebgpu::graph
