// Normalizations and softmax: batch_norm (inference, and with batch statistics), layer_norm, group_norm, rms_norm,
// softmax, log_softmax. Row-wise ops use one workgroup per row (norm_row.wgsl); softmax and
// log_softmax over contiguous rows (inner == 1) whose length divides by 4 take the vec4 kernel
// softmax_row_vec4.wgsl instead (online max/sum, one read pass + one write pass), chosen per run
// from live shapes; force_route "softmax" = "vec4" | "general" pins it where both exist.
#include <functional>
#include <numeric>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

enum RowMode : uint32_t { kSoftmax = 0, kLogSoftmax = 1, kLayerNorm = 2, kRmsNorm = 3, kGroupNorm = 4 };

struct RowParams {
  uint32_t rows = 0, len = 1, inner = 1, groups = 1, hw = 1, cpg = 1;
  float eps = 0.f;
  uint32_t pad = 0;
};
static_assert(sizeof(RowParams) == 32);

struct BatchParams {
  uint32_t numel = 0, inner = 1, channels = 1;
  float eps = 0.f;
};

int64_t prod(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

// Optional per-channel/per-element parameter: float tensor of `expect` elements, or Null.
bool opt_param(OpContext& oc, int32_t id, int64_t expect, const char* what) {
  Graph& g = oc.g;
  if (g.is_null(id)) return false;
  require_dtype(oc, id, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, what);
  if (g.tensor(id).max_numel() != expect)
    oc.fail(ErrorKind::InvalidArgument, std::string(what) + " has shape " + shape_str(g.tensor(id).max_dims) +
                                            ", expected " + std::to_string(expect) + " elements");
  return true;
}

struct RowSetup {
  RowMode mode;
  int32_t x, w = -1, b = -1, out, mean = -1, rstd = -1;
  double eps = 0;
};

// Creates the row kernel step; `shape` computes (rows, len, inner, groups, hw, cpg) and the stat
// dims from the live input dims (called from the resize hook).
using RowShape = std::function<RowParams(const std::vector<int64_t>& in, std::vector<int64_t>* stat_dims)>;

void build_row(OpContext& oc, RowSetup s, RowShape shape) {
  Graph& g = oc.g;
  bool has_w = s.w >= 0, has_b = s.b >= 0, stats = s.mean >= 0 && s.rstd >= 0;
  gpu::Constants c{{"MODE", s.mode}, {"HAS_W", has_w ? 1.0 : 0.0}, {"HAS_B", has_b ? 1.0 : 0.0},
                   {"STATS", stats ? 1.0 : 0.0}};
  const auto& pipe = g.ctx().pipeline("norm_row", "main", c);
  auto u = std::make_shared<Uniform<RowParams>>();
  u->init(g, oc.call.name);
  // Distinct scratch words when stats are not written: two writable bindings may not alias.
  const gpu::Buffer& mb = stats ? g.buffer(s.mean) : g.make_scratch(16, oc.call.name + ".mean");
  const gpu::Buffer& rb = stats ? g.buffer(s.rstd) : g.make_scratch(16, oc.call.name + ".rstd");
  oc.node.steps.push_back(g.make_step(pipe,
                                      {{0, &g.buffer(s.x)},
                                       {1, has_w ? &g.buffer(s.w) : &g.dummy_buffer()},
                                       {2, has_b ? &g.buffer(s.b) : &g.dummy_buffer()},
                                       {3, &g.buffer(s.out)},
                                       {4, &mb},
                                       {5, &rb},
                                       {6, u->buf}},
                                      0, "row"));
  size_t general = oc.node.steps.size() - 1, fast = SIZE_MAX;
  if (s.mode == kSoftmax || s.mode == kLogSoftmax) {
    std::string forced;
    if (auto it = g.options().force_route.find("softmax"); it != g.options().force_route.end()) forced = it->second;
    if (!forced.empty() && forced != "vec4" && forced != "general")
      oc.fail(ErrorKind::InvalidArgument, "force_route softmax must be \"vec4\" or \"general\", got \"" + forced + "\"");
    // vec4 bindings need 16 bytes: only when the maximum shapes hold at least a vec4.
    if (forced != "general" && g.tensor(s.x).max_numel() >= 4 && g.tensor(s.out).max_numel() >= 4) {
      const auto& p4 = g.ctx().pipeline("softmax_row_vec4", "main", {{"MODE", s.mode}});
      fast = oc.node.steps.size();
      oc.node.steps.push_back(g.make_step(p4, {{0, &g.buffer(s.x)}, {1, &g.buffer(s.out)}, {2, u->buf}}, 0, "row_vec4"));
    }
  }
  graph::Node* node = &oc.node;
  oc.node.resize = [&g, s, u, node, general, fast, stats, shape, &call = oc.call] {
    Step* step = &node->steps[general];
    auto& in = g.tensor(s.x).dims;
    std::vector<int64_t> sd;
    RowParams p = shape(in, &sd);
    p.eps = static_cast<float>(s.eps);
    Tensor& to = g.tensor(s.out);
    if (numel(in) > to.max_numel())
      throw Error(ErrorKind::InvalidArgument, call.name + ": output " + shape_str(in) + " exceeds its bound " +
                                                  shape_str(to.max_dims));
    to.dims = in;
    if (stats) {
      g.tensor(s.mean).dims = sd;
      g.tensor(s.rstd).dims = sd;
    }
    u->write(g, p);
    bool use_vec4 = fast != SIZE_MAX && p.inner == 1 && p.len % 4 == 0;
    set_groups(g, *step, p.len == 0 || use_vec4 ? 0 : p.rows);
    if (fast != SIZE_MAX) set_groups(g, node->steps[fast], p.len == 0 || !use_vec4 ? 0 : p.rows);
  };
}

// Items 1 and 2 of a norm's ValueList get mean/rstd when they are float tensors that can hold
// one value per row at the maximum shape.
void stats_targets(OpContext& oc, const std::vector<int32_t>& items, int64_t max_rows, RowSetup& s) {
  Graph& g = oc.g;
  if (items.size() < 3) return;
  for (int k = 1; k < 3; ++k)
    if (!g.is_tensor(items[k]) || !is_float(g.tensor(items[k]).dtype) || g.tensor(items[k]).max_numel() < max_rows ||
        items[k] == items[0])
      return;
  if (items[1] == items[2]) return;
  s.mean = items[1];
  s.rstd = items[2];
}

int32_t first_output(OpContext& oc, size_t n_min) {
  Graph& g = oc.g;
  if (g.kind(oc.out()) != format::VkValueKind::ValueList) return oc.out();
  auto items = g.value_list(oc.out());
  if (items.size() < n_min || !g.is_tensor(items[0])) oc.fail(ErrorKind::InvalidArgument, "output list is malformed");
  return items[0];
}

void require_float_io(OpContext& oc, int32_t x, int32_t out) {
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "output");
}

