// et_vk.prepack.default: [constant, out]. The constant's words go straight into the output's
// buffer at build time, so no run-time work and no second copy of the weight.
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

void build_prepack(OpContext& oc) {
  Graph& g = oc.g;
  int32_t src = oc.arg(0), out = oc.out();
  if (g.tensor(src).constant_id < 0) oc.fail(ErrorKind::Format, "source %" + std::to_string(src) + " is not a constant");
  Tensor& to = g.tensor(out);
  if (to.constant_id >= 0) oc.fail(ErrorKind::Format, "output is a constant");
  g.upload_constant_into(out, src);
}

ETW_REGISTER_OP("et_vk.prepack.default", build_prepack);

}  // namespace
}  // namespace etwebgpu::ops
