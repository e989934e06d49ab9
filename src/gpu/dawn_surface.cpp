// The native implementation of surface.h over Dawn (libwebgpu_wrapper.so).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "gpu/disk_cache.h"
#include "gpu/surface.h"
#include "gpu/webgpu_abi.h"

namespace {

constexpr uint64_t kWaitTimeoutNs = 600ull * 1000 * 1000 * 1000;  // a hung queue becomes an error, not a hang
// Address space a CPU adapter's driver needs besides buffers (JIT code, thread stacks, descriptors).
constexpr uint64_t kAddressSpaceReserve = 64ull << 20;

template <class T>
struct Table {
  std::vector<T> items{nullptr};  // handle 0 is "none"
  std::vector<uint32_t> free_list;
  uint32_t add(T v) {
    if (!free_list.empty()) {
      uint32_t h = free_list.back();
      free_list.pop_back();
      items[h] = v;
      return h;
    }
    items.push_back(v);
    return static_cast<uint32_t>(items.size() - 1);
  }
  T get(uint32_t h) const { return h < items.size() ? items[h] : nullptr; }
  T take(uint32_t h) {
    T v = get(h);
    if (v) {
      items[h] = nullptr;
      free_list.push_back(h);
    }
    return v;
  }
};

// A submit that returned before its work finished (ewgpu_submit_async): its own read-back buffer,
// whose map completes once the work has.
constexpr size_t kMaxPending = 4;
struct PendingRun {
  bool busy = false;
  WGPUBuffer staging = nullptr;
  uint64_t staging_size = 0, need = 0;
  std::vector<EwRead> reads;
  std::vector<uint64_t> at;
  WGPUFuture future{};
  WGPUEnum status = 0;
  std::string message;
};

struct State {
  std::recursive_mutex mu;
  WGPUInstance instance = nullptr;
  WGPUAdapter adapter = nullptr;
  WGPUDevice device = nullptr;
  WGPUQueue queue = nullptr;
  bool has_timestamps = false;
  uint32_t generation = 0;    // of the current device, see ewgpu_device_generation
  std::string pending_error;  // uncaptured errors since the last check
  std::string lost_message;   // non-empty once the device is lost
  Table<WGPUBuffer> buffers;
  Table<WGPUComputePipeline> pipelines;
  Table<WGPUBindGroup> bind_groups;
  WGPUBuffer staging = nullptr;  // MapRead buffer reused by reads and timestamp readback
  uint64_t staging_size = 0;
  WGPUBuffer upload = nullptr;   // MapWrite buffer reused by large writes (see ewgpu_buffer_write)
  uint64_t upload_size = 0;
  std::array<PendingRun, kMaxPending> pending;  // ewgpu_submit_async's submits, by ticket - 1
  // Device memory (see fits()). The buffers of older, lost devices no longer count.
  uint64_t heap_bytes = 0;    // the adapter's device-local memory heaps; 0 when it reports none
  bool cpu_adapter = false;   // its buffers are host memory that the driver maps into this process
  uint64_t device_bytes = 0;  // in live buffers of the current device, staging included
  uint64_t peak_device_bytes = 0;
  bool freed_since_release = false;  // destroyed buffers whose memory Dawn may still hold
  struct BufferMeta { uint64_t size; uint32_t generation; };
  std::vector<BufferMeta> buffer_meta;  // by buffer handle
  etwebgpu::gpu::DiskCache* disk_cache = nullptr;  // opened by the first ewgpu_init; every device uses it
};
State& S() {
  static State* s = new State();  // never destroyed: Dawn may call back during process exit
  return *s;
}

WGPUStringView sv(const char* s) { return WGPUStringView{s, s ? WGPU_STRLEN : 0}; }
std::string str(WGPUStringView v) {
  if (!v.data) return {};
  return v.length == WGPU_STRLEN ? std::string(v.data) : std::string(v.data, v.length);
}
void set_err(char* err, size_t n, const std::string& m) {
  if (err && n) std::snprintf(err, n, "%s", m.c_str());
}

// Returns false (with the message) when the device reported an error or was lost.
bool check_device(char* err, size_t n, const char* what) {
  State& s = S();
  if (!s.lost_message.empty()) {
    set_err(err, n, std::string(what) + ": device lost: " + s.lost_message);
    return false;
  }
  if (!s.pending_error.empty()) {
    set_err(err, n, std::string(what) + ": " + s.pending_error);
    s.pending_error.clear();
    return false;
  }
  return true;
}

bool wait(WGPUFuture f, char* err, size_t n, const char* what) {
  WGPUFutureWaitInfo info{f, 0};
  WGPUEnum st = wgpuInstanceWaitAny(S().instance, 1, &info, kWaitTimeoutNs);
  if (st == WGPUWaitStatus_TimedOut) {
    set_err(err, n, std::string(what) + ": GPU did not finish within 600 s");
    return false;
  }
  if (st != WGPUWaitStatus_Success || !info.completed) {
    set_err(err, n, std::string(what) + ": WaitAny failed (status " + std::to_string(st) + ")");
    return false;
  }
  return true;
}

void on_uncaptured(const WGPUDevice*, WGPUEnum type, WGPUStringView msg, void*, void*) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  const char* kind = type == WGPUErrorType_OutOfMemory ? "out of memory" :
                     type == WGPUErrorType_Validation ? "validation error" :
                     type == WGPUErrorType_Internal ? "internal error" : "error";
  if (!s.pending_error.empty()) s.pending_error += "; ";
  s.pending_error += std::string("WebGPU ") + kind + ": " + str(msg);
}
void on_lost(const WGPUDevice* device, WGPUEnum reason, WGPUStringView msg, void*, void*) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);  // may fire from another thread
  if (s.device == nullptr || !device || *device != s.device) return;  // not (or no longer) the current device
  s.lost_message = "reason " + std::to_string(reason) + ": " + str(msg);
}

