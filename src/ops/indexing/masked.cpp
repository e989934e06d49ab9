// masked_fill.Scalar, masked_scatter, masked_select, nonzero, repeat_interleave.Tensor through
// indexing_masked.wgsl. masked_select, nonzero and repeat_interleave have data-dependent output
// sizes: their node reads the total count back once per run (Node::readback) and sets the output's
// live dims before later nodes resize (see docs/OPS.md, "Data-dependent shapes").
#include <cmath>
#include <functional>
#include <memory>
#include <optional>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::fail_at;
using mem::set_out;  // readback hooks (host side) set the data-dependent dims

struct Params {
  ShapeU o, m, s;
  uint32_t nblocks = 0, cap = 0, value = 0, pad = 0;
};
static_assert(sizeof(Params) == 256);

constexpr uint32_t kBlock = 256;  // elements per block (WG in the shader)

enum WriteMode : uint32_t { kMaskedScatter = 0, kMaskedSelect = 1, kNonzero = 2, kRepeatInterleave = 3 };

std::vector<int64_t> broadcast_or_fail(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const char* what) {
  try {
    return broadcast_shape(a, b);
  } catch (const Error&) {
    throw Error(ErrorKind::InvalidArgument, std::string(what) + " " + shape_str(b) + " does not broadcast with self " + shape_str(a));
  }
}

kernel::Groups blocks_over(const std::vector<int64_t>& it) {
  return kernel::Groups::linear(ceil_div(static_cast<uint64_t>(numel(it)), kBlock));
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
  const uint32_t word = scalar_word(oc, v, ot, "value");
  auto od = std::make_shared<std::vector<int64_t>>();
  oc.prepare([self, mask, od](const kernel::Live& l) { *od = broadcast_or_fail(l.dims(self), l.dims(mask), "mask"); });
  oc.output(out, [od](const kernel::Live&) { return *od; });
  oc.add(kernel::Kernel("indexing_masked", "masked_fill")
             .define("MASKED_FILL")
             .input("SELF", self)
             .input("W", mask)
             .output("O", out)
             .params<Params>([self, mask, od, word](const kernel::Live& l) {
               Params p;
               p.o = make_shape(*od);
               auto ms = broadcast_strides(l.dims(mask), *od), ss = broadcast_strides(l.dims(self), *od);
               p.m = make_shape(*od, &ms);
               p.s = make_shape(*od, &ss);
               p.value = word;
               return p;
             })
             .groups([od](const kernel::Live&) { return blocks_over(*od); })
             .variant("masked_fill"));
}

// The three passes of a counted write; `geom(live)` returns the iteration shape, the strides of the
// weight source and of self over it, the output capacity and masked_scatter's source length.
struct Counted {
  std::vector<int64_t> it, m_strides, s_strides;
  uint32_t cap = 0, value = 0;
};

