// Model: a loaded Program method. Runs its execution plan: delegate calls on the GPU graph of
// each VulkanBackend delegate.
#include <mutex>
#include <optional>
#include <set>

#include "etwebgpu/etwebgpu.h"
#include "format/file_read.h"
#include "format/ir.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "program/model_internal.h"
#include "program/program_graph.h"

namespace etwebgpu {

using format::EValueKind;
using format::InstrKind;

namespace {

DType host_dtype(format::ScalarType t) {
  switch (t) {
    case format::ScalarType::Float: return DType::Float32;
    case format::ScalarType::Int: return DType::Int32;
    case format::ScalarType::Long: return DType::Int64;
    case format::ScalarType::Bool: return DType::Bool;
    case format::ScalarType::Byte: return DType::UInt8;
    case format::ScalarType::Char: return DType::Int8;
    case format::ScalarType::Half: return DType::Float16;
    case format::ScalarType::Double: return DType::Float64;
    default: throw Error(ErrorKind::Unsupported, std::string("scalar type ") + format::scalar_type_name(t));
  }
}

}  // namespace

struct Model::Impl {
  std::shared_ptr<gpu::Context> ctx;
  Precision precision = Precision::FP32;
  format::Program program;
  const format::ExecutionPlan* plan = nullptr;
  std::vector<InstructionInfo> instructions;
  std::unique_ptr<graph::Graph> graph;  // the whole plan: delegates inlined, kernel calls as ops
  std::vector<IoInfo> inputs, outputs;
  std::vector<DType> output_dtypes;
  std::mutex run_mu;

