// masked_fill.Scalar, masked_scatter, masked_select, nonzero, repeat_interleave.Tensor through
// indexing_masked.wgsl. masked_select, nonzero and repeat_interleave have data-dependent output
// sizes: their node reads the total count back once per run (Node::readback) and sets the output's
// live dims before later nodes resize (see docs/OPS.md, "Data-dependent shapes").
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::fail_at;
using mem::set_out;

struct Params {
  ShapeU o, m, s;
  uint32_t nblocks = 0, cap = 0, value = 0, pad = 0;
};
static_assert(sizeof(Params) == 256);

constexpr uint32_t kBlock = 256;  // elements per block (WG in the shader)

enum WriteMode : uint32_t { kMaskedScatter = 0, kMaskedSelect = 1, kNonzero = 2, kRepeatInterleave = 3 };

std::vector<int64_t> broadcast_or_fail(const std::string& w, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                       const char* what) {
  try {
    return broadcast_shape(a, b);
  } catch (const Error&) {
    fail_at(w, ErrorKind::InvalidArgument, std::string(what) + " " + shape_str(b) + " does not broadcast with self " + shape_str(a));
  }
}

void require_bool_mask(const OpContext& oc, int32_t mask) {
  mem::require_tensor(oc, mask, "mask");
  if (oc.g.tensor(mask).dtype != VkDType::Bool)
    oc.fail(ErrorKind::Unsupported, std::string("mask must be a bool tensor, got ") + format::vk_dtype_name(oc.g.tensor(mask).dtype));
}

// masked_fill.Scalar [self, mask, value, out]: out has broadcast(self, mask)'s shape (ATen's
// functional form expands both).
void build_masked_fill(OpContext& oc) {
  Graph& g = oc.g;
  int32_t self = oc.arg(0), mask = oc.arg(1), out = oc.out();
  mem::require_tensor(oc, self, "self");
  require_bool_mask(oc, mask);
  mem::require_same_words(oc, self, out, "self");
  mem::require_distinct(oc, self, out);
  mem::require_distinct(oc, mask, out);
  VkDType ot = g.tensor(out).dtype;
  double v = g.number(oc.arg(2));
  uint32_t word = 0;
  if (is_float(ot)) {
    float f = static_cast<float>(v);
    std::memcpy(&word, &f, 4);
  } else if (is_boolish(ot)) {
    word = v != 0.0 ? 1u : 0u;
  } else {
    double t = std::trunc(v);
    if (!(t >= INT32_MIN && t <= INT32_MAX))
      oc.fail(ErrorKind::InvalidArgument, "value " + std::to_string(v) + " does not fit an int32 tensor");
    word = static_cast<uint32_t>(static_cast<int32_t>(t));
  }
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  const auto& pipe = g.ctx().pipeline("indexing_masked", "masked_fill");
  oc.node.steps.push_back(
      g.make_step(pipe, {{0, &g.buffer(self)}, {1, &g.buffer(mask)}, {2, &g.buffer(out)}, {3, u->buf}}, 0, "masked_fill"));
  Step* s = &oc.node.steps.back();
  std::string w = mem::who(oc);
  oc.node.resize = [&g, self, mask, out, word, u, s, w] {
    const auto& sd = g.tensor(self).dims;
    const auto& md = g.tensor(mask).dims;
    std::vector<int64_t> od = broadcast_or_fail(w, sd, md, "mask");
    set_out(g, w, out, od);
    Params p;
    p.o = make_shape(od);
    auto ms = broadcast_strides(md, od), ss = broadcast_strides(sd, od);
    p.m = make_shape(od, &ms);
    p.s = make_shape(od, &ss);
    p.value = word;
    u->write(g, p);
    set_groups(g, *s, groups_for(numel(od)));
  };
}

// The three passes of a counted write; `geom()` returns the iteration shape, the strides of the
// weight source and of self over it, the output capacity and masked_scatter's source length.
struct Counted {
  std::vector<int64_t> it, m_strides, s_strides;
  uint32_t cap = 0, value = 0;
};