struct ScopeResult { WGPUEnum status = 0; WGPUEnum type = 0; std::string message; };
void on_pop(WGPUEnum status, WGPUEnum type, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<ScopeResult*>(u1);
  r->status = status;
  r->type = type;
  r->message = str(msg);
}
// Pops one error scope; false + message when it caught an error.
bool pop_scope(char* err, size_t n, const char* what) {
  ScopeResult r;
  WGPUPopErrorScopeCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = on_pop;
  cb.userdata1 = &r;
  if (!wait(wgpuDevicePopErrorScope(S().device, cb), err, n, what)) return false;
  if (r.status != WGPUPopErrorScopeStatus_Success) {
    set_err(err, n, std::string(what) + ": could not pop error scope: " + r.message);
    return false;
  }
  if (r.type != WGPUErrorType_NoError) {
    set_err(err, n, std::string(what) + (r.type == WGPUErrorType_OutOfMemory ? ": out of memory: " : ": ") + r.message);
    return false;
  }
  return true;
}
void push_scopes() {
  wgpuDevicePushErrorScope(S().device, WGPUErrorFilter_OutOfMemory);
  wgpuDevicePushErrorScope(S().device, WGPUErrorFilter_Validation);
}
bool pop_scopes(char* err, size_t n, const char* what) {
  char tmp[2048] = {0};
  bool ok_validation = pop_scope(err, n, what);
  bool ok_oom = pop_scope(tmp, sizeof tmp, what);
  if (ok_validation && !ok_oom) set_err(err, n, tmp);
  return ok_validation && ok_oom;
}

// Address space left to this process under its soft RLIMIT_AS, less kAddressSpaceReserve;
// UINT64_MAX when unlimited.
uint64_t address_space_left() {
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  if (!(statm >> pages)) return UINT64_MAX;
  uint64_t used = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) + kAddressSpaceReserve;
  return r.rlim_cur > used ? r.rlim_cur - used : 0;
}

// MemAvailable from /proc/meminfo in bytes; UINT64_MAX when unreadable.
uint64_t host_memory_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(64, '\n');
  }
  return UINT64_MAX;
}

// Dawn unmaps a destroyed buffer's memory only once the queue has moved past it: two empty
// submits do it (measured on lavapipe), so the address space freed models held is free again.
void release_freed_memory() {
  State& s = S();
  if (!s.freed_since_release) return;
  s.freed_since_release = false;
  for (int i = 0; i < 2; ++i) {
    WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(s.device, nullptr);
    WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, nullptr);
    wgpuCommandEncoderRelease(enc);
    wgpuQueueSubmit(s.queue, 1, &cb);
    wgpuCommandBufferRelease(cb);
    WGPUEnum done = 0;
    WGPUQueueWorkDoneCallbackInfo info{};
    info.mode = WGPUCallbackMode_WaitAnyOnly;
    info.callback = [](WGPUEnum st, WGPUStringView, void* u1, void*) { *static_cast<WGPUEnum*>(u1) = st; };
    info.userdata1 = &done;
    char tmp[256];
    if (!wait(wgpuQueueOnSubmittedWorkDone(s.queue, info), tmp, sizeof tmp, "releasing freed buffers")) return;
  }
}

// False, with an "out of memory" message, when a new buffer of `size` bytes does not fit: into
// the adapter's memory heaps beside the device's live buffers (Dawn does not keep that sum), or,
// on a CPU adapter, into this process's address space: lavapipe maps each buffer in when it is
// created, and when that mmap fails it reports success and the first use crashes (SIGSEGV).
bool fits(uint64_t size, const char* what, char* err, size_t n) {
  State& s = S();
  if (s.heap_bytes && s.device_bytes + size > s.heap_bytes) {
    set_err(err, n, std::string(what) + ": out of memory: " + std::to_string(size) + " more bytes would bring the "
                    "device's buffers to " + std::to_string(s.device_bytes + size) + " bytes, above its memory heap of " +
                    std::to_string(s.heap_bytes));
    return false;
  }
  if (!s.cpu_adapter) return true;
  uint64_t left = address_space_left();
  if (left < size) {
    release_freed_memory();
    left = address_space_left();
  }
  if (left < size) {
    set_err(err, n, std::string(what) + ": out of memory: " + std::to_string(size) + " bytes do not fit in the " +
                    std::to_string(left) + " bytes of address space left under this process's RLIMIT_AS (a CPU "
                    "adapter maps every buffer into the process)");
    return false;
  }
  return true;
}
void count_buffer(uint64_t size) {
  State& s = S();
  s.device_bytes += size;
  s.peak_device_bytes = std::max(s.peak_device_bytes, s.device_bytes);
}
void uncount_buffer(uint64_t size, uint32_t generation) {
  State& s = S();
  if (generation == s.generation) s.device_bytes -= std::min(size, s.device_bytes);
  s.freed_since_release = true;
}

// Grows one of the surface's reused host-visible buffers (the read-back staging or the upload
// buffer) to at least `size` bytes, in powers of two.
bool ensure_host_buffer(WGPUBuffer& buf, uint64_t& buf_size, uint64_t size, WGPUBufferUsage usage, const char* label,
                        const char* what, char* err, size_t n) {
  State& s = S();
  if (buf && buf_size >= size) return true;
  if (buf) {
    wgpuBufferDestroy(buf);
    wgpuBufferRelease(buf);
    uncount_buffer(buf_size, s.generation);
    buf = nullptr;
    buf_size = 0;
  }
  uint64_t sz = 256;
  while (sz < size) sz *= 2;
  if (!fits(sz, what, err, n)) return false;
  WGPUBufferDescriptor d{};
  d.label = sv(label);
  d.usage = usage;
  d.size = sz;
  push_scopes();
  buf = wgpuDeviceCreateBuffer(s.device, &d);
  buf_size = sz;
  if (!pop_scopes(err, n, what)) {
    wgpuBufferRelease(buf);
    buf = nullptr;
    buf_size = 0;
    return false;
  }
  count_buffer(sz);
  return true;
}

// Dawn's WriteBuffer stages writes up to its 4 MB ring in reused memory and larger ones in a new
// buffer per call; larger writes take the surface's own reused upload buffer instead (H200: a
// 64M-float add's upload + run + read back 251-467 -> 107-118 ms, docs/PERFORMANCE.md).
constexpr uint64_t kQueueWriteMax = 4ull << 20;

bool ensure_staging(uint64_t size, char* err, size_t n) {
  State& s = S();
  return ensure_host_buffer(s.staging, s.staging_size, size, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                            "etwebgpu.staging", "creating read-back buffer", err, n);
}

void on_map(WGPUEnum status, WGPUStringView msg, void* u1, void* u2) {
  *static_cast<WGPUEnum*>(u1) = status;
  *static_cast<std::string*>(u2) = str(msg);
}
void on_done(WGPUEnum status, WGPUStringView msg, void* u1, void*) { *static_cast<WGPUEnum*>(u1) = status; }

