// graph::Graph: one VkGraph delegate turned into GPU buffers, pipelines and bind groups.
//
// Storage model: each tensor has one storage type (kernel/storage.h: f32, f16 at fp16 precision,
// i32 for int types, bytes for bool/uint8), decided at build; kernels get it as WGSL types
// in their generated preamble. Buffers are sized for the tensor's maximum (serialized) dims and
// never reallocated; which tensors share one is decided at build by graph/memory_plan.h (tensors
// whose lives do not meet, a copy-free view and its input). Live dims change at run time (dynamic
// shapes): before every run, in chain order, each node's declared functions (OpContext::output /
// prepare / kernels) recompute its outputs' live dims, uniforms and grids.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "etwebgpu/error.h"
#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/tensor.h"
#include "format/ir.h"
#include "gpu/context.h"
#include "kernel/kernel.h"
#include "graph/memory_plan.h"

namespace etwebgpu::graph {

using format::VkDType;
using format::VkValueKind;

struct GraphOptions {
  // sdpa: B*H*S_q below this uses the per-entry QK kernel (see ops/attention).
  int64_t sdpa_occupancy_floor = 4096;
  // Forces kernel routes for tests ("" = automatic). Known keys are op-specific, e.g.
  // "conv" = "gemm" | "direct", "sdpa_qk" = "row" | "entry", "matmul" = "tiled" | "vec4" | "gemv".
  std::map<std::string, std::string> force_route;
  uint64_t max_gpu_bytes = 16ull << 30;  // planned tensor storage above this is refused up front
  bool fp16 = false;                      // float tensors stored as f16 (the device has shader-f16)
  // Tensors whose lives do not meet share buffers, and contiguous views share their input's
  // (graph/memory_plan.h). Off: one buffer per tensor or memory object (the measurable baseline).
  bool plan_memory = true;
  // LoadOptions::poison_storage: buffers whose every tensor is written before it is read start
  // as 0xFF bytes (NaN / -1) instead of zeros.
  bool poison_storage = false;
  bool fuse = true;  // fuse at load: attention (graph/attention_fusion.h), elementwise chains (graph/fusion.h)
  // Every tensor keeps its serialized dims (no program input is dynamic): rewrites may fix
  // layouts at load.
  bool static_shapes = false;
  // LoadOptions::on_progress: Upload (bytes of the constants the built nodes read) and Compile
  // (kernels made ready) while the graph is built.
  std::function<void(const LoadProgress&)> progress;
};

struct Tensor {
  VkDType dtype = VkDType::Float32;
  std::vector<int64_t> max_dims;   // serialized dims: buffer capacity
  std::vector<int64_t> dims;       // live dims
  int32_t constant_id = -1;
  kernel::Storage storage = kernel::Storage::F32;  // set from dtype (and precision) at build
  int buffer_index = -1;           // into Graph::buffers_, -1 until first use
  int64_t numel() const { return etwebgpu::numel(dims); }
  int64_t max_numel() const { return etwebgpu::numel(max_dims); }
  // Bytes `elements` elements occupy in storage (4-byte padded).
  uint64_t bytes(int64_t elements) const { return kernel::storage_bytes(storage, static_cast<uint64_t>(elements)); }
  int64_t dim(int64_t d) const;    // negative d counts from the end; range-checked
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
};

// One dispatch (or buffer copy) of a node, recorded each run.
struct Step {
  const gpu::Pipeline* pipeline = nullptr;  // null: a copy, or a kernel inactive this run
  gpu::BindGroup bind_group;
  gpu::Grid grid;                  // zero x = inactive this run
  // A buffer copy instead of a dispatch when pipeline == nullptr and copy_size > 0:
  const gpu::Buffer* copy_src = nullptr;
  const gpu::Buffer* copy_dst = nullptr;
  uint64_t copy_src_offset = 0, copy_dst_offset = 0, copy_size = 0;
  std::string variant;             // kernel variant for profiles, e.g. "gemm_vec4"
  bool dispatch = false;           // a kernel's step (else a buffer copy)
};

// A kernel's live part, driven by Graph's resize loop: its step, uniform and functions. The
// pipeline and bind group are made the first time the route is active (most routes of a
// shape-dependent op never run on a given model, and each costs a shader compile).
struct KernelRun {
  size_t step = 0;                 // into Node::steps
  const gpu::Pipeline* pipeline = nullptr;  // null until first active
  std::string wgsl, entry, label;  // what the pipeline is made from
  gpu::Constants constants;
  std::vector<gpu::Binding> bindings;
  gpu::Buffer* uniform = nullptr;
  std::vector<uint8_t> last;       // uniform bytes last written (writes are skipped when equal)
  kernel::Kernel::ParamsFn params;
  std::function<kernel::Groups(const kernel::Live&)> groups;
  std::function<bool(const kernel::Live&)> when;
};

struct Node {
  std::string op;                  // operator name
  uint32_t node_id = 0;
  std::vector<Step> steps;
  // Run by Graph before every run, in chain order: prepare, then each output's dims (checked
  // against its serialized bound), then each kernel's route, uniform and grid.
  std::function<void(const kernel::Live&)> prepare;
  std::vector<std::pair<int32_t, std::function<std::vector<int64_t>(const kernel::Live&)>>> outputs;
  std::vector<KernelRun> kernels;
  // Host-side work that is not a kernel's (SymInt arithmetic, buffer-copy sizes); may be empty.
  std::function<void()> resize;
  // Data-dependent output shape (nonzero, masked_select): when set, a run submits the work
  // recorded up to this node, reads the first word of `readback_src` and calls `readback` with it
  // (which sets the output's live dims) before later nodes resize. One round trip per such node.
  std::function<void(uint32_t)> readback;
  const gpu::Buffer* readback_src = nullptr;
};

class Graph;
class IndexCheck;

// What an op builder sees: the graph, the op call and helpers to read its arguments.
struct OpContext {
  Graph& g;
  const format::VkOpCall& call;
  Node& node;
  int32_t arg(size_t i) const;     // value id of argument i; throws naming the op when missing
  size_t nargs() const { return call.args.size(); }
  int32_t out() const { return call.args.back(); }
  [[noreturn]] void fail(ErrorKind k, const std::string& msg) const;

