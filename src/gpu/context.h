// gpu::Context: the process-wide WebGPU device and everything the runtime does with it.
// It reaches WebGPU only through surface.h, so the same code serves the native (Dawn) and the
// browser builds. Every failure throws etwebgpu::Error carrying the device's message.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "etwebgpu/error.h"
#include "gpu/surface.h"

namespace etwebgpu::gpu {

struct DeviceInfo {
  std::string description;
  uint32_t adapter_type = 0;  // 1 discrete, 2 integrated, 3 CPU
  uint32_t vendor_id = 0;
  uint32_t subgroup_min = 0, subgroup_max = 0;
  bool timestamp_query = false, subgroups = false, shader_f16 = false;
  bool packed_dot4 = false;  // WGSL dot4I8Packed / pack4xI8 (packed_4x8_integer_dot_product)
  uint64_t max_buffer_size = 0, max_storage_binding = 0, max_uniform_binding = 0;
  uint32_t max_storage_buffers_per_stage = 0, max_workgroup_storage = 0, max_invocations = 0;
  uint32_t max_wg_size_x = 0, max_wg_size_y = 0, max_wg_size_z = 0, max_workgroups_per_dim = 0;
  uint32_t min_storage_offset_alignment = 0;
  uint64_t memory_heap = 0;  // the adapter's device-local memory heaps in bytes; 0 when not reported
  std::string summary() const;  // one line: adapter, type, key limits and features
};

enum class BufferKind : uint32_t { Storage = EW_BUFFER_STORAGE, Uniform = EW_BUFFER_UNIFORM };

class Context;

// A device buffer; move-only, destroyed with its owner.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();
  uint32_t handle() const { return handle_; }
  uint64_t size() const { return size_; }
  explicit operator bool() const { return handle_ != 0; }

 private:
  friend class Context;
  uint32_t handle_ = 0;
  uint64_t size_ = 0;
};

// Override constants of a pipeline, ordered so that equal sets compare equal.
using Constants = std::map<std::string, double>;

struct Pipeline {
  uint32_t handle = 0;
  std::string label;  // shader:entry{constants}
};

class BindGroup {
 public:
  BindGroup() = default;
  BindGroup(BindGroup&& o) noexcept { *this = std::move(o); }
  BindGroup& operator=(BindGroup&& o) noexcept;
  BindGroup(const BindGroup&) = delete;
  BindGroup& operator=(const BindGroup&) = delete;
  ~BindGroup();
  uint32_t handle() const { return handle_; }

 private:
  friend class Context;
  uint32_t handle_ = 0;
};

struct Binding {
  uint32_t binding;
  const Buffer* buffer;
  uint64_t offset = 0;
  uint64_t size = UINT64_MAX;  // whole buffer from offset
};

// Workgroup grid for `total` workgroups: one dimension up to the device limit, folded into 2D
// (x * y >= total, near square) past it. Shaders rebuild the flat workgroup index as
// wid.x + wid.y * num_workgroups.x and bounds-check it.
struct Grid {
  uint32_t x = 1, y = 1, z = 1;
};
Grid fold_grid(uint64_t total_workgroups, uint32_t max_per_dim);

// One recorded command of a run (see surface.h's EwCommand).
using Command = EwCommand;

class Context {
 public:
  // The shared device of this process: created on first use; every model shares it. Once that
  // device is lost, the next call creates a fresh one (models loaded before keep the lost one and
  // fail with Error(Gpu) until they are loaded again).
  static std::shared_ptr<Context> get();
  // False once this context's device is lost (or replaced after a loss).
  bool alive() const { return ewgpu_device_generation() == generation_; }

  const DeviceInfo& info() const { return info_; }

