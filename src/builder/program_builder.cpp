// ProgramBuilder: a whole .pte laid out as ExecuTorch's serializer does (FORMAT.md sections 3.1,
// 3.3 and 6): Program flatbuffer, eh00 header spliced after byte 8, 128-aligned segments
// (constant segment first, then distinct delegate blobs, then distinct named-data buffers).
#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <map>

#include "builder/builder_util.h"
#include "etwebgpu/builder.h"
#include "program_generated.h"

namespace etwebgpu {
namespace fb = executorch_flatbuffer;
using namespace builder_detail;
using format::EValueKind;

struct ProgramBuilder::Impl {
  struct Value {
    EValueKind kind = EValueKind::Null;
    int64_t i = 0;
    bool b = false;
    double d = 0;
    std::string str;
    std::vector<int64_t> items;
    std::vector<double> doubles;
    std::vector<uint8_t> bools;
    DType dtype = DType::Float32;
    std::vector<int64_t> sizes;
    bool dynamic = false;
    bool constant = false;
    bool mutable_init = false;  // planned storage with initial bytes (mutable_data_segments)
    std::vector<uint8_t> bytes;
  };
  struct Instr {
    bool kernel = true;
    int32_t index = 0;
    std::vector<int32_t> args;
  };
  struct Del {
    GraphBuilder::Blob named, inline_blob;
  };
  std::vector<Value> values;
  std::vector<Id> inputs, outputs;
  std::vector<Instr> instrs;
  std::vector<std::pair<std::string, std::string>> operators;
  std::vector<Del> delegates;

