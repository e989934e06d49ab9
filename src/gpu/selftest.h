#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "etwebgpu/device.h"
#include "gpu/context.h"

namespace etwebgpu::gpu {
// Adds two n-element vectors on the device with workgroup size `wg` and checks every element on
// the host. Returns a one-line result; throws Error on a mismatch.
std::string self_test(Context& ctx, uint64_t n = 1 << 20, uint32_t wg = 64);
// The checks of etwebgpu::self_test() (device.h) on `ctx`.
std::vector<SelfTestCheck> self_test_checks(Context& ctx);
}  // namespace etwebgpu::gpu
