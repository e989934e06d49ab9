// Looking inside a .pte without running it, and what the runtime supports. Nothing here needs a
// GPU. Malformed files throw Error(Format), unreadable ones Error(Io).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "etwebgpu/etwebgpu.h"

namespace etwebgpu {

struct ProgramReport {
  // Every plan (inputs and outputs with dtype, sizes and dynamism, instructions, operators) and
  // every VulkanBackend delegate's decoded graph, with operator arguments named where known.
  std::string description;
  std::string method;                        // the method `instructions` describe
  size_t gpu_ops = 0;                        // operator calls in the one GPU graph it becomes
  std::vector<InstructionInfo> instructions; // where each instruction runs (as Model::plan_summary)
  std::vector<std::string> unsupported;      // what this runtime cannot run (sorted); empty: it loads
  std::string text() const;                  // all of it, as `etwebgpu inspect` prints it
};

// Throws Error(InvalidArgument) when the program has no method `method`.
ProgramReport inspect(std::vector<uint8_t> pte, const std::string& method = "forward");
ProgramReport inspect_file(const std::string& path, const std::string& method = "forward");

struct OperatorInfo {
  std::string name;    // op-library (VkGraph) spelling, e.g. "aten.add.Tensor"
  std::string family;  // the op family implementing it, e.g. "elementwise" (src/ops/<family>/)
  // ExecuTorch KernelCall (out-variant) spellings run as this operator, e.g. "aten::add.out";
  // empty for operators that only appear inside delegates (et_vk.*, sym_size.int).
  std::vector<std::string> kernel_calls;
};

// Every operator this build runs, sorted by name (`etwebgpu ops`).
std::vector<OperatorInfo> supported_operators();

}  // namespace etwebgpu
