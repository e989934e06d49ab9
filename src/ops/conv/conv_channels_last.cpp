// The load rewrite that makes etwebgpu.conv_channels_last calls (conv_channels_last.h).
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"
#include "graph/layout_trace.h"
#include "graph/rewrite_pipeline.h"
#include "ops/conv/conv_call.h"
#include "ops/conv/conv_channels_last.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

// Layout calls followed from the conv's input or output before giving up (a view or two and the
// permute).
constexpr size_t kMaxLayoutCalls = 4;

// Whether `src` (flat indices, into a [B, C, HW] tensor when `from_nchw`, else into a [B, HW, C]
// one, of each element of the other order's tensor in its row-major order) maps one order onto
// the other.
bool reorders(const std::vector<int64_t>& src, int64_t B, int64_t C, int64_t HW, bool from_nchw) {
  if (static_cast<int64_t>(src.size()) != B * C * HW) return false;
  size_t j = 0;
  if (from_nchw) {  // the result is [B, HW, C]
    for (int64_t b = 0; b < B; ++b)
      for (int64_t p = 0; p < HW; ++p)
        for (int64_t c = 0; c < C; ++c)
          if (src[j++] != (b * C + c) * HW + p) return false;
  } else {  // the result is [B, C, HW]
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t p = 0; p < HW; ++p)
          if (src[j++] != (b * HW + p) * C + c) return false;
  }
  return true;
}

bool same_float(const format::VkGraphIR& ir, int32_t a, int32_t b) {
  return graph::float_tensor(ir, a) && ir.values[a].tensor.dtype == ir.values[b].tensor.dtype;
}

// The tensor the conv's output `out` [B, C, H, W] becomes through layout calls read one after
// another, each output only by the next, when it holds N, H, W, C as [B, H, W, C] or [B, H*W, C];
// `at` gets those calls' positions. -1 when there is none.
int32_t output_as_channels_last(const format::VkGraphIR& ir, const graph::UseDef& ix, size_t conv, int32_t out,
                                std::vector<size_t>& at) {
  const auto& od = ir.values[out].tensor.dims;
  const int64_t B = od[0], C = od[1], H = od.size() == 4 ? od[2] : 1, W = od.back();
  std::vector<const format::VkOpCall*> calls;
  int32_t v = out;
  size_t from = conv;
  while (calls.size() < kMaxLayoutCalls) {
    const size_t r = ix.sole_reader(v, from);
    if (r == graph::UseDef::npos || !graph::is_traceable_layout(ir, ir.chain[r]) || ir.chain[r].args.front() != v) break;
    calls.push_back(&ir.chain[r]);
    at.push_back(r);
    v = ir.chain[r].args.back();
    from = r;
    if (!same_float(ir, v, out)) break;
    const auto& fd = ir.values[v].tensor.dims;
    if (fd != std::vector<int64_t>{B, H * W, C} && (od.size() != 4 || fd != std::vector<int64_t>{B, H, W, C})) continue;
    auto src = graph::trace_layouts(ir, out, calls);
    return src && reorders(*src, B, C, H * W, true) && ix.producer(v) == r ? v : -1;
  }
  return -1;
}

// The tensor [B, H, W, C] (1-D: [B, L, C]) whose layout calls, each read only by the next and the
// last only by the conv, make the conv's input `x` [B, C, H, W]; `at` gets their positions. -1
// when there is none.
int32_t input_as_channels_last(const format::VkGraphIR& ir, const graph::UseDef& ix, size_t conv, int32_t x,
                               std::vector<size_t>& at) {
  const auto& xd = ir.values[x].tensor.dims;
  const int64_t B = xd[0], C = xd[1], H = xd.size() == 4 ? xd[2] : 1, W = xd.back();
  const std::vector<int64_t> want = xd.size() == 4 ? std::vector<int64_t>{B, H, W, C} : std::vector<int64_t>{B, W, C};
  std::vector<size_t> chain;  // from the conv backwards
  int32_t v = x;
  size_t reader = conv;
  while (chain.size() < kMaxLayoutCalls) {
    const size_t p = ix.producer(v);
    if (p == graph::UseDef::npos || ix.sole_reader(v, p) != reader || !graph::is_traceable_layout(ir, ir.chain[p])) break;
    chain.push_back(p);
    v = ir.chain[p].args.front();
    reader = p;
    if (!same_float(ir, v, x) || ir.values[v].tensor.dims != want) continue;
    std::vector<const format::VkOpCall*> calls;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) calls.push_back(&ir.chain[*it]);
    auto src = graph::trace_layouts(ir, v, calls);
    if (!src || !reorders(*src, B, C, H * W, false)) return -1;
    at.assign(chain.rbegin(), chain.rend());
    return v;
  }
  return -1;
}

size_t conv_channels_last(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  if (!g.options().static_shapes) return 0;
  int32_t next_mem = graph::unused_memory_object(ir);
  std::vector<bool> removed(ir.chain.size(), false);
  size_t rewritten = 0;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    auto& conv = ir.chain[i];
    // An aten.convolution, not transposed, without a prologue or an epilogue.
    const auto cc = read_conv(ir, conv);
    if (!cc || cc->kind != ConvCall::Kind::Conv || cc->pro >= 0 || cc->ep >= 0) continue;
    const int32_t x = conv.args[0], out = conv.args.back();
    if (!graph::float_tensor(ir, out) || !graph::float_tensor(ir, x)) continue;
    const size_t rank = ir.values[out].tensor.dims.size();
    if ((rank != 3 && rank != 4) || ir.values[x].tensor.dims.size() != rank) continue;
    std::vector<size_t> out_calls, in_calls;
    const int32_t result = output_as_channels_last(ir, ix, i, out, out_calls);
    int32_t src = input_as_channels_last(ir, ix, i, x, in_calls);
    // The input is read at the conv now, not at the first layout call: nothing in between may
    // write it, and it may not share the output's storage.
    const int32_t written = result >= 0 ? result : out;
    if (src >= 0 && (ix.share_memory(src, written) || !ix.unchanged_between(src, in_calls.front(), i, in_calls))) src = -1;
    if (result < 0 && src < 0) continue;
    int64_t layout = 0;
    if (src >= 0) {
      layout |= kInputChannelsLast;
      conv.args[0] = src;
      for (size_t r : in_calls) removed[r] = true;
    }
    if (result >= 0) {
      layout |= kOutputChannelsLast;
      conv.args.back() = result;
      graph::own_storage(ir, result, next_mem);  // written at the conv's place now
      for (size_t r : out_calls) removed[r] = true;
    }
    conv.name = kConvChannelsLast;
    conv.args.insert(conv.args.end() - 1, graph::add_int(ir, layout));
    ++rewritten;
  }
  if (rewritten) graph::drop_calls(ir, removed);
  return rewritten;
}

ETW_REGISTER_LOAD_REWRITE(conv_channels_last, Patterns);

}  // namespace
}  // namespace etwebgpu::ops
