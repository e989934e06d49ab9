#include "graph/score_mask_folding.h"

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"
#include "graph/memory_plan.h"

namespace etwebgpu::graph {

namespace {

using format::VkDType;
using format::VkValueKind;
using Dims = std::vector<int64_t>;

// `from` broadcasts into `to` (right-aligned, each dim 1 or equal).
bool broadcasts(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  for (size_t k = 0; k < from.size(); ++k) {
    const int64_t f = from[from.size() - 1 - k], t = to[to.size() - 1 - k];
    if (f != 1 && f != t) return false;
  }
  return true;
}

// Element i (flat, of `to`) of constant `from` broadcast into `to`.
float broadcast_at(const float* from, const Dims& fd, const Dims& to, int64_t i) {
  int64_t off = 0, stride = 1;
  for (size_t k = 0; k < to.size(); ++k) {
    const size_t d = to.size() - 1 - k;
    const int64_t coord = i % to[d];
    i /= to[d];
    if (k < fd.size()) {
      const int64_t n = fd[fd.size() - 1 - k];
      if (n != 1) off += coord * stride;
      stride *= n;
    }
  }
  return from[off];
}

struct Folder {
  format::VkGraphIR& ir;
  const UseDef& ix;

  bool float32(int32_t t) const { return ix.tensor(t) && ix.dtype(t) == VkDType::Float32; }
  // A float32 constant whose data holds its dims.
  const float* constant(int32_t t) const {
    if (!float32(t) || !ir.values[t].tensor.is_constant()) return nullptr;
    const auto cid = static_cast<size_t>(ir.values[t].tensor.constant_id);
    if (cid >= ir.constants.size() || ir.constants[cid].data.size() < static_cast<size_t>(numel(ix.dims(t))) * 4) return nullptr;
    return reinterpret_cast<const float*>(ir.constants[cid].data.data());
  }
  // An intermediate of the pattern: float32, written by `writer` alone, read by one later call only.
  bool passes(int32_t t, size_t writer) const {
    return float32(t) && ix.sole_reader(t, writer) != UseDef::npos && !ix.aliased(t);
  }
  // add.Tensor(a, constant, alpha 1) writing t: its index, or npos.
  size_t constant_add(int32_t t) const {
    const size_t i = ix.producer(t);
    if (i == UseDef::npos) return i;
    const auto& c = ir.chain[i];
    if (c.name != "aten.add.Tensor" || c.args.size() != 4 || c.args[3] != t) return UseDef::npos;
    const auto& alpha = ir.values[c.args[2]];
    const bool one = (alpha.kind == VkValueKind::Int && alpha.int_val == 1) ||
                     (alpha.kind == VkValueKind::Double && alpha.double_val == 1.0);
    if (!one || !float32(c.args[0]) || !constant(c.args[1]) || ix.dims(c.args[0]) != ix.dims(t) ||
        !broadcasts(ix.dims(c.args[1]), ix.dims(t)))
      return UseDef::npos;
    return i;
  }
  // Walks back from t through contiguous views, each an intermediate; returns the tensor reached
  // and collects the views' calls.
  int32_t through_views(int32_t t, std::vector<size_t>& calls) const {
    for (;;) {
      const size_t i = ix.producer(t);
      if (i == UseDef::npos || !is_contiguous_view(ir, ir.chain[i]) || ir.chain[i].args.back() != t) return t;
      const int32_t in = ir.chain[i].args.front();
      if (!passes(in, ix.producer(in)) || ix.sole_reader(in) != i) return t;
      calls.push_back(i);
      t = in;
    }
  }

  bool fold(size_t j) {
    const auto& sm = ir.chain[j];
    if (sm.name != "aten._softmax.default" || sm.args.size() != 4) return false;
    const int32_t s = sm.args[0];
    if (!passes(s, ix.producer(s)) || ix.sole_reader(s) != j) return false;
    std::vector<size_t> gone;
    const int32_t a2 = through_views(s, gone);
    const size_t i2 = constant_add(a2);
    if (i2 == UseDef::npos) return false;
    gone.push_back(i2);
    const int32_t u = ir.chain[i2].args[0];
    if (!passes(u, ix.producer(u)) || ix.sole_reader(u) != i2) return false;
    const int32_t t1 = through_views(u, gone);
    const size_t i1 = constant_add(t1);
    if (i1 == UseDef::npos || !passes(t1, i1)) return false;
    const int32_t x = ir.chain[i1].args[0];
    if (ix.dims(x) != ix.dims(s)) return false;
    // s is now written at i1: no tensor sharing its storage may be named from there on.
    if (ix.memory(s) >= 0)
      for (size_t i = i1; i < j; ++i)
        for (int32_t a : ir.chain[i].args) {
          bool clash = false;
          ix.each_tensor(a, [&](int32_t t) { clash = clash || (t != s && ix.share_memory(t, s)); });
          if (clash) return false;
        }
    const int32_t k1 = ir.chain[i1].args[1], k2 = ir.chain[i2].args[1];
    const int64_t n = numel(ix.dims(s));
    if (numel(ix.dims(t1)) != n || static_cast<uint64_t>(n) * 4 > kMaxFoldedMaskBytes) return false;

    // bias + mask at each flat index (the views keep it): added in float32, as the kernels do.
    auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(n) * 4);
    const float* b = constant(k1);
    const float* m = constant(k2);
    for (int64_t e = 0; e < n; ++e) {
      const float v = broadcast_at(b, ix.dims(k1), ix.dims(t1), e) + broadcast_at(m, ix.dims(k2), ix.dims(a2), e);
      std::memcpy(bytes->data() + e * 4, &v, 4);
    }
    const int32_t sum = add_owned_constant(ir, std::move(bytes), VkDType::Float32, ix.dims(s));
    // The first add now writes the softmax's input from x and the sum; s is read by the softmax
    // alone, later, so writing it earlier changes nothing else.
    auto& first = ir.chain[i1];
    first.args = {x, sum, first.args[2], s};
    for (size_t g : gone) removed[g] = true;
    return true;
  }
  std::vector<bool> removed;
};

}  // namespace

size_t fold_score_masks(format::VkGraphIR& ir, const UseDef& ix) {
  Folder f{ir, ix, std::vector<bool>(ir.chain.size(), false)};
  size_t folds = 0;
  for (size_t j = 0; j < ir.chain.size(); ++j) folds += f.fold(j);
  if (folds) drop_calls(ir, f.removed);
  return folds;
}

}  // namespace etwebgpu::graph