// Finishes `enc` (releasing it) and submits it, without waiting.
void submit(WGPUCommandEncoder enc) {
  WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, nullptr);
  wgpuCommandEncoderRelease(enc);
  wgpuQueueSubmit(S().queue, 1, &cb);
  wgpuCommandBufferRelease(cb);
}

bool submit_and_wait(WGPUCommandEncoder enc, char* err, size_t n, const char* what) {
  State& s = S();
  submit(enc);
  WGPUEnum done = 0;
  WGPUQueueWorkDoneCallbackInfo info{};
  info.mode = WGPUCallbackMode_WaitAnyOnly;
  info.callback = on_done;
  info.userdata1 = &done;
  if (!wait(wgpuQueueOnSubmittedWorkDone(s.queue, info), err, n, what)) return false;
  if (!check_device(err, n, what)) return false;
  if (done != WGPUQueueWorkDoneStatus_Success) {
    set_err(err, n, std::string(what) + ": queue work failed (status " + std::to_string(done) + ")");
    return false;
  }
  return true;
}

// Copies `size` bytes out of a mapped read-back range. The driver may place the range in
// write-combined (uncached) host memory, where ordinary loads fetch it piecemeal; SSE4.1
// streaming loads (MOVNTDQA) fetch whole lines and act as plain loads on cached memory.
#if defined(__x86_64__)
__attribute__((target("sse4.1"))) void copy_streaming(void* dst, const void* src, uint64_t size) {
  auto* s = static_cast<__m128i*>(const_cast<void*>(src));
  auto* d = static_cast<uint8_t*>(dst);
  uint64_t lines = size / 64;
  for (uint64_t i = 0; i < lines; ++i) {
    __m128i a = _mm_stream_load_si128(s + 4 * i), b = _mm_stream_load_si128(s + 4 * i + 1);
    __m128i c = _mm_stream_load_si128(s + 4 * i + 2), e = _mm_stream_load_si128(s + 4 * i + 3);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 64 * i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 64 * i + 16), b);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 64 * i + 32), c);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 64 * i + 48), e);
  }
  std::memcpy(d + 64 * lines, reinterpret_cast<const uint8_t*>(src) + 64 * lines, size - 64 * lines);
}
#endif

void copy_mapped(void* dst, const void* src, uint64_t size) {
#if defined(__x86_64__)
  static const bool sse41 = __builtin_cpu_supports("sse4.1");
  if (sse41 && reinterpret_cast<uintptr_t>(src) % 16 == 0) {
    copy_streaming(dst, src, size);
    return;
  }
#endif
  std::memcpy(dst, src, size);
}

// Maps the first `size` bytes (a multiple of 4) of one of the surface's host buffers, named `what`
// in errors ("read-back buffer", "upload buffer"); nullptr after writing the error.
void* map_host_buffer(WGPUBuffer b, WGPUMapMode mode, uint64_t size, const std::string& what, char* err, size_t n) {
  WGPUEnum status = 0;
  std::string msg;
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = on_map;
  cb.userdata1 = &status;
  cb.userdata2 = &msg;
  if (!wait(wgpuBufferMapAsync(b, mode, 0, size, cb), err, n, ("mapping " + what).c_str())) return nullptr;
  if (status != WGPUMapAsyncStatus_Success) {
    set_err(err, n, "mapping " + what + " failed: " + msg);
    return nullptr;
  }
  void* p = mode == WGPUMapMode_Write ? wgpuBufferGetMappedRange(b, 0, size)
                                      : const_cast<void*>(wgpuBufferGetConstMappedRange(b, 0, size));
  if (!p) {
    wgpuBufferUnmap(b);
    set_err(err, n, what + " mapped range unavailable");
  }
  return p;
}

// Maps the first `size` bytes of the staging buffer and hands them to `use`.
template <class F>
bool map_staging(uint64_t size, char* err, size_t n, F&& use) {
  State& s = S();
  const void* p = map_host_buffer(s.staging, WGPUMapMode_Read, (size + 3) & ~uint64_t(3), "read-back buffer", err, n);
  if (!p) return false;
  use(static_cast<const uint8_t*>(p));
  wgpuBufferUnmap(s.staging);
  return true;
}

// Submits `enc`, whose work ends by copying into the staging buffer, and hands the first `size`
// bytes of it to `use`. The map completes once the submitted work has, so one wait serves both:
// a work-done wait before the map cost one more round trip per run.
template <class F>
bool submit_and_read(WGPUCommandEncoder enc, uint64_t size, const char* what, char* err, size_t n, F&& use) {
  submit(enc);
  bool mapped = map_staging(size, err, n, std::forward<F>(use));
  // A device error or loss during the work is the cause to report, also of a failed map.
  return check_device(err, n, what) && mapped;
}

struct AdapterResult { WGPUEnum status = 0; WGPUAdapter adapter = nullptr; std::string message; };
void on_adapter(WGPUEnum status, WGPUAdapter a, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<AdapterResult*>(u1);
  r->status = status;
  r->adapter = a;
  r->message = str(msg);
}
struct DeviceResult { WGPUEnum status = 0; WGPUDevice device = nullptr; std::string message; };
void on_device(WGPUEnum status, WGPUDevice d, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<DeviceResult*>(u1);
  r->status = status;
  r->device = d;
  r->message = str(msg);
}

size_t cache_load(const void* key, size_t key_size, void* value, size_t value_size, void* cache) {
  return static_cast<etwebgpu::gpu::DiskCache*>(cache)->load(key, key_size, value, value_size);
}
void cache_store(const void* key, size_t key_size, const void* value, size_t value_size, void* cache) {
  static_cast<etwebgpu::gpu::DiskCache*>(cache)->store(key, key_size, value, value_size);
}

constexpr const char* kInstallHint =
    "install a Vulkan driver: on Debian 12 run scripts/setup.sh (Mesa >= 25 lavapipe from bookworm-backports; "
    "Debian 12's own Mesa 22 is rejected by this Dawn), or point VK_DRIVER_FILES at your GPU's ICD json";

