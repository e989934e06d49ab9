// In-memory form of a decoded .pte Program and of VkGraph delegate blobs.
// The readers (pte_reader.cpp, vkgraph_reader.cpp) fill these after the flatbuffers
// Verifier has accepted the bytes; every schema default is applied here, so later
// layers never see an "absent" field. Byte spans point into Program::bytes, which
// the Program keeps alive.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace etwebgpu::format {

using Bytes = std::vector<uint8_t>;
using ByteSpan = std::span<const uint8_t>;

// ---------------------------------------------------------------- VkGraph
enum class VkDType : int8_t {
  Bool = 0, UInt8 = 1, Int8 = 2, Int32 = 3, Float16 = 4, Float32 = 5, Float64 = 6, Int64 = 7,
  Unset = 127,
};
const char* vk_dtype_name(VkDType t);
// Bytes per element; throws Error(Format) for Unset/unknown.
size_t vk_dtype_size(VkDType t);

struct VkTensorDesc {
  VkDType dtype = VkDType::Bool;   // schema default
  std::vector<int64_t> dims;       // upper bounds for dynamic shapes; empty = 0-dim (numel 1)
  int32_t constant_id = 0;         // >= 0: index into VkGraphIR::constants; < 0: not a constant
  int32_t mem_obj_id = 0;          // >= 0: shares storage with same id; < 0: dedicated
  bool is_constant() const { return constant_id >= 0; }
};

enum class VkValueKind : uint8_t {
  Null, Int, Double, Bool, Tensor, IntList, DoubleList, BoolList, ValueList, String, SymInt,
  Expr,  // made at load (graph/fusion.h), never read from a file
};
const char* vk_value_kind_name(VkValueKind k);

// An elementwise expression the load-time fusion builds (graph/fusion.h, graph/epilogue_fusion.h)
// and the fused kernels evaluate (ops/elementwise/fused_terms.h).
struct VkExprOperand {
  enum class Kind : uint8_t { Input, Term, Scalar };  // Scalar: a binary term's c[1]
  Kind kind = Kind::Scalar;
  uint32_t index = 0;  // Input: the call's k-th input; Term: an earlier term
};
struct VkExprTerm {
  bool binary = false;
  uint32_t op = 0;    // ops/elementwise/elementwise_ops.h: a UnaryOp or BinaryOp code
  VkExprOperand a, b;
  float c[4] = {0, 0, 0, 0};  // unary: f0, f1, f2, i0 (as a float); binary: alpha, scalar
  std::string label;          // the op's short name ("mul", "rsqrt") for kernel labels
  // A binary term that is a cat of a and b along dim `dim` of the output (the fused elementwise
  // kernel only): a below coordinate `at`, b from it on, each element exactly; op and c unused.
  struct Split {
    uint32_t dim = 0;
    int64_t at = 0;
  };
  std::optional<Split> split;
};
// How the fused elementwise kernel reads an input in place of layout copies the load-time fusion
// removed (a slice, select, permute, expand, reshape ... of it, or a chain of them): element
// (i_0, ..., i_{r-1}) of the value as read is element `offset + sum_d i_d * strides[d]` of the
// input as stored. Strides are 0 on expanded dims, negative on flipped ones.
struct VkExprView {
  int64_t offset = 0;
  std::vector<int64_t> dims;     // the value as read
  std::vector<int64_t> strides;  // one per dim, in elements of the stored input
  std::string label;             // the calls it replaces ("slice+unsqueeze"), for kernel labels
  // The view is part of a cat the kernel reads in place (Split terms): read at coordinates
  // [start, start + dims[dim]) of its dim `dim`, which spans `extent` in the cat, and outside
  // them not at all (the cat's other parts are there).
  struct Part {
    uint32_t dim = 0;
    int64_t start = 0, extent = 0;
  };
  std::optional<Part> part;
};
struct VkExpr {
  std::vector<VkExprTerm> terms;                 // in evaluation order; the last is the result
  std::vector<std::optional<VkExprView>> views;  // per input: read through this view (none: as stored)
  // A prologue: applied to the op's input as the op reads it (ops/conv/conv_prologue.h), not to
  // its output.
  bool on_input = false;
};

struct VkValue {
  VkValueKind kind = VkValueKind::Null;
  int64_t int_val = 0;             // Int, SymInt (initial value)
  double double_val = 0.0;         // Double
  bool bool_val = false;           // Bool
  VkTensorDesc tensor;             // Tensor
  std::vector<int64_t> ints;       // IntList (raw integers)
  std::vector<double> doubles;     // DoubleList
  std::vector<uint8_t> bools;      // BoolList (0/1)
  std::vector<int32_t> ids;        // ValueList (value ids, range-checked at decode)
  std::string str;                 // String
  std::shared_ptr<const VkExpr> expr;  // Expr
};

struct VkOpCall {
  uint32_t node_id = 0;
  std::string name;
  std::vector<int32_t> args;       // value ids, range-checked at decode; last is the output
};

