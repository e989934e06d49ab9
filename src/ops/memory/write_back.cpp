// copy_ [self, src, non_blocking, out = self]: the in-place copy ExecuTorch programs end with to
// write a mutable buffer (a KV cache) back. src broadcasts to self's shape. Nothing moves when the
// program merge aliased src onto self's buffer; a same-shape copy is one buffer copy; a broadcast
// goes through the strided-copy kernel.
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::fail_at;

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
  std::string w = mem::who(oc);
  if (&g.buffer(src) == &g.buffer(self)) {
    oc.node.resize = [&g, self, src, w] {
      if (g.tensor(src).dims != g.tensor(self).dims)
        fail_at(w, ErrorKind::Internal, "aliased copy_ with different shapes");
    };
    return;
  }
  auto ss = mem::add_strided(oc, src, self, mem::kAffine, "write_back");
  Step* s = &oc.node.steps[ss.step];
  oc.node.resize = [&g, self, src, ss, s, w] {
    const auto& sd = g.tensor(self).dims;
    const auto& xd = g.tensor(src).dims;
    try {
      if (broadcast_shape(xd, sd) != sd) throw Error(ErrorKind::InvalidArgument, "");
    } catch (const Error&) {
      fail_at(w, ErrorKind::InvalidArgument, "src " + shape_str(xd) + " cannot be broadcast to self " + shape_str(sd));
    }
    mem::Strided st;
    st.it = sd;
    st.src_strides = broadcast_strides(xd, sd);
    mem::write_strided(g, *s, ss, st);
  };
}

ETW_REGISTER_OP("aten.copy_.default", build_copy_inplace);

}  // namespace
}  // namespace etwebgpu::ops
