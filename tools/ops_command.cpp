// `etwebgpu ops`: every operator the registry holds, one a line, in both spellings: the VkGraph
// name and the out-variant KernelCall name(s) map_kernel_call maps onto it. `--markdown` prints
// the table docs/OPS.md embeds (scripts/ops_table.sh regenerates and checks it).
#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "graph/op_registry.h"
#include "program/program_graph.h"
#include "tools/commands.h"

namespace {

// "src/ops/<family>/x.cpp" -> "<family>"; the registering file's folder under src/ops.
std::string family_of(const std::string& where) {
  auto p = where.rfind("src/ops/");
  if (p == std::string::npos) return "?";
  p += 8;
  return where.substr(p, where.find('/', p) - p);
}

}  // namespace

int cmd_ops(bool markdown) {
  const auto& reg = etwebgpu::graph::OpRegistry::global();
  std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> rows;  // family, op, kernels
  for (const auto& op : reg.names()) rows.emplace_back(family_of(reg.where(op)), op, etwebgpu::graph::kernel_call_names(op));
  if (!markdown) {
    for (const auto& [family, op, kernels] : rows) {
      std::printf("%s", op.c_str());
      for (const auto& k : kernels) std::printf("  %s", k.c_str());
      std::printf("\n");
    }
    return 0;
  }
  std::sort(rows.begin(), rows.end());
  std::printf("| family | operator (VkGraph name) | KernelCall name (out variant) |\n|---|---|---|\n");
  for (const auto& [family, op, kernels] : rows) {
    std::string ks;
    for (const auto& k : kernels) ks += (ks.empty() ? "`" : ", `") + k + "`";
    std::printf("| %s | `%s` | %s |\n", family.c_str(), op.c_str(), ks.empty() ? "—" : ks.c_str());
  }
  std::printf("\n%zu operators.\n", rows.size());
  return 0;
}
