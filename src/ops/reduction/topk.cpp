// aten.topk.default: the k largest (or smallest) elements along a dim with their int64 indices.
#include <algorithm>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t n = 0, len = 0, inner = 1, k = 0;
};

// [self, k, dim, largest, sorted, ValueList(values, indices)]. sorted=False leaves the order
// unspecified in PyTorch; the kernel always returns sorted order, which satisfies both.
void build_topk(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0);
  const auto outs = g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::InvalidArgument, "expects 2 outputs (values, indices), got " + std::to_string(outs.size()));
  int32_t values = outs[0], indices = outs[1];
  Tensor& tx = g.tensor(x);
  bool in_float = is_float(tx.dtype);
  if (!in_float && !is_int(tx.dtype)) oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(tx.dtype));
  if (is_float(g.tensor(values).dtype) != in_float || is_int(g.tensor(values).dtype) == in_float)
    oc.fail(ErrorKind::Unsupported, "values dtype must match the input's");
  if (!is_int(g.tensor(indices).dtype)) oc.fail(ErrorKind::Unsupported, "indices must be an integer tensor");
  int64_t k = g.integer(oc.arg(1));
  if (k < 0) oc.fail(ErrorKind::InvalidArgument, "k " + std::to_string(k) + " is negative");
  int64_t rank = tx.rank();
  // A 0-dim tensor takes dim 0 or -1, like a 1-element vector.
  int64_t dim = norm_dim(oc, g.integer(oc.arg(2)), std::max<int64_t>(rank, 1));
  if (rank == 0) dim = 0;
  bool largest = g.boolean(oc.arg(3));
  oc.prepare([x, k, dim](const kernel::Live& l) {
    const auto& in = l.dims(x);
    int64_t len = in.empty() ? 1 : in[dim];
    if (k > len)
      throw Error(ErrorKind::InvalidArgument, "k " + std::to_string(k) + " is larger than dim " + std::to_string(dim) + " of " +
                                                  shape_str(in));
  });
  auto od = [x, k, dim](const kernel::Live& l) {
    std::vector<int64_t> d = l.dims(x);
    if (!d.empty()) d[dim] = k;
    return d;
  };
  oc.output(values, od);
  oc.output(indices, od);
  oc.add(kernel::Kernel("reduction_topk")
             .constant("LARGEST", largest ? 1.0 : 0.0)
             .input("X", x)
             .output("V", values)
             .output("I", indices)
             .params<Params>([x, k, dim](const kernel::Live& l) {
               const auto& in = l.dims(x);
               int64_t inner = 1;
               for (size_t d = static_cast<size_t>(dim) + 1; d < in.size(); ++d) inner *= in[d];
               return Params{kernel::u32(l.numel(x), "element count"), kernel::u32(in.empty() ? 1 : in[dim], "dim size"),
                             kernel::u32(inner, "inner size"), kernel::u32(k, "k")};
             })
             .flat(x)
             .when([k](const kernel::Live&) { return k > 0; }));
}

ETW_REGISTER_OP("aten.topk.default", build_topk);

}  // namespace
}  // namespace etwebgpu::ops