  IoInfo io_of(int32_t id) const {
    const auto& v = plan->values.at(id);
    if (v.kind != EValueKind::Tensor)
      throw Error(ErrorKind::Unsupported, std::string("method input/output of kind ") + format::evalue_kind_name(v.kind) +
                                              " (only tensors are supported)");
    return IoInfo{host_dtype(v.tensor.scalar_type), v.tensor.sizes,
                  v.tensor.dynamism != format::ShapeDynamism::Static};
  }
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string& path, const LoadOptions& opts) {
  std::function<void(uint64_t, uint64_t)> progress;
  if (opts.on_progress)
    progress = [&opts](uint64_t done, uint64_t total) { opts.on_progress({LoadProgress::Stage::Read, done, total}); };
  return load_bytes(format::read_file(path, progress), opts);
}

std::unique_ptr<Model> Model::load_bytes(std::vector<uint8_t> bytes, const LoadOptions& opts) {
  auto impl = std::make_unique<Impl>();
  impl->program = format::read_program(std::make_shared<const format::Bytes>(std::move(bytes)));
  impl->plan = &impl->program.plan(opts.method);
  // Every delegate is decoded and every operator checked before anything is built, so all
  // missing operators are reported at once.
  auto merged = graph::merge_program(impl->program, *impl->plan);
  if (!merged.unsupported.empty()) {
    std::string m;
    for (auto& s : merged.unsupported) m += (m.empty() ? "" : ", ") + s;
    throw Error(ErrorKind::Unsupported, "the model uses " + std::to_string(merged.unsupported.size()) +
                                            " operator(s) etwebgpu does not implement: " + m);
  }
  impl->instructions = std::move(merged.instructions);
  for (int32_t id : impl->plan->inputs) impl->inputs.push_back(impl->io_of(id));
  for (int32_t id : impl->plan->outputs) {
    impl->outputs.push_back(impl->io_of(id));
    impl->output_dtypes.push_back(impl->outputs.back().dtype);
  }
  impl->ctx = gpu::Context::get();
  impl->precision = opts.precision;
  if (opts.precision == Precision::Auto) impl->precision = impl->ctx->info().shader_f16 ? Precision::FP16 : Precision::FP32;
  if (impl->precision == Precision::FP16 && !impl->ctx->info().shader_f16)
    throw Error(ErrorKind::Unsupported, "precision fp16 needs the adapter's shader-f16 feature, which " +
                                            impl->ctx->info().description + " does not offer; use fp32 or auto");
  graph::GraphOptions gopts;
  gopts.fp16 = impl->precision == Precision::FP16;
  gopts.sdpa_occupancy_floor = opts.sdpa_occupancy_floor;
  gopts.force_route = opts.force_route;
  gopts.max_gpu_bytes = opts.max_gpu_bytes;
  gopts.plan_memory = opts.plan_memory;
  gopts.poison_storage = opts.poison_storage;
  gopts.fuse = opts.fuse;
  gopts.progress = opts.on_progress;
  gopts.static_shapes = std::none_of(impl->inputs.begin(), impl->inputs.end(), [](const IoInfo& i) { return i.dynamic; });
  impl->graph = std::make_unique<graph::Graph>(impl->ctx, merged.ir, gopts);
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

const std::vector<IoInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<IoInfo>& Model::outputs() const { return impl_->outputs; }
void Model::reset_state() {
  std::unique_lock<std::mutex> lock(impl_->run_mu, std::try_to_lock);
  if (!lock.owns_lock())
    throw Error(ErrorKind::InvalidArgument, "Model::reset_state called while a run of the same model is in progress");
  impl_->graph->reset_state();
}
size_t Model::num_state_buffers() const { return impl_->graph->num_state(); }
uint64_t Model::gpu_bytes() const { return impl_->graph->allocated_bytes(); }
Precision Model::precision() const { return impl_->precision; }

std::vector<InstructionInfo> Model::plan_summary() const { return impl_->instructions; }
std::vector<Model::GpuNode> Model::gpu_plan() const {
  std::vector<GpuNode> r;
  for (const auto& n : impl_->graph->nodes()) {
    GpuNode g{n.op, {}};
    for (const auto& s : n.steps) g.variants.push_back(s.dispatch ? s.variant : "copy");
    r.push_back(std::move(g));
  }
  return r;
}

namespace {
// Count, dtype, shape (within the exported bounds) and byte size of each input.
void validate_inputs(Model::Impl& m, const std::vector<HostTensor>& inputs) {
  if (inputs.size() != m.inputs.size())
    throw Error(ErrorKind::InvalidArgument, "expected " + std::to_string(m.inputs.size()) + " inputs, got " +
                                                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& want = m.inputs[i];
    const auto& got = inputs[i];
    if (got.dtype != want.dtype)
      throw Error(ErrorKind::InvalidArgument, "input " + std::to_string(i) + " has dtype " + dtype_name(got.dtype) +
                                                  ", the model expects " + dtype_name(want.dtype));
    bool ok = got.shape.size() == want.sizes.size();
    for (size_t d = 0; ok && d < got.shape.size(); ++d)
      ok = want.dynamic ? (got.shape[d] >= 0 && got.shape[d] <= want.sizes[d]) : got.shape[d] == want.sizes[d];
    if (!ok)
      throw Error(ErrorKind::InvalidArgument, "input " + std::to_string(i) + " has shape " + shape_str(got.shape) +
                                                  (want.dynamic ? ", outside the exported bound " : ", the model expects ") +
                                                  shape_str(want.sizes));
    if (got.data.size() != static_cast<size_t>(got.numel()) * dtype_size(got.dtype))
      throw Error(ErrorKind::InvalidArgument, "input " + std::to_string(i) + " holds " + std::to_string(got.data.size()) +
                                                  " bytes; a contiguous " + shape_str(got.shape) + " " +
                                                  dtype_name(got.dtype) + " tensor needs " +
                                                  std::to_string(got.numel() * dtype_size(got.dtype)));
  }
}
}  // namespace

std::vector<HostTensor> Model::run(const std::vector<HostTensor>& inputs, Profile* profile) {
  std::vector<HostTensor> out;
  run_into(inputs, out, profile);
  return out;
}

void Model::run_into(const std::vector<HostTensor>& inputs, std::vector<HostTensor>& outputs, Profile* profile) {
  std::unique_lock<std::mutex> lock(impl_->run_mu, std::try_to_lock);
  if (!lock.owns_lock())
    throw Error(ErrorKind::InvalidArgument,
                "Model::run called while another run of the same model is in progress; use one Model per thread");
  Impl& m = *impl_;
  validate_inputs(m, inputs);
  graph::Graph& g = *m.graph;
  for (size_t i = 0; i < inputs.size(); ++i) g.set_input(i, inputs[i]);
  std::vector<uint64_t> durations;
  std::vector<std::string> labels;
  g.execute_and_read(m.output_dtypes, outputs, profile ? &durations : nullptr, profile ? &labels : nullptr);
  if (profile) {
    profile->dispatches.clear();
    profile->has_gpu_times = m.ctx->info().timestamp_query;
    for (size_t k = 0; k < labels.size(); ++k) {
      auto bar = labels[k].find('|');
      profile->dispatches.push_back({labels[k].substr(0, bar), bar == std::string::npos ? "" : labels[k].substr(bar + 1),
                                     k < durations.size() ? durations[k] : 0});
    }
  }
}

namespace detail {

graph::Graph& ModelAccess::graph(Model& m) { return *m.impl_->graph; }

std::unique_lock<std::mutex> ModelAccess::lock_runs(Model& model) {
  std::unique_lock<std::mutex> lock(model.impl_->run_mu, std::try_to_lock);
  if (!lock.owns_lock())
    throw Error(ErrorKind::InvalidArgument,
                "Model::run called while another run of the same model is in progress; use one Model per thread");
  return lock;
}

gpu::Context::Ticket ModelAccess::queue_run(Model& model, const std::vector<HostTensor>& inputs, const std::vector<bool>& keep,
                                            const graph::Graph::Extend& extend) {
  Model::Impl& m = *model.impl_;
  validate_inputs(m, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < keep.size() && keep[i]) m.graph->set_input_shape(i, inputs[i].shape);
    else m.graph->set_input(i, inputs[i]);
  }
  return m.graph->execute_async(extend);
}

}  // namespace detail
}  // namespace etwebgpu