// Every command and read is checked before any is encoded: a run goes to the queue in parts
// (encode_run), and a bad command must not leave part of it done.
bool check_run(const EwCommand* cmds, size_t count, const EwRead* reads, size_t n_reads, char* err, size_t n) {
  State& s = S();
  for (size_t i = 0; i < count; ++i) {
    const EwCommand& c = cmds[i];
    if (c.kind == EW_CMD_DISPATCH) {
      if (!s.pipelines.get(c.pipeline) || !s.bind_groups.get(c.bind_group)) {
        set_err(err, n, "dispatch names an unknown pipeline or bind group");
        return false;
      }
    } else if (c.kind == EW_CMD_COPY || c.kind == EW_CMD_CLEAR) {
      if (!s.buffers.get(c.dst) || (c.kind == EW_CMD_COPY && !s.buffers.get(c.src))) {
        set_err(err, n, "copy names an unknown buffer");
        return false;
      }
    } else {
      set_err(err, n, "unknown command kind " + std::to_string(c.kind));
      return false;
    }
  }
  for (size_t r = 0; r < n_reads; ++r)
    if (!s.buffers.get(reads[r].buffer) || reads[r].offset % 4 || reads[r].size % 4) {
      set_err(err, n, "read-back region names an unknown buffer or is not 4-byte aligned");
      return false;
    }
  return true;
}

// Read-back layout: each read at a 64-byte aligned offset of the staging buffer (whole lines for
// copy_mapped); returns the bytes they take.
uint64_t layout_reads(const EwRead* reads, size_t n_reads, std::vector<uint64_t>& at) {
  at.resize(n_reads);
  uint64_t need = 0;
  for (size_t r = 0; r < n_reads; ++r) {
    at[r] = need;
    need += (reads[r].size + 63) & ~uint64_t(63);
  }
  return need;
}

void copy_reads_in(WGPUCommandEncoder enc, const EwRead* reads, size_t n_reads, const std::vector<uint64_t>& at,
                   WGPUBuffer staging) {
  for (size_t r = 0; r < n_reads; ++r)
    if (reads[r].size)
      wgpuCommandEncoderCopyBufferToBuffer(enc, S().buffers.get(reads[r].buffer), reads[r].offset, staging, at[r],
                                           reads[r].size);
}

// Straight from the mapped range into each destination: no intermediate host copy.
void copy_reads_out(const uint8_t* host, const EwRead* reads, size_t n_reads, const std::vector<uint64_t>& at) {
  for (size_t r = 0; r < n_reads; ++r)
    if (reads[r].size) copy_mapped(reads[r].dst, host + at[r], reads[r].size);
}

// Encodes checked commands and submits them in parts of 8, 16, 32, ... so the GPU starts on the
// first while the rest are encoded; with one submit at the end it sat idle while Dawn encoded the
// whole run (H200, wall per run: MobileNetV3-small 1.12-1.13 -> 0.86-0.87 ms, ViT-tiny 1.77-1.81
// -> 1.46-1.49, Whisper encoder 3.18-3.24 -> 3.08-3.10; docs/PERFORMANCE.md). Returns the encoder
// of the last part, not yet submitted. With `qs`, each dispatch of `timed` (command indices) gets
// its own pass with begin/end timestamps.
WGPUCommandEncoder encode_run(const EwCommand* cmds, size_t count, WGPUQuerySet qs, const std::vector<size_t>& timed) {
  State& s = S();
  WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(s.device, nullptr);
  WGPUComputePassEncoder pass = nullptr;
  size_t next_timed = 0;
  auto end_pass = [&] {
    if (pass) {
      wgpuComputePassEncoderEnd(pass);
      wgpuComputePassEncoderRelease(pass);
      pass = nullptr;
    }
  };
  size_t part = 8, in_part = 0;
  for (size_t i = 0; i < count; ++i) {
    const EwCommand& c = cmds[i];
    if (in_part == part) {
      end_pass();
      submit(enc);
      enc = wgpuDeviceCreateCommandEncoder(s.device, nullptr);
      in_part = 0;
      part *= 2;
    }
    ++in_part;
    if (c.kind == EW_CMD_DISPATCH) {
      bool is_timed = qs && next_timed < timed.size() && timed[next_timed] == i;
      if (is_timed) {
        end_pass();
        WGPUPassTimestampWrites tw{};
        tw.querySet = qs;
        tw.beginningOfPassWriteIndex = static_cast<uint32_t>(next_timed * 2);
        tw.endOfPassWriteIndex = static_cast<uint32_t>(next_timed * 2 + 1);
        WGPUComputePassDescriptor pd{};
        pd.timestampWrites = &tw;
        pass = wgpuCommandEncoderBeginComputePass(enc, &pd);
        ++next_timed;
      } else if (!pass) {
        pass = wgpuCommandEncoderBeginComputePass(enc, nullptr);
      }
      wgpuComputePassEncoderSetPipeline(pass, s.pipelines.get(c.pipeline));
      wgpuComputePassEncoderSetBindGroup(pass, 0, s.bind_groups.get(c.bind_group), 0, nullptr);
      wgpuComputePassEncoderDispatchWorkgroups(pass, c.groups_x, c.groups_y, c.groups_z);
      if (is_timed) end_pass();
    } else {
      end_pass();
      WGPUBuffer dst = s.buffers.get(c.dst);
      if (c.kind == EW_CMD_COPY)
        wgpuCommandEncoderCopyBufferToBuffer(enc, s.buffers.get(c.src), c.src_offset, dst, c.dst_offset, c.size);
      else
        wgpuCommandEncoderClearBuffer(enc, dst, c.dst_offset, c.size);
    }
  }
  end_pass();
  return enc;
}

}  // namespace

