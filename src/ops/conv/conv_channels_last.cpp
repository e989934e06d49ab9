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
// permute; MobileViT's unfold as timm writes it: three reshapes and two transposes).
constexpr size_t kMaxLayoutCalls = 6;

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

// Another order of the conv's output or input, reached through layout calls: the tensor at the
// other end (-1: none), the calls' positions, and whether it is channels-last or, else, the map
// (an element per element of the conv's N, C, H, W side, conv_channels_last.h).
struct Reorder {
  int32_t tensor = -1;
  std::vector<size_t> calls;
  bool channels_last = false;
  std::vector<int64_t> map;
};

// A mapped order costs a table of 4 bytes an element and a load per access: taken only where the
// calls copy (pure views are aliases already), up to this many elements.
constexpr int64_t kMaxMappedElements = int64_t{1} << 22;

bool copies(const format::VkGraphIR& ir, const std::vector<const format::VkOpCall*>& calls) {
  for (const auto* c : calls)
    if (!graph::is_contiguous_view(ir, *c)) return true;
  return false;
}

// The tensor the conv's output `out` [B, C, H, W] becomes through layout calls read one after
// another, each output only by the next: the first that holds it N, H, W, C as [B, H, W, C] or
// [B, H*W, C], else the last whose elements are the output's, each once, in another order (the
// map: where each output element goes).
Reorder output_reorder(const format::VkGraphIR& ir, const graph::UseDef& ix, size_t conv, int32_t out) {
  const auto& od = ir.values[out].tensor.dims;
  const int64_t B = od[0], C = od[1], H = od.size() == 4 ? od[2] : 1, W = od.back();
  Reorder best;
  std::vector<const format::VkOpCall*> calls;
  std::vector<size_t> at;
  int32_t v = out;
  size_t from = conv;
  while (calls.size() < kMaxLayoutCalls) {
    const size_t r = ix.sole_reader(v, from);
    if (r == graph::UseDef::npos || !graph::is_traceable_layout(ir, ir.chain[r]) || ir.chain[r].args.front() != v) break;
    calls.push_back(&ir.chain[r]);
    at.push_back(r);
    v = ir.chain[r].args.back();
    from = r;
    if (!same_float(ir, v, out) || ix.producer(v) != r) break;
    auto src = graph::trace_layouts(ir, out, calls);
    if (!src) break;
    const auto& fd = ir.values[v].tensor.dims;
    if ((fd == std::vector<int64_t>{B, H * W, C} || (od.size() == 4 && fd == std::vector<int64_t>{B, H, W, C})) &&
        reorders(*src, B, C, H * W, true))
      return Reorder{v, at, true, {}};
    // A permutation of the output's elements (each once) through calls that copy.
    const int64_t n = B * C * H * W;
    if (static_cast<int64_t>(src->size()) != n || n > kMaxMappedElements || !copies(ir, calls)) continue;
    std::vector<int64_t> place(static_cast<size_t>(n), -1);
    bool perm = true;
    for (size_t j = 0; j < src->size() && perm; ++j) {
      const int64_t e = (*src)[j];
      perm = e >= 0 && e < n && place[static_cast<size_t>(e)] < 0;
      if (perm) place[static_cast<size_t>(e)] = static_cast<int64_t>(j);
    }
    if (perm) best = Reorder{v, at, false, std::move(place)};
  }
  return best;
}

// The tensor whose layout calls, each read only by the next and the last only by the conv, make
// the conv's input `x` [B, C, H, W]: the first found backwards that holds it as [B, H, W, C] (1-D:
// [B, L, C]), else the furthest behind calls that copy (the map: where each of x's elements is
// read; up to kMaxMappedElements of each).
Reorder input_reorder(const format::VkGraphIR& ir, const graph::UseDef& ix, size_t conv, int32_t x) {
  const auto& xd = ir.values[x].tensor.dims;
  const int64_t B = xd[0], C = xd[1], H = xd.size() == 4 ? xd[2] : 1, W = xd.back();
  const std::vector<int64_t> want = xd.size() == 4 ? std::vector<int64_t>{B, H, W, C} : std::vector<int64_t>{B, W, C};
  Reorder best;
  std::vector<size_t> chain;  // from the conv backwards
  int32_t v = x;
  size_t reader = conv;
  while (chain.size() < kMaxLayoutCalls) {
    const size_t p = ix.producer(v);
    if (p == graph::UseDef::npos || ix.sole_reader(v, p) != reader || !graph::is_traceable_layout(ir, ir.chain[p])) break;
    chain.push_back(p);
    v = ir.chain[p].args.front();
    reader = p;
    if (!same_float(ir, v, x)) continue;
    std::vector<const format::VkOpCall*> calls;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) calls.push_back(&ir.chain[*it]);
    auto src = graph::trace_layouts(ir, v, calls);
    if (!src) break;
    std::vector<size_t> at(chain.rbegin(), chain.rend());
    if (ir.values[v].tensor.dims == want && reorders(*src, B, C, H * W, false)) return Reorder{v, at, true, {}};
    if (static_cast<int64_t>(src->size()) == B * C * H * W && numel(ir.values[v].tensor.dims) <= kMaxMappedElements &&
        copies(ir, calls))
      best = Reorder{v, at, false, std::move(*src)};
  }
  return best;
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
    const Reorder result = output_reorder(ir, ix, i, out);
    Reorder src = input_reorder(ir, ix, i, x);
    // The input is read at the conv now, not at the first layout call: nothing in between may
    // write it, and it may not share the output's storage.
    const int32_t written = result.tensor >= 0 ? result.tensor : out;
    if (src.tensor >= 0 && (ix.share_memory(src.tensor, written) || !ix.unchanged_between(src.tensor, src.calls.front(), i, src.calls)))
      src = Reorder{};
    if (result.tensor < 0 && src.tensor < 0) continue;
    int64_t layout = 0;
    std::vector<int32_t> extra;  // after the layout
    if (src.tensor >= 0) {
      layout |= src.channels_last ? kInputChannelsLast : kInputMapped;
      if (!src.channels_last) extra = {graph::add_int_list(ir, ir.values[x].tensor.dims), graph::add_i32_constant(ir, src.map)};
      conv.args[0] = src.tensor;
      for (size_t r : src.calls) removed[r] = true;
    }
    if (result.tensor >= 0) {
      layout |= result.channels_last ? kOutputChannelsLast : kOutputMapped;
      if (!result.channels_last) extra.push_back(graph::add_i32_constant(ir, result.map));
      conv.args.back() = result.tensor;
      graph::own_storage(ir, result.tensor, next_mem);  // written at the conv's place now
      for (size_t r : result.calls) removed[r] = true;
    }
    conv.name = kConvChannelsLast;
    conv.args.insert(conv.args.end() - 1, graph::add_int(ir, layout));
    conv.args.insert(conv.args.end() - 1, extra.begin(), extra.end());
    ++rewritten;
  }
  if (rewritten) graph::drop_calls(ir, removed);
  return rewritten;
}

ETW_REGISTER_LOAD_REWRITE(conv_channels_last, Patterns);

}  // namespace
}  // namespace etwebgpu::ops
