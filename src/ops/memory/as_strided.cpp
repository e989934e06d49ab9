// aten.as_strided_copy.default [self, size IntList, stride IntList, storage_offset Int|Null, out]:
// a gather through the memory family's generic strided copy shader (mem_strided.wgsl, MODE 0):
// out[c] = self_flat[storage_offset + sum(c_d * stride_d)] over the contiguous storage of self.
#include <memory>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

void build_as_strided(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  auto size = g.int_list(oc.arg(1));
  auto stride = g.int_list(oc.arg(2));
  int64_t offset = g.is_null(oc.arg(3)) ? 0 : g.integer(oc.arg(3));
  if (size.size() != stride.size())
    oc.fail(ErrorKind::InvalidArgument, "size has " + std::to_string(size.size()) + " dims but stride has " +
                                            std::to_string(stride.size()));
  if (size.size() > kMaxRank) oc.fail(ErrorKind::Limit, "rank above 8");
  int64_t last = offset;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < 0 || stride[d] < 0) oc.fail(ErrorKind::InvalidArgument, "negative size or stride");
    if (size[d] > 0) last += (size[d] - 1) * stride[d];
  }
  if (offset < 0) oc.fail(ErrorKind::InvalidArgument, "negative storage_offset");
  // Checked at load against the serialized input and before each run against the live one (a
  // dynamic input may have shrunk below what the fixed strides read).
  auto past_input = [size, last](int64_t have) {
    return numel(size) > 0 && last >= have ? "reads element " + std::to_string(last) + " of an input holding " + std::to_string(have)
                                           : std::string();
  };
  std::string bad = past_input(g.tensor(x).max_numel());
  if (!bad.empty()) oc.fail(ErrorKind::InvalidArgument, bad);
  if (numel(size) > g.tensor(out).max_numel())
    oc.fail(ErrorKind::InvalidArgument, "size " + shape_str(size) + " exceeds the output " + shape_str(g.tensor(out).max_dims));
  oc.output(out, [x, size, past_input](const kernel::Live& l) {
    std::string bad = past_input(l.numel(x));
    if (!bad.empty()) throw Error(ErrorKind::InvalidArgument, bad);
    return size;
  });
  auto st = std::make_shared<mem::Strided>();
  st->it = size;
  st->src_strides = stride;
  st->src_base = offset;
  mem::add_strided(oc, x, out, mem::kAffine, "gather", st);
}

ETW_REGISTER_OP("aten.as_strided_copy.default", build_as_strided);

}  // namespace
}  // namespace etwebgpu::ops
