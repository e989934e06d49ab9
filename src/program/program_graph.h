// Turns a whole execution plan into one GPU graph: every DelegateCall's VkGraph is inlined (its
// inputs and outputs bound to the program's EValues), and every KernelCall of an operator the op
// library knows becomes an operator call of that same graph. So a partly delegated program runs
// as one graph, in one submit, with data staying on the GPU between delegate and kernel calls.
#pragma once
#include <string>
#include <vector>

#include "etwebgpu/etwebgpu.h"
#include "format/ir.h"

namespace etwebgpu::graph {

struct MergedProgram {
  format::VkGraphIR ir;                       // program values first (same ids), then delegates'
  std::vector<InstructionInfo> instructions;  // where each instruction runs
  std::vector<std::string> unsupported;       // operators / instructions we cannot run (sorted)
};

// Number of outputs (= trailing return entries of its KernelCall) of an out-variant kernel.
int kernel_call_outputs(const std::string& key);

// Maps an out-variant kernel (e.g. "aten::mul.Scalar_out" with its args, return entries dropped)
// to the op-library name and argument layout; returns false when no mapping exists.
bool map_kernel_call(const std::string& key, std::vector<int32_t>& args, std::string& op_name,
                     format::VkGraphIR& ir);

// The out-variant kernel names map_kernel_call maps onto the op-library name `op_name`: the
// special mappings that target it, else the generic "ns::name.out" / "ns::name.X_out" form. Ops
// without an out variant (et_vk.*, names without a namespace such as sym_size.int) have none.
std::vector<std::string> kernel_call_names(const std::string& op_name);

// Decodes every delegate, checks every operator against the registry and merges; all problems
// found are listed in `unsupported` (nothing is built).
MergedProgram merge_program(const format::Program& program, const format::ExecutionPlan& plan);

}  // namespace etwebgpu::graph
