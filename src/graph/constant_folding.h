// Constant folding at load: a dtype conversion or copy whose input holds constant data becomes a
// constant itself, so it costs no dispatch (and elementwise fusion sees a constant operand instead
// of a computed one). Exporters write such chains for every scalar a decomposition lifts into a
// tensor: MobileNetV3's hardswish is add(x, clone(_to_dim_order_copy(prepack(int 3)))) ... , 56
// conversion dispatches per run in torchvision's MobileNetV3-small.
//
// et_vk.prepack of a one-element constant becomes that constant (fusion reads it as a literal);
// a larger one stays a prepack, read as constant data by the folds below.
//
// Folded: aten._to_copy, dim_order_ops._to_dim_order_copy, dim_order_ops._clone_dim_order and
// aten.clone to a float32 or int32 output, from a constant, from et_vk.prepack of a constant of
// the same dtype, or from an earlier folded call. The output must be written by that call alone,
// and neither it nor the input may be a graph input or output, program state, or an argument an
// operator writes in place. Values convert as PyTorch does (float to int truncates toward zero);
// a value an int32 cannot hold is left to the GPU kernel. Runs on the IR before any builder
// (Graph::build, LoadOptions::fuse).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "format/ir.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

struct FoldStats {
  size_t calls_removed = 0;
};

// Rewrites `ir` in place: folded outputs become constants (their bytes owned by ir.owned_bytes)
// and their calls leave the chain.
FoldStats fold_constant_conversions(format::VkGraphIR& ir, const UseDef& ix);

// Element i of constant tensor `value_id` as a double; nullopt when the value is not a constant
// tensor with that element or its dtype is not a number type.
std::optional<double> constant_element(const format::VkGraphIR& ir, int32_t value_id, int64_t i);

// The value of a one-element float32 or float64 constant tensor (a scalar the export lifted into a
// tensor; prepacked ones are constants once fold_constant_conversions ran); nullopt otherwise.
std::optional<double> scalar_constant(const format::VkGraphIR& ir, int32_t value_id);

}  // namespace etwebgpu::graph
