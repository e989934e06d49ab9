#include "gpu/context.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

namespace etwebgpu::gpu {

namespace {
constexpr size_t kErrLen = 4096;

std::atomic<int64_t> g_live_buffers{0}, g_live_buffer_bytes{0}, g_live_bind_groups{0};

void release_buffer(uint32_t handle, uint64_t size) {
  ewgpu_buffer_destroy(handle);
  g_live_buffers.fetch_sub(1, std::memory_order_relaxed);
  g_live_buffer_bytes.fetch_sub(static_cast<int64_t>(size), std::memory_order_relaxed);
}
void release_bind_group(uint32_t handle) {
  ewgpu_bind_group_destroy(handle);
  g_live_bind_groups.fetch_sub(1, std::memory_order_relaxed);
}

[[noreturn]] void fail(ErrorKind k, const char* what, const char* msg) {
  throw Error(k, std::string(what) + ": " + msg);
}
// The surfaces say "out of memory" for an allocation the device cannot hold (surface.h).
ErrorKind classify(const char* msg) {
  std::string m(msg);
  return (m.find("out of memory") != std::string::npos || m.find("OutOfMemory") != std::string::npos)
             ? ErrorKind::Limit : ErrorKind::Gpu;
}
}  // namespace

std::string DeviceInfo::summary() const {
  const char* type = adapter_type == 1 ? "discrete GPU" : adapter_type == 2 ? "integrated GPU" :
                     adapter_type == 3 ? "CPU" : "unknown";
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "%s [Vulkan, %s] maxBuffer=%llu maxStorageBinding=%llu storageBuffers=%u maxInvocations=%u wgStorage=%u "
                "subgroups=%s(%u..%u) timestamp-query=%s shader-f16=%s dot4I8Packed=%s",
                description.c_str(), type, (unsigned long long)max_buffer_size,
                (unsigned long long)max_storage_binding, max_storage_buffers_per_stage, max_invocations, max_workgroup_storage,
                subgroups ? "yes" : "no", subgroup_min, subgroup_max, timestamp_query ? "yes" : "no",
                shader_f16 ? "yes" : "no", packed_dot4 ? "yes" : "no");
  return memory_heap ? std::string(buf) + " memoryHeap=" + std::to_string(memory_heap) : std::string(buf);
}

Grid fold_grid(uint64_t total, uint32_t max_per_dim) {
  if (total == 0) return Grid{0, 1, 1};
  if (max_per_dim == 0) max_per_dim = 65535;
  if (total <= max_per_dim) return Grid{static_cast<uint32_t>(total), 1, 1};
  uint64_t y = (total + max_per_dim - 1) / max_per_dim;
  // Near square keeps both dimensions far from the limit.
  uint64_t side = static_cast<uint64_t>(std::ceil(std::sqrt(static_cast<double>(total))));
  if (side > y) y = side;
  uint64_t x = (total + y - 1) / y;
  if (x > max_per_dim || y > max_per_dim)
    throw Error(ErrorKind::Limit, "dispatch of " + std::to_string(total) + " workgroups exceeds " +
                                      std::to_string(max_per_dim) + "^2");
  return Grid{static_cast<uint32_t>(x), static_cast<uint32_t>(y), 1};
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    if (handle_) release_buffer(handle_, size_);
    handle_ = std::exchange(o.handle_, 0);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}
Buffer::~Buffer() {
  if (handle_) release_buffer(handle_, size_);
}
BindGroup& BindGroup::operator=(BindGroup&& o) noexcept {
  if (this != &o) {
    if (handle_) release_bind_group(handle_);
    handle_ = std::exchange(o.handle_, 0);
  }
  return *this;
}
BindGroup::~BindGroup() {
  if (handle_) release_bind_group(handle_);
}

std::shared_ptr<Context> Context::get() {
  static std::mutex m;
  // The device lives for the process and is never torn down: at exit, GPU drivers (NVIDIA's
  // Vulkan driver) may already have run their own exit handlers, and releasing Dawn objects
  // then crashes. The OS reclaims everything.
  static auto* keep = new std::shared_ptr<Context>();
  std::lock_guard<std::mutex> lock(m);
  if (!*keep || !(*keep)->alive()) *keep = std::shared_ptr<Context>(new Context());
  return *keep;
}

void Context::require_alive() const {
  if (!alive())
    throw Error(ErrorKind::Gpu, "device lost: the WebGPU device this model was loaded on is gone (driver reset or "
                                "destroyed); load the model again to use a fresh device");
}