  Id add(Value v) {
    if (values.size() >= static_cast<size_t>(std::numeric_limits<Id>::max())) invalid("ProgramBuilder: too many values");
    values.push_back(std::move(v));
    return static_cast<Id>(values.size() - 1);
  }
  const Value& at(Id id, const std::string& what) const {
    if (id < 0 || static_cast<size_t>(id) >= values.size())
      invalid(fmt::format("ProgramBuilder {}: value id {} out of range ({} values)", what, id, values.size()));
    return values[static_cast<size_t>(id)];
  }
  const Value& tensor_at(Id id, const std::string& what) const {
    const Value& v = at(id, what);
    if (v.kind != EValueKind::Tensor) invalid(fmt::format("ProgramBuilder {}: value {} is not a tensor", what, id));
    return v;
  }
  std::vector<uint8_t> build(const GraphBuilder::Options& opt) const;
};

ProgramBuilder::ProgramBuilder() : impl_(new Impl) {}
ProgramBuilder::~ProgramBuilder() { delete impl_; }

namespace {
void check_sizes(DType dt, const std::vector<int64_t>& sizes, const char* what) {
  tensor_nbytes(dt, sizes, what);
  for (int64_t s : sizes)
    if (s > std::numeric_limits<int32_t>::max()) invalid(fmt::format("{}: size {} does not fit i32", what, s));
}
}  // namespace

ProgramBuilder::Id ProgramBuilder::tensor(DType dtype, std::vector<int64_t> sizes, bool dynamic) {
  check_sizes(dtype, sizes, "ProgramBuilder::tensor");
  Impl::Value v;
  v.kind = EValueKind::Tensor;
  v.dtype = dtype;
  v.sizes = std::move(sizes);
  v.dynamic = dynamic;
  return impl_->add(std::move(v));
}

namespace {
// A tensor whose bytes the file holds: a constant, or a mutable buffer's initial contents.
ProgramBuilder::Id tensor_with_bytes(ProgramBuilder::Impl& impl, const char* what, DType dtype, std::vector<int64_t> sizes,
                                     std::vector<uint8_t> bytes, bool mutable_init) {
  check_sizes(dtype, sizes, what);
  const uint64_t need = tensor_nbytes(dtype, sizes, what);
  if (bytes.size() != need)
    invalid(fmt::format("{}: {} bytes given for {}{} which needs {}", what, bytes.size(), dtype_name(dtype),
                        shape_str(sizes), need));
  ProgramBuilder::Impl::Value v;
  v.kind = EValueKind::Tensor;
  v.dtype = dtype;
  v.sizes = std::move(sizes);
  v.constant = !mutable_init;
  v.mutable_init = mutable_init;
  v.bytes = std::move(bytes);
  return impl.add(std::move(v));
}
}  // namespace

ProgramBuilder::Id ProgramBuilder::constant_tensor(DType dtype, std::vector<int64_t> sizes, std::vector<uint8_t> bytes) {
  return tensor_with_bytes(*impl_, "ProgramBuilder::constant_tensor", dtype, std::move(sizes), std::move(bytes), false);
}

ProgramBuilder::Id ProgramBuilder::mutable_tensor(DType dtype, std::vector<int64_t> sizes, std::vector<uint8_t> bytes) {
  return tensor_with_bytes(*impl_, "ProgramBuilder::mutable_tensor", dtype, std::move(sizes), std::move(bytes), true);
}

ProgramBuilder::Id ProgramBuilder::null() { return impl_->add({}); }

ProgramBuilder::Id ProgramBuilder::int_(int64_t x) {
  Impl::Value v;
  v.kind = EValueKind::Int;
  v.i = x;
  return impl_->add(std::move(v));
}

ProgramBuilder::Id ProgramBuilder::dbl(double x) {
  Impl::Value v;
  v.kind = EValueKind::Double;
  v.d = x;
  return impl_->add(std::move(v));
}

ProgramBuilder::Id ProgramBuilder::str(std::string x) {
  Impl::Value v;
  v.kind = EValueKind::String;
  v.str = std::move(x);
  return impl_->add(std::move(v));
}

ProgramBuilder::Id ProgramBuilder::boolean(bool x) {
  Impl::Value v;
  v.kind = EValueKind::Bool;
  v.b = x;
  return impl_->add(std::move(v));
}

ProgramBuilder::Id ProgramBuilder::int_list(std::vector<int64_t> values) {
  // Program IntList items are ids of Int EValues (FORMAT.md section 3.2).
  Impl::Value v;
  v.kind = EValueKind::IntList;
  for (int64_t x : values) v.items.push_back(int_(x));
  return impl_->add(std::move(v));
}

ProgramBuilder::Id ProgramBuilder::double_list(std::vector<double> d) {
  Impl::Value v;
  v.kind = EValueKind::DoubleList;
  v.doubles = std::move(d);
  return impl_->add(std::move(v));
}

ProgramBuilder::Id ProgramBuilder::bool_list(std::vector<bool> b) {
  Impl::Value v;
  v.kind = EValueKind::BoolList;
  for (bool x : b) v.bools.push_back(x ? 1 : 0);
  return impl_->add(std::move(v));
}

ProgramBuilder::Id ProgramBuilder::optional_tensor_list(std::vector<Id> ids) {
  Impl::Value v;
  v.kind = EValueKind::OptionalTensorList;
  for (Id id : ids) {
    if (id != -1) {
      const auto& t = impl_->at(id, "optional_tensor_list item");
      if (t.kind != EValueKind::Tensor && t.kind != EValueKind::Null)
        invalid(fmt::format("ProgramBuilder optional_tensor_list: item {} is neither a tensor nor Null", id));
    }
    v.items.push_back(id);
  }
  return impl_->add(std::move(v));
}

ProgramBuilder::Id ProgramBuilder::tensor_list(std::vector<Id> ids) {
  Impl::Value v;
  v.kind = EValueKind::TensorList;
  for (Id id : ids) {
    impl_->tensor_at(id, "tensor_list item");
    v.items.push_back(id);
  }
  return impl_->add(std::move(v));
}

void ProgramBuilder::input(Id id) {
  impl_->at(id, "input");
  impl_->inputs.push_back(id);
}

void ProgramBuilder::output(Id id) {
  impl_->at(id, "output");
  impl_->outputs.push_back(id);
}

void ProgramBuilder::kernel(std::string name, std::string overload, std::vector<Id> args, int outputs) {
  if (name.empty()) invalid("ProgramBuilder::kernel: empty operator name");
  if (outputs < 1 || args.size() < static_cast<size_t>(outputs))
    invalid("ProgramBuilder::kernel " + name + ": args must end with the " + std::to_string(outputs) + " out tensor(s)");
  for (Id id : args) impl_->at(id, "kernel " + name + " arg");
  int32_t op_index = -1;
  for (size_t i = 0; i < impl_->operators.size(); ++i)
    if (impl_->operators[i].first == name && impl_->operators[i].second == overload) op_index = static_cast<int32_t>(i);
  if (op_index < 0) {
    op_index = static_cast<int32_t>(impl_->operators.size());
    impl_->operators.emplace_back(std::move(name), std::move(overload));
  }
  // ExecuTorch's emitter appends one return entry: the out EValue itself, or a fresh TensorList
  // of the outs when there are several.
  Id ret = outputs == 1 ? args.back() : tensor_list(std::vector<Id>(args.end() - outputs, args.end()));
  args.push_back(ret);
  impl_->instrs.push_back({true, op_index, std::move(args)});
}

void ProgramBuilder::kernel_with_return(std::string name, std::string overload, std::vector<Id> args, Id ret) {
  impl_->at(ret, "kernel " + name + " return entry");
  kernel(std::move(name), std::move(overload), std::move(args));
  impl_->instrs.back().args.back() = ret;
}

void ProgramBuilder::delegate(const GraphBuilder& graph, std::vector<Id> ins, std::vector<Id> outs) {
  const auto gi = graph.inputs();
  const auto go = graph.outputs();
  if (ins.size() != gi.size())
    invalid(fmt::format("ProgramBuilder::delegate: {} inputs given, the graph has {}", ins.size(), gi.size()));
  if (outs.size() != go.size())
    invalid(fmt::format("ProgramBuilder::delegate: {} outputs given, the graph has {}", outs.size(), go.size()));
  auto check = [&](Id id, const GraphBuilder::IoTensor& t, const char* what) {
    const auto& v = impl_->tensor_at(id, std::string("delegate ") + what);
    if (v.sizes != t.dims)
      invalid(fmt::format("ProgramBuilder::delegate {} {}: sizes {} differ from the graph tensor dims {}", what, id,
                          shape_str(v.sizes), shape_str(t.dims)));
  };
  for (size_t i = 0; i < ins.size(); ++i) check(ins[i], gi[i], "input");
  for (size_t i = 0; i < outs.size(); ++i) check(outs[i], go[i], "output");
  Impl::Del d{graph.serialize_blob(GraphBuilder::ConstantPlacement::NamedData),
              graph.serialize_blob(GraphBuilder::ConstantPlacement::InlineBlob)};
  impl_->instrs.push_back({false, static_cast<int32_t>(impl_->delegates.size()), {}});
  auto& args = impl_->instrs.back().args;
  args.insert(args.end(), ins.begin(), ins.end());
  args.insert(args.end(), outs.begin(), outs.end());
  impl_->delegates.push_back(std::move(d));
}

std::vector<uint8_t> ProgramBuilder::serialize(GraphBuilder::ConstantPlacement placement) const {
  GraphBuilder::Options opt;
  opt.constants = placement;
  return impl_->build(opt);
}

std::vector<uint8_t> ProgramBuilder::serialize(const GraphBuilder::Options& opt) const { return impl_->build(opt); }

namespace {

// pytree specs like the ones torch.export writes (not needed to run, kept for fidelity).
std::string leaf() { return R"({"type": null, "context": null, "children_spec": []})"; }
std::string tuple_of(size_t n) {
  std::string s = R"({"type": "builtins.tuple", "context": "null", "children_spec": [)";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + leaf();
  return s + "]}";
}

struct Segment {
  std::vector<uint8_t> data;
};

}  // namespace

std::vector<uint8_t> ProgramBuilder::Impl::build(const GraphBuilder::Options& opt) const {
  const bool named = opt.constants == GraphBuilder::ConstantPlacement::NamedData;

  // Memory plan: every non-constant tensor gets its own 16-aligned slot in arena 1.
  std::vector<uint64_t> mem_offset(values.size(), 0);
  std::vector<uint32_t> data_buffer_idx(values.size(), 0);
  uint64_t arena = 0;
  std::vector<uint8_t> const_data;
  std::vector<uint64_t> const_offsets = {0};  // entry 0 is the "no data" placeholder
  std::vector<uint8_t> mut_data;                // initial bytes of mutable tensors
  std::vector<uint64_t> mut_offsets = {0};      // same placeholder convention
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& v = values[i];
    if (v.kind != EValueKind::Tensor) continue;
    if (v.constant) {
      if (!const_offsets.empty() && const_offsets.size() > 1) const_data.resize(align_up(const_data.size(), 16), 0);
      data_buffer_idx[i] = static_cast<uint32_t>(const_offsets.size());
      const_offsets.push_back(const_data.size());
      const_data.insert(const_data.end(), v.bytes.begin(), v.bytes.end());
    } else {
      if (v.mutable_init) {
        mut_data.resize(align_up(mut_data.size(), 16), 0);
        data_buffer_idx[i] = static_cast<uint32_t>(mut_offsets.size());
        mut_offsets.push_back(mut_data.size());
        mut_data.insert(mut_data.end(), v.bytes.begin(), v.bytes.end());
      }
      mem_offset[i] = arena;
      arena = align_up(arena + tensor_nbytes(v.dtype, v.sizes, "ProgramBuilder"), 16);
    }
  }