extern "C" {

int ewgpu_init(EwAdapterInfo* out, char* err, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (s.device && s.lost_message.empty()) {
    set_err(err, n, "ewgpu_init called twice");
    return 1;
  }
  if (s.device) {
    // The lost device goes; objects made on it stay in the tables until their owners destroy them.
    if (s.staging) wgpuBufferRelease(s.staging);
    if (s.upload) wgpuBufferRelease(s.upload);
    s.staging = s.upload = nullptr;
    s.staging_size = s.upload_size = 0;
    for (PendingRun& p : s.pending) {
      if (p.staging) wgpuBufferRelease(p.staging);
      p = PendingRun{};
    }
    wgpuQueueRelease(s.queue);
    WGPUDevice lost = s.device;
    s.device = nullptr;
    wgpuDeviceRelease(lost);
    wgpuAdapterRelease(s.adapter);
    wgpuInstanceRelease(s.instance);
    s.lost_message.clear();
    s.pending_error.clear();
    s.device_bytes = s.peak_device_bytes = 0;
  }
  setenv("XDG_RUNTIME_DIR", "/tmp", 0);  // silences Mesa's harmless warning
  WGPUInstanceDescriptor idesc{};
  idesc.capabilities.timedWaitAnyEnable = 1;
  s.instance = wgpuCreateInstance(&idesc);
  if (!s.instance) {
    set_err(err, n, "wgpuCreateInstance failed");
    return 1;
  }
  WGPURequestAdapterOptions opts{};
  opts.powerPreference = WGPUPowerPreference_HighPerformance;
  opts.backendType = WGPUBackendType_Vulkan;  // never the silent Null backend
  AdapterResult ar;
  WGPURequestAdapterCallbackInfo acb{};
  acb.mode = WGPUCallbackMode_WaitAnyOnly;
  acb.callback = on_adapter;
  acb.userdata1 = &ar;
  if (!wait(wgpuInstanceRequestAdapter(s.instance, &opts, acb), err, n, "requesting adapter")) return 1;
  if (ar.status != WGPURequestAdapterStatus_Success || !ar.adapter) {
    set_err(err, n, "no Vulkan WebGPU adapter (" + (ar.message.empty() ? std::string("none found") : ar.message) +
                        "); " + kInstallHint);
    return 1;
  }
  s.adapter = ar.adapter;
  WGPUAdapterInfo info{};
  wgpuAdapterGetInfo(s.adapter, &info);
  if (info.backendType != WGPUBackendType_Vulkan) {
    std::string m = "adapter backend is " + std::string(info.backendType == WGPUBackendType_Null ? "Null" : "not Vulkan") +
                    " (type " + std::to_string(info.backendType) + "): it computes nothing; " + kInstallHint;
    wgpuAdapterInfoFreeMembers(info);
    set_err(err, n, m);
    return 1;
  }
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->description, sizeof out->description, "%s / %s / %s", str(info.vendor).c_str(),
                str(info.device).c_str(), str(info.description).c_str());
  out->backend_type = info.backendType;
  out->adapter_type = info.adapterType;
  out->vendor_id = info.vendorID;
  out->subgroup_min = info.subgroupMinSize;
  out->subgroup_max = info.subgroupMaxSize;
  wgpuAdapterInfoFreeMembers(info);
  s.cpu_adapter = out->adapter_type == WGPUAdapterType_CPU;
  s.heap_bytes = 0;
  if (wgpuAdapterHasFeature(s.adapter, WGPUFeatureName_AdapterPropertiesMemoryHeaps)) {
    WGPUAdapterPropertiesMemoryHeaps heaps{};
    heaps.chain.sType = WGPUSType_AdapterPropertiesMemoryHeaps;
    WGPUAdapterInfo hinfo{};
    hinfo.nextInChain = &heaps.chain;
    if (wgpuAdapterGetInfo(s.adapter, &hinfo) == WGPUStatus_Success) {
      // Buffers live in the device-local heaps (all of a CPU adapter's memory is device-local).
      uint64_t local = 0, all = 0;
      for (size_t i = 0; i < heaps.heapCount; ++i) {
        all += heaps.heapInfo[i].size;
        if (heaps.heapInfo[i].properties & WGPUHeapProperty_DeviceLocal) local += heaps.heapInfo[i].size;
      }
      s.heap_bytes = local ? local : all;
      wgpuAdapterInfoFreeMembers(hinfo);
      wgpuAdapterPropertiesMemoryHeapsFreeMembers(heaps);
    }
  }

  WGPULimits lim{};
  wgpuAdapterGetLimits(s.adapter, &lim);
  lim.nextInChain = nullptr;
  std::vector<WGPUEnum> features;
  for (WGPUEnum f : {WGPUFeatureName_TimestampQuery, WGPUFeatureName_Subgroups, WGPUFeatureName_ShaderF16})
    if (wgpuAdapterHasFeature(s.adapter, f)) features.push_back(f);

  const char* disabled[] = {"timestamp_quantization"};  // full-resolution GPU timings
  WGPUDawnTogglesDescriptor toggles{};
  toggles.chain.sType = WGPUSType_DawnTogglesDescriptor;
  toggles.disabledToggleCount = 1;
  toggles.disabledToggles = disabled;
  // Measurement knob (docs/PERFORMANCE.md): ETWEBGPU_DAWN_TOGGLES=skip_validation,disable_robustness,...
  static std::vector<std::string> enabled_names;
  static std::vector<const char*> enabled;
  if (const char* e = std::getenv("ETWEBGPU_DAWN_TOGGLES")) {
    std::string list = e;
    for (size_t b = 0; b < list.size();) {
      size_t c = list.find(',', b);
      if (c == std::string::npos) c = list.size();
      if (c > b) enabled_names.push_back(list.substr(b, c - b));
      b = c + 1;
    }
    for (auto& t : enabled_names) enabled.push_back(t.c_str());
    toggles.enabledToggleCount = enabled.size();
    toggles.enabledToggles = enabled.data();
  }
  // Dawn's blob cache (on by default, no toggle needed) keeps Tint's SPIR-V and each pipeline's
  // VkPipelineCache data: a process loading a model seen before skips both compiles.
  if (!s.disk_cache) s.disk_cache = new etwebgpu::gpu::DiskCache(etwebgpu::gpu::DiskCache::configured_dir());
  WGPUDawnCacheDeviceDescriptor cache{};
  cache.chain.sType = WGPUSType_DawnCacheDeviceDescriptor;
  cache.isolationKey = sv("etwebgpu");
  cache.loadDataFunction = cache_load;
  cache.storeDataFunction = cache_store;
  cache.functionUserdata = s.disk_cache;
  if (s.disk_cache->enabled()) toggles.chain.next = &cache.chain;
  WGPUDeviceDescriptor dd{};
  dd.nextInChain = &toggles.chain;
  dd.label = sv("etwebgpu");
  dd.requiredFeatureCount = features.size();
  dd.requiredFeatures = features.data();
  dd.requiredLimits = &lim;  // NULL would mean WebGPU defaults (256 invocations, 256 MiB buffers)
  dd.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
  dd.deviceLostCallbackInfo.callback = on_lost;
  dd.uncapturedErrorCallbackInfo.callback = on_uncaptured;
  DeviceResult dr;
  WGPURequestDeviceCallbackInfo dcb{};
  dcb.mode = WGPUCallbackMode_WaitAnyOnly;
  dcb.callback = on_device;
  dcb.userdata1 = &dr;
  if (!wait(wgpuAdapterRequestDevice(s.adapter, &dd, dcb), err, n, "requesting device")) return 1;
  if (dr.status != WGPURequestDeviceStatus_Success || !dr.device) {
    set_err(err, n, "device creation failed: " + dr.message);
    return 1;
  }
  s.device = dr.device;
  s.queue = wgpuDeviceGetQueue(s.device);
  WGPULimits dl{};
  wgpuDeviceGetLimits(s.device, &dl);
  out->max_buffer_size = dl.maxBufferSize;
  out->max_storage_buffer_binding_size = dl.maxStorageBufferBindingSize;
  out->max_uniform_buffer_binding_size = dl.maxUniformBufferBindingSize;
  out->max_storage_buffers_per_stage = dl.maxStorageBuffersPerShaderStage;
  out->max_compute_workgroup_storage_size = dl.maxComputeWorkgroupStorageSize;
  out->max_compute_invocations_per_workgroup = dl.maxComputeInvocationsPerWorkgroup;
  out->max_compute_workgroup_size_x = dl.maxComputeWorkgroupSizeX;
  out->max_compute_workgroup_size_y = dl.maxComputeWorkgroupSizeY;
  out->max_compute_workgroup_size_z = dl.maxComputeWorkgroupSizeZ;
  out->max_compute_workgroups_per_dimension = dl.maxComputeWorkgroupsPerDimension;
  out->min_storage_buffer_offset_alignment = dl.minStorageBufferOffsetAlignment;
  out->has_timestamp_query = wgpuDeviceHasFeature(s.device, WGPUFeatureName_TimestampQuery);
  out->has_subgroups = wgpuDeviceHasFeature(s.device, WGPUFeatureName_Subgroups);
  out->has_shader_f16 = wgpuDeviceHasFeature(s.device, WGPUFeatureName_ShaderF16);
  out->has_packed_dot4 =
      wgpuInstanceHasWGSLLanguageFeature(s.instance, WGPUWGSLLanguageFeatureName_Packed4x8IntegerDotProduct);
  s.has_timestamps = out->has_timestamp_query;
  ++s.generation;
  return 0;
}

