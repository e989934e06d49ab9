// Model: a loaded Program method. Runs its execution plan: delegate calls on the GPU graph of
// each VulkanBackend delegate.
#include <fstream>
#include <mutex>
#include <optional>
#include <set>

#include "etwebgpu/etwebgpu.h"
#include "format/ir.h"
#include "graph/graph.h"
#include "graph/op_registry.h"

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

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::Io, "cannot open '" + path + "'");
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return b;
}

}  // namespace

struct Model::Impl {
  std::shared_ptr<gpu::Context> ctx;
  format::Program program;
  const format::ExecutionPlan* plan = nullptr;
  std::vector<std::unique_ptr<graph::Graph>> graphs;  // by delegate index (null when unused)
  std::vector<IoInfo> inputs, outputs;
  std::mutex run_mu;

  const format::EValue& value(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= plan->values.size())
      throw Error(ErrorKind::Format, "EValue id " + std::to_string(id) + " out of range");
    return plan->values[id];
  }
  IoInfo io_of(int32_t id) const {
    const auto& v = value(id);
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
  return load_bytes(read_file(path), opts);
}

std::unique_ptr<Model> Model::load_bytes(std::vector<uint8_t> bytes, const LoadOptions& opts) {
  auto impl = std::make_unique<Impl>();
  impl->program = format::read_program(std::make_shared<const format::Bytes>(std::move(bytes)));
  impl->plan = &impl->program.plan(opts.method);
  const auto& plan = *impl->plan;

  // Decode every delegate and check every operator before building anything, so that all
  // missing operators are reported at once.
  std::vector<std::optional<format::VkGraphIR>> irs(plan.delegates.size());
  std::set<std::string> missing, non_delegated;
  for (const auto& chain : plan.chains) {
    for (const auto& ins : chain) {
      if (ins.kind == InstrKind::DelegateCall) {
        if (ins.index < 0 || static_cast<size_t>(ins.index) >= plan.delegates.size())
          throw Error(ErrorKind::Format, "DelegateCall names delegate " + std::to_string(ins.index) + " of " +
                                             std::to_string(plan.delegates.size()));
        const auto& d = plan.delegates[ins.index];
        if (d.id != "VulkanBackend")
          throw Error(ErrorKind::Unsupported, "delegate backend '" + d.id + "' (only VulkanBackend is supported)");
        if (!irs[ins.index]) irs[ins.index] = format::read_vkgraph(d.blob, impl->program);
        const auto& ir = *irs[ins.index];
        if (ins.args.size() != ir.input_ids.size() + ir.output_ids.size())
          throw Error(ErrorKind::Format, "DelegateCall " + std::to_string(ins.index) + " passes " +
                                             std::to_string(ins.args.size()) + " values; its graph has " +
                                             std::to_string(ir.input_ids.size()) + " inputs and " +
                                             std::to_string(ir.output_ids.size()) + " outputs");
        for (auto& m : graph::OpRegistry::global().missing(ir)) missing.insert(m);
      } else if (ins.kind == InstrKind::KernelCall) {
        if (ins.index < 0 || static_cast<size_t>(ins.index) >= plan.operators.size())
          throw Error(ErrorKind::Format, "KernelCall names operator " + std::to_string(ins.index));
        non_delegated.insert(plan.operators[ins.index].key());
      } else {
        non_delegated.insert(std::string("instruction ") + format::instr_kind_name(ins.kind));
      }
    }
  }
  if (!missing.empty()) {
    std::string m;
    for (auto& s : missing) m += (m.empty() ? "" : ", ") + s;
    throw Error(ErrorKind::Unsupported,
                "the model uses " + std::to_string(missing.size()) + " operator(s) etwebgpu does not implement: " + m);
  }
  if (!non_delegated.empty()) {
    std::string m;
    for (auto& s : non_delegated) m += (m.empty() ? "" : ", ") + s;
    throw Error(ErrorKind::Unsupported, "the program runs operators outside the Vulkan delegate: " + m);
  }
  for (int32_t id : plan.inputs) impl->inputs.push_back(impl->io_of(id));
  for (int32_t id : plan.outputs) impl->outputs.push_back(impl->io_of(id));

  impl->ctx = gpu::Context::get();
  graph::GraphOptions gopts;
  gopts.sdpa_occupancy_floor = opts.sdpa_occupancy_floor;
  gopts.force_route = opts.force_route;
  impl->graphs.resize(plan.delegates.size());
  for (size_t i = 0; i < irs.size(); ++i)
    if (irs[i]) impl->graphs[i] = std::make_unique<graph::Graph>(impl->ctx, *irs[i], gopts);
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

const std::vector<IoInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<IoInfo>& Model::outputs() const { return impl_->outputs; }

uint64_t Model::gpu_bytes() const {
  uint64_t n = 0;
  for (auto& g : impl_->graphs)
    if (g) n += g->allocated_bytes();
  return n;
}

std::string Model::device_summary() { return gpu::Context::get()->info().summary(); }

std::vector<InstructionInfo> Model::plan_summary() const {
  std::vector<InstructionInfo> r;
  for (const auto& chain : impl_->plan->chains)
    for (const auto& ins : chain) {
      if (ins.kind == InstrKind::DelegateCall)
        r.push_back({"delegate", "VulkanBackend delegate " + std::to_string(ins.index), true});
      else if (ins.kind == InstrKind::KernelCall)
        r.push_back({"cpu", impl_->plan->operators[ins.index].key(), false});
      else
        r.push_back({format::instr_kind_name(ins.kind), "", false});
    }
  return r;
}

std::vector<HostTensor> Model::run(const std::vector<HostTensor>& inputs, Profile* profile) {
  std::unique_lock<std::mutex> lock(impl_->run_mu, std::try_to_lock);
  if (!lock.owns_lock())
    throw Error(ErrorKind::InvalidArgument,
                "Model::run called while another run of the same model is in progress; use one Model per thread");
  Impl& m = *impl_;
  const auto& plan = *m.plan;
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
  std::vector<std::optional<HostTensor>> values(plan.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) values[plan.inputs[i]] = inputs[i];
  if (profile) {
    profile->dispatches.clear();
    profile->has_gpu_times = m.ctx->info().timestamp_query;
  }
  for (const auto& chain : plan.chains)
    for (const auto& ins : chain) {
      graph::Graph& g = *m.graphs[ins.index];
      size_t nin = g.input_ids().size();
      for (size_t k = 0; k < nin; ++k) {
        auto& v = values[ins.args[k]];
        if (!v) throw Error(ErrorKind::Format, "delegate input EValue " + std::to_string(ins.args[k]) + " has no value yet");
        g.set_input(k, *v);
      }
      std::vector<uint64_t> durations;
      std::vector<std::string> labels;
      g.execute(profile ? &durations : nullptr, profile ? &labels : nullptr);
      if (profile)
        for (size_t k = 0; k < labels.size(); ++k) {
          auto bar = labels[k].find('|');
          profile->dispatches.push_back({labels[k].substr(0, bar),
                                         bar == std::string::npos ? "" : labels[k].substr(bar + 1),
                                         k < durations.size() ? durations[k] : 0});
        }
      for (size_t j = 0; j < g.output_ids().size(); ++j) {
        int32_t id = ins.args[nin + j];
        const auto& ev = m.value(id);
        if (ev.kind != EValueKind::Tensor) throw Error(ErrorKind::Format, "delegate output is not a tensor EValue");
        values[id] = g.get_output(j, host_dtype(ev.tensor.scalar_type));
      }
    }
  std::vector<HostTensor> out;
  for (int32_t id : plan.outputs) {
    if (!values[id]) throw Error(ErrorKind::Format, "method output EValue " + std::to_string(id) + " was never computed");
    out.push_back(std::move(*values[id]));
  }
  return out;
}

}  // namespace etwebgpu
