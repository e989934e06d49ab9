// The load rewrite that folds an inference BatchNorm into the linear before it (LeViT's and
// EfficientFormer's "linear, then BatchNorm1d over its features"):
//   y = aten.linear(x, W, b) or aten.bmm(x, W^T) (W^T a constant [1, K, C]: LeViT's export);
//   [f = contiguous views of y (view_copy to [M, C], squeeze, clone)];
//   out = aten._native_batch_norm_legit_no_training(f, gamma, beta, mean, var, momentum, eps)
// becomes one linear of W'[c, :] = W[c, :] * s[c] and b'[c] = (b[c] - mean[c]) * s[c] + beta[c],
// s = gamma / sqrt(var + eps) (computed in double, stored f32), whose output (or the view's) is
// the BatchNorm's: one dispatch less per pair. ExecuTorch folds a BatchNorm into a conv at export, not into a linear.
//
// Taken where W, b (or Null), gamma, beta (or Null), mean and var are f32 constants of C values
// (W [C, K]), the BatchNorm's input is [M, C] (its channels the linear's features), y and the views
// are read once each and are no graph input, output or state, and the statistics outputs are read
// by nothing.
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/rewrite_pipeline.h"
#include "graph/fusion.h"
#include "graph/memory_plan.h"
#include "ops/norm/batch_norm_affine.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using format::VkDType;
using format::VkValueKind;

size_t fold_batch_norm_into_linear(Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  auto is = [&](int32_t id, VkValueKind k) { return ir.values[id].kind == k; };
  std::vector<bool> removed(n, false);
  size_t fused = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& bn = ir.chain[i];
    if (bn.name != "aten._native_batch_norm_legit_no_training.default" || bn.args.size() != 8 || !is(bn.args[6], VkValueKind::Double))
      continue;
    const int32_t f = bn.args[0];
    if (!graph::float_tensor(ir, f) || ir.values[f].tensor.dtype != VkDType::Float32 || ir.values[f].tensor.dims.size() != 2 ||
        ix.sole_reader(f) != i)
      continue;
    const int64_t C = ir.values[f].tensor.dims[1];
    // The output: a tensor, or a ValueList whose statistics nothing reads.
    const int32_t out = ix.main_output(bn.args.back());
    if (out < 0 || !graph::float_tensor(ir, out) || ir.values[out].tensor.dims != ir.values[f].tensor.dims ||
        ir.values[out].tensor.dtype != VkDType::Float32)
      continue;
    // f: the linear's output, or contiguous views of it (a squeeze, a clone) read by nothing else.
    size_t li = ix.producer(f);
    int32_t y = f;
    bool views_ok = true;
    while (li != graph::UseDef::npos && graph::is_contiguous_view(ir, ir.chain[li]) && ir.chain[li].args.back() == y) {
      y = ir.chain[li].args.front();
      if (!graph::float_tensor(ir, y) || ix.sole_reader(y) != li || ir.values[y].tensor.dims.empty() ||
          ir.values[y].tensor.dims.back() != C) {
        views_ok = false;
        break;
      }
      li = ix.producer(y);
    }
    if (!views_ok || li == graph::UseDef::npos) continue;
    auto& lin = ir.chain[li];
    std::vector<double> w;
    int64_t K = 0;
    bool from_bmm = false;
    if (lin.name == "aten.linear.default" && lin.args.size() == 4 && lin.args.back() == y) {
      const auto& wt = ir.values[lin.args[1]].tensor;
      if (!is(lin.args[1], VkValueKind::Tensor) || wt.dims.size() != 2 || wt.dims[0] != C) continue;
      K = wt.dims[1];
      w = graph::f32_values(ir, lin.args[1], C * K, 2);
    } else if (lin.name == "aten.bmm.default" && lin.args.size() == 3 && lin.args.back() == y &&
               is(lin.args[1], VkValueKind::Tensor) && ir.values[lin.args[1]].tensor.dims.size() == 3 &&
               ir.values[lin.args[1]].tensor.dims[0] == 1 && ir.values[lin.args[1]].tensor.dims[2] == C) {
      // LeViT's LinearNorm exports its linear as bmm(x [1, M, K], W^T [1, K, C]) with W^T a
      // constant once evaluated: it becomes linear(x, W) with the BatchNorm folded in.
      K = ir.values[lin.args[1]].tensor.dims[1];
      const auto wt = graph::f32_values(ir, lin.args[1], K * C, 3);
      if (wt.empty()) continue;
      w.resize(static_cast<size_t>(C * K));
      for (int64_t k = 0; k < K; ++k)
        for (int64_t c = 0; c < C; ++c) w[c * K + k] = wt[k * C + c];
      from_bmm = true;
    } else {
      continue;
    }
    std::vector<double> b(static_cast<size_t>(C), 0.0);
    if (!from_bmm && !is(lin.args[2], VkValueKind::Null)) b = graph::f32_values(ir, lin.args[2], C);
    const auto bc = batch_norm_constants(ir, bn, C);
    if (w.empty() || b.empty() || !bc) continue;
    std::vector<double> w2(w.size()), b2(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      const double s = bc->scale[c];
      for (int64_t k = 0; k < K; ++k) w2[c * K + k] = w[c * K + k] * s;
      b2[c] = (b[c] - bc->mean[c]) * s + bc->beta[c];
    }
    if (from_bmm) {
      lin.name = "aten.linear.default";
      lin.args = {lin.args[0], -1, -1, y};
    }
    lin.args[1] = graph::add_f32_constant(ir, w2, {C, K});
    lin.args[2] = graph::add_f32_constant(ir, b2, {C});
    // f's writer (the view, or the linear) writes the BatchNorm's output instead, which now lives
    // from there: storage of its own, not a memory object the export shared with tensors live
    // between the two.
    ir.chain[ix.producer(f)].args.back() = out;
    if (!ix.pinned(out)) ir.values[out].tensor.mem_obj_id = -1;
    removed[i] = true;
    ++fused;
  }
  if (fused) graph::drop_calls(ir, removed);
  return fused;
}

ETW_REGISTER_LOAD_REWRITE(fold_batch_norm_into_linear, Simplify);

}  // namespace
}  // namespace etwebgpu::ops