  // Declares how output tensor `id`'s live dims follow from live values.
  void output(int32_t id, std::function<std::vector<int64_t>(const kernel::Live&)> dims) const;
  // Output `id` has the live dims of tensor `like`.
  void output_like(int32_t id, int32_t like) const;
  // Work shared by the node's functions (e.g. a problem computed once), run first.
  void prepare(std::function<void(const kernel::Live&)> f) const;
  // Instantiates `k` (pipeline for the tensors' storage types, uniform, bind group) as a new step.
  Step& add(const kernel::Kernel& k) const;
};

class Graph {
 public:
  Graph(std::shared_ptr<gpu::Context> ctx, const format::VkGraphIR& ir, GraphOptions opts = {});
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  gpu::Context& ctx() { return *ctx_; }
  const std::shared_ptr<gpu::Context>& shared_context() const { return ctx_; }
  const GraphOptions& options() const { return opts_; }
  const format::VkGraphIR& ir() const { return ir_; }
  VkValueKind kind(int32_t id) const;

  // --- argument readers (throw Error naming the value when the kind is wrong)
  bool is_null(int32_t id) const { return kind(id) == VkValueKind::Null; }
  bool is_tensor(int32_t id) const { return kind(id) == VkValueKind::Tensor; }
  Tensor& tensor(int32_t id);
  double number(int32_t id) const;               // Int | Double | Bool | SymInt (live)
  std::optional<double> opt_number(int32_t id) const;  // Null -> nullopt
  // Int, integral Double (e.g. 0.0), or SymInt (live); fractional/NaN/out-of-range Double is an error.
  int64_t integer(int32_t id) const;
  bool boolean(int32_t id) const;                // Bool (or Int 0/1)
  std::string string(int32_t id) const;
  std::vector<int64_t> int_list(int32_t id) const;  // IntList or ValueList of Int/SymInt (live)
  std::vector<double> double_list(int32_t id) const;
  std::vector<int32_t> value_list(int32_t id) const;