// Returns the counts buffer, whose first word is the total after the run.
const gpu::Buffer& add_counted(OpContext& oc, WriteMode mode, uint32_t weight, int32_t self, int32_t wsrc, int32_t src,
                               std::function<Counted()> geom) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  mem::require_distinct(oc, wsrc, out);
  if (self >= 0) mem::require_distinct(oc, self, out);
  // The iteration shape is at most the weight source's bound, broadcast with self's for masks.
  std::vector<int64_t> max_dims = g.tensor(wsrc).max_dims;
  if (self >= 0) {
    try {
      max_dims = broadcast_shape(g.tensor(self).max_dims, max_dims);
    } catch (const Error&) {
      oc.fail(ErrorKind::InvalidArgument, "mask " + shape_str(max_dims) + " does not broadcast with self " +
                                              shape_str(g.tensor(self).max_dims));
    }
  }
  int64_t max_it = numel(max_dims);
  uint64_t max_blocks = ceil_div(static_cast<uint64_t>(std::max<int64_t>(max_it, 1)), kBlock);
  gpu::Buffer& counts = g.make_scratch((max_blocks + 1) * 4, oc.call.name + " counts");
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  const gpu::Buffer& self_buf = self >= 0 ? g.buffer(self) : g.buffer(wsrc);
  const gpu::Buffer& src_buf = src >= 0 ? g.buffer(src) : g.dummy_buffer();
  const auto& p_count = g.ctx().pipeline("indexing_masked", "block_count", {{"WEIGHT", double(weight)}});
  const auto& p_scan = g.ctx().pipeline("indexing_masked", "block_scan");
  const auto& p_write = g.ctx().pipeline("indexing_masked", "masked_write", {{"MODE", double(mode)}, {"WEIGHT", double(weight)}});
  size_t first = oc.node.steps.size();
  oc.node.steps.push_back(g.make_step(p_count, {{1, &g.buffer(wsrc)}, {3, u->buf}, {4, &counts}}, 0, "count"));
  oc.node.steps.push_back(g.make_step(p_scan, {{3, u->buf}, {4, &counts}}, 1, "scan"));
  oc.node.steps.push_back(g.make_step(p_write, {{0, &self_buf}, {1, &g.buffer(wsrc)}, {2, &g.buffer(out)}, {3, u->buf},
                                                {4, &counts}, {5, &src_buf}}, 0, "write"));
  graph::Node* node = &oc.node;
  std::string w = mem::who(oc);
  oc.node.resize = [&g, u, node, first, geom, max_blocks, w] {
    Counted c = geom();
    uint64_t n = static_cast<uint64_t>(numel(c.it));
    uint64_t blocks = ceil_div(n, kBlock);
    if (blocks > max_blocks) fail_at(w, ErrorKind::Internal, "more blocks than planned");
    Params p;
    p.o = make_shape(c.it);
    p.m = make_shape(c.it, &c.m_strides);
    p.s = make_shape(c.it, &c.s_strides);
    p.nblocks = static_cast<uint32_t>(blocks);
    p.cap = c.cap;
    p.value = c.value;
    u->write(g, p);
    set_groups(g, node->steps[first], blocks);
    set_groups(g, node->steps[first + 2], blocks);  // the scan (one invocation) always runs: it writes the total
  };
  return counts;
}

// Output dims from the count read back (data-dependent shape ops).
void on_count(OpContext& oc, const gpu::Buffer& counts, std::function<std::vector<int64_t>(uint32_t)> dims_of) {
  Graph& g = oc.g;
  oc.node.readback_src = &counts;
  int32_t out = oc.out();
  std::string w = mem::who(oc);
  oc.node.readback = [&g, out, dims_of, w](uint32_t total) {
    std::vector<int64_t> d = dims_of(total);
    if (numel(d) > g.tensor(out).max_numel())
      fail_at(w, ErrorKind::InvalidArgument, "the data gives output " + shape_str(d) + ", beyond its exported bound " +
                                                 shape_str(g.tensor(out).max_dims));
    set_out(g, w, out, d);
  };
}

// Before the count is known, the output holds its bound (so later nodes build against it).
void bound_out(Graph& g, int32_t out) { g.tensor(out).dims = g.tensor(out).max_dims; }

// masked_scatter [self, mask, source, out]: out has broadcast(self, mask)'s shape.
void build_masked_scatter(OpContext& oc) {
  Graph& g = oc.g;
  int32_t self = oc.arg(0), mask = oc.arg(1), src = oc.arg(2), out = oc.out();
  mem::require_tensor(oc, self, "self");
  require_bool_mask(oc, mask);
  mem::require_tensor(oc, src, "source");
  mem::require_same_words(oc, self, out, "self");
  mem::require_same_words(oc, src, out, "source");
  mem::require_distinct(oc, src, out);
  std::string w = mem::who(oc);
  add_counted(oc, kMaskedScatter, 0, self, mask, src, [&g, self, mask, src, out, w] {
    const auto& sd = g.tensor(self).dims;
    const auto& md = g.tensor(mask).dims;
    Counted c;
    c.it = broadcast_or_fail(w, sd, md, "mask");
    set_out(g, w, out, c.it);
    c.m_strides = broadcast_strides(md, c.it);
    c.s_strides = broadcast_strides(sd, c.it);
    c.cap = static_cast<uint32_t>(numel(c.it));
    c.value = static_cast<uint32_t>(g.tensor(src).numel());
    return c;
  });
}

