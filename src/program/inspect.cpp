// include/etwebgpu/inspect.h: format's describe over a decoded program, and the program merge
// (which checks every operator against the registry) without building anything on the GPU.
#include "etwebgpu/inspect.h"

#include <algorithm>

#include "format/describe.h"
#include "format/ir.h"
#include "graph/op_registry.h"
#include "program/program_graph.h"

namespace etwebgpu {

namespace {
// "src/ops/<family>/x.cpp" -> "<family>": the registering file's folder.
std::string family_of(const std::string& where) {
  auto p = where.rfind("src/ops/");
  if (p == std::string::npos) return "?";
  p += 8;
  return where.substr(p, where.find('/', p) - p);
}
}  // namespace

ProgramReport inspect(std::vector<uint8_t> pte, const std::string& method) {
  auto program = format::read_program(std::make_shared<const format::Bytes>(std::move(pte)));
  ProgramReport r;
  r.description = format::describe_program(program);
  r.method = method;
  auto merged = graph::merge_program(program, program.plan(method));
  r.gpu_ops = merged.ir.chain.size();
  r.instructions = std::move(merged.instructions);
  r.unsupported = std::move(merged.unsupported);
  return r;
}

ProgramReport inspect_file(const std::string& path, const std::string& method) {
  return inspect(format::read_file(path), method);
}

std::string ProgramReport::text() const {
  std::string s = description;
  s += "\nexecution of '" + method + "' (one GPU graph of " + std::to_string(gpu_ops) + " ops):\n";
  for (size_t k = 0; k < instructions.size(); ++k) {
    const auto& i = instructions[k];
    std::string kind = i.kind;
    kind.resize(std::max<size_t>(kind.size(), 12), ' ');
    s += "  [" + std::to_string(k) + "] " + kind + " " + i.what + (i.supported ? "" : "   <- NOT SUPPORTED") + "\n";
  }
  if (unsupported.empty()) {
    s += "\nall operators supported\n";
  } else {
    s += "\nmissing operators (" + std::to_string(unsupported.size()) + "):\n";
    for (const auto& m : unsupported) s += "  " + m + "\n";
  }
  return s;
}

std::vector<OperatorInfo> supported_operators() {
  const auto& reg = graph::OpRegistry::global();
  std::vector<OperatorInfo> ops;
  for (const auto& name : reg.names()) ops.push_back({name, family_of(reg.where(name)), graph::kernel_call_names(name)});
  return ops;
}

}  // namespace etwebgpu
