// reflection_pad{1,2,3}d and replication_pad{1,2,3}d: one mem_strided.wgsl dispatch each
// (MODE kReflect / kReplicate). Pads come in (left, right) pairs from the last dim backwards;
// negative pads crop, as in PyTorch.
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::fail_at;
using mem::Strided;

// [self, padding, out] over the last `k` dims of a rank k+1 (unbatched) or k+2 (batched) input.
void build_pad(OpContext& oc, size_t k, bool reflect) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  const Tensor& x = g.tensor(oc.arg(0));
  int64_t r = x.rank();
  if (r != static_cast<int64_t>(k) + 1 && r != static_cast<int64_t>(k) + 2)
    oc.fail(ErrorKind::InvalidArgument, "expected a " + std::to_string(k + 1) + "D or " + std::to_string(k + 2) +
                                            "D (batch mode) input, got " + shape_str(x.max_dims));
  std::vector<int64_t> pad = mem::list_arg(oc, oc.arg(1), "padding");
  if (pad.size() != 2 * k)
    oc.fail(ErrorKind::InvalidArgument, "padding must have " + std::to_string(2 * k) + " elements, got " + shape_str(pad));
  std::string w = mem::who(oc);
  mem::add_single(oc, reflect ? mem::kReflect : mem::kReplicate, reflect ? "reflection_pad" : "replication_pad",
             [pad, k, reflect, w](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    size_t r = in.size();
    od = in;
    Strided st;
    st.lo.assign(r, 0);
    for (size_t j = 0; j < k; ++j) {
      size_t d = r - 1 - j;
      int64_t lo = pad[2 * j], hi = pad[2 * j + 1], n = in[d];
      // Non-spatial dims may be 0 (empty batch); a padded dim needs elements to copy from.
      if (n == 0)
        fail_at(w, ErrorKind::InvalidArgument, "input " + shape_str(in) + " has an empty padded dim " + std::to_string(d));
      if (reflect && (lo >= n || hi >= n))
        fail_at(w, ErrorKind::InvalidArgument, "padding size should be less than the corresponding input dimension, but got: padding (" +
                                                   std::to_string(lo) + ", " + std::to_string(hi) + ") at dimension " +
                                                   std::to_string(d) + " of input " + shape_str(in));
      od[d] = n + lo + hi;
      if (od[d] < 1)
        fail_at(w, ErrorKind::InvalidArgument, "input " + shape_str(in) + " is too small for padding " + shape_str(pad) +
                                                   ": dim " + std::to_string(d) + " would be " + std::to_string(od[d]));
      st.lo[d] = lo;
    }
    st.it = od;
    st.src_dims = in;
    st.src_strides = contiguous_strides(in);
    return st;
  });
}

void build_reflection_pad1d(OpContext& oc) { build_pad(oc, 1, true); }
void build_reflection_pad2d(OpContext& oc) { build_pad(oc, 2, true); }
void build_reflection_pad3d(OpContext& oc) { build_pad(oc, 3, true); }
void build_replication_pad1d(OpContext& oc) { build_pad(oc, 1, false); }
void build_replication_pad2d(OpContext& oc) { build_pad(oc, 2, false); }
void build_replication_pad3d(OpContext& oc) { build_pad(oc, 3, false); }

ETW_REGISTER_OP("aten.reflection_pad1d.default", build_reflection_pad1d);
ETW_REGISTER_OP("aten.reflection_pad2d.default", build_reflection_pad2d);
ETW_REGISTER_OP("aten.reflection_pad3d.default", build_reflection_pad3d);
ETW_REGISTER_OP("aten.replication_pad1d.default", build_replication_pad1d);
ETW_REGISTER_OP("aten.replication_pad2d.default", build_replication_pad2d);
ETW_REGISTER_OP("aten.replication_pad3d.default", build_replication_pad3d);

}  // namespace
}  // namespace etwebgpu::ops
