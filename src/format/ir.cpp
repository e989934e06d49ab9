// Name helpers for the IR enums and Program::plan.
#include <string>

#include "etwebgpu/error.h"
#include "format/escape.h"
#include "format/ir.h"

namespace etwebgpu::format {

const char* vk_dtype_name(VkDType t) {
  switch (t) {
    case VkDType::Bool: return "bool";
    case VkDType::UInt8: return "u8";
    case VkDType::Int8: return "i8";
    case VkDType::Int32: return "i32";
    case VkDType::Float16: return "f16";
    case VkDType::Float32: return "f32";
    case VkDType::Float64: return "f64";
    case VkDType::Int64: return "i64";
    case VkDType::Unset: return "unset";
  }
  return "unknown";
}

size_t vk_dtype_size(VkDType t) {
  switch (t) {
    case VkDType::Bool: case VkDType::UInt8: case VkDType::Int8: return 1;
    case VkDType::Float16: return 2;
    case VkDType::Int32: case VkDType::Float32: return 4;
    case VkDType::Float64: case VkDType::Int64: return 8;
    case VkDType::Unset: break;
  }
  throw Error(ErrorKind::Format, "VkDataType " + std::to_string(static_cast<int>(t)) + " has no element size");
}

const char* vk_value_kind_name(VkValueKind k) {
  switch (k) {
    case VkValueKind::Null: return "Null";
    case VkValueKind::Int: return "Int";
    case VkValueKind::Double: return "Double";
    case VkValueKind::Bool: return "Bool";
    case VkValueKind::Tensor: return "Tensor";
    case VkValueKind::IntList: return "IntList";
    case VkValueKind::DoubleList: return "DoubleList";
    case VkValueKind::BoolList: return "BoolList";
    case VkValueKind::ValueList: return "ValueList";
    case VkValueKind::String: return "String";
    case VkValueKind::SymInt: return "SymInt";
    case VkValueKind::Expr: return "Expr";
  }
  return "unknown";
}

const char* scalar_type_name(ScalarType t) {
  switch (static_cast<int>(t)) {
    case 0: return "BYTE";
    case 1: return "CHAR";
    case 2: return "SHORT";
    case 3: return "INT";
    case 4: return "LONG";
    case 5: return "HALF";
    case 6: return "FLOAT";
    case 7: return "DOUBLE";
    case 11: return "BOOL";
    case 12: return "QINT8";
    case 13: return "QUINT8";
    case 14: return "QINT32";
    case 15: return "BFLOAT16";
    case 16: return "QUINT4X2";
    case 17: return "QUINT2X4";
    case 22: return "BITS16";
    case 23: return "FLOAT8E5M2";
    case 24: return "FLOAT8E4M3FN";
    case 25: return "FLOAT8E5M2FNUZ";
    case 26: return "FLOAT8E4M3FNUZ";
    case 27: return "UINT16";
    case 28: return "UINT32";
    case 29: return "UINT64";
  }
  return "UNKNOWN";
}

size_t scalar_type_size(ScalarType t) {
  switch (static_cast<int>(t)) {
    case 0: case 1: case 11: case 12: case 13: case 23: case 24: case 25: case 26: return 1;
    case 2: case 5: case 15: case 22: case 27: return 2;
    case 3: case 6: case 14: case 28: return 4;
    case 4: case 7: case 29: return 8;
  }
  throw Error(ErrorKind::Unsupported, std::string("scalar type ") + scalar_type_name(t) + " (" +
                                          std::to_string(static_cast<int>(t)) + ") has no supported element size");
}

const char* evalue_kind_name(EValueKind k) {
  switch (k) {
    case EValueKind::None: return "None";
    case EValueKind::Null: return "Null";
    case EValueKind::Int: return "Int";
    case EValueKind::Bool: return "Bool";
    case EValueKind::Double: return "Double";
    case EValueKind::Tensor: return "Tensor";
    case EValueKind::String: return "String";
    case EValueKind::IntList: return "IntList";
    case EValueKind::DoubleList: return "DoubleList";
    case EValueKind::BoolList: return "BoolList";
    case EValueKind::TensorList: return "TensorList";
    case EValueKind::OptionalTensorList: return "OptionalTensorList";
  }
  return "unknown";
}

const ExecutionPlan& Program::plan(const std::string& name) const {
  std::string names;
  for (const auto& p : plans) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + ("'" + escape_untrusted(p.name) + "'");
  }
  throw Error(ErrorKind::InvalidArgument, "no execution plan named '" + escape_untrusted(name) +
                                              "' (program has: " + (names.empty() ? "none" : names) + ")");
}

}  // namespace etwebgpu::format
