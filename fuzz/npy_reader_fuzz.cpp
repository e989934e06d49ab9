// Fuzzes the .npy reader (header dict parsing, version 1/2/3 header lengths, dtype/shape/size
// checks) and the writer on what it accepted. Only etwebgpu::Error may escape parse_npy; an
// accepted tensor must be self-consistent and survive an encode/parse round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "etwebgpu/error.h"
#include "etwebgpu/npy.h"

using namespace etwebgpu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  HostTensor parsed;
  try {
    parsed = parse_npy(std::span<const uint8_t>(data, size));
  } catch (const Error&) {
    return 0;
  }
  if (parsed.data.size() != static_cast<size_t>(parsed.numel()) * dtype_size(parsed.dtype)) std::abort();
  const HostTensor again = parse_npy(encode_npy(parsed));
  if (again.dtype != parsed.dtype || again.shape != parsed.shape || again.data != parsed.data) std::abort();
  return 0;
}