struct VkConstant {
  ByteSpan data;                   // resolved bytes (inline region or named-data segment)
  std::string named_key;           // empty when inline
};

// A mutable buffer of the program (a KV cache): its storage persists from one run to the next and
// starts as `init` (the file's mutable data; empty = zeros).
struct VkState {
  int32_t value_id = -1;
  ByteSpan init;
};

struct VkGraphIR {
  std::string version;
  std::vector<VkValue> values;
  std::vector<VkOpCall> chain;
  std::vector<uint32_t> input_ids;
  std::vector<uint32_t> output_ids;
  std::vector<VkConstant> constants;
  std::vector<VkState> state;      // whole programs only
  // Bytes made at load (constants folded by graph::fold_constant_conversions) that entries of
  // `constants` point into; shared, so a copy of the IR keeps them alive.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> owned_bytes;
};

// ---------------------------------------------------------------- Program
enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7, Bool = 11,
};
const char* scalar_type_name(ScalarType t);
// Bytes per element; throws Error(Unsupported) for types we cannot hold.
size_t scalar_type_size(ScalarType t);

enum class ShapeDynamism : int8_t { Static = 0, DynamicBound = 1, DynamicUnbound = 2 };

struct TensorInfo {
  ScalarType scalar_type = ScalarType::Byte;
  std::vector<int64_t> sizes;      // upper bounds when dynamism != Static
  std::vector<uint8_t> dim_order;
  ShapeDynamism dynamism = ShapeDynamism::Static;
  uint32_t data_buffer_idx = 0;
  bool has_allocation = false;
  uint32_t memory_id = 0;          // 1-based arena id when has_allocation
  uint64_t memory_offset = 0;
  ByteSpan constant_data;          // non-empty for constants (data_buffer_idx > 0, no allocation)
  bool is_constant() const { return !has_allocation && data_buffer_idx > 0; }
};

enum class EValueKind : uint8_t {
  None, Null, Int, Bool, Double, Tensor, String, IntList, DoubleList, BoolList, TensorList,
  OptionalTensorList
};
const char* evalue_kind_name(EValueKind k);

struct EValue {
  EValueKind kind = EValueKind::None;
  int64_t int_val = 0;
  bool bool_val = false;
  double double_val = 0.0;
  std::string str;
  TensorInfo tensor;
  std::vector<int64_t> items;      // IntList / TensorList / OptionalTensorList: EValue ids (-1 = None)
  std::vector<double> doubles;     // DoubleList
  std::vector<uint8_t> bools;      // BoolList
};

enum class InstrKind : uint8_t { KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall };

struct Instruction {
  InstrKind kind = InstrKind::KernelCall;
  int32_t index = 0;               // KernelCall: op_index; DelegateCall: delegate_index
  std::vector<int32_t> args;       // KernelCall / DelegateCall
  int32_t move_from = 0, move_to = 0;      // MoveCall
  int32_t cond_value = 0, destination = 0; // JumpFalseCall
  int32_t free_value = 0;                  // FreeCall
};

struct OperatorRef {
  std::string name;                // e.g. "aten::mul"
  std::string overload;            // e.g. "Scalar_out", may be empty
  std::string key() const { return overload.empty() ? name : name + "." + overload; }
};

struct Delegate {
  std::string id;                  // "VulkanBackend"
  ByteSpan blob;                   // resolved processed data (inline or segment)
  std::map<std::string, Bytes> compile_specs;
};

struct ExecutionPlan {
  std::string name;
  std::vector<EValue> values;
  std::vector<int32_t> inputs, outputs;
  std::vector<std::vector<Instruction>> chains;
  std::vector<OperatorRef> operators;
  std::vector<Delegate> delegates;
  std::vector<int64_t> non_const_buffer_sizes;
};

struct Program {
  std::shared_ptr<const Bytes> bytes;                 // owns every ByteSpan below
  uint32_t version = 0;
  std::vector<ExecutionPlan> plans;
  std::map<std::string, ByteSpan> named_data;         // key -> segment bytes
  const ExecutionPlan& plan(const std::string& name) const;  // throws Error(InvalidArgument)
};

// Parses and verifies a whole .pte. Every offset/size is bounds-checked; failures throw
// Error(Format) naming what is wrong. Delegate blobs are located but not decoded.
Program read_program(std::shared_ptr<const Bytes> bytes);
// A whole file's bytes (a .pte to pass to read_program); throws Error(Io) when it cannot be read.
Bytes read_file(const std::string& path);

// Decodes a VH00 delegate blob (header + verified VK00 flatbuffer) and resolves constants
// through the inline region or `program.named_data`. Value ids in ops/lists/io are range-checked;
// tensor dims must be >= 0 and their byte size must not overflow.
VkGraphIR read_vkgraph(ByteSpan blob, const Program& program);

}  // namespace etwebgpu::format
