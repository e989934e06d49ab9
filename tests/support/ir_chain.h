// Hand-made VkGraphIR chains: values appended one by one, op calls in chain order (last argument
// = output). The load-rewrite tests run them without a GPU (tests/graph); run_ir
// (op_harness.h) builds one on the device, for values no program can spell (fused expressions).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "format/ir.h"

namespace etwebgpu::testing {

struct IrChain {
  format::VkGraphIR ir;
  int32_t add(format::VkValue v) {
    ir.values.push_back(std::move(v));
    return static_cast<int32_t>(ir.values.size() - 1);
  }
  int32_t tensor(std::vector<int64_t> dims, int32_t mem_obj = -1, format::VkDType dt = format::VkDType::Float32) {
    format::VkValue v;
    v.kind = format::VkValueKind::Tensor;
    v.tensor.dtype = dt;
    v.tensor.dims = std::move(dims);
    v.tensor.constant_id = -1;
    v.tensor.mem_obj_id = mem_obj;
    return add(v);
  }
  int32_t input(std::vector<int64_t> dims) {
    int32_t id = tensor(std::move(dims));
    ir.input_ids.push_back(static_cast<uint32_t>(id));
    return id;
  }
  int32_t output(std::vector<int64_t> dims) {
    int32_t id = tensor(std::move(dims));
    ir.output_ids.push_back(static_cast<uint32_t>(id));
    return id;
  }
  // A constant tensor holding `bytes` (owned by the IR) of `dt`.
  int32_t constant(std::vector<int64_t> dims, std::vector<uint8_t> bytes, format::VkDType dt = format::VkDType::Float32) {
    auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    ir.constants.push_back(format::VkConstant{format::ByteSpan(owned->data(), owned->size()), {}});
    ir.owned_bytes.push_back(owned);
    int32_t id = tensor(std::move(dims), -1, dt);
    ir.values[id].tensor.constant_id = static_cast<int32_t>(ir.constants.size() - 1);
    return id;
  }
  // A fused expression (what only the load-time fusion makes: no program can spell one).
  int32_t expr(format::VkExpr e) {
    format::VkValue v;
    v.kind = format::VkValueKind::Expr;
    v.expr = std::make_shared<const format::VkExpr>(std::move(e));
    return add(v);
  }
  int32_t null() { return add(format::VkValue{}); }
  int32_t list(std::vector<int32_t> ids) {
    format::VkValue v;
    v.kind = format::VkValueKind::ValueList;
    v.ids = std::move(ids);
    return add(v);
  }
  int32_t ints(std::vector<int64_t> xs) {
    format::VkValue v;
    v.kind = format::VkValueKind::IntList;
    v.ints = std::move(xs);
    return add(v);
  }
  int32_t boolean(bool b) {
    format::VkValue v;
    v.kind = format::VkValueKind::Bool;
    v.bool_val = b;
    return add(v);
  }
  void op(const std::string& name, std::vector<int32_t> args) {
    format::VkOpCall c;
    c.name = name;
    c.args = std::move(args);
    c.node_id = static_cast<uint32_t>(ir.chain.size());
    ir.chain.push_back(std::move(c));
  }
  std::vector<std::string> ops() const {
    std::vector<std::string> r;
    for (auto& c : ir.chain) r.push_back(c.name);
    return r;
  }
};

}  // namespace etwebgpu::testing
