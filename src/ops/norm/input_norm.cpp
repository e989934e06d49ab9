#include "ops/norm/input_norm.h"

#include <cmath>

#include "etwebgpu/tensor.h"
#include "graph/fusion.h"
#include "graph/memory_plan.h"
#include "graph/rewrite_pipeline.h"

namespace etwebgpu::ops {

using format::VkDType;
using format::VkValueKind;

InputNormHosts& InputNormHosts::global() {
  static InputNormHosts h;
  return h;
}

const InputNormHosts::Host* InputNormHosts::find(const std::string& name) const {
  for (const auto& h : hosts_)
    if (h.name == name) return &h;
  return nullptr;
}

InputNorm InputNorm::read(const OpContext& oc, size_t at, int32_t input) {
  InputNorm n;
  Graph& g = oc.g;
  if (oc.nargs() <= at + kArgs || g.kind(oc.arg(at)) != VkValueKind::String || g.string(oc.arg(at)) != "rms_norm") return n;
  const int32_t x = oc.arg(at + 1), w = oc.arg(at + 2), eps = oc.arg(at + 3);
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16}, "input norm's input");
  const auto& xd = g.tensor(x).max_dims;
  const auto& yd = g.tensor(input).max_dims;
  if (xd.empty() || yd.empty() || xd.back() != yd.back() || numel(xd) != numel(yd))
    oc.fail(ErrorKind::Format, "input norm's input " + shape_str(xd) + " does not hold the rows of the input " + shape_str(yd));
  if (!g.is_null(w)) {
    require_dtype(oc, w, {VkDType::Float32, VkDType::Float16}, "input norm's weight");
    if (g.tensor(w).max_numel() != xd.back())
      oc.fail(ErrorKind::Format, "input norm's weight " + shape_str(g.tensor(w).max_dims) + " does not hold one value per feature (" +
                                     std::to_string(xd.back()) + ")");
    n.weight = w;
  }
  const double e = g.number(eps);
  if (!std::isfinite(e) || e < 0) oc.fail(ErrorKind::Format, "input norm's eps must be finite and not negative, got " + std::to_string(e));
  n.x = x;
  n.eps = static_cast<float>(e);
  return n;
}

namespace {

// What a host's GEMV binds at most with the norm's input and weight: the multi-output linear with
// rotary embeddings (X, W, SC, BIAS, COS, SIN, q, k, v) and NW.
constexpr uint32_t kHostBindings = 10;

// input_norms: see input_norm.h. The norm's input and weight must hold at the host what they held
// at the norm, and not share storage with the host's outputs; views between stay (reading y, which
// the deferred norm writes whenever the host reads it).
size_t input_norms(graph::Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  if (g.ctx().info().max_storage_buffers_per_stage < kHostBindings) return 0;
  const auto& hosts = InputNormHosts::global();
  auto f32_tensor = [&](int32_t id) { return ix.tensor(id) && ix.dtype(id) == VkDType::Float32 && !ix.dims(id).empty(); };
  size_t fused = 0;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    if (ir.chain[i].name != "et_vk.rms_norm.default" || ir.chain[i].args.size() != 4) continue;
    const int32_t x = ir.chain[i].args[0], w = ir.chain[i].args[1], eps = ir.chain[i].args[2], y = ir.chain[i].args[3];
    if (!f32_tensor(x) || !f32_tensor(y) || ix.dims(x) != ix.dims(y)) continue;
    const VkValueKind ek = ir.values[eps].kind;
    if (ek != VkValueKind::Double && ek != VkValueKind::Int) continue;
    const int64_t K = ix.dims(x).back();
    const bool weighted = ir.values[w].kind != VkValueKind::Null;
    if (weighted && (!f32_tensor(w) || numel(ix.dims(w)) != K)) continue;
    std::vector<size_t> views;
    int32_t value = y;
    size_t j = ix.sole_reader(y, i);
    while (j != graph::UseDef::npos && graph::is_contiguous_view(ir, ir.chain[j]) && ir.chain[j].args.front() == value) {
      const int32_t vo = ir.chain[j].args.back();
      if (!f32_tensor(vo) || ix.dims(vo).back() != K) {
        j = graph::UseDef::npos;
        break;
      }
      views.push_back(j);
      value = vo;
      j = ix.sole_reader(vo, j);
    }
    if (j == graph::UseDef::npos) continue;
    const format::VkOpCall& host = ir.chain[j];
    const InputNormHosts::Host* h = hosts.find(host.name);
    if (!h || host.args.size() <= h->at || host.args[0] != value || !h->fits(ir, host)) continue;
    bool ok = true;
    for (size_t a = 1; a < host.args.size(); ++a) ok = ok && host.args[a] != value;
    for (int32_t r : {x, w}) {
      if (!ix.tensor(r)) continue;
      ok = ok && ix.unchanged_between(r, i, j, views);
      ix.each_tensor(host.args.back(), [&](int32_t o) { ok = ok && o != r && !ix.share_memory(o, r); });
    }
    if (!ok) continue;
    const int32_t marker = graph::add_string(ir, "rms_norm");
    auto& args = ir.chain[j].args;
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(h->at), {marker, x, w, eps});
    ir.chain[i].name = kDeferredRmsNorm;
    ++fused;
  }
  return fused;
}

}  // namespace

ETW_REGISTER_LOAD_REWRITE(input_norms, InputNorms);

}  // namespace etwebgpu::ops
