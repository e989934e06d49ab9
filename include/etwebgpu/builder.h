// Writes .pte files laid out exactly as ExecuTorch's serializer does (see docs/FORMAT_NOTES in
// ../shared/spec/FORMAT.md): a Program flatbuffer with the eh00 extended header, 128-aligned
// segments, VulkanBackend delegate blobs (VH00 header + VK00 VkGraph), constants either in
// named-data segments (what current exports do) or in the VH00 raw-bytes region.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu {

// One VkGraph (one delegate). Ids returned are VkGraph value ids.
class GraphBuilder {
 public:
  using Id = int32_t;

  // Delegate input: appended to input_ids. `host_dtype` is the Program-side dtype of the EValue
  // (defaults to the same as `dtype`; e.g. Int64 host tokens feeding an Int32 VkTensor).
  // `dynamic` marks the Program EValue DYNAMIC_BOUND: `dims` are then upper bounds.
  Id input(DType dtype, std::vector<int64_t> dims, bool dynamic = false, int32_t mem_obj_id = -1,
           DType host_dtype = DType::Float32, bool host_dtype_set = false);
  // A non-constant tensor (intermediate or output); mem_obj_id < 0 means dedicated storage.
  Id tensor(DType dtype, std::vector<int64_t> dims, int32_t mem_obj_id = -1);
  // A constant tensor (float32/int32/int8/uint8/bool bytes, size must equal numel*elem size).
  Id constant(DType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes);
  Id constant_f32(std::vector<int64_t> dims, const std::vector<float>& v);
  Id constant_i32(std::vector<int64_t> dims, const std::vector<int32_t>& v);

  Id null();
  Id int_(int64_t v);
  Id dbl(double v);
  Id boolean(bool v);
  Id str(std::string s);
  Id int_list(std::vector<int64_t> v);
  Id double_list(std::vector<double> v);
  Id bool_list(std::vector<bool> v);
  Id value_list(std::vector<Id> ids);
  Id symint(int32_t initial = 0);

  // Appends an OperatorCall: `args` are schema arguments then the output id(s).
  void op(std::string name, std::vector<Id> args);
  // Marks a value as a delegate output (appended to output_ids).
  void output(Id id);

  enum class ConstantPlacement { NamedData, InlineBlob };
  struct Options {
    ConstantPlacement constants = ConstantPlacement::NamedData;
    bool delegate_in_segment = true;  // false: blob stored inline in backend_delegate_data
  };
  // A complete single-delegate program: plan "forward" = inputs -> DelegateCall -> outputs.
  std::vector<uint8_t> serialize(const Options& opt) const;
  std::vector<uint8_t> serialize() const { return serialize(Options{}); }

  // Just the delegate blob (VH00 + VkGraph + inline constants when InlineBlob), plus the
  // named-data entries it refers to (key -> bytes) when NamedData.
  struct Blob {
    std::vector<uint8_t> bytes;
    std::vector<std::pair<std::string, std::vector<uint8_t>>> named_data;
  };
  Blob serialize_blob(ConstantPlacement placement) const;

  // Introspection used by ProgramBuilder.
  struct IoTensor { Id id; DType dtype; DType host_dtype; std::vector<int64_t> dims; bool dynamic; };
  std::vector<IoTensor> inputs() const;
  std::vector<IoTensor> outputs() const;

  struct Impl;
  GraphBuilder();
  ~GraphBuilder();
  GraphBuilder(GraphBuilder&&) noexcept;
  GraphBuilder& operator=(GraphBuilder&&) noexcept;

 private:
  Impl* impl_;
};

// A whole program with several instructions: delegate calls and kernel calls (out variants)
// over Program EValues, for partly delegated programs. Ids are Program EValue ids.
class ProgramBuilder {
 public:
  using Id = int32_t;
  Id tensor(DType dtype, std::vector<int64_t> sizes, bool dynamic = false);  // memory-planned
  Id constant_tensor(DType dtype, std::vector<int64_t> sizes, std::vector<uint8_t> bytes);
  // A memory-planned tensor with initial contents (a mutable buffer such as a KV cache or a
  // counter): allocation_info plus data_buffer_idx into mutable_data_segments[0], as ExecuTorch
  // writes buffers mutated in place. `bytes` must be numel * element size.
  Id mutable_tensor(DType dtype, std::vector<int64_t> sizes, std::vector<uint8_t> bytes);
  Id null();
  Id int_(int64_t v);
  Id dbl(double v);
  Id boolean(bool v);
  Id str(std::string s);                     // gelu's approximate, div's rounding_mode
  Id int_list(std::vector<int64_t> values);  // creates the Int EValues it points at
  Id double_list(std::vector<double> v);
  Id bool_list(std::vector<bool> v);
  Id optional_tensor_list(std::vector<Id> ids);  // -1 = None
  Id tensor_list(std::vector<Id> ids);
  void input(Id id);
  void output(Id id);
  // KernelCall of operator `name` (e.g. "aten::mul") with `overload` (e.g. "Scalar_out");
  // `args` = schema args in order ending with out; the return entry (= out) is appended.
  // `outputs` > 1: the last `outputs` args are the out tensors; the return entry is a TensorList
  // of them.
  void kernel(std::string name, std::string overload, std::vector<Id> args, int outputs = 1);
  // One output with an explicit return entry, for in-place kernels whose schema has no out argument
  // (ExecuTorch writes `aten::copy_(self, src, non_blocking, ret)` with ret a separate EValue).
  void kernel_with_return(std::string name, std::string overload, std::vector<Id> args, Id ret);
  // DelegateCall: `ins` map to the graph's input_ids in order, `outs` to its output_ids.
  void delegate(const GraphBuilder& graph, std::vector<Id> ins, std::vector<Id> outs);
  std::vector<uint8_t> serialize(GraphBuilder::ConstantPlacement placement =
                                     GraphBuilder::ConstantPlacement::NamedData) const;
  // Same, also choosing inline delegate blobs (backend_delegate_data) instead of segments.
  std::vector<uint8_t> serialize(const GraphBuilder::Options& opt) const;

  struct Impl;
  ProgramBuilder();
  ~ProgramBuilder();
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

 private:
  Impl* impl_;
};

}  // namespace etwebgpu
