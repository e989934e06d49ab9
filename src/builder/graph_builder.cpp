// GraphBuilder: one VkGraph, serialized as a VH00 delegate blob (FORMAT.md sections 1 and 2)
// with the writer conventions of ExecuTorch's VkGraphBuilder.
#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <map>

#include "builder/builder_util.h"
#include "etwebgpu/builder.h"
#include "format/sha256.h"
#include "vkgraph_generated.h"

namespace etwebgpu {
namespace vk = vkgraph;
using namespace builder_detail;

struct GraphBuilder::Impl {
  std::vector<format::VkValue> values;
  std::vector<DType> dtypes;  // per value; meaningful for tensors
  std::vector<std::vector<uint8_t>> constants;  // by constant_id
  struct Input { Id id; DType host; bool dynamic; };
  std::vector<Input> inputs;
  std::vector<Id> outputs;
  std::vector<format::VkOpCall> chain;

  Id add(format::VkValue v, DType dt = DType::Float32) {
    if (values.size() >= static_cast<size_t>(std::numeric_limits<Id>::max())) invalid("GraphBuilder: too many values");
    values.push_back(std::move(v));
    dtypes.push_back(dt);
    return static_cast<Id>(values.size() - 1);
  }
  void check(Id id, const char* what) const {
    if (id < 0 || static_cast<size_t>(id) >= values.size())
      invalid(fmt::format("GraphBuilder {}: value id {} out of range ({} values)", what, id, values.size()));
  }
  Id add_tensor(DType dt, std::vector<int64_t> dims, int32_t constant_id, int32_t mem_obj_id, const char* what) {
    tensor_nbytes(dt, dims, what);
    for (int64_t d : dims)
      if (d > std::numeric_limits<int32_t>::max()) invalid(fmt::format("{}: dimension {} exceeds INT32_MAX", what, d));
    format::VkValue v;
    v.kind = format::VkValueKind::Tensor;
    v.tensor.dtype = to_vk(dt);
    v.tensor.dims = std::move(dims);
    v.tensor.constant_id = constant_id;
    v.tensor.mem_obj_id = mem_obj_id;
    return add(std::move(v), dt);
  }
  IoTensor io(Id id, DType host, bool dynamic) const {
    const auto& v = values[static_cast<size_t>(id)];
    return IoTensor{id, dtypes[static_cast<size_t>(id)], host, v.tensor.dims, dynamic};
  }
};

GraphBuilder::GraphBuilder() : impl_(new Impl) {}
GraphBuilder::~GraphBuilder() { delete impl_; }
GraphBuilder::GraphBuilder(GraphBuilder&& o) noexcept : impl_(o.impl_) { o.impl_ = new Impl; }
GraphBuilder& GraphBuilder::operator=(GraphBuilder&& o) noexcept {
  std::swap(impl_, o.impl_);
  return *this;
}

GraphBuilder::Id GraphBuilder::input(DType dtype, std::vector<int64_t> dims, bool dynamic, int32_t mem_obj_id,
                                     DType host_dtype, bool host_dtype_set) {
  const Id id = impl_->add_tensor(dtype, std::move(dims), -1, mem_obj_id, "GraphBuilder::input");
  impl_->inputs.push_back({id, host_dtype_set ? host_dtype : dtype, dynamic});
  return id;
}

GraphBuilder::Id GraphBuilder::tensor(DType dtype, std::vector<int64_t> dims, int32_t mem_obj_id) {
  return impl_->add_tensor(dtype, std::move(dims), -1, mem_obj_id, "GraphBuilder::tensor");
}

GraphBuilder::Id GraphBuilder::constant(DType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes) {
  const uint64_t need = tensor_nbytes(dtype, dims, "GraphBuilder::constant");
  if (bytes.size() != need)
    invalid(fmt::format("GraphBuilder::constant: {} bytes given for {}{} which needs {}", bytes.size(),
                        dtype_name(dtype), shape_str(dims), need));
  const int32_t cid = static_cast<int32_t>(impl_->constants.size());
  const Id id = impl_->add_tensor(dtype, std::move(dims), cid, -1, "GraphBuilder::constant");
  impl_->constants.push_back(std::move(bytes));
  return id;
}

GraphBuilder::Id GraphBuilder::constant_f32(std::vector<int64_t> dims, const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return constant(DType::Float32, std::move(dims), std::move(b));
}

GraphBuilder::Id GraphBuilder::constant_i32(std::vector<int64_t> dims, const std::vector<int32_t>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return constant(DType::Int32, std::move(dims), std::move(b));
}

GraphBuilder::Id GraphBuilder::null() { return impl_->add({}); }

GraphBuilder::Id GraphBuilder::int_(int64_t v) {
  format::VkValue x;
  x.kind = format::VkValueKind::Int;
  x.int_val = v;
  return impl_->add(std::move(x));
}

GraphBuilder::Id GraphBuilder::dbl(double v) {
  format::VkValue x;
  x.kind = format::VkValueKind::Double;
  x.double_val = v;
  return impl_->add(std::move(x));
}

GraphBuilder::Id GraphBuilder::boolean(bool v) {
  format::VkValue x;
  x.kind = format::VkValueKind::Bool;
  x.bool_val = v;
  return impl_->add(std::move(x));
}

GraphBuilder::Id GraphBuilder::str(std::string s) {
  format::VkValue x;
  x.kind = format::VkValueKind::String;
  x.str = std::move(s);
  return impl_->add(std::move(x));
}

GraphBuilder::Id GraphBuilder::int_list(std::vector<int64_t> v) {
  format::VkValue x;
  x.kind = format::VkValueKind::IntList;
  x.ints = std::move(v);
  return impl_->add(std::move(x));
}

GraphBuilder::Id GraphBuilder::double_list(std::vector<double> v) {
  format::VkValue x;
  x.kind = format::VkValueKind::DoubleList;
  x.doubles = std::move(v);
  return impl_->add(std::move(x));
}

GraphBuilder::Id GraphBuilder::bool_list(std::vector<bool> v) {
  format::VkValue x;
  x.kind = format::VkValueKind::BoolList;
  for (bool b : v) x.bools.push_back(b ? 1 : 0);
  return impl_->add(std::move(x));
}

GraphBuilder::Id GraphBuilder::value_list(std::vector<Id> ids) {
  for (Id id : ids) impl_->check(id, "value_list item");
  format::VkValue x;
  x.kind = format::VkValueKind::ValueList;
  x.ids = std::move(ids);
  return impl_->add(std::move(x));
}

GraphBuilder::Id GraphBuilder::symint(int32_t initial) {
  format::VkValue x;
  x.kind = format::VkValueKind::SymInt;
  x.int_val = initial;
  return impl_->add(std::move(x));
}

void GraphBuilder::op(std::string name, std::vector<Id> args) {
  if (name.empty()) invalid("GraphBuilder::op: empty operator name");
  if (args.empty()) invalid("GraphBuilder::op " + name + ": args must end with the output id");
  for (Id id : args) impl_->check(id, ("op " + name + " arg").c_str());
  format::VkOpCall c;
  c.node_id = static_cast<uint32_t>(impl_->chain.size());
  c.name = std::move(name);
  c.args = std::move(args);
  impl_->chain.push_back(std::move(c));
}

void GraphBuilder::output(Id id) {
  impl_->check(id, "output");
  if (impl_->values[static_cast<size_t>(id)].kind != format::VkValueKind::Tensor)
    invalid(fmt::format("GraphBuilder::output: value {} is not a tensor", id));
  impl_->outputs.push_back(id);
}

std::vector<GraphBuilder::IoTensor> GraphBuilder::inputs() const {
  std::vector<IoTensor> out;
  for (const auto& in : impl_->inputs) out.push_back(impl_->io(in.id, in.host, in.dynamic));
  return out;
}

std::vector<GraphBuilder::IoTensor> GraphBuilder::outputs() const {
  // Outputs of a graph with a dynamic input are dynamic too (their sizes follow the input).
  bool dynamic = false;
  for (const auto& in : impl_->inputs) dynamic |= in.dynamic;
  std::vector<IoTensor> out;
  for (Id id : impl_->outputs) out.push_back(impl_->io(id, impl_->dtypes[static_cast<size_t>(id)], dynamic));
  return out;
}

GraphBuilder::Blob GraphBuilder::serialize_blob(ConstantPlacement placement) const {
  const Impl& g = *impl_;
  flatbuffers::FlatBufferBuilder fbb(4096);
  Blob blob;
  std::vector<uint8_t> raw;  // inline constant region

  std::vector<flatbuffers::Offset<vk::VkBytes>> consts;
  std::map<std::string, bool> seen_keys;
  for (const auto& c : g.constants) {
    if (placement == ConstantPlacement::NamedData && !c.empty()) {
      const std::string key = format::sha256_hex(c);
      if (seen_keys.emplace(key, true).second) blob.named_data.emplace_back(key, c);
      consts.push_back(vk::CreateVkBytesDirect(fbb, std::numeric_limits<uint64_t>::max(), c.size(), key.c_str()));
    } else {
      // Inline: each tensor padded to 16 bytes. Empty named-mode constants also land here with
      // length 0, as ExecuTorch writes them.
      consts.push_back(vk::CreateVkBytes(fbb, raw.size(), c.size()));
      raw.insert(raw.end(), c.begin(), c.end());
      raw.resize(align_up(raw.size(), 16), 0);
    }
  }

  std::vector<flatbuffers::Offset<vk::VkValue>> vals;
  for (const auto& v : g.values) {
    using K = format::VkValueKind;
    vk::GraphTypes tag = vk::GraphTypes::Null;
    flatbuffers::Offset<void> member;
    switch (v.kind) {
      case K::Null: member = vk::CreateNull(fbb).Union(); break;
      case K::Int: tag = vk::GraphTypes::Int; member = vk::CreateInt(fbb, v.int_val).Union(); break;
      case K::Double: tag = vk::GraphTypes::Double; member = vk::CreateDouble(fbb, v.double_val).Union(); break;
      case K::Bool: tag = vk::GraphTypes::Bool; member = vk::CreateBool(fbb, v.bool_val).Union(); break;
      case K::SymInt:
        tag = vk::GraphTypes::SymInt;
        member = vk::CreateSymInt(fbb, static_cast<int32_t>(v.int_val)).Union();
        break;
      case K::String: tag = vk::GraphTypes::String; member = vk::CreateStringDirect(fbb, v.str.c_str()).Union(); break;
      case K::IntList: tag = vk::GraphTypes::IntList; member = vk::CreateIntListDirect(fbb, &v.ints).Union(); break;
      case K::DoubleList:
        tag = vk::GraphTypes::DoubleList;
        member = vk::CreateDoubleListDirect(fbb, &v.doubles).Union();
        break;
      case K::BoolList: {
        tag = vk::GraphTypes::BoolList;
        std::vector<uint8_t> b(v.bools.begin(), v.bools.end());
        member = vk::CreateBoolList(fbb, fbb.CreateVector(b.data(), b.size())).Union();
        break;
      }
      case K::ValueList:
        tag = vk::GraphTypes::ValueList;
        member = vk::CreateValueListDirect(fbb, &v.ids).Union();
        break;
      case K::Tensor: {
        tag = vk::GraphTypes::VkTensor;
        std::vector<uint32_t> dims(v.tensor.dims.begin(), v.tensor.dims.end());
        const auto dt = static_cast<vk::VkDataType>(v.tensor.dtype);
        // Constants keep the default storage/layout; planned tensors say BUFFER / WIDTH_PACKED,
        // as the Vulkan exporter writes for buffer storage.
        const bool is_const = v.tensor.constant_id >= 0;
        member = vk::CreateVkTensorDirect(fbb, dt, &dims, v.tensor.constant_id, v.tensor.mem_obj_id,
                                          is_const ? vk::VkStorageType::DEFAULT_STORAGE : vk::VkStorageType::BUFFER,
                                          is_const ? vk::VkMemoryLayout::DEFAULT_LAYOUT
                                                   : vk::VkMemoryLayout::TENSOR_WIDTH_PACKED,
                                          dt)
                     .Union();
        break;
      }
      case K::Expr:  // made by the load-time fusion only; no file format holds one
        invalid("GraphBuilder: a fused expression value cannot be serialized");
    }
    vals.push_back(vk::CreateVkValue(fbb, tag, member));
  }

  std::vector<flatbuffers::Offset<vk::OperatorCall>> chain;
  for (const auto& c : g.chain) chain.push_back(vk::CreateOperatorCallDirect(fbb, c.node_id, c.name.c_str(), &c.args));
  std::vector<uint32_t> in_ids, out_ids;
  for (const auto& in : g.inputs) in_ids.push_back(static_cast<uint32_t>(in.id));
  for (Id id : g.outputs) out_ids.push_back(static_cast<uint32_t>(id));
  std::vector<flatbuffers::Offset<vk::VkBytes>> shaders;
  const auto root = vk::CreateVkGraphDirect(fbb, "0", &chain, &vals, &in_ids, &out_ids, &consts, &shaders);
  vk::FinishVkGraphBuffer(fbb, root);

  const uint32_t fb_size = fbb.GetSize();
  const uint32_t fb_padded = static_cast<uint32_t>(align_up(fb_size, 16));
  const uint32_t bytes_offset = 32 + fb_padded;
  std::vector<uint8_t>& out = blob.bytes;
  out.assign(32, 0);
  std::memcpy(out.data() + 4, "VH00", 4);
  const uint16_t header_size = 30;
  const uint32_t fb_offset = 32;
  const uint64_t bytes_size = raw.size();
  std::memcpy(out.data() + 8, &header_size, 2);
  std::memcpy(out.data() + 10, &fb_offset, 4);
  std::memcpy(out.data() + 14, &fb_size, 4);
  std::memcpy(out.data() + 18, &bytes_offset, 4);
  std::memcpy(out.data() + 22, &bytes_size, 8);
  out.insert(out.end(), fbb.GetBufferPointer(), fbb.GetBufferPointer() + fb_size);
  out.resize(bytes_offset, 0);
  out.insert(out.end(), raw.begin(), raw.end());
  return blob;
}

std::vector<uint8_t> GraphBuilder::serialize(const Options& opt) const {
  ProgramBuilder pb;
  std::vector<Id> ins, outs;
  for (const IoTensor& t : inputs()) {
    const Id id = pb.tensor(t.host_dtype, t.dims, t.dynamic);
    pb.input(id);
    ins.push_back(id);
  }
  for (const IoTensor& t : outputs()) {
    const Id id = pb.tensor(t.host_dtype, t.dims, t.dynamic);
    pb.output(id);
    outs.push_back(id);
  }
  pb.delegate(*this, ins, outs);
  return pb.serialize(opt);
}

}  // namespace etwebgpu