uint32_t ewgpu_device_generation(void) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  return s.device && s.lost_message.empty() ? s.generation : 0;
}

int ewgpu_cache_stats(EwCacheStats* out, char* dir, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (!s.disk_cache || !s.disk_cache->enabled()) return 1;
  auto st = s.disk_cache->stats();
  *out = EwCacheStats{st.hits, st.misses, st.stores, st.rejected, st.write_failures};
  set_err(dir, n, s.disk_cache->dir());
  return 0;
}

void ewgpu_debug_lose_device(void) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (s.device) wgpuDeviceDestroy(s.device);  // fires the device-lost callback (reason Destroyed)
}

uint32_t ewgpu_buffer_create(uint64_t size, uint32_t kind, const char* label, char* err, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (!check_device(err, n, "creating buffer")) return 0;
  if (!fits(size, "creating buffer", err, n)) return 0;
  WGPUBufferDescriptor d{};
  d.label = sv(label);
  d.usage = kind == EW_BUFFER_UNIFORM ? (WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst)
                                      : (WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst);
  d.size = size;
  push_scopes();
  WGPUBuffer b = wgpuDeviceCreateBuffer(s.device, &d);
  if (!pop_scopes(err, n, "creating buffer")) {
    if (b) wgpuBufferRelease(b);
    return 0;
  }
  uint32_t h = s.buffers.add(b);
  if (s.buffer_meta.size() <= h) s.buffer_meta.resize(h + 1);
  s.buffer_meta[h] = State::BufferMeta{size, s.generation};
  count_buffer(size);
  return h;
}

void ewgpu_buffer_destroy(uint32_t h) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (WGPUBuffer b = s.buffers.take(h)) {
    wgpuBufferDestroy(b);
    wgpuBufferRelease(b);
    uncount_buffer(s.buffer_meta[h].size, s.buffer_meta[h].generation);
  }
}

int ewgpu_memory_budget(uint64_t* available, uint64_t* heap, char* why, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (!s.device || !s.heap_bytes) return 1;
  uint64_t avail = s.heap_bytes - std::min(s.heap_bytes, s.device_bytes);
  std::string reason = "the adapter's memory heap of " + std::to_string(s.heap_bytes) + " bytes less the " +
                       std::to_string(s.device_bytes) + " bytes of buffers alive on the device";
  if (s.cpu_adapter) {
    // Host memory is a guess: it is only taken when a buffer is first used, and lavapipe keeps
    // what freed buffers used for its next ones (so that counts as available).
    uint64_t host = host_memory_available();
    if (host != UINT64_MAX) {
      uint64_t kept = s.peak_device_bytes - s.device_bytes;
      if (host + kept < avail) {
        avail = host + kept;
        reason = "a CPU adapter's buffers are host memory: MemAvailable " + std::to_string(host) + " bytes plus " +
                 std::to_string(kept) + " bytes the driver keeps from freed buffers";
      }
    }
    uint64_t left = address_space_left();
    if (left < avail) {
      release_freed_memory();
      left = address_space_left();
    }
    if (left < avail) {
      avail = left;
      reason = "the address space left under this process's RLIMIT_AS: a CPU adapter maps every buffer into the "
               "process";
    }
  }
  *available = avail;
  *heap = s.heap_bytes;
  set_err(why, n, reason);
  return 0;
}

int ewgpu_buffer_write(uint32_t h, uint64_t offset, const void* data, uint64_t size, char* err, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  WGPUBuffer b = s.buffers.get(h);
  if (!b) { set_err(err, n, "write to an unknown buffer"); return 1; }
  if (size <= kQueueWriteMax) {
    wgpuQueueWriteBuffer(s.queue, b, offset, data, size);
    return check_device(err, n, "writing buffer") ? 0 : 1;
  }
  // Large writes: copied into the reused upload buffer, then a copy into `b` is submitted (not
  // waited on: the next map of the upload buffer, or the next submit, comes after it).
  if (!ensure_host_buffer(s.upload, s.upload_size, size, WGPUBufferUsage_MapWrite | WGPUBufferUsage_CopySrc,
                          "etwebgpu.upload", "creating upload buffer", err, n))
    return 1;
  void* p = map_host_buffer(s.upload, WGPUMapMode_Write, size, "upload buffer", err, n);
  if (!p) return 1;
  std::memcpy(p, data, size);
  wgpuBufferUnmap(s.upload);
  WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(s.device, nullptr);
  wgpuCommandEncoderCopyBufferToBuffer(enc, s.upload, 0, b, offset, size);
  submit(enc);
  return check_device(err, n, "writing buffer") ? 0 : 1;
}

