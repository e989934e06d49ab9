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
// Where the output of a BatchNorm over [N, C] reaches a linear of constant weights as its input
// (across contiguous views: LeViT's head, BatchNorm1d then Linear), the affine folds into the
// linear instead: W'[o, c] = W[o, c] * s[c], b'[o] = b[o] + sum_c W[o, c] * t[c], and the
// BatchNorm becomes a contiguous clone of x, which memory planning aliases.
//
// Taken where x and out are f32 of rank >= 2, gamma, beta (or Null), mean and var are f32
// constants of C values, and the statistics outputs are read by nothing.
#include "ops/norm/batch_norm_affine.h"

#include <cmath>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"
#include "graph/memory_plan.h"
#include "graph/rewrite_pipeline.h"

namespace etwebgpu::ops {

std::optional<BatchNormConstants> batch_norm_constants(const format::VkGraphIR& ir, const format::VkOpCall& bn, int64_t C) {
  using format::VkValueKind;
  if (bn.name != "aten._native_batch_norm_legit_no_training.default" || bn.args.size() != 8 ||
      ir.values[bn.args[6]].kind != VkValueKind::Double || C <= 0)
    return std::nullopt;
  std::vector<double> gamma(static_cast<size_t>(C), 1.0);
  BatchNormConstants r;
  r.beta.assign(static_cast<size_t>(C), 0.0);
  bool ok = true;
  auto take = [&](int32_t id, std::vector<double>& into) {
    if (!ok || ir.values[id].kind == VkValueKind::Null) return;
    into = graph::f32_values(ir, id, C);
    ok = !into.empty();
  };
  take(bn.args[1], gamma);
  take(bn.args[2], r.beta);
  r.mean = graph::f32_values(ir, bn.args[3], C);
  const auto var = graph::f32_values(ir, bn.args[4], C);
  if (!ok || r.mean.empty() || var.empty()) return std::nullopt;
  const double eps = ir.values[bn.args[6]].double_val;
  r.scale.resize(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) r.scale[c] = gamma[c] / std::sqrt(var[c] + eps);
  return r;
}

namespace {

using format::VkDType;
using format::VkValueKind;

// Folds x * s + t (per last-dim channel) into the linear that reads `out` (the BatchNorm's output,
// at chain position `at`), across contiguous views read once whose last dim stays C; false when
// there is none.
bool fold_into_linear(format::VkGraphIR& ir, const graph::UseDef& ix, size_t at, int32_t out, const std::vector<double>& s,
                      const std::vector<double>& t) {
  const int64_t C = static_cast<int64_t>(s.size());
  int32_t value = out;
  size_t r = ix.sole_reader(value, at);
  while (r != graph::UseDef::npos && graph::is_contiguous_view(ir, ir.chain[r]) && ir.chain[r].args.front() == value) {
    value = ir.chain[r].args.back();
    if (ir.values[value].kind != VkValueKind::Tensor || ix.dims(value).empty() || ix.dims(value).back() != C) return false;
    r = ix.sole_reader(value, r);
  }
  if (r == graph::UseDef::npos) return false;
  format::VkOpCall& lin = ir.chain[r];
  if (lin.name != "aten.linear.default" || lin.args.size() != 4 || lin.args[0] != value) return false;
  const int32_t w = lin.args[1], b = lin.args[2];
  if (ir.values[w].kind != VkValueKind::Tensor || ix.dims(w).size() != 2 || ix.dims(w)[1] != C) return false;
  const int64_t O = ix.dims(w)[0];
  const auto wv = graph::f32_values(ir, w, O * C, 2);
  std::vector<double> bv(static_cast<size_t>(O), 0.0);
  if (ir.values[b].kind != VkValueKind::Null) bv = graph::f32_values(ir, b, O);
  if (wv.empty() || bv.empty()) return false;
  std::vector<double> w2(wv.size());
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c) {
      w2[o * C + c] = wv[o * C + c] * s[c];
      bv[o] += wv[o * C + c] * t[c];
    }
  lin.args[1] = graph::add_f32_constant(ir, w2, {O, C});
  lin.args[2] = graph::add_f32_constant(ir, bv, {O});
  return true;
}

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
    const int32_t out = ix.main_output(bn.args.back());
    if (out < 0 || !is(x, VkValueKind::Tensor) || ix.dtype(x) != VkDType::Float32 ||
        ix.dtype(out) != VkDType::Float32 || ix.dims(x).size() < 2 || ix.dims(out) != ix.dims(x) || out == x)
      continue;
    const std::vector<int64_t> dims = ix.dims(x);
    const int64_t C = dims[1];
    const auto bc = batch_norm_constants(ir, bn, C);
    if (!bc) continue;
    const std::vector<double>& s = bc->scale;
    std::vector<double> t(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) t[c] = bc->beta[c] - bc->mean[c] * s[c];
    if (dims.size() == 2 && fold_into_linear(ir, ix, i, out, s, t)) {
      chain.back().name = "aten.clone.default";
      chain.back().args = {x, graph::add_null(ir), out};
      ++rewritten;
      continue;
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
