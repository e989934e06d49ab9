// etwebgpu.channel_shuffle [parts ValueList, outs ValueList] (graph/cat_folding.h): ShuffleNet's
// channel shuffle and the split after it in one dispatch, an invocation per element of the
// interleave (channel_shuffle.wgsl). Static shapes: the pieces' dims are fixed at load.
#include "ops/memory/channel_shuffle.h"

#include "graph/cat_folding.h"
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {

ShufflePieces ShufflePieces::read(const OpContext& oc, int32_t list, const std::string& writer) {
  ShufflePieces p;
  p.ids_ = oc.g.value_list(list);
  if (p.ids_.empty() || p.ids_.size() > 2)
    oc.fail(ErrorKind::Format, writer + " writes one or two pieces, got " + std::to_string(p.ids_.size()));
  for (int32_t t : p.ids_) {
    require_dtype(oc, t, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "each piece");
    p.dims_.push_back(oc.g.tensor(t).max_dims);
    if (p.dims_.back().size() < 2 || p.dims_.back()[1] < 1)
      oc.fail(ErrorKind::InvalidArgument, "piece " + shape_str(p.dims_.back()) + " has no channels along dim 1");
  }
  return p;
}

void ShufflePieces::check_channels(const OpContext& oc, int64_t channels, const std::string& what) const {
  int64_t sum = 0;
  for (const auto& d : dims_) sum += d[1];
  if (sum != 2 * channels)
    oc.fail(ErrorKind::InvalidArgument, "the pieces' channels sum to " + std::to_string(sum) + ", not twice " + what);
}

std::optional<std::string> ShufflePieces::not_slices_of(const std::vector<int64_t>& whole) const {
  for (const auto& d : dims_) {
    std::vector<int64_t> want = whole;
    if (want.size() == d.size()) want[1] = d[1];
    if (d != want) return "piece " + shape_str(d) + " is not a slice along dim 1 of " + shape_str(whole);
  }
  return std::nullopt;
}

void ShufflePieces::declare(const OpContext& oc) const {
  for (size_t k = 0; k < ids_.size(); ++k) oc.output(ids_[k], [d = dims_[k]](const kernel::Live&) { return d; });
}

void ShufflePieces::bind(kernel::Kernel& k) const {
  k.output("O", ids_.front()).constant("S0", double(dims_.front()[1])).constant("S1", ids_.size() == 2 ? double(dims_.back()[1]) : 0.0);
  if (ids_.size() == 2) k.output("O1", ids_.back()).define("TWO_PIECES");
}

namespace {

struct Params {
  uint32_t C, R, total, pad;
};
static_assert(sizeof(Params) == 16);

void build_channel_shuffle(OpContext& oc) {
  Graph& g = oc.g;
  const std::vector<int32_t> parts = g.value_list(oc.arg(0));
  if (parts.size() != 2)
    oc.fail(ErrorKind::Format, "a channel shuffle interleaves two parts, got " + std::to_string(parts.size()));
  const ShufflePieces pieces = ShufflePieces::read(oc, oc.out(), "a channel shuffle");
  for (int32_t t : parts) require_dtype(oc, t, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "each part");
  const std::vector<int64_t> pd = g.tensor(parts[0]).max_dims;
  if (pd.size() < 2 || g.tensor(parts[1]).max_dims != pd)
    oc.fail(ErrorKind::InvalidArgument, "the parts must share one shape [N, C, ...], got " + shape_str(pd) + " and " +
                                            shape_str(g.tensor(parts[1]).max_dims));
  pieces.check_channels(oc, pd[1], "the parts' " + std::to_string(pd[1]) + " channels");
  std::vector<int64_t> whole = pd;
  whole[1] *= 2;
  if (auto why = pieces.not_slices_of(whole)) oc.fail(ErrorKind::InvalidArgument, *why);
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
  pieces.declare(oc);
  kernel::Kernel k("channel_shuffle");
  k.input("A", parts[0]).input("B", parts[1]);
  pieces.bind(k);
  k.params<Params>([p](const kernel::Live&) { return p; })
      .groups([p](const kernel::Live&) { return kernel::Groups::linear(kernel::ceil_div(p.total, 256)); })
      .variant("channel_shuffle");
  oc.add(k);
}

ETW_REGISTER_OP(graph::kChannelShuffle, build_channel_shuffle);

}  // namespace
}  // namespace etwebgpu::ops