void build_softmax(OpContext& oc, RowMode mode) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_float_io(oc, x, out);
  int64_t rank = g.tensor(x).rank();
  int64_t dim = norm_dim(oc, g.integer(oc.arg(1)), rank);
  if (g.tensor(out).max_numel() != g.tensor(x).max_numel())
    oc.fail(ErrorKind::InvalidArgument, "output " + shape_str(g.tensor(out).max_dims) + " does not match input " +
                                            shape_str(g.tensor(x).max_dims));
  RowSetup s{mode, x, -1, -1, out};
  build_row(oc, s, [dim](const std::vector<int64_t>& in, std::vector<int64_t>*) {
    RowParams p;
    size_t d = static_cast<size_t>(dim);
    p.len = static_cast<uint32_t>(in.empty() ? 1 : in[d]);
    p.inner = static_cast<uint32_t>(prod(in, d + 1, in.size()));
    p.rows = static_cast<uint32_t>(prod(in, 0, d) * p.inner);
    return p;
  });
}

void build_layer_norm(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = first_output(oc, 1);
  require_float_io(oc, x, out);
  auto ns = g.int_list(oc.arg(1));
  auto& md = g.tensor(x).max_dims;
  if (ns.empty() || ns.size() > md.size())
    oc.fail(ErrorKind::InvalidArgument, "normalized_shape " + shape_str(ns) + " does not fit input " + shape_str(md));
  size_t lead = md.size() - ns.size();
  for (size_t i = 0; i < ns.size(); ++i)
    if (md[lead + i] != ns[i])
      oc.fail(ErrorKind::InvalidArgument, "normalized_shape " + shape_str(ns) + " is not the trailing shape of input " +
                                              shape_str(md));
  int64_t len = numel(ns);
  RowSetup s{kLayerNorm, x, -1, -1, out};
  if (opt_param(oc, oc.arg(2), len, "weight")) s.w = oc.arg(2);
  if (opt_param(oc, oc.arg(3), len, "bias")) s.b = oc.arg(3);
  s.eps = g.number(oc.arg(4));
  if (g.kind(oc.out()) == format::VkValueKind::ValueList)
    stats_targets(oc, g.value_list(oc.out()), prod(md, 0, lead), s);
  build_row(oc, s, [lead, len, &oc_call = oc.call](const std::vector<int64_t>& in, std::vector<int64_t>* sd) {
    if (in.size() < lead || numel(std::vector<int64_t>(in.begin() + lead, in.end())) != len)
      throw Error(ErrorKind::InvalidArgument, oc_call.name + ": live input " + shape_str(in) +
                                                  " changed its normalized dims");
    RowParams p;
    p.len = static_cast<uint32_t>(len);
    p.rows = static_cast<uint32_t>(prod(in, 0, lead));
    *sd = in;
    for (size_t i = lead; i < sd->size(); ++i) (*sd)[i] = 1;
    return p;
  });
}

