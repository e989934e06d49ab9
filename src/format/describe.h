// Human-readable dumps of decoded programs and delegate graphs (used by `etwebgpu inspect`)
// and a JSON form of a VkGraph (used by round-trip tests).
#pragma once
#include <string>

#include "format/ir.h"

namespace etwebgpu::format {

// Plans (inputs/outputs with dtype, sizes, dynamism), instructions, operators and, for every
// VulkanBackend delegate, its decoded graph when `include_graphs` (decode errors are shown
// inline, not thrown); without it each delegate gets a one-line summary.
std::string describe_program(const Program& program, bool include_graphs = true);
// Values, op calls with their arguments decoded inline, inputs/outputs and constant bytes.
std::string describe_vkgraph(const VkGraphIR& graph);
// Every field of the IR as JSON; non-finite doubles become the strings "inf", "-inf", "nan".
std::string vkgraph_to_json(const VkGraphIR& graph);

}  // namespace etwebgpu::format