// masked_select [self, mask, out]: 1-D, the elements of broadcast(self, mask) where mask is true.
void build_masked_select(OpContext& oc) {
  Graph& g = oc.g;
  int32_t self = oc.arg(0), mask = oc.arg(1), out = oc.out();
  mem::require_tensor(oc, self, "self");
  require_bool_mask(oc, mask);
  mem::require_same_words(oc, self, out, "self");
  if (g.tensor(out).rank() != 1) oc.fail(ErrorKind::InvalidArgument, "output must be 1-D, got " + shape_str(g.tensor(out).max_dims));
  std::string w = mem::who(oc);
  const gpu::Buffer& counts = add_counted(oc, kMaskedSelect, 0, self, mask, -1, [&g, self, mask, out, w] {
    const auto& sd = g.tensor(self).dims;
    const auto& md = g.tensor(mask).dims;
    Counted c;
    c.it = broadcast_or_fail(w, sd, md, "mask");
    c.m_strides = broadcast_strides(md, c.it);
    c.s_strides = broadcast_strides(sd, c.it);
    c.cap = static_cast<uint32_t>(g.tensor(out).max_numel());
    bound_out(g, out);
    return c;
  });
  on_count(oc, counts, [](uint32_t n) { return std::vector<int64_t>{n}; });
}

// nonzero [self, out]: [count, rank] coordinates (int64, held as int32 words), row-major order.
void build_nonzero(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "self");
  if (g.tensor(out).dtype != VkDType::Int64 && g.tensor(out).dtype != VkDType::Int32)
    oc.fail(ErrorKind::InvalidArgument, std::string("output must be int64, got ") + format::vk_dtype_name(g.tensor(out).dtype));
  int64_t r = g.tensor(x).rank();
  const auto& od = g.tensor(out).max_dims;
  if (od.size() != 2 || od[1] != r)
    oc.fail(ErrorKind::InvalidArgument, "output " + shape_str(od) + " must be [n, " + std::to_string(r) + "]");
  uint32_t weight = is_float(g.tensor(x).dtype) ? 1 : 0;
  const gpu::Buffer& counts = add_counted(oc, kNonzero, weight, x, x, -1, [&g, x, out] {
    Counted c;
    c.it = g.tensor(x).dims;
    c.m_strides = contiguous_strides(c.it);
    c.s_strides = c.m_strides;
    c.cap = static_cast<uint32_t>(g.tensor(out).max_numel());
    bound_out(g, out);
    return c;
  });
  on_count(oc, counts, [r](uint32_t n) { return std::vector<int64_t>{n, r}; });
}

// repeat_interleave.Tensor [repeats, output_size, out]: index i repeated repeats[i] times.
void build_repeat_interleave(OpContext& oc) {
  Graph& g = oc.g;
  int32_t reps = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, reps, "repeats");
  require_dtype(oc, reps, {VkDType::Int32, VkDType::Int64}, "repeats");
  if (g.tensor(reps).rank() > 1)
    oc.fail(ErrorKind::InvalidArgument, "repeats must be 0-D or 1-D, got " + shape_str(g.tensor(reps).max_dims));
  require_dtype(oc, out, {VkDType::Int32, VkDType::Int64}, "output");
  if (g.tensor(out).rank() != 1) oc.fail(ErrorKind::InvalidArgument, "output must be 1-D, got " + shape_str(g.tensor(out).max_dims));
  const gpu::Buffer& counts = add_counted(oc, kRepeatInterleave, 2, -1, reps, -1, [&g, reps, out] {
    Counted c;
    c.it = {g.tensor(reps).numel()};
    c.m_strides = {1};
    c.s_strides = {1};
    c.cap = static_cast<uint32_t>(g.tensor(out).max_numel());
    bound_out(g, out);
    return c;
  });
  // output_size, when given, must equal the sum (PyTorch checks it too).
  std::optional<int64_t> want;
  if (!g.is_null(oc.arg(1))) want = mem::int_arg(oc, oc.arg(1), "output_size");
  std::string w = mem::who(oc);
  on_count(oc, counts, [want, w](uint32_t n) {
    if (want && *want != static_cast<int64_t>(n))
      fail_at(w, ErrorKind::InvalidArgument, "output_size " + std::to_string(*want) + " differs from sum(repeats) = " + std::to_string(n));
    return std::vector<int64_t>{n};
  });
}

ETW_REGISTER_OP("aten.masked_fill.Scalar", build_masked_fill);
ETW_REGISTER_OP("aten.masked_scatter.default", build_masked_scatter);
ETW_REGISTER_OP("aten.masked_select.default", build_masked_select);
ETW_REGISTER_OP("aten.nonzero.default", build_nonzero);
ETW_REGISTER_OP("aten.repeat_interleave.Tensor", build_repeat_interleave);

}  // namespace
}  // namespace etwebgpu::ops
