#pragma once
#include <cstdint>
#include <string>

#include "gpu/context.h"

namespace etwebgpu::gpu {
// Adds two n-element vectors on the device with workgroup size `wg` and checks every element on
// the host. Returns a one-line result; throws Error on a mismatch.
std::string self_test(Context& ctx, uint64_t n = 1 << 20, uint32_t wg = 64);
}  // namespace etwebgpu::gpu
