// The embedded WGSL library and its preprocessor.
//
// Every src/**/*.wgsl is embedded by file name (cmake/EmbedWgsl.cmake, which also expands
// `//!include NAME` lines, nested, each file once per shader). `preprocess` then keeps or drops lines between
//   #if EXPR / #elif EXPR / #else / #endif
// where EXPR is NAME, !NAME, joined by && (binds tighter) and ||; a NAME is true when defined.
// That is all: types come from the generated `alias` lines (kernel/kernel.h), values from override
// constants and uniforms.
#pragma once
#include <set>
#include <string>
#include <string_view>

namespace etwebgpu::kernel {

// Source of embedded shader `name` (file name without .wgsl); throws Error(Internal) when unknown.
// With ETWEBGPU_WGSL_DIR set, a file DIR/NAME.wgsl (include lines already expanded) replaces the
// embedded text: trying a kernel change on another machine without rebuilding.
std::string_view shader_source(std::string_view name);

// Applies the #if family of directives; throws Error(Internal) naming `label` and the line on an
// unbalanced or malformed directive.
std::string preprocess(std::string_view src, const std::set<std::string>& defines, std::string_view label);

}  // namespace etwebgpu::kernel
