// Operator signatures, known once: each operator's argument names in VkGraph order (the output
// excluded) and the out-variant kernels (ExecuTorch KernelCall spellings) whose arguments differ
// from "ns::name.out" / "ns::name.X_out" with the operator's own arguments. `etwebgpu inspect`
// names arguments from it, the program merge lays KernelCalls out by it, and `etwebgpu ops` lists
// the kernel spellings it knows.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace etwebgpu::format {

struct OutVariant {
  OutVariant(std::string kernel, std::vector<std::string> args = {}, int outputs = 1, bool in_place = false)
      : kernel(std::move(kernel)), args(std::move(args)), outputs(outputs), in_place(in_place) {}
  std::string kernel;             // "aten::full.out"
  // Its arguments before the outputs, by the operator's argument names; empty: the operator's
  // own arguments in order. Operator arguments it lacks are passed as Null.
  std::vector<std::string> args;
  int outputs = 1;                // out tensors (and as many return entries) at the end
  bool in_place = false;          // no out tensor: the op writes `self` (copy_, index_put_)
  // Source index in the kernel's arguments of each operator argument (-1: Null), then of the
  // output (`self` for in-place kernels); multi-output kernels list the operator arguments only.
  std::vector<int> layout;
};

struct OpSchema {
  OpSchema(std::string name, std::vector<std::string> args, std::vector<OutVariant> out_variants = {})
      : name(std::move(name)), args(std::move(args)), out_variants(std::move(out_variants)) {}
  std::string name;               // op-library (VkGraph) spelling: "aten.full.default"
  std::vector<std::string> args;  // argument names in order, the output excluded
  std::vector<OutVariant> out_variants;
};

// Every operator with a known signature (sorted by name).
const std::vector<OpSchema>& op_schemas();
// nullptr when `op` has no entry.
const OpSchema* find_op_schema(std::string_view op);
// The out variant spelled `kernel` and the operator it maps onto; both nullptr when none.
struct OutVariantMatch {
  const OpSchema* op = nullptr;
  const OutVariant* variant = nullptr;
};
OutVariantMatch find_out_variant(std::string_view kernel);
// Position of argument `arg` of `op` (for builders reading arguments by name); -1 when the
// operator or the argument is unknown.
int arg_index(std::string_view op, std::string_view arg);

}  // namespace etwebgpu::format
