// Layout calls as affine views (format::VkExprView): the calls whose output is an affine map of
// their input -- slice, select, narrow, permute, transpose, expand, unsqueeze, squeeze, flip, a
// reshape of what the strides allow, a contiguous clone -- composed from the stored tensor they
// start at. The load-time rewrites that read a tensor through such calls instead of materializing
// them (graph/fusion.h, graph/attention_fusion.h) build their read maps here, at static shapes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/ir.h"

namespace etwebgpu::graph {

// `dims` as stored: offset 0, contiguous strides.
format::VkExprView contiguous_view(const std::vector<int64_t>& dims);

// `v` reshaped to `to` without moving an element (PyTorch's rule for view): false, `v` unchanged,
// when its strides do not allow it.
bool reshape_view(format::VkExprView& v, const std::vector<int64_t>& to);

// A static integer argument: an Int, or a Double holding one (the serializer interns 0 == 0.0).
std::optional<int64_t> static_int(const format::VkGraphIR& ir, int32_t id);

// The permutation `dims` normalized to [0, rank), or empty when it is not one (a dim out of range
// or repeated).
std::vector<int64_t> normalized_permutation(const std::vector<int64_t>& dims, size_t rank);

// A call view_through knows (by name; its arguments may still refuse it).
bool layout_op(const std::string& name);

// The view of layout call `c`'s output, given `in`, the view of its input (argument 0): the
// arguments must be static (Int, IntList, None: no SymInt) and valid as PyTorch checks them (slice
// bounds wrap and clamp as PyTorch does), and the view's dims the output's serialized dims;
// nullopt otherwise (the call is left to its builder, which reports a malformed one).
std::optional<format::VkExprView> view_through(const format::VkGraphIR& ir, const format::VkOpCall& c,
                                               const format::VkExprView& in);

}  // namespace etwebgpu::graph
