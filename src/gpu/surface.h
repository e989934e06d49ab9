// The narrow surface through which etwebgpu reaches WebGPU. Everything above src/gpu/ talks to
// gpu::Context; gpu::Context talks only to these C functions. The native build implements them
// over Dawn (dawn_surface.cpp); a browser build implements the same functions in JavaScript over
// navigator.gpu. Objects are small integer handles (0 = none) so both sides can keep tables.
// Functions that can fail return 0 / nonzero status and write a message into `err`.
#pragma once
#include <cstddef>
#include <cstdint>

extern "C" {

struct EwAdapterInfo {
  char description[256];   // "vendor / device / description", NUL-terminated
  uint32_t backend_type;   // WGPUBackendType value (6 = Vulkan)
  uint32_t adapter_type;   // 1 discrete, 2 integrated, 3 CPU, 4 unknown
  uint32_t vendor_id;
  uint32_t subgroup_min, subgroup_max;
  uint32_t has_timestamp_query, has_subgroups, has_shader_f16;
  // limits the runtime checks against
  uint64_t max_buffer_size, max_storage_buffer_binding_size, max_uniform_buffer_binding_size;
  uint32_t max_storage_buffers_per_stage, max_compute_workgroup_storage_size;
  uint32_t max_compute_invocations_per_workgroup, max_compute_workgroup_size_x;
  uint32_t max_compute_workgroup_size_y, max_compute_workgroup_size_z;
  uint32_t max_compute_workgroups_per_dimension, min_storage_buffer_offset_alignment;
  // WGSL's packed_4x8_integer_dot_product language feature (dot4I8Packed, pack4xI8, ...)
  uint32_t has_packed_dot4;
};

enum EwBufferKind : uint32_t {
  EW_BUFFER_STORAGE = 1,   // storage | copy src | copy dst
  EW_BUFFER_UNIFORM = 2,   // uniform | copy dst
};

struct EwConstant { const char* key; double value; };
struct EwBinding { uint32_t binding; uint32_t buffer; uint64_t offset; uint64_t size; };

enum EwCommandKind : uint32_t { EW_CMD_DISPATCH = 1, EW_CMD_COPY = 2, EW_CMD_CLEAR = 3 };
struct EwCommand {
  uint32_t kind;
  uint32_t pipeline, bind_group;        // dispatch
  uint32_t groups_x, groups_y, groups_z;
  uint32_t src, dst;                    // copy (src -> dst), clear (dst)
  uint64_t src_offset, dst_offset, size;
};

// Creates instance, Vulkan adapter and device with the adapter's full limits and the optional
// features it has. Returns 0 on success. After a device loss it may be called again: a fresh
// device replaces the lost one, whose objects stay valid to destroy through their old handles.
int ewgpu_init(EwAdapterInfo* out, char* err, size_t err_len);
// Which device is current: a number that changes with every successful ewgpu_init, or 0 while
// there is no usable device (none yet, or lost). Objects of an older generation must not be used.
uint32_t ewgpu_device_generation(void);

// A buffer the device cannot hold fails with a message containing "out of memory": the device's
// own out-of-memory error, or (native) the surface's checks against the adapter's memory heaps
// and, on a CPU adapter, against the process's address space (see ewgpu_memory_budget).
uint32_t ewgpu_buffer_create(uint64_t size, uint32_t kind, const char* label, char* err, size_t err_len);
void ewgpu_buffer_destroy(uint32_t buffer);
int ewgpu_buffer_write(uint32_t buffer, uint64_t offset, const void* data, uint64_t size, char* err, size_t err_len);
// Copies [offset, offset+size) of a storage buffer to host memory; waits. offset % 4 == 0, size % 4 == 0.
int ewgpu_buffer_read(uint32_t buffer, uint64_t offset, void* dst, uint64_t size, char* err, size_t err_len);

// One compute pipeline to make: WGSL, entry point, override constants, a label for errors.
struct EwPipelineDesc {
  const char* wgsl;
  size_t wgsl_len;
  const char* entry;
  const EwConstant* constants;
  size_t n_constants;
  const char* label;
};
// Compiles WGSL and makes compute pipelines with the auto layout, all `n` at once: every compile
// is started before any is waited for (natively createComputePipelineAsync, which Dawn runs on its
// worker threads; in a browser its promise form), so a load waits once, not once per pipeline.
// Returns 0 and writes a handle per desc to out_handles. All or nothing: on failure none is kept,
// `err` gets the compiler/validation message of a failing pipeline, beginning with its label, and
// *failed its index.
int ewgpu_pipelines_create(const EwPipelineDesc* descs, size_t n, uint32_t* out_handles, size_t* failed, char* err,
                           size_t err_len);
void ewgpu_pipeline_destroy(uint32_t pipeline);
uint32_t ewgpu_bind_group_create(uint32_t pipeline, const EwBinding* bindings, size_t n, char* err, size_t err_len);
void ewgpu_bind_group_destroy(uint32_t bind_group);

// A region of a storage buffer copied to host memory at the end of a submit.
struct EwRead { uint32_t buffer; uint64_t offset; uint64_t size; void* dst; };

// Records the commands and submits them (natively in parts of growing size, so the GPU starts
// while later commands are encoded), then waits for completion. Every command is checked before
// any is submitted: an unknown handle or kind fails the whole call. With
// `timestamps` != 0 (requires has_timestamp_query) every dispatch gets its own compute pass with
// begin/end timestamps and their nanosecond difference is written to durations_ns[i] for the
// i-th command (0 for non-dispatch commands).
// After the commands, the `n_reads` regions (offset and size multiples of 4) are copied into host
// memory in the same submit, so a run costs one queue round trip.
int ewgpu_submit(const EwCommand* cmds, size_t n, int timestamps, uint64_t* durations_ns, char* err, size_t err_len,
                 const EwRead* reads, size_t n_reads);
// ewgpu_submit without timestamps that returns once the work is queued, with a ticket (1..4) for
// ewgpu_submit_wait, which waits for that work and copies its reads into host memory (their `dst`
// must stay valid until then). Work submitted later may be queued meanwhile (at most 4 submits in
// flight), so the host records the next run while the GPU runs this one. Every ticket must be
// waited for once; a wait reports the errors of its work.
int ewgpu_submit_async(const EwCommand* cmds, size_t n, const EwRead* reads, size_t n_reads, uint32_t* ticket,
                       char* err, size_t err_len);
int ewgpu_submit_wait(uint32_t ticket, char* err, size_t err_len);

// What new buffers may still take on the current device, for a check before anything is
// allocated. Returns 0 and writes `available` (bytes), `heap` (the adapter's memory heaps, bytes)
// and, into `why`, what bounds `available`; returns 1 when the surface cannot tell (a browser
// reports no memory heaps: there only the device's out-of-memory error stops an allocation).
int ewgpu_memory_budget(uint64_t* available, uint64_t* heap, char* why, size_t why_len);

// The surface's persistent cache of compiled pipelines, which a later process loads instead of
// compiling again (native: Dawn's blob cache kept on disk, gpu/disk_cache.h). Returns 1 when there
// is none (ETWEBGPU_CACHE_DIR=off, a directory that cannot be written, a browser, no device yet);
// else 0 with its directory and what this process has done with it.
struct EwCacheStats { uint64_t hits, misses, stores, rejected, write_failures; };
int ewgpu_cache_stats(EwCacheStats* out, char* dir, size_t dir_len);

// Destroys the device as a driver reset would, so tests can prove that device loss surfaces as an
// error on every later call instead of a crash.
void ewgpu_debug_lose_device(void);

}  // extern "C"

