// The WebGPU device every Model shares: what it is, and a self-test proving it computes and
// reports errors correctly. The device is created on first use (by these calls or the first
// Model::load); without a usable adapter they throw Error(Gpu).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "etwebgpu/error.h"

namespace etwebgpu {

struct DeviceInfo {
  std::string summary;       // one line: adapter, type, key limits and features (`etwebgpu info`)
  std::string description;   // "vendor / device / description" as the adapter reports it
  std::string adapter_type;  // "discrete", "integrated", "cpu" or "unknown"
  uint32_t vendor_id = 0;
  bool timestamp_query = false;  // per-dispatch GPU times in Profile
  bool subgroups = false, shader_f16 = false;
  uint64_t max_buffer_size = 0, max_storage_binding = 0;  // bytes
  // Compiled pipelines persist between processes in this directory ($ETWEBGPU_CACHE_DIR, else
  // $XDG_CACHE_HOME/etwebgpu or ~/.cache/etwebgpu); empty when off (ETWEBGPU_CACHE_DIR=off, a
  // directory that cannot be written, a browser). The counts are this process's so far: entries
  // loaded, keys not found, entries written, and entries found damaged (ignored, also misses).
  std::string pipeline_cache_dir;
  uint64_t pipeline_cache_hits = 0, pipeline_cache_misses = 0, pipeline_cache_stores = 0,
           pipeline_cache_rejected = 0;
};

DeviceInfo device_info();

struct SelfTestCheck {
  std::string name;
  bool pass = false;
  std::string message;  // what was verified, or what went wrong
};

// Runs small verified workloads on the device: vector adds at two workgroup sizes, copies and
// clears read back in the submit, per-dispatch timestamps, and that invalid WGSL, a bad bind group
// and a buffer over the device's limit are refused with the device's message (the device keeps
// working afterwards). Every check runs; failures are reported in the result, not thrown.
std::vector<SelfTestCheck> self_test();

// Destroys the shared device as a driver reset would (to test device-loss handling): every
// run() of a Model loaded before then throws Error(Gpu) ("device lost ..."); the next load gets
// a fresh device where the platform can make one (native; a browser page must be reloaded).
void simulate_device_loss();

}  // namespace etwebgpu