int ewgpu_buffer_read(uint32_t h, uint64_t offset, void* dst, uint64_t size, char* err, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  WGPUBuffer b = s.buffers.get(h);
  if (!b) { set_err(err, n, "read from an unknown buffer"); return 1; }
  if (size == 0) return 0;
  uint64_t copy = (size + 3) & ~uint64_t(3);
  if (!ensure_staging(copy, err, n)) return 1;
  WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(s.device, nullptr);
  wgpuCommandEncoderCopyBufferToBuffer(enc, b, offset, s.staging, 0, copy);
  return submit_and_read(enc, copy, "reading buffer", err, n, [&](const uint8_t* p) { copy_mapped(dst, p, size); }) ? 0 : 1;
}

struct PipelineResult { WGPUEnum status = 0; WGPUComputePipeline pipeline = nullptr; std::string message; };
void on_pipeline(WGPUEnum status, WGPUComputePipeline p, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<PipelineResult*>(u1);
  r->status = status;
  r->pipeline = p;
  r->message = str(msg);
}

int ewgpu_pipelines_create(const EwPipelineDesc* descs, size_t count, uint32_t* out, size_t* failed, char* err,
                           size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  *failed = 0;
  if (!check_device(err, n, "creating pipeline")) return 1;
  auto label = [&](size_t i) { return descs[i].label ? descs[i].label : "pipeline"; };
  // Every compile is issued before any is waited for: Dawn compiles them on its worker threads.
  // Shader modules are parsed here, each in its own error scopes so a WGSL error names its pipeline.
  std::vector<PipelineResult> results(count);
  std::vector<WGPUFuture> futures;
  std::string failure;
  for (size_t i = 0; i < count && failure.empty(); ++i) {
    const EwPipelineDesc& d = descs[i];
    WGPUShaderSourceWGSL src{};
    src.chain.sType = WGPUSType_ShaderSourceWGSL;
    src.code = WGPUStringView{d.wgsl, d.wgsl_len};
    WGPUShaderModuleDescriptor md{};
    md.nextInChain = &src.chain;
    md.label = sv(d.label);
    push_scopes();
    WGPUShaderModule mod = wgpuDeviceCreateShaderModule(s.device, &md);
    std::vector<WGPUConstantEntry> ce(d.n_constants);
    for (size_t k = 0; k < d.n_constants; ++k) {
      ce[k] = WGPUConstantEntry{};
      ce[k].key = sv(d.constants[k].key);
      ce[k].value = d.constants[k].value;
    }
    WGPUComputePipelineDescriptor pd{};
    pd.label = sv(d.label);
    pd.compute.module = mod;
    pd.compute.entryPoint = sv(d.entry);
    pd.compute.constantCount = ce.size();
    pd.compute.constants = ce.data();
    WGPUCreateComputePipelineAsyncCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = on_pipeline;
    cb.userdata1 = &results[i];
    futures.push_back(wgpuDeviceCreateComputePipelineAsync(s.device, &pd, cb));
    wgpuShaderModuleRelease(mod);
    char msg[2048] = {0};
    if (!pop_scopes(msg, sizeof msg, label(i))) {
      failure = msg;
      *failed = i;
    }
  }
  // Every issued compile is waited for, also after a failure: its callback writes into `results`.
  for (size_t i = 0; i < futures.size(); ++i) {
    char msg[2048] = {0};
    if (wait(futures[i], msg, sizeof msg, label(i))) {
      if (results[i].status == WGPUCreatePipelineAsyncStatus_Success) continue;
      std::snprintf(msg, sizeof msg, "%s: %s", label(i), results[i].message.c_str());
    }
    if (failure.empty()) {
      failure = msg;
      *failed = i;
    }
  }
  if (failure.empty() && !check_device(err, n, "creating pipeline")) failure = err;
  if (!failure.empty()) {
    for (auto& r : results)
      if (r.pipeline) wgpuComputePipelineRelease(r.pipeline);
    set_err(err, n, failure);
    return 1;
  }
  for (size_t i = 0; i < count; ++i) out[i] = s.pipelines.add(results[i].pipeline);
  return 0;
}

void ewgpu_pipeline_destroy(uint32_t h) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (auto p = s.pipelines.take(h)) wgpuComputePipelineRelease(p);
}

uint32_t ewgpu_bind_group_create(uint32_t pipeline, const EwBinding* bindings, size_t count, char* err, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  WGPUComputePipeline p = s.pipelines.get(pipeline);
  if (!p) { set_err(err, n, "bind group for an unknown pipeline"); return 0; }
  std::vector<WGPUBindGroupEntry> e(count);
  for (size_t i = 0; i < count; ++i) {
    e[i] = WGPUBindGroupEntry{};
    e[i].binding = bindings[i].binding;
    e[i].buffer = s.buffers.get(bindings[i].buffer);
    if (!e[i].buffer) { set_err(err, n, "bind group entry names an unknown buffer"); return 0; }
    e[i].offset = bindings[i].offset;
    e[i].size = bindings[i].size;
  }
  push_scopes();
  WGPUBindGroupLayout layout = wgpuComputePipelineGetBindGroupLayout(p, 0);
  WGPUBindGroupDescriptor d{};
  d.layout = layout;
  d.entryCount = e.size();
  d.entries = e.data();
  WGPUBindGroup bg = wgpuDeviceCreateBindGroup(s.device, &d);
  wgpuBindGroupLayoutRelease(layout);
  if (!pop_scopes(err, n, "creating bind group")) {
    if (bg) wgpuBindGroupRelease(bg);
    return 0;
  }
  return s.bind_groups.add(bg);
}

void ewgpu_bind_group_destroy(uint32_t h) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (auto b = s.bind_groups.take(h)) wgpuBindGroupRelease(b);
}

