// Maps VkGraph operator names to builders. Each op family registers its names from a static
// initialiser (ETW_REGISTER_OP); a name registered twice aborts at startup with both places.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace etwebgpu::graph {

using OpBuilder = void (*)(OpContext&);

class OpRegistry {
 public:
  static OpRegistry& global();
  // Throws Error(Internal) when `name` is already registered.
  void add(const std::string& name, OpBuilder fn, const char* where);
  const OpBuilder* find(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }
  std::vector<std::string> names() const;
  // The source file that registered `name` ("" when unknown).
  std::string where(const std::string& name) const;
  // Every op name of `ir` the registry lacks, sorted and unique.
  std::vector<std::string> missing(const format::VkGraphIR& ir) const;

 private:
  struct Entry { OpBuilder fn; std::string where; };
  std::map<std::string, Entry> ops_;
};

struct OpRegistration {
  OpRegistration(const char* name, OpBuilder fn, const char* where);
};

#define ETW_CONCAT2(a, b) a##b
#define ETW_CONCAT(a, b) ETW_CONCAT2(a, b)
#define ETW_REGISTER_OP(name, fn) \
  static ::etwebgpu::graph::OpRegistration ETW_CONCAT(etw_op_reg_, __COUNTER__)(name, fn, __FILE__)

}  // namespace etwebgpu::graph
