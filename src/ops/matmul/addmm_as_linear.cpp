// The load rewrite that makes an addmm by a constant [K, N] weight a linear by its transpose:
//   out = aten.addmm(bias [N], x [M, K], W [K, N], beta = 1, alpha = 1)
// becomes out = aten.linear(x, W^T [N, K], bias), W^T made at load. Hugging Face's GPT-2 exports
// every projection so (its Conv1D keeps the weight [in, out]), and the small-tile GEMMs read a
// [K, N] operand a column block at a time, one 16-byte piece per row: in the model (weights past
// the L2) GPT-2's residual addmms ran 35 us a call against 16-27 us for the microbenchmark's, while
// the [N, K] linears of DeiT ran at their microbenchmark's time. As a linear it also meets the
// passes written for linears (the LayerNorm before it, q/k/v stacking). Results equal the addmm's
// within fp32 rounding (the kernels add a row's products in another order).
//
// Taken where W is a float32 constant no other call reads, of at most kMaxBytes (the transpose is
// a host copy at load), and the bias a float32 tensor of N elements.
#include <cstring>
#include <memory>
#include <vector>

#include "graph/fusion.h"
#include "graph/rewrite_pipeline.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkDType;
using format::VkValueKind;

constexpr uint64_t kMaxBytes = uint64_t(256) << 20;

bool is_one(const format::VkValue& v) {
  return (v.kind == VkValueKind::Int && v.int_val == 1) || (v.kind == VkValueKind::Double && v.double_val == 1.0);
}

size_t addmm_as_linear(Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  size_t rewritten = 0;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    auto& call = ir.chain[i];
    if (call.name != "aten.addmm.default" || call.args.size() != 6) continue;
    const int32_t bias = call.args[0], x = call.args[1], w = call.args[2];
    if (!is_one(ir.values[call.args[3]]) || !is_one(ir.values[call.args[4]])) continue;
    if (!graph::constant_2d(ir, w, VkDType::Float32, 4) || ix.readers(w) != std::vector<size_t>{i}) continue;
    const int64_t K = ir.values[w].tensor.dims[0], N = ir.values[w].tensor.dims[1];
    if (uint64_t(K * N) * 4 > kMaxBytes) continue;
    const auto& b = ir.values[bias];
    if (b.kind != VkValueKind::Tensor || b.tensor.dtype != VkDType::Float32 || b.tensor.dims != std::vector<int64_t>{N})
      continue;
    const auto& xv = ir.values[x];
    if (xv.kind != VkValueKind::Tensor || xv.tensor.dims.size() != 2 || xv.tensor.dims[1] != K) continue;
    const uint8_t* src = ir.constants[ir.values[w].tensor.constant_id].data.data();
    auto t = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(K * N) * 4);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) std::memcpy(t->data() + (n * K + k) * 4, src + (k * N + n) * 4, 4);
    const int32_t wt = graph::add_owned_constant(ir, std::move(t), VkDType::Float32, {N, K});
    call.name = "aten.linear.default";
    call.args = {x, wt, bias, call.args.back()};
    ++rewritten;
  }
  return rewritten;
}

ETW_REGISTER_LOAD_REWRITE(addmm_as_linear, Simplify);

}  // namespace
}  // namespace etwebgpu::ops