void build_rms_norm(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_float_io(oc, x, out);
  auto& md = g.tensor(x).max_dims;
  if (md.empty()) oc.fail(ErrorKind::InvalidArgument, "input must have at least one dim");
  int64_t len = md.back();
  RowSetup s{kRmsNorm, x, -1, -1, out};
  if (opt_param(oc, oc.arg(1), len, "weight")) s.w = oc.arg(1);
  s.eps = g.number(oc.arg(2));
  build_row(oc, s, [len, &oc_call = oc.call](const std::vector<int64_t>& in, std::vector<int64_t>*) {
    if (in.back() != len)
      throw Error(ErrorKind::InvalidArgument, oc_call.name + ": live last dim " + std::to_string(in.back()) +
                                                  " differs from the weight's " + std::to_string(len));
    RowParams p;
    p.len = static_cast<uint32_t>(len);
    p.rows = static_cast<uint32_t>(numel(in) / std::max<int64_t>(len, 1));
    return p;
  });
}

void build_group_norm(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = first_output(oc, 1);
  require_float_io(oc, x, out);
  auto& md = g.tensor(x).max_dims;
  if (md.size() < 2) oc.fail(ErrorKind::InvalidArgument, "input " + shape_str(md) + " must be [N, C, *]");
  int64_t C = md[1], G = g.integer(oc.arg(6));
  if (g.integer(oc.arg(4)) != C)
    oc.fail(ErrorKind::InvalidArgument, "C argument " + std::to_string(g.integer(oc.arg(4))) + " differs from input " +
                                            shape_str(md));
  if (G <= 0 || C % G != 0)
    oc.fail(ErrorKind::InvalidArgument, "group " + std::to_string(G) + " does not divide C " + std::to_string(C));
  RowSetup s{kGroupNorm, x, -1, -1, out};
  if (opt_param(oc, oc.arg(1), C, "weight")) s.w = oc.arg(1);
  if (opt_param(oc, oc.arg(2), C, "bias")) s.b = oc.arg(2);
  s.eps = g.number(oc.arg(7));
  if (g.kind(oc.out()) == format::VkValueKind::ValueList) stats_targets(oc, g.value_list(oc.out()), md[0] * G, s);
  build_row(oc, s, [C, G, &oc_call = oc.call](const std::vector<int64_t>& in, std::vector<int64_t>* sd) {
    if (in.size() < 2 || in[1] != C)
      throw Error(ErrorKind::InvalidArgument, oc_call.name + ": live input " + shape_str(in) + " changed C");
    int64_t hw = prod(in, 2, in.size());
    RowParams p;
    p.groups = static_cast<uint32_t>(G);
    p.cpg = static_cast<uint32_t>(C / G);
    p.hw = static_cast<uint32_t>(std::max<int64_t>(hw, 1));
    p.len = static_cast<uint32_t>(C / G * hw);
    p.rows = static_cast<uint32_t>(in[0] * G);
    *sd = {in[0], G};
    return p;
  });
}

struct BatchStatsParams {
  uint32_t channels = 1, inner = 1, batch = 0, pad0 = 0;
  float eps = 0.f, momentum = 0.f;
  uint32_t pad1[2] = {0, 0};
};

