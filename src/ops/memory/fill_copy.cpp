// copy (src broadcast into self's shape), fill.Tensor (a 0-dim value broadcast) and empty (a
// shape only). The copies are mem_strided.wgsl gathers with stride 0 on broadcast dims, converting
// to the output's dtype on the way (float / int / bool).
#include <memory>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::Strided;

// out (shape of `shape_of`) = `src` broadcast to it, cast to out's dtype.
void add_broadcast(OpContext& oc, int32_t shape_of, int32_t src) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  mem::require_tensor(oc, shape_of, "self");
  mem::require_tensor(oc, src, "src");
  uint32_t convert = mem::convert_code(oc, src, out, "src");
  auto st = std::make_shared<Strided>();
  oc.prepare([shape_of, src, st](const kernel::Live& l) {
    const auto& od = l.dims(shape_of);
    const auto& sd = l.dims(src);
    std::vector<int64_t> b;
    try {
      b = broadcast_shape(od, sd);
    } catch (const Error&) {
      b.clear();
    }
    if (b != od)
      throw Error(ErrorKind::InvalidArgument, "src " + shape_str(sd) + " is not broadcastable to self " + shape_str(od));
    st->it = od;
    st->src_strides = broadcast_strides(sd, od);
  });
  oc.output(out, [st, bound = g.tensor(out).max_dims](const kernel::Live&) { return mem::ranked(st->it, bound); });
  mem::add_strided(oc, src, out, mem::kAffine, convert ? "broadcast_convert" : "broadcast", st, convert);
}

// copy [self, src, non_blocking, out]: out takes self's shape and dtype, values from src.
void build_copy(OpContext& oc) { add_broadcast(oc, oc.arg(0), oc.arg(1)); }

// fill.Tensor [self, value, out]: value must be a 0-dim tensor.
void build_fill_tensor(OpContext& oc) {
  int32_t v = oc.arg(1);
  mem::require_tensor(oc, v, "value");
  if (oc.g.tensor(v).rank() != 0)
    oc.fail(ErrorKind::InvalidArgument, "fill only supports a 0-dimension value tensor but got one with " +
                                            std::to_string(oc.g.tensor(v).rank()) + " dimensions");
  add_broadcast(oc, oc.arg(0), v);
}

// empty.memory_format [size, dtype, layout, device, pin_memory, memory_format, out]: the output
// gets its live shape; its contents are unspecified (PyTorch leaves them uninitialized).
void build_empty(OpContext& oc) {
  Graph& g = oc.g;
  int32_t size = oc.arg(0), out = oc.out();
  for (int64_t d : mem::list_arg(oc, size, "size"))
    if (d < 0) oc.fail(ErrorKind::InvalidArgument, "negative dimension " + std::to_string(d) + " in size");
  mem::LiveInts live_size(oc, size, "size");
  oc.output(out, [live_size, bound = g.tensor(out).max_dims](const kernel::Live& l) {
    std::vector<int64_t> d = live_size(l);
    for (int64_t v : d)
      if (v < 0) throw Error(ErrorKind::InvalidArgument, "negative dimension in size " + shape_str(d));
    return mem::ranked(d, bound);
  });
}

ETW_REGISTER_OP("aten.copy.default", build_copy);
ETW_REGISTER_OP("aten.fill.Tensor", build_fill_tensor);
ETW_REGISTER_OP("aten.empty.memory_format", build_empty);

}  // namespace
}  // namespace etwebgpu::ops
