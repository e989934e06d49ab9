// copy_ [self, src, non_blocking, out = self]: the in-place copy ExecuTorch programs end with to
// write a mutable buffer (a KV cache) back. src broadcasts to self's shape. Nothing moves when the
// program merge aliased src onto self's buffer; a same-shape copy is one buffer copy; a broadcast
// goes through the strided-copy kernel.
#include <memory>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

void build_copy_inplace(OpContext& oc) {
  Graph& g = oc.g;
  int32_t self = oc.arg(0), src = oc.arg(1), out = oc.out();
  mem::require_tensor(oc, self, "self");
  mem::require_tensor(oc, src, "src");
  if (&g.buffer(out) != &g.buffer(self))
    oc.fail(ErrorKind::Format, "copy_ must write into self (its out argument is another tensor)");
  if (graph::host_dtype_of(g.tensor(self).dtype) != graph::host_dtype_of(g.tensor(src).dtype))
    oc.fail(ErrorKind::Unsupported, std::string("copy_ from ") + format::vk_dtype_name(g.tensor(src).dtype) + " into " +
                                        format::vk_dtype_name(g.tensor(self).dtype) + " (converting copies are not supported)");
  if (&g.buffer(src) == &g.buffer(self)) {
    oc.prepare([self, src](const kernel::Live& l) {
      if (l.dims(src) != l.dims(self)) throw Error(ErrorKind::Internal, "aliased copy_ with different shapes");
    });
    return;
  }
  auto st = std::make_shared<mem::Strided>();
  oc.prepare([self, src, st](const kernel::Live& l) {
    const auto& sd = l.dims(self);
    const auto& xd = l.dims(src);
    try {
      if (broadcast_shape(xd, sd) != sd) throw Error(ErrorKind::InvalidArgument, "");
    } catch (const Error&) {
      throw Error(ErrorKind::InvalidArgument, "src " + shape_str(xd) + " cannot be broadcast to self " + shape_str(sd));
    }
    st->it = sd;
    st->src_strides = broadcast_strides(xd, sd);
  });
  mem::add_strided(oc, src, self, mem::kAffine, "write_back", st);
}

ETW_REGISTER_OP("aten.copy_.default", build_copy_inplace);

}  // namespace
}  // namespace etwebgpu::ops
