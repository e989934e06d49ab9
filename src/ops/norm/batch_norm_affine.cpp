// The load rewrite that turns an inference BatchNorm the folds left (DenseNet's norm after each
// cat, a pre-activation BatchNorm, one after a conv the export did not fold) into its per-channel
// affine:
//   out = aten._native_batch_norm_legit_no_training(x [N, C, ...], gamma, beta, mean, var, momentum, eps)
// becomes out = x * s + t with s = gamma / sqrt(var + eps) and t = beta - mean * s (computed in
// double, stored f32 as [C, 1, ...]), an aten.mul and an aten.add that elementwise fusion merges
// with the activation after them and the epilogue pass takes into a conv before them: the
// BatchNorm stops being a dispatch of its own. Rounding: one multiply-add of folded constants
// instead of PyTorch's (x - mean) * invstd * gamma + beta, as a BatchNorm folded into a conv.
//
// Taken where x and out are f32 of rank >= 2, gamma, beta (or Null), mean and var are f32
// constants of C values, and the statistics outputs are read by nothing.
#include <cmath>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"
#include "graph/rewrite_pipeline.h"

namespace etwebgpu::ops {
namespace {

using format::VkDType;
using format::VkValueKind;

size_t batch_norm_affine(graph::Graph&, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  auto is = [&](int32_t id, VkValueKind k) { return ir.values[id].kind == k; };
  std::vector<format::VkOpCall> chain;
  chain.reserve(n);
  size_t rewritten = 0;
  for (size_t i = 0; i < n; ++i) {
    const format::VkOpCall bn = ir.chain[i];  // a copy: values are appended below
    chain.push_back(bn);
    if (bn.name != "aten._native_batch_norm_legit_no_training.default" || bn.args.size() != 8 ||
        !is(bn.args[6], VkValueKind::Double))
      continue;
    const int32_t x = bn.args[0];
    int32_t out = bn.args.back();
    if (is(out, VkValueKind::ValueList)) {
      const auto ids = ir.values[out].ids;
      bool unused = !ids.empty();
      for (size_t k = 1; k < ids.size() && unused; ++k) unused = !is(ids[k], VkValueKind::Tensor) || ix.unused(ids[k]);
      if (!unused) continue;
      out = ids[0];
    }
    if (!is(x, VkValueKind::Tensor) || !is(out, VkValueKind::Tensor) || ix.dtype(x) != VkDType::Float32 ||
        ix.dtype(out) != VkDType::Float32 || ix.dims(x).size() < 2 || ix.dims(out) != ix.dims(x) || out == x)
      continue;
    const std::vector<int64_t> dims = ix.dims(x);
    const int64_t C = dims[1];
    std::vector<double> gamma(static_cast<size_t>(C), 1.0), beta(static_cast<size_t>(C), 0.0);
    bool ok = C > 0;
    auto take = [&](int32_t id, std::vector<double>& into) {
      if (!ok || is(id, VkValueKind::Null)) return;
      into = graph::f32_values(ir, id, C);
      ok = !into.empty();
    };
    take(bn.args[1], gamma);
    take(bn.args[2], beta);
    const auto mean = graph::f32_values(ir, bn.args[3], C), var = graph::f32_values(ir, bn.args[4], C);
    if (!ok || mean.empty() || var.empty()) continue;
    const double eps = ir.values[bn.args[6]].double_val;
    std::vector<double> s(static_cast<size_t>(C)), t(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      s[c] = gamma[c] / std::sqrt(var[c] + eps);
      t[c] = beta[c] - mean[c] * s[c];
    }
    // Channels along dim 1 of x: [C, 1, ...] broadcasts over the dims after it.
    std::vector<int64_t> cdims(dims.size() - 1, 1);
    cdims[0] = C;
    const int32_t y = graph::add_tensor(ir, VkDType::Float32, dims), alpha = graph::add_int(ir, 1);
    chain.back().name = "aten.mul.Tensor";
    chain.back().args = {x, graph::add_f32_constant(ir, s, cdims), y};
    format::VkOpCall add = bn;
    add.name = "aten.add.Tensor";
    add.args = {y, graph::add_f32_constant(ir, t, cdims), alpha, out};
    chain.push_back(std::move(add));
    ++rewritten;
  }
  if (rewritten) ir.chain = std::move(chain);
  return rewritten;
}

}  // namespace

ETW_REGISTER_LOAD_REWRITE(batch_norm_affine, Norms);

}  // namespace etwebgpu::ops