  // --- SymInts: live value
  int64_t symint(int32_t id) const;
  void set_symint(int32_t id, int64_t v);

  // --- storage
  // How float values are stored (f16 at fp16): float tensors, and float scratch (partials,
  // attention scores), which kernels bind with Kernel::buffer(name, b, float_storage(), access).
  kernel::Storage float_storage() const { return opts_.fp16 ? kernel::Storage::F16 : kernel::Storage::F32; }
  uint64_t float_bytes(uint64_t n) const { return kernel::storage_bytes(float_storage(), n); }
  const gpu::Buffer& buffer(int32_t tensor_id);  // allocates (and uploads constants) on first use
  const MemoryPlan& memory_plan() const { return plan_; }
  // Raw constant bytes as serialized (packed quantized weights); uploaded as-is, 4-byte padded.
  const gpu::Buffer& raw_constant_buffer(int32_t tensor_id);
  format::ByteSpan constant_bytes(int32_t tensor_id) const;
  // Writes a constant's (widened) words straight into another tensor's buffer (et_vk.prepack).
  void upload_constant_into(int32_t dst_tensor, int32_t constant_tensor);
  // A uniform buffer owned by the graph, `bytes` long (rounded to 16): kernels' params.
  gpu::Buffer& make_uniform(size_t bytes, const std::string& label);
  // A storage scratch buffer owned by the graph.
  gpu::Buffer& make_scratch(uint64_t bytes, const std::string& label);
  // Storage for a node's temporaries that die within the node (split-K partials), shared by all
  // nodes since they run one after another; grows to the largest request. Only while building:
  // kernels bind it at their first run, after every builder asked.
  const gpu::Buffer& shared_scratch(uint64_t bytes);
  // A 16-byte zero storage buffer for absent optional tensors.
  const gpu::Buffer& dummy_buffer();
  // The graph's out-of-range index record (graph/index_check.h), created on first use.
  IndexCheck& index_check();

  // --- I/O
  const std::vector<uint32_t>& input_ids() const { return ir_.input_ids; }
  const std::vector<uint32_t>& output_ids() const { return ir_.output_ids; }
  // Sets an input's live shape (must fit the serialized bound) and uploads its data.
  void set_input(size_t i, const HostTensor& t);
  // Sets only the live shape: the input's buffer keeps what work queued earlier writes there.
  void set_input_shape(size_t i, const std::vector<int64_t>& shape);
  // Bytes [offset, offset + size) of graph input `value_id`'s buffer as this run's set_input
  // uploaded them, for inputs of up to kHostInputBytes (positions, sizes); false where the host
  // does not hold them (larger, or the buffer keeps what queued work wrote): read the GPU then.
  // Host hooks read small inputs here so that a run need not wait for the runs queued before it.
  static constexpr size_t kHostInputBytes = 64;
  bool input_bytes(int32_t value_id, uint64_t offset, uint64_t size, void* dst) const;