  // Segments: constant segment, distinct delegate blobs, distinct named-data buffers.
  std::vector<const std::vector<uint8_t>*> segments = {&const_data};
  std::vector<uint32_t> delegate_ref(delegates.size(), 0);
  std::vector<const std::vector<uint8_t>*> inline_blobs;
  std::vector<std::pair<std::string, uint32_t>> named_entries;
  std::map<std::string, uint32_t> key_seg;
  for (size_t i = 0; i < delegates.size(); ++i) {
    const GraphBuilder::Blob& b = named ? delegates[i].named : delegates[i].inline_blob;
    auto& pool = opt.delegate_in_segment ? segments : inline_blobs;
    const size_t first = opt.delegate_in_segment ? 1 : 0;  // never share the constant segment
    uint32_t idx = static_cast<uint32_t>(pool.size());
    for (size_t k = first; k < pool.size(); ++k)
      if (*pool[k] == b.bytes) idx = static_cast<uint32_t>(k);
    if (idx == pool.size()) pool.push_back(&b.bytes);
    delegate_ref[i] = idx;
  }
  if (named) {
    for (const Del& d : delegates) {
      for (const auto& [key, bytes] : d.named.named_data) {
        if (key_seg.count(key)) continue;
        key_seg[key] = static_cast<uint32_t>(segments.size());
        named_entries.emplace_back(key, static_cast<uint32_t>(segments.size()));
        segments.push_back(&bytes);
      }
    }
  }
  uint32_t mut_segment = 0;
  if (mut_offsets.size() > 1) {
    mut_segment = static_cast<uint32_t>(segments.size());
    segments.push_back(&mut_data);
  }
  std::vector<uint64_t> seg_offset(segments.size(), 0);
  uint64_t seg_end = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    seg_offset[i] = i == 0 ? 0 : align_up(seg_end, 128);
    seg_end = seg_offset[i] + segments[i]->size();
  }

  flatbuffers::FlatBufferBuilder fbb(1 << 14);
  std::vector<flatbuffers::Offset<fb::EValue>> evs;
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& v = values[i];
    fb::KernelTypes tag = fb::KernelTypes::Null;
    flatbuffers::Offset<void> member;
    switch (v.kind) {
      case EValueKind::None:
      case EValueKind::Null: member = fb::CreateNull(fbb).Union(); break;
      case EValueKind::Int: tag = fb::KernelTypes::Int; member = fb::CreateInt(fbb, v.i).Union(); break;
      case EValueKind::Bool: tag = fb::KernelTypes::Bool; member = fb::CreateBool(fbb, v.b).Union(); break;
      case EValueKind::Double: tag = fb::KernelTypes::Double; member = fb::CreateDouble(fbb, v.d).Union(); break;
      case EValueKind::String: tag = fb::KernelTypes::String; member = fb::CreateStringDirect(fbb, v.str.c_str()).Union(); break;
      case EValueKind::IntList: tag = fb::KernelTypes::IntList; member = fb::CreateIntListDirect(fbb, &v.items).Union(); break;
      case EValueKind::DoubleList:
        tag = fb::KernelTypes::DoubleList;
        member = fb::CreateDoubleListDirect(fbb, &v.doubles).Union();
        break;
      case EValueKind::BoolList:
        tag = fb::KernelTypes::BoolList;
        member = fb::CreateBoolList(fbb, fbb.CreateVector(v.bools.data(), v.bools.size())).Union();
        break;
      case EValueKind::TensorList:
      case EValueKind::OptionalTensorList: {
        std::vector<int32_t> items(v.items.begin(), v.items.end());
        if (v.kind == EValueKind::TensorList) {
          tag = fb::KernelTypes::TensorList;
          member = fb::CreateTensorListDirect(fbb, &items).Union();
        } else {
          tag = fb::KernelTypes::OptionalTensorList;
          member = fb::CreateOptionalTensorListDirect(fbb, &items).Union();
        }
        break;
      }
      case EValueKind::Tensor: {
        tag = fb::KernelTypes::Tensor;
        std::vector<int32_t> sizes(v.sizes.begin(), v.sizes.end());
        std::vector<uint8_t> dim_order;
        for (size_t k = 0; k < sizes.size(); ++k) dim_order.push_back(static_cast<uint8_t>(k));
        flatbuffers::Offset<fb::AllocationDetails> alloc;
        if (!v.constant)
          alloc = fb::CreateAllocationDetails(fbb, 1, static_cast<uint32_t>(mem_offset[i]),
                                              static_cast<uint32_t>(mem_offset[i] >> 32));
        member = fb::CreateTensorDirect(fbb, static_cast<fb::ScalarType>(to_scalar(v.dtype)), 0, &sizes, &dim_order,
                                        false, data_buffer_idx[i], alloc, 0,
                                        v.dynamic ? fb::TensorShapeDynamism::DYNAMIC_BOUND
                                                  : fb::TensorShapeDynamism::STATIC)
                     .Union();
        break;
      }
    }
    evs.push_back(fb::CreateEValue(fbb, tag, member));
  }

  std::vector<flatbuffers::Offset<fb::Instruction>> instrs_fb;
  for (const Instr& in : instrs) {
    if (in.kernel)
      instrs_fb.push_back(fb::CreateInstruction(fbb, fb::InstructionArguments::KernelCall,
                                                fb::CreateKernelCallDirect(fbb, in.index, &in.args).Union()));
    else
      instrs_fb.push_back(fb::CreateInstruction(fbb, fb::InstructionArguments::DelegateCall,
                                                fb::CreateDelegateCallDirect(fbb, in.index, &in.args).Union()));
  }
  const std::vector<int32_t> empty_ids;
  std::vector<flatbuffers::Offset<fb::Chain>> chains = {
      fb::CreateChainDirect(fbb, &empty_ids, &empty_ids, &instrs_fb, nullptr)};
  std::vector<flatbuffers::Offset<fb::Operator>> ops;
  for (const auto& [name, overload] : operators)
    ops.push_back(fb::CreateOperatorDirect(fbb, name.c_str(), overload.c_str()));
  std::vector<flatbuffers::Offset<fb::BackendDelegate>> dels;
  for (size_t i = 0; i < delegates.size(); ++i) {
    const std::vector<flatbuffers::Offset<fb::CompileSpec>> specs;
    const auto ref = fb::CreateBackendDelegateDataReference(
        fbb, opt.delegate_in_segment ? fb::DataLocation::SEGMENT : fb::DataLocation::INLINE, delegate_ref[i]);
    dels.push_back(fb::CreateBackendDelegateDirect(fbb, "VulkanBackend", ref, &specs));
  }
  const std::vector<int64_t> buffer_sizes = {0, static_cast<int64_t>(arena)};
  const std::string inp = "[1, {\"type\": \"builtins.tuple\", \"context\": \"null\", \"children_spec\": [" +
                          tuple_of(inputs.size()) +
                          R"(, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])";
  const std::string outp = "[1, " + (outputs.size() == 1 ? leaf() : tuple_of(outputs.size())) + "]";
  const auto meta = fb::CreateContainerMetadataDirect(fbb, inp.c_str(), outp.c_str());
  std::vector<flatbuffers::Offset<fb::ExecutionPlan>> plans = {fb::CreateExecutionPlanDirect(
      fbb, "forward", meta, &evs, &inputs, &outputs, &chains, &ops, &dels, &buffer_sizes, nullptr)};

  std::vector<flatbuffers::Offset<fb::BackendDelegateInlineData>> inline_fb;
  for (const auto* blob : inline_blobs) {
    fbb.ForceVectorAlignment(blob->size(), 1, 16);  // schema: data (force_align: 16)
    const auto data = fbb.CreateVector(blob->data(), blob->size());
    inline_fb.push_back(fb::CreateBackendDelegateInlineData(fbb, data));
  }
  std::vector<flatbuffers::Offset<fb::DataSegment>> segs_fb;
  for (size_t i = 0; i < segments.size(); ++i)
    segs_fb.push_back(fb::CreateDataSegment(fbb, seg_offset[i], segments[i]->size()));
  const auto const_seg = fb::CreateSubsegmentOffsetsDirect(fbb, 0, &const_offsets);
  std::vector<flatbuffers::Offset<fb::NamedData>> named_fb;
  for (const auto& [key, seg] : named_entries) named_fb.push_back(fb::CreateNamedDataDirect(fbb, key.c_str(), seg));
  const std::vector<flatbuffers::Offset<fb::Buffer>> constant_buffer;
  std::vector<flatbuffers::Offset<fb::SubsegmentOffsets>> mut_fb;
  if (mut_offsets.size() > 1) mut_fb.push_back(fb::CreateSubsegmentOffsetsDirect(fbb, mut_segment, &mut_offsets));
  const auto root = fb::CreateProgramDirect(fbb, 0, &plans, &constant_buffer, &inline_fb, &segs_fb, const_seg,
                                            mut_fb.empty() ? nullptr : &mut_fb, named_fb.empty() ? nullptr : &named_fb);
  fb::FinishProgramBuffer(fbb, root);

  // Splice the 32-byte eh00 header after byte 8 and shift the root offset by its length.
  const uint8_t* fbp = fbb.GetBufferPointer();
  const size_t fb_size = fbb.GetSize();
  constexpr uint32_t kHeaderLen = 32;
  const uint64_t program_size = fb_size + kHeaderLen;
  const uint64_t seg_base = align_up(program_size, 128);
  const uint64_t seg_data_size = seg_end;
  std::vector<uint8_t> out;
  out.reserve(seg_base + seg_data_size);
  out.insert(out.end(), fbp, fbp + 8);
  uint32_t root_off;
  std::memcpy(&root_off, out.data(), 4);
  root_off += kHeaderLen;
  std::memcpy(out.data(), &root_off, 4);
  uint8_t hdr[kHeaderLen] = {};
  std::memcpy(hdr, "eh00", 4);
  std::memcpy(hdr + 4, &kHeaderLen, 4);
  std::memcpy(hdr + 8, &program_size, 8);
  std::memcpy(hdr + 16, &seg_base, 8);
  std::memcpy(hdr + 24, &seg_data_size, 8);
  out.insert(out.end(), hdr, hdr + kHeaderLen);
  out.insert(out.end(), fbp + 8, fbp + fb_size);
  out.resize(seg_base, 0);
  for (size_t i = 0; i < segments.size(); ++i) {
    out.resize(seg_base + seg_offset[i], 0);
    out.insert(out.end(), segments[i]->begin(), segments[i]->end());
  }
  return out;
}

}  // namespace etwebgpu
