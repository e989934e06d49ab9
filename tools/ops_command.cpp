// `etwebgpu ops`: every supported operator, one a line, in both spellings: the VkGraph name and
// the out-variant KernelCall name(s) run as it. `--markdown` prints the table docs/OPS.md embeds
// (scripts/ops_table.sh regenerates and checks it).
#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "etwebgpu/inspect.h"
#include "tools/commands.h"

int cmd_ops(bool markdown) {
  std::vector<etwebgpu::OperatorInfo> ops = etwebgpu::supported_operators();
  if (!markdown) {
    for (const auto& op : ops) {
      std::printf("%s", op.name.c_str());
      for (const auto& k : op.kernel_calls) std::printf("  %s", k.c_str());
      std::printf("\n");
    }
    return 0;
  }
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return std::tie(a.family, a.name) < std::tie(b.family, b.name);
  });
  std::printf("| family | operator (VkGraph name) | KernelCall name (out variant) |\n|---|---|---|\n");
  for (const auto& op : ops) {
    std::string ks;
    for (const auto& k : op.kernel_calls) ks += (ks.empty() ? "`" : ", `") + k + "`";
    std::printf("| %s | `%s` | %s |\n", op.family.c_str(), op.name.c_str(), ks.empty() ? "—" : ks.c_str());
  }
  std::printf("\n%zu operators.\n", ops.size());
  return 0;
}
