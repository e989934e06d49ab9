// The load rewrite that makes etwebgpu.conv_channels_last calls (conv_channels_last.h).
#include <algorithm>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"
#include "graph/layout_trace.h"
#include "graph/rewrite_pipeline.h"
#include "ops/conv/conv_channels_last.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkValueKind;

// Layout calls followed from the conv's output before giving up (a view or two, then the permute).
constexpr size_t kMaxLayoutCalls = 4;

// Whether `src` (flat indices into the conv's [B, C, H, W] output, in the order of the layout
// chain's result) walks that output in N, H, W, C order.
bool channels_last_order(const std::vector<int64_t>& src, int64_t B, int64_t C, int64_t HW) {
  if (static_cast<int64_t>(src.size()) != B * C * HW) return false;
  size_t j = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t p = 0; p < HW; ++p)
      for (int64_t c = 0; c < C; ++c)
        if (src[j++] != (b * C + c) * HW + p) return false;
  return true;
}

size_t conv_channels_last(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  if (!g.options().static_shapes) return 0;
  int32_t next_mem = 0;
  for (const auto& v : ir.values)
    if (v.kind == VkValueKind::Tensor) next_mem = std::max(next_mem, v.tensor.mem_obj_id + 1);
  std::vector<bool> removed(ir.chain.size(), false);
  size_t rewritten = 0;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    auto& conv = ir.chain[i];
    // Its own nine arguments and the output: no prologue, no epilogue.
    if (conv.name != "aten.convolution.default" || conv.args.size() != 10) continue;
    const auto& tr = ir.values[conv.args[6]];
    if (tr.kind != VkValueKind::Bool || tr.bool_val) continue;
    const int32_t out = conv.args.back();
    if (!graph::float_tensor(ir, out)) continue;
    const auto& od = ir.values[out].tensor.dims;
    if (od.size() != 3 && od.size() != 4) continue;
    const int64_t B = od[0], C = od[1], H = od.size() == 4 ? od[2] : 1, W = od.back();
    std::vector<const format::VkOpCall*> calls;
    std::vector<size_t> at;
    int32_t v = out;
    size_t from = i;
    int32_t result = -1;
    while (calls.size() < kMaxLayoutCalls) {
      const size_t r = ix.sole_reader(v, from);
      if (r == graph::UseDef::npos || !graph::is_traceable_layout(ir, ir.chain[r]) || ir.chain[r].args.front() != v) break;
      calls.push_back(&ir.chain[r]);
      at.push_back(r);
      v = ir.chain[r].args.back();
      from = r;
      if (!graph::float_tensor(ir, v) || ir.values[v].tensor.dtype != ir.values[out].tensor.dtype) break;
      const auto& fd = ir.values[v].tensor.dims;
      const bool shape_ok = fd == std::vector<int64_t>{B, H * W, C} ||
                            (od.size() == 4 && fd == std::vector<int64_t>{B, H, W, C});
      if (!shape_ok) continue;
      auto src = graph::trace_layouts(ir, out, calls);
      if (src && channels_last_order(*src, B, C, H * W)) result = v;
      break;
    }
    if (result < 0 || ix.producer(result) != at.back()) continue;
    conv.name = kConvChannelsLast;
    conv.args.back() = result;
    // Written at the conv's place now, before the calls it replaces ran: storage of its own, so
    // no tensor the delegate packed with it is overwritten in between.
    if (ir.values[result].tensor.mem_obj_id >= 0) ir.values[result].tensor.mem_obj_id = next_mem++;
    for (size_t r : at) removed[r] = true;
    ++rewritten;
  }
  if (rewritten) graph::drop_calls(ir, removed);
  return rewritten;
}

ETW_REGISTER_LOAD_REWRITE(conv_channels_last, Patterns);

}  // namespace
}  // namespace etwebgpu::ops