Context::Context() {
  EwAdapterInfo a{};
  char err[kErrLen] = {0};
  if (ewgpu_init(&a, err, sizeof err) != 0) throw Error(ErrorKind::Gpu, std::string("WebGPU init: ") + err);
  info_.description = a.description;
  info_.adapter_type = a.adapter_type;
  info_.vendor_id = a.vendor_id;
  info_.subgroup_min = a.subgroup_min;
  info_.subgroup_max = a.subgroup_max;
  info_.timestamp_query = a.has_timestamp_query;
  info_.subgroups = a.has_subgroups;
  info_.shader_f16 = a.has_shader_f16;
  info_.packed_dot4 = a.has_packed_dot4;
  info_.max_buffer_size = a.max_buffer_size;
  info_.max_storage_binding = a.max_storage_buffer_binding_size;
  info_.max_uniform_binding = a.max_uniform_buffer_binding_size;
  info_.max_storage_buffers_per_stage = a.max_storage_buffers_per_stage;
  info_.max_workgroup_storage = a.max_compute_workgroup_storage_size;
  info_.max_invocations = a.max_compute_invocations_per_workgroup;
  info_.max_wg_size_x = a.max_compute_workgroup_size_x;
  info_.max_wg_size_y = a.max_compute_workgroup_size_y;
  info_.max_wg_size_z = a.max_compute_workgroup_size_z;
  info_.max_workgroups_per_dim = a.max_compute_workgroups_per_dimension;
  info_.min_storage_offset_alignment = a.min_storage_buffer_offset_alignment;
  uint64_t available = 0;
  char why[kErrLen] = {0};
  if (ewgpu_memory_budget(&available, &info_.memory_heap, why, sizeof why) != 0) info_.memory_heap = 0;
  generation_ = ewgpu_device_generation();
}

Context::~Context() {
  for (auto& [k, p] : cache_) ewgpu_pipeline_destroy(p.handle);
}

Buffer Context::create_buffer(uint64_t size, BufferKind kind, std::string_view label) {
  require_alive();
  if (size == 0) size = 4;
  size = (size + 3) & ~uint64_t(3);  // WebGPU copies and writes work in 4-byte units
  if (size > info_.max_buffer_size)
    throw Error(ErrorKind::Limit, "buffer '" + std::string(label) + "' of " + std::to_string(size) +
                                      " bytes exceeds the device's maxBufferSize of " +
                                      std::to_string(info_.max_buffer_size));
  if (kind == BufferKind::Storage && size > info_.max_storage_binding)
    throw Error(ErrorKind::Limit, "buffer '" + std::string(label) + "' of " + std::to_string(size) +
                                      " bytes exceeds the device's maxStorageBufferBindingSize of " +
                                      std::to_string(info_.max_storage_binding));
  if (kind == BufferKind::Uniform && size > info_.max_uniform_binding)
    throw Error(ErrorKind::Limit, "uniform buffer '" + std::string(label) + "' exceeds maxUniformBufferBindingSize");
  char err[kErrLen] = {0};
  std::string l(label);
  uint32_t h = ewgpu_buffer_create(size, static_cast<uint32_t>(kind), l.c_str(), err, sizeof err);
  if (!h) fail(classify(err), ("buffer '" + l + "' of " + std::to_string(size) + " bytes").c_str(), err);
  Buffer b;
  b.handle_ = h;
  b.size_ = size;
  g_live_buffers.fetch_add(1, std::memory_order_relaxed);
  g_live_buffer_bytes.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  ++buffers_created_;
  return b;
}

void Context::require_memory(uint64_t bytes, std::string_view what) const {
  require_alive();
  uint64_t available = 0, heap = 0;
  char why[kErrLen] = {0};
  if (ewgpu_memory_budget(&available, &heap, why, sizeof why) != 0 || bytes <= available) return;
  throw Error(ErrorKind::Limit, std::string(what) + " needs " + std::to_string(bytes) +
                                    " bytes of device memory; the device can take " + std::to_string(available) +
                                    " more (" + why + ")");
}

void Context::write(const Buffer& b, uint64_t offset, const void* data, uint64_t size) {
  if (size == 0) return;
  require_alive();
  if (offset + size > b.size() || offset % 4)
    throw Error(ErrorKind::Internal, "buffer write out of range or misaligned");
  char err[kErrLen] = {0};
  // WebGPU writes need 4-byte multiples: pad the tail through a small copy.
  if (size % 4) {
    std::vector<uint8_t> tmp((size + 3) & ~uint64_t(3), 0);
    std::memcpy(tmp.data(), data, size);
    if (offset + tmp.size() > b.size()) throw Error(ErrorKind::Internal, "padded buffer write out of range");
    if (ewgpu_buffer_write(b.handle(), offset, tmp.data(), tmp.size(), err, sizeof err)) fail(classify(err), "write", err);
    return;
  }
  if (ewgpu_buffer_write(b.handle(), offset, data, size, err, sizeof err)) fail(classify(err), "write", err);
}

