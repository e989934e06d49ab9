// The term list of a fused elementwise expression (text form in graph/fusion.h), parsed and turned
// into WGSL. Shared by the fused elementwise kernel (fused.cpp) and the conv / GEMM epilogues
// (ops/epilogue.h), so a term evaluates with the same math wherever it was fused.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace etwebgpu::ops {

struct FusedOperand {
  char kind = 's';  // 'x' input, 't' term, 's' scalar
  size_t index = 0;
};

struct FusedTermSpec {
  bool binary = false;
  uint32_t op = 0;
  FusedOperand a, b;
  uint32_t c[4] = {0, 0, 0, 0};  // f32 bit patterns
  std::string label;
};

// Parses and checks a term list over `inputs` inputs; throws Error(Format) naming the op.
// `perms` (the fused elementwise kernel only) receives each input's permutation ("p" entries,
// graph/fusion.h; empty: read as is), checked to be a permutation of 0..size-1 but not against
// the input's rank. Without `perms` a "p" entry is a Format error.
std::vector<FusedTermSpec> parse_fused_terms(const graph::OpContext& oc, const std::string& text, size_t inputs,
                                             std::vector<std::vector<int64_t>>* perms = nullptr);

// WGSL `let t<k> = ...;` lines (each prefixed by `indent`) evaluating the terms over lets x0, x1,
// ...; term k's constants are `consts[k]` (a WGSL array<vec4<f32>> expression such as "P.c").
// They call unary_f32 / binary_f32 with UNARY_ / BINARY_ constants: the shader holds
// unary_math.wgsl and binary_math.wgsl and the generated unary_ops_wgsl() and binary_ops_wgsl()
// (elementwise_ops.h).
std::string fused_terms_wgsl(const std::vector<FusedTermSpec>& terms, const std::string& consts,
                             const std::string& indent);

// The terms' constants, 4 words per term, in the order fused_terms_wgsl reads them.
std::vector<uint32_t> fused_term_constants(const std::vector<FusedTermSpec>& terms);

// "add+relu": the terms' labels joined, for node labels.
std::string fused_terms_label(const std::vector<FusedTermSpec>& terms);

}  // namespace etwebgpu::ops
