#include "graph/op_registry.h"

#include <cstdio>
#include <cstdlib>
#include <set>

namespace etwebgpu::graph {

OpRegistry& OpRegistry::global() {
  static OpRegistry r;
  return r;
}

void OpRegistry::add(const std::string& name, OpBuilder fn, const char* where) {
  auto [it, fresh] = ops_.emplace(name, Entry{fn, where});
  if (!fresh)
    throw Error(ErrorKind::Internal, "operator '" + name + "' registered twice: in " + it->second.where + " and in " +
                                         where);
}

const OpBuilder* OpRegistry::find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second.fn;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> v;
  for (auto& [k, e] : ops_) v.push_back(k);
  return v;
}

std::string OpRegistry::where(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? "" : it->second.where;
}

std::vector<std::string> OpRegistry::missing(const format::VkGraphIR& ir) const {
  std::set<std::string> m;
  for (auto& c : ir.chain)
    if (!has(c.name)) m.insert(c.name);
  return {m.begin(), m.end()};
}

OpRegistration::OpRegistration(const char* name, OpBuilder fn, const char* where) {
  try {
    OpRegistry::global().add(name, fn, where);
  } catch (const Error& e) {
    // A duplicate is a build mistake: stop at startup rather than route silently.
    std::fprintf(stderr, "etwebgpu: %s\n", e.what());
    std::abort();
  }
}

}  // namespace etwebgpu::graph