void Context::read(const Buffer& b, uint64_t offset, void* dst, uint64_t size) {
  if (size == 0) return;
  require_alive();
  if (offset % 4 || offset + size > b.size()) throw Error(ErrorKind::Internal, "buffer read out of range or misaligned");
  ++sync_reads_;
  char err[kErrLen] = {0};
  if (ewgpu_buffer_read(b.handle(), offset, dst, size, err, sizeof err)) fail(classify(err), "read", err);
}

const Pipeline& Context::pipeline_from_source(std::string_view wgsl, std::string_view entry, const Constants& c,
                                              std::string_view label) {
  return *pipelines_from_sources({{wgsl, entry, &c, label}}).front();
}

std::vector<const Pipeline*> Context::pipelines_from_sources(const std::vector<PipelineSource>& sources,
                                                             size_t* failed) {
  // A pipeline to compile, and the sources it serves.
  struct Miss {
    std::string key, entry, label;
    std::vector<EwConstant> constants;
    std::vector<size_t> users;
  };
  std::vector<const Pipeline*> out(sources.size(), nullptr);
  std::vector<Miss> misses;
  std::map<std::string, size_t> missing;  // key -> index into misses
  require_alive();
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < sources.size(); ++i) {
    const PipelineSource& s = sources[i];
    std::string key = std::to_string(std::hash<std::string_view>{}(s.wgsl)) + "|" + std::to_string(s.wgsl.size()) +
                      "|" + std::string(s.entry);
    std::string cdesc;
    for (auto& [k, v] : *s.constants) {
      char b[64];
      std::snprintf(b, sizeof b, "%.17g", v);
      cdesc += (cdesc.empty() ? "" : ",") + k + "=" + b;
    }
    key += "|" + cdesc;
    if (auto it = cache_.find(key); it != cache_.end()) {
      ++hits_;
      out[i] = &it->second;
    } else if (auto m = missing.find(key); m != missing.end()) {
      ++hits_;  // served by the compile of an equal source earlier in this batch
      misses[m->second].users.push_back(i);
    } else {
      ++misses_;
      missing.emplace(key, misses.size());
      Miss& ms = misses.emplace_back();
      ms.key = key;
      ms.entry = s.entry;
      ms.label = std::string(s.label) + ":" + ms.entry + (cdesc.empty() ? "" : "{" + cdesc + "}");
      for (auto& [k, v] : *s.constants) ms.constants.push_back(EwConstant{k.c_str(), v});
      ms.users.push_back(i);
    }
  }
  if (misses.empty()) return out;
  std::vector<EwPipelineDesc> descs;
  for (auto& m : misses) {
    const PipelineSource& s = sources[m.users.front()];
    descs.push_back(EwPipelineDesc{s.wgsl.data(), s.wgsl.size(), m.entry.c_str(), m.constants.data(),
                                   m.constants.size(), m.label.c_str()});
  }
  std::vector<uint32_t> handles(misses.size(), 0);
  size_t bad = 0;
  char err[kErrLen] = {0};
  ++batches_;
  if (ewgpu_pipelines_create(descs.data(), descs.size(), handles.data(), &bad, err, sizeof err)) {
    if (failed) *failed = misses[bad < misses.size() ? bad : 0].users.front();
    fail(ErrorKind::Gpu, "compiling pipeline", err);  // the surface's message begins with the label
  }
  for (size_t k = 0; k < misses.size(); ++k) {
    const Pipeline& p = cache_.emplace(misses[k].key, Pipeline{handles[k], misses[k].label}).first->second;
    for (size_t i : misses[k].users) out[i] = &p;
  }
  return out;
}

BindGroup Context::bind_group(const Pipeline& p, const std::vector<Binding>& bindings) {
  require_alive();
  std::vector<EwBinding> e;
  for (auto& b : bindings) {
    if (!b.buffer || !*b.buffer) throw Error(ErrorKind::Internal, "bind group entry without a buffer");
    uint64_t size = b.size == UINT64_MAX ? b.buffer->size() - b.offset : b.size;
    e.push_back(EwBinding{b.binding, b.buffer->handle(), b.offset, size});
  }
  char err[kErrLen] = {0};
  uint32_t h = ewgpu_bind_group_create(p.handle, e.data(), e.size(), err, sizeof err);
  if (!h) fail(ErrorKind::Gpu, ("bind group for " + p.label).c_str(), err);
  BindGroup bg;
  bg.handle_ = h;
  g_live_bind_groups.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  ++bind_groups_created_;
  return bg;
}

