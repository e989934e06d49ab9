// etwebgpu public API: load an ExecuTorch .pte exported with VulkanPartitioner and run it on
// WebGPU. Every failure throws etwebgpu::Error (see error.h).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "etwebgpu/error.h"
#include "etwebgpu/tensor.h"

namespace etwebgpu {

namespace detail { struct ModelAccess; }  // the runtime's own helpers (generation); not API

// How float tensors (activations, KV caches, weights) are stored on the GPU. Arithmetic and
// accumulation are f32 either way. FP16 halves memory and bandwidth and needs the adapter's
// shader-f16 feature (lavapipe and most browsers have it); Auto picks FP16 where it is available.
enum class Precision { FP32, FP16, Auto };
const char* precision_name(Precision p);  // "fp32", "fp16", "auto"
// Parses "fp32" | "fp16" | "auto"; throws Error(InvalidArgument) naming the text otherwise.
Precision parse_precision(const std::string& text);

// What a load has done so far, reported through LoadOptions::on_progress: the file read (bytes),
// the constants uploaded (bytes of the file's constant data) and the kernels prepared (pipelines
// compiled or found in the cache). Each stage reports done == total when it ends.
struct LoadProgress {
  enum class Stage { Read, Upload, Compile };
  Stage stage = Stage::Read;
  uint64_t done = 0, total = 0;
};
const char* load_stage_name(LoadProgress::Stage s);  // "read", "upload", "compile"

struct LoadOptions {
  std::string method = "forward";
  Precision precision = Precision::FP32;
  // et_vk.sdpa: below this B*H*S_q the per-entry QK kernel is used (a speed knob only).
  int64_t sdpa_occupancy_floor = 4096;
  // Forces kernel routes (tests, benchmarks): e.g. {"conv", "direct"}; see docs/OPS.md.
  std::map<std::string, std::string> force_route;
  // Refuse (before allocating anything) a model whose tensors, constants and scratch need more
  // device memory than this.
  uint64_t max_gpu_bytes = 16ull << 30;
  // Tensors whose lives do not meet share device buffers, and contiguous views (view_copy,
  // squeeze, clone ...) share their input's buffer instead of copying it. Off: one buffer per
  // tensor or delegate memory object, the baseline that shows what planning saves.
  bool plan_memory = true;
  // Debugging aid: storage that every run writes before reading starts as NaN (0xFF bytes)
  // instead of zeros, so a kernel relying on a zeroed output (which a shared buffer is not)
  // shows up as wrong results.
  bool poison_storage = false;
  // Rewrite the graph at load for fewer dispatches: the decomposed attention of Llama exports
  // becomes one attention op (equal within fp32 rounding), repeated pure calls run once, RMSNorm
  // and Llama's rotary embedding written in aten ops become one kernel each, and chains of float
  // elementwise ops fuse into one kernel each (results equal the unfused ones at fp32).
  // Off: one kernel per op, for comparisons.
  bool fuse = true;
  // Called on the loading thread as the load advances (never after load() returns). An exception
  // it throws aborts the load.
  std::function<void(const LoadProgress&)> on_progress;
};

// The load options as text: the one parser behind every front end. The CLI spells an option
// --NAME-WITH-DASHES (a switch that is on by default as --no-NAME), Python as a keyword of
// etwebgpu.load(), JavaScript as a key of Model.load's options (camelCase also accepted).
struct LoadOptionInfo {
  std::string name;      // snake_case, e.g. "plan_memory"
  std::string values;    // what it takes: "fp32|fp16|auto", "on|off", "OP=ROUTE", "BYTES", ...
  std::string help;
  bool repeatable = false;  // force_route: one OP=ROUTE per occurrence
};
const std::vector<LoadOptionInfo>& load_option_list();
// Sets one option from text; throws Error(InvalidArgument) naming the option and the value (or
// listing the known options for an unknown name). Switches take on|off|true|false|1|0; BYTES
// takes an integer with an optional K, M, G or T suffix (powers of 1024).
void set_load_option(LoadOptions& o, const std::string& name, const std::string& value);
// The option's current value as text (force_route: "OP=ROUTE,..."), as set_load_option reads it.
std::string get_load_option(const LoadOptions& o, const std::string& name);
// set_load_option for each (name, value) in order, over `base`.
LoadOptions parse_load_options(const std::vector<std::pair<std::string, std::string>>& items, LoadOptions base = {});

struct IoInfo {
  DType dtype;
  std::vector<int64_t> sizes;  // upper bounds when dynamic
  bool dynamic = false;
};

// Per-dispatch GPU times of one profiled run (timestamp queries).
struct Profile {
  struct Dispatch { std::string op; std::string variant; uint64_t gpu_ns = 0; };
  std::vector<Dispatch> dispatches;
  bool has_gpu_times = false;
};

// Where an instruction of the execution plan runs.
struct InstructionInfo {
  std::string kind;     // "delegate", "gpu-kernel", "cpu", "move", "jump", "free"
  std::string what;     // operator or delegate description
  bool supported = true;
};

// Threads: separate Models may be loaded, run and destroyed concurrently from any threads (they
// share one WebGPU device, whose calls etwebgpu serialises). One Model runs one inference at a
// time: a run() called while another run() of the same Model is in progress throws
// Error(InvalidArgument) instead of waiting or mixing state; use one Model per thread.
// Device loss: once the device is lost (driver reset), every run() of a Model loaded before
// throws Error(Gpu) ("device lost ..."); the next load() creates a fresh device and works.
class Model {
 public:
  static std::unique_ptr<Model> load(const std::string& path, const LoadOptions& opts = {});
  static std::unique_ptr<Model> load_bytes(std::vector<uint8_t> bytes, const LoadOptions& opts = {});
  ~Model();

  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;
  // Runs the method. Inputs are validated (count, dtype, shape within the exported bounds). An
  // index out of range for an op that reads indices (embedding, gather, index ...) throws
  // Error(InvalidArgument) naming the op and the index, as PyTorch raises.
  // Concurrent calls on one Model are refused with an error; separate Models may run concurrently.
  std::vector<HostTensor> run(const std::vector<HostTensor>& inputs, Profile* profile = nullptr);
  // run() into `outputs` (resized to the output count): a tensor whose dtype and shape already
  // match keeps its storage and is overwritten, so repeated runs allocate no host memory for
  // outputs and skip zero-filling it; any other tensor is replaced.
  void run_into(const std::vector<HostTensor>& inputs, std::vector<HostTensor>& outputs, Profile* profile = nullptr);
  std::vector<InstructionInfo> plan_summary() const;
  // The GPU graph as loaded, after fusion at load: one entry per node in run order, labelled as
  // profiles label it (fused[conv+relu] for a fused group), with the kernel variants it may
  // dispatch (one per route; "copy" for a buffer copy).
  struct GpuNode { std::string op; std::vector<std::string> variants; };
  std::vector<GpuNode> gpu_plan() const;
  // Restores the program's mutable buffers (KV caches) to their contents in the file. They live
  // on the GPU and otherwise carry over from one run to the next, as in ExecuTorch's runtime.
  void reset_state();
  size_t num_state_buffers() const;   // mutable buffers of the method (0 for stateless programs)
  uint64_t gpu_bytes() const;         // device memory held by this model
  Precision precision() const;        // FP32 or FP16: what LoadOptions::precision resolved to

  struct Impl;

 private:
  friend struct detail::ModelAccess;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace etwebgpu