int ewgpu_submit(const EwCommand* cmds, size_t count, int timestamps, uint64_t* durations, char* err, size_t n,
                 const EwRead* reads, size_t n_reads) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (!check_device(err, n, "submitting work")) return 1;
  if (timestamps && !s.has_timestamps) { set_err(err, n, "timestamp queries are not supported by this device"); return 1; }
  if (!check_run(cmds, count, reads, n_reads, err, n)) return 1;
  // Timed runs: each dispatch is its own pass with begin/end timestamps (4096 queries per set).
  constexpr uint32_t kMaxTimed = 2048;
  WGPUQuerySet qs = nullptr;
  WGPUBuffer resolve = nullptr;
  std::vector<size_t> timed;  // command index of each timed dispatch
  if (timestamps) {
    for (size_t i = 0; i < count && timed.size() < kMaxTimed; ++i)
      if (cmds[i].kind == EW_CMD_DISPATCH) timed.push_back(i);
    if (!timed.empty()) {
      WGPUQuerySetDescriptor qd{};
      qd.type = WGPUQueryType_Timestamp;
      qd.count = static_cast<uint32_t>(timed.size() * 2);
      qs = wgpuDeviceCreateQuerySet(s.device, &qd);
      WGPUBufferDescriptor bd{};
      bd.usage = WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc;
      bd.size = timed.size() * 16;
      resolve = wgpuDeviceCreateBuffer(s.device, &bd);
    }
  }
  std::vector<uint64_t> read_at;
  uint64_t staging_need = layout_reads(reads, n_reads, read_at);
  uint64_t ts_at = staging_need;
  staging_need += timed.size() * 16;
  if (staging_need && !ensure_staging(staging_need, err, n)) return 1;
  WGPUCommandEncoder enc = encode_run(cmds, count, qs, timed);
  copy_reads_in(enc, reads, n_reads, read_at, s.staging);
  if (qs) {
    wgpuCommandEncoderResolveQuerySet(enc, qs, 0, static_cast<uint32_t>(timed.size() * 2), resolve, 0);
    wgpuCommandEncoderCopyBufferToBuffer(enc, resolve, 0, s.staging, ts_at, timed.size() * 16);
  }
  if (durations) for (size_t i = 0; i < count; ++i) durations[i] = 0;
  // Straight from the mapped range into each destination: no intermediate host copy.
  auto copy_out = [&](const uint8_t* host) {
    copy_reads_out(host, reads, n_reads, read_at);
    if (qs && durations)
      for (size_t k = 0; k < timed.size(); ++k) {
        uint64_t t[2];
        copy_mapped(t, host + ts_at + 16 * k, 16);
        durations[timed[k]] = t[1] >= t[0] ? t[1] - t[0] : 0;
      }
  };
  bool ok = staging_need ? submit_and_read(enc, staging_need, "running GPU work", err, n, copy_out)
                         : submit_and_wait(enc, err, n, "running GPU work");
  if (qs) { wgpuQuerySetDestroy(qs); wgpuQuerySetRelease(qs); }
  if (resolve) { wgpuBufferDestroy(resolve); wgpuBufferRelease(resolve); }
  return ok ? 0 : 1;
}

int ewgpu_submit_async(const EwCommand* cmds, size_t count, const EwRead* reads, size_t n_reads, uint32_t* ticket,
                       char* err, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  *ticket = 0;
  if (!check_device(err, n, "submitting work")) return 1;
  if (!check_run(cmds, count, reads, n_reads, err, n)) return 1;
  size_t slot = 0;
  while (slot < kMaxPending && s.pending[slot].busy) ++slot;
  if (slot == kMaxPending) {
    set_err(err, n, "submitting work: " + std::to_string(kMaxPending) + " submits are already in flight (wait for one first)");
    return 1;
  }
  PendingRun& p = s.pending[slot];
  uint64_t need = layout_reads(reads, n_reads, p.at);
  if (need && !ensure_host_buffer(p.staging, p.staging_size, need, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                                  "etwebgpu.pending_staging", "creating read-back buffer", err, n))
    return 1;
  WGPUCommandEncoder enc = encode_run(cmds, count, nullptr, {});
  copy_reads_in(enc, reads, n_reads, p.at, p.staging);
  submit(enc);
  p.reads.assign(reads, reads + n_reads);
  p.need = need;
  p.status = 0;
  p.message.clear();
  // The map (or, with nothing to read, the queue's work-done) completes once the work has.
  if (need) {
    WGPUBufferMapCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = on_map;
    cb.userdata1 = &p.status;
    cb.userdata2 = &p.message;
    p.future = wgpuBufferMapAsync(p.staging, WGPUMapMode_Read, 0, (need + 3) & ~uint64_t(3), cb);
  } else {
    WGPUQueueWorkDoneCallbackInfo info{};
    info.mode = WGPUCallbackMode_WaitAnyOnly;
    info.callback = on_done;
    info.userdata1 = &p.status;
    p.future = wgpuQueueOnSubmittedWorkDone(s.queue, info);
  }
  p.busy = true;
  *ticket = static_cast<uint32_t>(slot + 1);
  return 0;
}

int ewgpu_submit_wait(uint32_t ticket, char* err, size_t n) {
  State& s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (ticket == 0 || ticket > kMaxPending || !s.pending[ticket - 1].busy) {
    set_err(err, n, "waiting for work: unknown ticket " + std::to_string(ticket));
    return 1;
  }
  PendingRun& p = s.pending[ticket - 1];
  p.busy = false;
  if (!wait(p.future, err, n, "running GPU work")) return 1;
  bool ok = true;
  if (p.need) {
    if (p.status != WGPUMapAsyncStatus_Success) {
      set_err(err, n, "mapping read-back buffer failed: " + p.message);
      ok = false;
    } else if (const void* host = wgpuBufferGetConstMappedRange(p.staging, 0, (p.need + 3) & ~uint64_t(3))) {
      copy_reads_out(static_cast<const uint8_t*>(host), p.reads.data(), p.reads.size(), p.at);
    } else {
      set_err(err, n, "read-back buffer mapped range unavailable");
      ok = false;
    }
    if (p.status == WGPUMapAsyncStatus_Success) wgpuBufferUnmap(p.staging);
  } else if (p.status != WGPUQueueWorkDoneStatus_Success) {
    set_err(err, n, "running GPU work: queue work failed (status " + std::to_string(p.status) + ")");
    ok = false;
  }
  // A device error or loss during the work is the cause to report, also of a failed map.
  return check_device(err, n, "running GPU work") && ok ? 0 : 1;
}

}  // extern "C"
