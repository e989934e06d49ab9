// The shuffle store shared by the shuffling conv builders, and the load rewrite that makes
// etwebgpu.conv_shuffle calls (conv_shuffle.h).
#include <vector>

#include "graph/cat_folding.h"
#include "graph/fusion.h"
#include "graph/rewrite_pipeline.h"
#include "ops/conv/conv_call.h"
#include "ops/conv/conv_shuffle.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {

void check_shuffle_store(const ShufflePieces& pieces, const kernel::Live& l, int32_t passthrough,
                         const std::vector<int64_t>& out) {
  if (l.dims(passthrough) != out)
    throw Error(ErrorKind::InvalidArgument, "passthrough " + shape_str(l.dims(passthrough)) +
                                                " must have the conv's output shape " + shape_str(out));
  auto whole = out;
  whole[1] *= 2;
  if (auto why = pieces.not_slices_of(whole)) throw Error(ErrorKind::InvalidArgument, *why);
}

void bind_shuffle_store(kernel::Kernel& k, const ShufflePieces& pieces, int32_t passthrough) {
  pieces.bind(k);
  k.input("A", passthrough).define("SHUFFLE");
}

namespace {

using format::VkValueKind;

size_t conv_shuffles(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  if (!g.options().static_shapes) return 0;
  int32_t next_mem = graph::unused_memory_object(ir);
  std::vector<bool> removed(ir.chain.size(), false);
  size_t folded = 0;
  for (size_t j = 0; j < ir.chain.size(); ++j) {
    const format::VkOpCall& s = ir.chain[j];
    if (s.name != graph::kChannelShuffle || s.args.size() != 2 || ir.values[s.args[0]].kind != VkValueKind::ValueList ||
        ir.values[s.args[1]].kind != VkValueKind::ValueList || ir.values[s.args[0]].ids.size() != 2)
      continue;
    const int32_t a = ir.values[s.args[0]].ids[0], b = ir.values[s.args[0]].ids[1];
    if (a == b || !ix.tensor(a) || !ix.tensor(b)) continue;
    const size_t p = ix.producer(b);
    if (p == graph::UseDef::npos || ix.sole_reader(b, p) != j) continue;
    format::VkOpCall& conv = ir.chain[p];
    // An aten.convolution, not transposed, without a prologue (the shuffling kernel reads none).
    const auto cc = read_conv(ir, conv);
    if (!cc || cc->kind != ConvCall::Kind::Conv || cc->pro >= 0 || conv.args.back() != b) continue;
    // The passthrough is read at the conv now: nothing from there to the shuffle may write it.
    if (!ix.unchanged_between(a, p, j)) continue;
    for (int32_t o : ir.values[s.args[1]].ids) graph::own_storage(ir, o, next_mem);  // written at the conv's place now
    conv.name = kConvShuffle;
    conv.args.back() = s.args[1];
    conv.args.insert(conv.args.begin() + 9, a);
    removed[j] = true;
    ++folded;
  }
  if (folded) graph::drop_calls(ir, removed);
  return folded;
}

ETW_REGISTER_LOAD_REWRITE(conv_shuffles, Patterns);

}  // namespace
}  // namespace etwebgpu::ops
