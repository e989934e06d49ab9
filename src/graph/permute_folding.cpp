#include "graph/permute_folding.h"

#include <set>
#include <vector>

#include "graph/fusion.h"

namespace etwebgpu::graph {

using format::VkValueKind;

namespace {

bool is_permute(const format::VkGraphIR& ir, const format::VkOpCall& c) {
  return (c.name == "aten.permute_copy.default" || c.name == "aten.permute.default") && c.args.size() == 3 &&
         ir.values[c.args[0]].kind == VkValueKind::Tensor && ir.values[c.args[1]].kind == VkValueKind::IntList &&
         ir.values[c.args[2]].kind == VkValueKind::Tensor;
}

// The permutation `dims` normalized to [0, rank), or empty when it is not one.
std::vector<int64_t> normalized(const std::vector<int64_t>& dims, size_t rank) {
  if (dims.size() != rank) return {};
  std::vector<int64_t> p;
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    int64_t k = d < 0 ? d + static_cast<int64_t>(rank) : d;
    if (k < 0 || k >= static_cast<int64_t>(rank) || !seen.insert(k).second) return {};
    p.push_back(k);
  }
  return p;
}

}  // namespace

size_t fold_inverse_permutes(format::VkGraphIR& ir, const UseDef& ix) {
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  int32_t null_id = -1;
  size_t folded = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& first = ir.chain[i];
    if (removed[i] || !is_permute(ir, first)) continue;
    const int32_t x = first.args[0], mid = first.args[2];
    const size_t j = ix.sole_reader(mid, i);
    if (j == UseDef::npos) continue;
    auto& second = ir.chain[j];
    if (!is_permute(ir, second) || second.args[0] != mid || second.args[2] == x) continue;
    const auto& xd = ir.values[x].tensor;
    const auto& yd = ir.values[second.args[2]].tensor;
    const size_t rank = xd.dims.size();
    auto p1 = normalized(ir.values[first.args[1]].ints, rank), p2 = normalized(ir.values[second.args[1]].ints, rank);
    if (p1.empty() || p2.empty() || xd.dtype != yd.dtype || xd.dims != yd.dims) continue;
    // mid[k] = x[p1[k]], y[k] = mid[p2[k]] = x[p1[p2[k]]]: the identity when p1[p2[k]] == k.
    bool identity = true;
    for (size_t k = 0; k < rank; ++k) identity = identity && p1[p2[k]] == static_cast<int64_t>(k);
    if (!identity) continue;
    if (!ix.unchanged_between(x, i, j)) continue;
    if (null_id < 0) {
      ir.values.push_back(format::VkValue{});  // kind Null: clone's memory_format
      null_id = static_cast<int32_t>(ir.values.size() - 1);
    }
    second.name = "aten.clone.default";
    second.args = {x, null_id, second.args[2]};
    removed[i] = true;
    ++folded;
  }
  if (folded) drop_calls(ir, removed);
  return folded;
}

}  // namespace etwebgpu::graph
