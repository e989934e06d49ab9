// Fuzzes everything a downloaded .pte reaches before the GPU: the Program reader, the VH00 +
// VkGraph reader (also fed the raw input as a delegate blob), whole-program merging (operator
// mapping, id remapping) and the inspect text. Only etwebgpu::Error may escape the loader: any
// other exception, crash, leak or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "etwebgpu/error.h"
#include "format/describe.h"
#include "format/ir.h"
#include "program/program_graph.h"

using namespace etwebgpu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<const format::Bytes>(data, data + size);
  try {
    auto program = format::read_program(bytes);
    (void)format::describe_program(program);
    for (const auto& plan : program.plans) {
      auto merged = graph::merge_program(program, plan);
      (void)format::describe_vkgraph(merged.ir);
    }
  } catch (const Error&) {
  }
  try {
    format::Program empty;
    empty.bytes = bytes;
    auto ir = format::read_vkgraph(format::ByteSpan(bytes->data(), bytes->size()), empty);
    (void)format::describe_vkgraph(ir);
  } catch (const Error&) {
  }
  return 0;
}