  // Checks `size` against maxBufferSize (and maxStorageBufferBindingSize for storage buffers); a
  // buffer the device cannot hold is an Error(Limit) naming `label` and the bytes.
  Buffer create_buffer(uint64_t size, BufferKind kind, std::string_view label);
  // Throws Error(Limit) when `bytes` more would not fit in the device's memory (the surface's
  // ewgpu_memory_budget: heaps less live buffers; host memory and address space on a CPU
  // adapter), so a model too large is refused before anything is allocated. No check where the
  // device reports no heaps.
  void require_memory(uint64_t bytes, std::string_view what) const;
  void write(const Buffer& b, uint64_t offset, const void* data, uint64_t size);
  // A synchronous read: it waits for everything queued before it.
  void read(const Buffer& b, uint64_t offset, void* dst, uint64_t size);
  // How many read() calls this context has done: the round trips outside a run's own submit.
  uint64_t sync_reads() const { return sync_reads_.load(); }

  // The one way to get a pipeline: WGSL text, entry, override constants; cached by (source
  // hash, entry, constants). `label` names it in errors. The shader library and its
  // preprocessing live above this layer (kernel/wgsl.h).
  const Pipeline& pipeline_from_source(std::string_view wgsl, std::string_view entry, const Constants& c,
                                       std::string_view label);
  // What pipeline_from_source takes, for pipelines_from_sources.
  struct PipelineSource {
    std::string_view wgsl, entry;
    const Constants* constants;
    std::string_view label;
  };
  // Many pipelines at once: cached ones come from the cache, the others (each distinct source
  // once) are compiled concurrently in one batch that is waited for once (ewgpu_pipelines_create).
  // All or nothing: on an error (naming the failing pipeline's label) none of the batch is kept,
  // and `failed`, when given, is the index into `sources` of the one that failed.
  std::vector<const Pipeline*> pipelines_from_sources(const std::vector<PipelineSource>& sources,
                                                      size_t* failed = nullptr);
  BindGroup bind_group(const Pipeline& p, const std::vector<Binding>& bindings);

  Grid grid(uint64_t total_workgroups) const { return fold_grid(total_workgroups, info_.max_workgroups_per_dim); }
  Command dispatch(const Pipeline& p, const BindGroup& bg, Grid g) const;
  static Command copy(const Buffer& src, uint64_t src_off, const Buffer& dst, uint64_t dst_off, uint64_t size);
  static Command clear(const Buffer& dst, uint64_t off, uint64_t size);

  // Submits (natively in parts, see ewgpu_submit) and waits; with `durations_ns` and timestamp
  // support, fills the GPU time of each dispatch (0 for others).
  // `reads` regions are copied to host memory at the end of the same submit.
  struct Read { const Buffer* buffer; uint64_t offset; uint64_t size; void* dst; };
  void submit(const std::vector<Command>& cmds, std::vector<uint64_t>* durations_ns = nullptr,
              const std::vector<Read>& reads = {});
  // submit without waiting (ewgpu_submit_async): the reads land in host memory when wait(ticket)
  // returns. At most 4 in flight; each ticket is waited for once.
  using Ticket = uint32_t;
  Ticket submit_async(const std::vector<Command>& cmds, const std::vector<Read>& reads);
  void wait(Ticket t);

  // Test hook: destroys the device (as a driver reset would); every later call fails with an Error.
  void debug_lose_device() { ewgpu_debug_lose_device(); }

  // batches: compiles issued (ewgpu_pipelines_create calls), each of one or more pipelines.
  struct CacheStats {
    size_t pipelines = 0, hits = 0, misses = 0, bind_groups_created = 0, buffers_created = 0, batches = 0;
  };
  CacheStats cache_stats() const;

  // Device objects alive in this process (all contexts): what models hold beyond the shared
  // pipeline cache. A freed model must bring these back to where they were before its load.
  struct LiveObjects { int64_t buffers = 0, buffer_bytes = 0, bind_groups = 0; };
  static LiveObjects live_objects();

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

 private:
  Context();
  friend class Buffer;
  friend class BindGroup;
  void require_alive() const;  // throws Error(Gpu) once the device is lost or replaced
  DeviceInfo info_;
  uint32_t generation_ = 0;
  std::atomic<uint64_t> sync_reads_{0};
  mutable std::mutex mu_;
  std::map<std::string, Pipeline> cache_;  // key: hash|entry|constants
  size_t hits_ = 0, misses_ = 0, bind_groups_created_ = 0, buffers_created_ = 0, batches_ = 0;
};

}  // namespace etwebgpu::gpu