// Per-channel normalization step: out = (x - mean[c]) * scale[c] (* w + b), where scale is
// 1 / sqrt(var + eps) from a variance buffer, or the buffer itself when `invstd` (batch stats).
// Returns the resize work; `C` is checked against the live input.
std::function<void()> add_batch_apply(OpContext& oc, int32_t x, int32_t out, int32_t w, int32_t b, const gpu::Buffer& mean,
                                      const gpu::Buffer& scale, bool invstd, int64_t C, double eps) {
  Graph& g = oc.g;
  const auto& pipe = g.ctx().pipeline("norm_batch", "main",
                                      {{"HAS_W", w >= 0 ? 1.0 : 0.0}, {"HAS_B", b >= 0 ? 1.0 : 0.0}, {"INVSTD", invstd ? 1.0 : 0.0}});
  auto u = std::make_shared<Uniform<BatchParams>>();
  u->init(g, oc.call.name);
  size_t idx = oc.node.steps.size();
  oc.node.steps.push_back(g.make_step(pipe,
                                      {{0, &g.buffer(x)},
                                       {1, w >= 0 ? &g.buffer(w) : &g.dummy_buffer()},
                                       {2, b >= 0 ? &g.buffer(b) : &g.dummy_buffer()},
                                       {3, &mean},
                                       {4, &scale},
                                       {5, &g.buffer(out)},
                                       {6, u->buf}},
                                      0));
  graph::Node* node = &oc.node;
  return [&g, x, out, u, node, idx, C, eps, &call = oc.call] {
    auto& in = g.tensor(x).dims;
    if (in.size() < 2 || in[1] != C)
      throw Error(ErrorKind::InvalidArgument, call.name + ": live input " + shape_str(in) + " changed C");
    Tensor& to = g.tensor(out);
    if (numel(in) > to.max_numel())
      throw Error(ErrorKind::InvalidArgument, call.name + ": output " + shape_str(in) + " exceeds its bound " +
                                                  shape_str(to.max_dims));
    to.dims = in;
    BatchParams p{static_cast<uint32_t>(numel(in)), static_cast<uint32_t>(prod(in, 2, in.size())),
                  static_cast<uint32_t>(C), static_cast<float>(eps)};
    u->write(g, p);
    set_groups(g, node->steps[idx], groups_for(p.numel));
  };
}

// [N, C, ...] float input of rank 2 to 5; returns C.
int64_t batch_channels(OpContext& oc, int32_t x, int32_t out) {
  require_float_io(oc, x, out);
  auto& md = oc.g.tensor(x).max_dims;
  if (md.size() < 2 || md.size() > 5)
    oc.fail(ErrorKind::Unsupported, "input " + shape_str(md) + ": rank must be 2 to 5 ([N, C, ...])");
  return md[1];
}

// Inference batch norm: [x, w?, b?, running_mean, running_var, momentum, eps, outs].
void build_batch_norm(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = first_output(oc, 1);
  int64_t C = batch_channels(oc, x, out);
  bool has_w = opt_param(oc, oc.arg(1), C, "weight");
  bool has_b = opt_param(oc, oc.arg(2), C, "bias");
  for (int k : {3, 4}) {
    if (g.is_null(oc.arg(k))) oc.fail(ErrorKind::Unsupported, k == 3 ? "running_mean is required" : "running_var is required");
    opt_param(oc, oc.arg(k), C, k == 3 ? "running_mean" : "running_var");
  }
  oc.node.resize = add_batch_apply(oc, x, out, has_w ? oc.arg(1) : -1, has_b ? oc.arg(2) : -1, g.buffer(oc.arg(3)),
                                   g.buffer(oc.arg(4)), false, C, g.number(oc.arg(6)));
}