#ifdef __EMSCRIPTEN__
// src/gpu/web/surface_webgpu.js reads and writes these structs at fixed offsets (wasm32 layout).
static_assert(sizeof(void*) == 4, "wasm32 only");
static_assert(offsetof(EwAdapterInfo, backend_type) == 256 && offsetof(EwAdapterInfo, has_shader_f16) == 284 &&
              offsetof(EwAdapterInfo, max_buffer_size) == 288 && offsetof(EwAdapterInfo, max_uniform_buffer_binding_size) == 304 &&
              offsetof(EwAdapterInfo, max_storage_buffers_per_stage) == 312 &&
              offsetof(EwAdapterInfo, min_storage_buffer_offset_alignment) == 340 &&
              offsetof(EwAdapterInfo, has_packed_dot4) == 344 && sizeof(EwAdapterInfo) == 352,
              "EwAdapterInfo layout changed: update src/gpu/web/surface_webgpu.js");
static_assert(offsetof(EwConstant, value) == 8 && sizeof(EwConstant) == 16, "EwConstant layout");
static_assert(offsetof(EwPipelineDesc, wgsl_len) == 4 && offsetof(EwPipelineDesc, entry) == 8 &&
              offsetof(EwPipelineDesc, constants) == 12 && offsetof(EwPipelineDesc, n_constants) == 16 &&
              offsetof(EwPipelineDesc, label) == 20 && sizeof(EwPipelineDesc) == 24, "EwPipelineDesc layout");
static_assert(offsetof(EwBinding, offset) == 8 && offsetof(EwBinding, size) == 16 && sizeof(EwBinding) == 24, "EwBinding layout");
static_assert(offsetof(EwCommand, src) == 24 && offsetof(EwCommand, src_offset) == 32 &&
              offsetof(EwCommand, dst_offset) == 40 && offsetof(EwCommand, size) == 48 && sizeof(EwCommand) == 56,
              "EwCommand layout");
static_assert(offsetof(EwRead, offset) == 8 && offsetof(EwRead, size) == 16 && offsetof(EwRead, dst) == 24 &&
              sizeof(EwRead) == 32, "EwRead layout");
#endif
