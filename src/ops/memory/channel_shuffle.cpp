// etwebgpu.channel_shuffle [parts ValueList, outs ValueList] (graph/cat_folding.h): ShuffleNet's
// channel shuffle and the split after it in one dispatch, an invocation per element of the
// interleave (channel_shuffle.wgsl). Static shapes: the pieces' dims are fixed at load.
#include "graph/cat_folding.h"
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t C, R, total, pad;
};
static_assert(sizeof(Params) == 16);

void build_channel_shuffle(OpContext& oc) {
  Graph& g = oc.g;
  const std::vector<int32_t> parts = g.value_list(oc.arg(0)), outs = g.value_list(oc.out());
  if (parts.size() != 2)
    oc.fail(ErrorKind::Format, "a channel shuffle interleaves two parts, got " + std::to_string(parts.size()));
  if (outs.empty() || outs.size() > 2)
    oc.fail(ErrorKind::Format, "a channel shuffle writes one or two pieces, got " + std::to_string(outs.size()));
  for (int32_t t : parts) require_dtype(oc, t, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "each part");
  for (int32_t t : outs) require_dtype(oc, t, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "each piece");
  const std::vector<int64_t> pd = g.tensor(parts[0]).max_dims;
  if (pd.size() < 2 || g.tensor(parts[1]).max_dims != pd)
    oc.fail(ErrorKind::InvalidArgument, "the parts must share one shape [N, C, ...], got " + shape_str(pd) + " and " +
                                            shape_str(g.tensor(parts[1]).max_dims));
  std::vector<int64_t> whole = pd;
  whole[1] *= 2;
  std::vector<int64_t> channels;
  for (int32_t t : outs) {
    std::vector<int64_t> od = g.tensor(t).max_dims;
    if (od.size() != whole.size() || od[1] < 1)
      oc.fail(ErrorKind::InvalidArgument, "piece " + shape_str(od) + " is not a slice along dim 1 of " + shape_str(whole));
    channels.push_back(od[1]);
    od[1] = whole[1];
    if (od != whole)
      oc.fail(ErrorKind::InvalidArgument, "piece " + shape_str(g.tensor(t).max_dims) + " is not a slice along dim 1 of " +
                                              shape_str(whole));
  }
  if (channels.front() + (outs.size() == 2 ? channels.back() : 0) != whole[1])
    oc.fail(ErrorKind::InvalidArgument, "the pieces' channels sum to " +
                                            std::to_string(channels.front() + (outs.size() == 2 ? channels.back() : 0)) +
                                            ", the interleave of " + shape_str(pd) + " has " + std::to_string(whole[1]));
  Params p{};
  p.C = kernel::u32(pd[1], "channels");
  p.R = kernel::u32(numel(pd) / (pd[0] * pd[1]), "elements per channel");
  p.total = kernel::u32(numel(whole), "interleave numel");
  const int32_t a = parts[0];
  oc.prepare([a, pd](const kernel::Live& l) {
    if (l.dims(a) != pd)
      throw Error(ErrorKind::Unsupported, "a channel shuffle's parts keep their load-time shape " + shape_str(pd) + ", got " +
                                              shape_str(l.dims(a)));
  });
  for (int32_t t : outs) oc.output(t, [d = g.tensor(t).max_dims](const kernel::Live&) { return d; });
  kernel::Kernel k("channel_shuffle");
  k.input("A", parts[0]).input("B", parts[1]).output("O", outs[0]);
  k.constant("S0", double(channels.front())).constant("S1", outs.size() == 2 ? double(channels.back()) : 0.0);
  if (outs.size() == 2) k.output("O1", outs[1]).define("TWO_PIECES");
  k.params<Params>([p](const kernel::Live&) { return p; })
      .groups([p](const kernel::Live&) { return kernel::Groups::linear(kernel::ceil_div(p.total, 256)); })
      .variant("channel_shuffle");
  oc.add(k);
}

ETW_REGISTER_OP(graph::kChannelShuffle, build_channel_shuffle);

}  // namespace
}  // namespace etwebgpu::ops