// _native_batch_norm_legit: [x, w?, b?, running_mean, running_var, training, momentum, eps,
// ValueList(out, save_mean, save_invstd)]; .no_stats: the same without the running stats.
// training: statistics of the batch (mean and biased variance over every dim but 1, one workgroup
// per channel), saved as save_mean and save_invstd = 1 / sqrt(var + eps); running stats, when
// given, become (1 - momentum) * running + momentum * batch stat (unbiased variance), as ATen.
// Not training: the running stats normalize and save_mean / save_invstd are empty, as ATen.
void build_batch_norm_legit(OpContext& oc, bool with_running) {
  Graph& g = oc.g;
  const int a = with_running ? 2 : 0;  // offset of training/momentum/eps
  auto outs = g.value_list(oc.out());
  if (outs.size() != 3) oc.fail(ErrorKind::InvalidArgument, "expects 3 outputs (out, save_mean, save_invstd), got " + std::to_string(outs.size()));
  int32_t x = oc.arg(0), out = outs[0], save_mean = outs[1], save_invstd = outs[2];
  int64_t C = batch_channels(oc, x, out);
  int32_t w = opt_param(oc, oc.arg(1), C, "weight") ? oc.arg(1) : -1;
  int32_t b = opt_param(oc, oc.arg(2), C, "bias") ? oc.arg(2) : -1;
  int32_t rm = -1, rv = -1;
  if (with_running) {
    rm = opt_param(oc, oc.arg(3), C, "running_mean") ? oc.arg(3) : -1;
    rv = opt_param(oc, oc.arg(4), C, "running_var") ? oc.arg(4) : -1;
    if ((rm < 0) != (rv < 0)) oc.fail(ErrorKind::InvalidArgument, "running_mean and running_var must both be given or both be None");
  }
  bool training = g.boolean(oc.arg(3 + a));
  double momentum = g.number(oc.arg(4 + a)), eps = g.number(oc.arg(5 + a));
  for (int32_t t : {save_mean, save_invstd}) require_dtype(oc, t, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "save_mean/save_invstd");
  if (!training) {
    if (rm < 0) oc.fail(ErrorKind::InvalidArgument, "evaluation mode (training=False) needs running_mean and running_var");
    auto apply = add_batch_apply(oc, x, out, w, b, g.buffer(rm), g.buffer(rv), false, C, eps);
    oc.node.resize = [&g, apply, save_mean, save_invstd] {
      apply();
      g.tensor(save_mean).dims = {0};
      g.tensor(save_invstd).dims = {0};
    };
    return;
  }
  for (int32_t t : {save_mean, save_invstd})
    if (g.tensor(t).max_numel() < C)
      oc.fail(ErrorKind::InvalidArgument, "save_mean/save_invstd " + shape_str(g.tensor(t).max_dims) + " hold fewer than C = " + std::to_string(C));
  bool update = rm >= 0;
  const auto& pipe = g.ctx().pipeline("norm_batch_stats", "main", {{"UPDATE", update ? 1.0 : 0.0}});
  auto u = std::make_shared<Uniform<BatchStatsParams>>();
  u->init(g, oc.call.name + ".stats");
  // Without running stats their bindings get two distinct scratch words (never written; two
  // writable bindings of one buffer would be a validation error).
  const gpu::Buffer& rm_buf = update ? g.buffer(rm) : g.make_scratch(16, oc.call.name + ".no_running_mean");
  const gpu::Buffer& rv_buf = update ? g.buffer(rv) : g.make_scratch(16, oc.call.name + ".no_running_var");
  size_t stats = oc.node.steps.size();
  oc.node.steps.push_back(g.make_step(pipe,
                                      {{0, &g.buffer(x)}, {1, &g.buffer(save_mean)}, {2, &g.buffer(save_invstd)},
                                       {3, &rm_buf}, {4, &rv_buf}, {5, u->buf}},
                                      0, "stats"));
  auto apply = add_batch_apply(oc, x, out, w, b, g.buffer(save_mean), g.buffer(save_invstd), true, C, eps);
  graph::Node* node = &oc.node;
  oc.node.resize = [&g, x, save_mean, save_invstd, u, node, stats, apply, C, eps, momentum] {
    apply();  // checks the live input
    auto& in = g.tensor(x).dims;
    g.tensor(save_mean).dims = {C};
    g.tensor(save_invstd).dims = {C};
    BatchStatsParams p;
    p.channels = static_cast<uint32_t>(C);
    p.inner = static_cast<uint32_t>(prod(in, 2, in.size()));
    p.batch = static_cast<uint32_t>(in[0]);
    p.eps = static_cast<float>(eps);
    p.momentum = static_cast<float>(momentum);
    u->write(g, p);
    set_groups(g, node->steps[stats], C);
  };
}

ETW_REGISTER_OP("aten._native_batch_norm_legit_no_training.default", build_batch_norm);
ETW_REGISTER_OP("aten._native_batch_norm_legit.default", [](OpContext& oc) { build_batch_norm_legit(oc, true); });
ETW_REGISTER_OP("aten._native_batch_norm_legit.no_stats", [](OpContext& oc) { build_batch_norm_legit(oc, false); });
ETW_REGISTER_OP("aten.native_layer_norm.default", build_layer_norm);
ETW_REGISTER_OP("aten.native_group_norm.default", build_group_norm);
ETW_REGISTER_OP("et_vk.rms_norm.default", build_rms_norm);
ETW_REGISTER_OP("aten._softmax.default", [](OpContext& oc) { build_softmax(oc, kSoftmax); });
ETW_REGISTER_OP("aten._log_softmax.default", [](OpContext& oc) { build_softmax(oc, kLogSoftmax); });

}  // namespace
}  // namespace etwebgpu::ops