  // --- execution
  void resize();                                  // re-run every resize hook in chain order
  void record(std::vector<gpu::Command>& cmds, std::vector<std::string>* labels = nullptr);
  // resize + record + one submit that also reads every output back (one queue round trip);
  // outputs converted to `dtypes` (one per output) into `out`, whose tensors keep their storage
  // where dtype and shape already match (no allocation or zero-fill) and are replaced otherwise.
  void execute_and_read(const std::vector<DType>& dtypes, std::vector<HostTensor>& out,
                        std::vector<uint64_t>* durations = nullptr, std::vector<std::string>* labels = nullptr);
  // resize + record, then `extend` may append commands and reads; one submit (no outputs read)
  // that returns once queued: the reads hold their values once finish(ticket) returns, which also
  // raises an index error the run reported. Runs queued meanwhile see this one's results (queue
  // order); tickets are finished in the order they were queued.
  using Extend = std::function<void(std::vector<gpu::Command>&, std::vector<gpu::Context::Read>&)>;
  gpu::Context::Ticket execute_async(const Extend& extend);
  void finish(gpu::Context::Ticket t);
  const std::vector<Node>& nodes() const { return nodes_; }
  // Mutable buffers (ir.state): written with their initial contents at build and by reset_state().
  void reset_state();
  size_t num_state() const { return ir_.state.size(); }
  uint64_t allocated_bytes() const { return allocated_bytes_; }

  // Instantiates kernel `k` as a new step of node `n` (see OpContext::add).
  void add_kernel(Node& n, const kernel::Kernel& k);
  // Pipelines (one batch, see Context::pipelines_from_sources) and bind groups of kernels (node,
  // kernel) on their first activation; errors name the op.
  void instantiate(const std::vector<std::pair<Node*, KernelRun*>>& runs);
  // Live dims and integers, as kernels' functions see them.
  const kernel::Live& live() const { return *live_; }


 private:
  void build();
  // Runs node `n`'s prepare, output-dims and kernel functions and its host hook; errors name the op.
  void resize_node(Node& n);
  void record_node(const Node& n, std::vector<gpu::Command>& cmds, std::vector<std::string>* labels);
  // resize + record; stops to submit and read back at every node with a readback hook (the
  // commands after the last one are left in `cmds`, their durations appended by the caller).
  void resize_and_record(std::vector<gpu::Command>& cmds, std::vector<uint64_t>* durations,
                         std::vector<std::string>* labels);
  std::shared_ptr<gpu::Context> ctx_;
  format::VkGraphIR ir_;
  GraphOptions opts_;
  std::vector<Tensor> tensors_;          // indexed by value id (non-tensors unused)
  std::vector<int64_t> symints_;         // live SymInt values by value id
  MemoryPlan plan_;
  // Tensor storage: the plan's buffers first (created on first use), then one per constant.
  std::vector<std::unique_ptr<gpu::Buffer>> buffers_;
  std::vector<std::unique_ptr<gpu::Buffer>> owned_;    // uniforms, scratch, dummies
  std::unique_ptr<gpu::Buffer> shared_scratch_;
  bool built_ = false;  // every builder ran
  uint64_t compile_total_ = 0, compiled_ = 0;  // load progress of the first resize
  // While the load's first resize runs: the kernels it activates, instantiated in one batch after it.
  std::vector<std::pair<Node*, KernelRun*>>* first_activations_ = nullptr;
  std::vector<int> raw_constant_;        // value id -> owned_ index for raw constants
  int dummy_ = -1;
  std::vector<Node> nodes_;
  uint64_t allocated_bytes_ = 0;
  std::unique_ptr<IndexCheck> index_check_;
  std::unique_ptr<kernel::Live> live_;
  std::vector<uint8_t> params_scratch_;  // uniform bytes of the kernel being resized
  std::vector<std::vector<uint8_t>> input_bytes_;  // per input: its stored bytes when small and set this run
};

// Conversions between host dtypes and GPU words.
std::vector<uint32_t> to_gpu_words(const HostTensor& t, VkDType dst);
HostTensor from_gpu_words(const std::vector<uint32_t>& w, VkDType src, DType host, std::vector<int64_t> shape);
bool same_words(DType host, VkDType vk, kernel::Storage s);
DType host_dtype_of(VkDType t);

}  // namespace etwebgpu::graph
