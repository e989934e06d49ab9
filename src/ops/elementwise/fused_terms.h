// A fused elementwise expression (format::VkExpr, made by graph/fusion.h), checked and turned
// into WGSL. Shared by the fused elementwise kernel (fused.cpp) and the conv / GEMM epilogues
// (ops/epilogue.h), so a term evaluates with the same math wherever it was fused.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace etwebgpu::ops {


// Checks a fused expression over `inputs` inputs (operands refer to an input or an earlier term,
// float op codes, labels of [a-z0-9_]); `layouts_allowed` (the fused elementwise kernel only):
// input views, one stride per dim, at most 8 dims, cat parts inside their cat (the kernel checks
// they stay inside their inputs), and cat (Split) terms.
// Throws Error(Internal) naming the op: only the load-time fusion makes expressions.
void check_fused_expr(const graph::OpContext& oc, const format::VkExpr& e, size_t inputs, bool layouts_allowed);

// The expression argument `id` of the op: Error(Format) naming the op and `what` when it is not
// one (a program cannot spell an expression), then check_fused_expr.
const format::VkExpr& fused_expr_arg(const graph::OpContext& oc, int32_t id, const std::string& what, size_t inputs,
                                     bool layouts_allowed);

// WGSL `let t<k> = ...;` lines (each prefixed by `indent`) evaluating the terms over lets x0, x1,
// ...; term k's constants are `consts[k]` (a WGSL array<vec4<f32>> expression such as "P.c"); a
// cat term selects by coord_of(i, dim), the fused elementwise kernel's output coordinate.
// They call unary_f32 / binary_f32 with UNARY_ / BINARY_ constants: the shader holds
// unary_math.wgsl and binary_math.wgsl and the generated unary_ops_wgsl() and binary_ops_wgsl()
// (elementwise_ops.h).
std::string fused_terms_wgsl(const std::vector<format::VkExprTerm>& terms, const std::string& consts,
                             const std::string& indent);

// The terms' constants, 4 words per term, in the order fused_terms_wgsl reads them.
std::vector<uint32_t> fused_term_constants(const std::vector<format::VkExprTerm>& terms);

// "add+relu": the terms' labels joined, for node labels.
std::string fused_terms_label(const std::vector<format::VkExprTerm>& terms);

}  // namespace etwebgpu::ops
