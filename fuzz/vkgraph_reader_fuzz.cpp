// Fuzzes the VH00 + VkGraph reader alone: the input is a raw delegate blob (as extracted from a
// .pte by fuzz_seeds), decoded with a Program that has no named data, then described
// and dumped as JSON. Only etwebgpu::Error may escape: any other exception, crash, leak or
// sanitizer report is a bug.
#include <cstddef>
#include <cstdint>

#include "etwebgpu/error.h"
#include "format/describe.h"
#include "format/ir.h"

using namespace etwebgpu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const format::Program no_named_data;
  try {
    const auto ir = format::read_vkgraph(format::ByteSpan(data, size), no_named_data);
    (void)format::describe_vkgraph(ir);
    (void)format::vkgraph_to_json(ir);
  } catch (const Error&) {
  }
  return 0;
}