Command Context::dispatch(const Pipeline& p, const BindGroup& bg, Grid g) const {
  Command c{};
  c.kind = EW_CMD_DISPATCH;
  c.pipeline = p.handle;
  c.bind_group = bg.handle();
  c.groups_x = g.x;
  c.groups_y = g.y;
  c.groups_z = g.z;
  return c;
}
Command Context::copy(const Buffer& src, uint64_t so, const Buffer& dst, uint64_t d, uint64_t size) {
  Command c{};
  c.kind = EW_CMD_COPY;
  c.src = src.handle();
  c.dst = dst.handle();
  c.src_offset = so;
  c.dst_offset = d;
  c.size = size;
  return c;
}
Command Context::clear(const Buffer& dst, uint64_t off, uint64_t size) {
  Command c{};
  c.kind = EW_CMD_CLEAR;
  c.dst = dst.handle();
  c.dst_offset = off;
  c.size = size;
  return c;
}

namespace {
// The commands worth sending: inactive work (zero grid, empty copy) is skipped, as dynamic shapes
// may shrink a step to nothing; `index` maps each kept command back to its position in `cmds`.
std::vector<Command> live_commands(const std::vector<Command>& cmds, std::vector<size_t>& index) {
  std::vector<Command> live;
  live.reserve(cmds.size());
  for (size_t i = 0; i < cmds.size(); ++i) {
    const Command& c = cmds[i];
    if (c.kind == EW_CMD_DISPATCH && (c.groups_x == 0 || c.groups_y == 0 || c.groups_z == 0)) continue;
    if ((c.kind == EW_CMD_COPY || c.kind == EW_CMD_CLEAR) && c.size == 0) continue;
    if (c.kind == EW_CMD_COPY && c.src == c.dst) {
      // Same buffer (shared memory object): nothing to move; a real overlap is invalid in WebGPU.
      if (c.src_offset == c.dst_offset) continue;
      throw Error(ErrorKind::Internal, "buffer-to-buffer copy within one buffer");
    }
    live.push_back(c);
    index.push_back(i);
  }
  return live;
}

std::vector<EwRead> read_regions(const std::vector<Context::Read>& reads) {
  std::vector<EwRead> rd;
  for (auto& r : reads) {
    if (r.offset % 4 || r.size % 4 || r.offset + r.size > r.buffer->size())
      throw Error(ErrorKind::Internal, "read-back region out of range or misaligned");
    rd.push_back(EwRead{r.buffer->handle(), r.offset, r.size, r.dst});
  }
  return rd;
}
}  // namespace

void Context::submit(const std::vector<Command>& cmds, std::vector<uint64_t>* durations, const std::vector<Read>& reads) {
  require_alive();
  std::vector<size_t> index;
  std::vector<Command> live = live_commands(cmds, index);
  bool timed = durations && info_.timestamp_query;
  std::vector<uint64_t> d(live.size(), 0);
  char err[kErrLen] = {0};
  std::vector<EwRead> rd = read_regions(reads);
  if (ewgpu_submit(live.data(), live.size(), timed ? 1 : 0, timed ? d.data() : nullptr, err, sizeof err, rd.data(),
                   rd.size()))
    fail(classify(err), "submit", err);
  if (durations) {
    durations->assign(cmds.size(), 0);
    for (size_t k = 0; k < live.size(); ++k) (*durations)[index[k]] = d[k];
  }
}

Context::Ticket Context::submit_async(const std::vector<Command>& cmds, const std::vector<Read>& reads) {
  require_alive();
  std::vector<size_t> index;
  std::vector<Command> live = live_commands(cmds, index);
  std::vector<EwRead> rd = read_regions(reads);
  char err[kErrLen] = {0};
  Ticket t = 0;
  if (ewgpu_submit_async(live.data(), live.size(), rd.data(), rd.size(), &t, err, sizeof err))
    fail(classify(err), "submit", err);
  return t;
}

void Context::wait(Ticket t) {
  char err[kErrLen] = {0};
  if (ewgpu_submit_wait(t, err, sizeof err)) fail(classify(err), "submit", err);
}

Context::LiveObjects Context::live_objects() {
  return LiveObjects{g_live_buffers.load(), g_live_buffer_bytes.load(), g_live_bind_groups.load()};
}

Context::CacheStats Context::cache_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return CacheStats{cache_.size(), hits_, misses_, bind_groups_created_, buffers_created_, batches_};
}

}  // namespace etwebgpu::gpu
