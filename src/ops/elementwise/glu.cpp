// aten.glu.default (gated linear unit): first half along dim times the sigmoid of the second half.
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t n = 0, half_inner = 0, pad[2] = {0, 0};
};

// [self, dim, out]
void build_glu(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  Tensor& tx = g.tensor(x);
  if (!is_float(tx.dtype) || !is_float(g.tensor(out).dtype))
    oc.fail(ErrorKind::Unsupported, std::string("dtype ") + format::vk_dtype_name(tx.dtype) + " -> " +
                                        format::vk_dtype_name(g.tensor(out).dtype) + " (float only)");
  if (tx.rank() == 0) oc.fail(ErrorKind::InvalidArgument, "glu does not support 0-dim tensors");
  int64_t dim = norm_dim(oc, g.integer(oc.arg(1)), tx.rank());
  oc.output(out, [x, dim](const kernel::Live& l) {
    std::vector<int64_t> od = l.dims(x);
    if (od[dim] % 2 != 0)
      throw Error(ErrorKind::InvalidArgument, "halving dimension " + std::to_string(dim) + " of " + shape_str(od) + " must be even");
    od[dim] /= 2;
    return od;
  });
  // Elements of the output from `dim` on: a half sits that many elements before its gate.
  auto half_inner = [out, dim](const kernel::Live& l) {
    const auto& od = l.dims(out);
    int64_t n = 1;
    for (size_t d = static_cast<size_t>(dim); d < od.size(); ++d) n *= od[d];
    return n;
  };
  oc.add(kernel::Kernel("elementwise_glu")
             .input("X", x)
             .output("Y", out)
             .params<Params>([out, half_inner](const kernel::Live& l) {
               return Params{kernel::u32(l.numel(out), "element count"), kernel::u32(half_inner(l), "half size"), {0, 0}};
             })
             .flat(out)
             .when([half_inner](const kernel::Live& l) { return half_inner(l) != 0; }));
}

ETW_REGISTER_OP("aten.glu.default", build_glu);

}  // namespace
}  // namespace etwebgpu::ops
