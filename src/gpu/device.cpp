// include/etwebgpu/device.h over gpu::Context.
#include "etwebgpu/device.h"

#include "gpu/context.h"
#include "gpu/selftest.h"

namespace etwebgpu {

DeviceInfo device_info() {
  const gpu::DeviceInfo& i = gpu::Context::get()->info();
  static const char* const kAdapterTypes[] = {"unknown", "discrete", "integrated", "cpu"};
  DeviceInfo d;
  d.summary = i.summary();
  d.description = i.description;
  d.adapter_type = i.adapter_type < 4 ? kAdapterTypes[i.adapter_type] : "unknown";
  d.vendor_id = i.vendor_id;
  d.timestamp_query = i.timestamp_query;
  d.subgroups = i.subgroups;
  d.shader_f16 = i.shader_f16;
  d.max_buffer_size = i.max_buffer_size;
  d.max_storage_binding = i.max_storage_binding;
  EwCacheStats pc{};
  char dir[4096] = {0};
  if (ewgpu_cache_stats(&pc, dir, sizeof dir) == 0) {
    d.pipeline_cache_dir = dir;
    d.pipeline_cache_hits = pc.hits;
    d.pipeline_cache_misses = pc.misses;
    d.pipeline_cache_stores = pc.stores;
    d.pipeline_cache_rejected = pc.rejected;
  }
  return d;
}

std::vector<SelfTestCheck> self_test() { return gpu::self_test_checks(*gpu::Context::get()); }

void simulate_device_loss() { gpu::Context::get()->debug_lose_device(); }

}  // namespace etwebgpu