// Returns the counts buffer, whose first word is the total after the run.
const gpu::Buffer& add_counted(OpContext& oc, WriteMode mode, uint32_t weight, int32_t self, int32_t wsrc, int32_t src,
                               std::function<Counted(const kernel::Live&)> geom) {
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
  // Counts and offsets are integers (u32 at any precision; the last word is read back as the size).
  gpu::Buffer& counts = g.make_scratch((max_blocks + 1) * 4, oc.call.name + " counts");
  auto c = std::make_shared<Counted>();
  auto params = std::make_shared<Params>();
  oc.prepare([geom, c, params, max_blocks](const kernel::Live& l) {
    *c = geom(l);
    uint64_t blocks = ceil_div(static_cast<uint64_t>(numel(c->it)), kBlock);
    if (blocks > max_blocks) throw Error(ErrorKind::Internal, "more blocks than planned");
    Params& p = *params;
    p.o = make_shape(c->it);
    p.m = make_shape(c->it, &c->m_strides);
    p.s = make_shape(c->it, &c->s_strides);
    p.nblocks = static_cast<uint32_t>(blocks);
    p.cap = c->cap;
    p.value = c->value;
  });
  auto read = [params](const kernel::Live&) { return *params; };
  auto blocks = [c](const kernel::Live&) { return blocks_over(c->it); };
  oc.add(kernel::Kernel("indexing_masked", "block_count")
             .define("BLOCK_COUNT")
             .constant("WEIGHT", weight)
             .input("W", wsrc)
             .buffer("COUNTS", counts, "u32", kernel::Access::ReadWrite)
             .params<Params>(read)
             .groups(blocks)
             .variant("count"));
  // The scan (one invocation) always runs: it writes the total.
  oc.add(kernel::Kernel("indexing_masked", "block_scan")
             .define("BLOCK_SCAN")
             .buffer("COUNTS", counts, "u32", kernel::Access::ReadWrite)
             .params<Params>(read)
             .groups([](const kernel::Live&) { return kernel::Groups::linear(1); })
             .variant("scan"));
  oc.add(kernel::Kernel("indexing_masked", "masked_write")
             .define("MASKED_WRITE")
             .constant("MODE", mode)
             .constant("WEIGHT", weight)
             .input("SELF", self >= 0 ? self : wsrc)
             .input("W", wsrc)
             .output("O", out)
             .buffer("COUNTS", counts, "u32", kernel::Access::ReadWrite)
             .input("SRC", src)
             .params<Params>(read)
             .groups(blocks)
             .variant("write"));
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
void bound_out(OpContext& oc, int32_t out) {
  oc.output(out, [bound = oc.g.tensor(out).max_dims](const kernel::Live&) { return bound; });
}

// masked_scatter [self, mask, source, out]: out has broadcast(self, mask)'s shape.
void build_masked_scatter(OpContext& oc) {
  int32_t self = oc.arg(0), mask = oc.arg(1), src = oc.arg(2), out = oc.out();
  mem::require_tensor(oc, self, "self");
  require_bool_mask(oc, mask);
  mem::require_tensor(oc, src, "source");
  mem::require_same_words(oc, self, out, "self");
  mem::require_same_words(oc, src, out, "source");
  mem::require_distinct(oc, src, out);
  // add_counted's prepare runs geom before the output's dims are read.
  auto it = std::make_shared<std::vector<int64_t>>();
  oc.output(out, [it](const kernel::Live&) { return *it; });
  add_counted(oc, kMaskedScatter, 0, self, mask, src, [self, mask, src, it](const kernel::Live& l) {
    Counted c;
    c.it = broadcast_or_fail(l.dims(self), l.dims(mask), "mask");
    *it = c.it;
    c.m_strides = broadcast_strides(l.dims(mask), c.it);
    c.s_strides = broadcast_strides(l.dims(self), c.it);
    c.cap = kernel::u32(numel(c.it), "element count");
    c.value = kernel::u32(l.numel(src), "source length");
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
  bound_out(oc, out);
  uint32_t cap = static_cast<uint32_t>(g.tensor(out).max_numel());
  const gpu::Buffer& counts = add_counted(oc, kMaskedSelect, 0, self, mask, -1, [self, mask, cap](const kernel::Live& l) {
    const auto& sd = l.dims(self);
    const auto& md = l.dims(mask);
    Counted c;
    c.it = broadcast_or_fail(sd, md, "mask");
    c.m_strides = broadcast_strides(md, c.it);
    c.s_strides = broadcast_strides(sd, c.it);
    c.cap = cap;
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
  bound_out(oc, out);
  uint32_t cap = static_cast<uint32_t>(g.tensor(out).max_numel());
  const gpu::Buffer& counts = add_counted(oc, kNonzero, 0, x, x, -1, [x, cap](const kernel::Live& l) {
    Counted c;
    c.it = l.dims(x);
    c.m_strides = contiguous_strides(c.it);
    c.s_strides = c.m_strides;
    c.cap = cap;
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
  bound_out(oc, out);
  uint32_t cap = static_cast<uint32_t>(g.tensor(out).max_numel());
  const gpu::Buffer& counts = add_counted(oc, kRepeatInterleave, 1, -1, reps, -1, [reps, cap](const kernel::Live& l) {
    Counted c;
    c.it = {l.numel(reps)};
    c.m_strides = {1};
    c.s_strides = {1};
    c.cap = cap;
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
