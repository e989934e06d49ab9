// aten._to_copy / dim_order_ops._to_dim_order_copy / dim_order_ops._clone_dim_order: copy with
// a dtype conversion to the output tensor's dtype (the requested dtype is never serialized).
// Same storage -> buffer copy (no dispatch; nothing at all when input and output share a
// buffer); otherwise a flat conversion kernel (conversion_convert.wgsl).
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t n = 0, pad[3] = {0, 0, 0};
};

enum class Cls { Float, Int, Bool, Other };
Cls cls(VkDType t) {
  if (t == VkDType::Float32) return Cls::Float;
  if (t == VkDType::Int32 || t == VkDType::Int64) return Cls::Int;  // int64 lives as int32 words
  if (t == VkDType::Bool) return Cls::Bool;
  return Cls::Other;
}

// dim_order must be the identity permutation (or empty / Null = contiguous).
void check_dim_order(const OpContext& oc, int32_t v, int64_t rank) {
  if (oc.g.is_null(v)) return;
  auto d = oc.g.int_list(v);
  if (d.empty()) return;
  bool ok = static_cast<int64_t>(d.size()) == rank;
  for (size_t i = 0; ok && i < d.size(); ++i) ok = d[i] == static_cast<int64_t>(i);
  if (!ok)
    oc.fail(ErrorKind::Unsupported, "dim_order " + shape_str(d) + " for a rank-" + std::to_string(rank) +
                                        " tensor; only the contiguous order 0..n-1 is supported");
}

void build_copy(OpContext& oc, int dim_order_arg) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  Tensor& tx = g.tensor(x);
  VkDType it = tx.dtype, ot = g.tensor(out).dtype;
  if (dim_order_arg >= 0) check_dim_order(oc, oc.arg(dim_order_arg), static_cast<int64_t>(tx.max_dims.size()));
  require_same_numel(oc, x, out);

  Cls ci = cls(it), co = cls(ot);
  int mode = -1;  // -1: plain copy
  if (it == ot || (ci == co && ci != Cls::Other)) mode = -1;
  else if (ci == Cls::Float && co == Cls::Int) mode = 0;
  else if ((ci == Cls::Int || ci == Cls::Bool) && co == Cls::Float) mode = 1;
  else if (ci == Cls::Float && co == Cls::Bool) mode = 2;
  else if (ci == Cls::Int && co == Cls::Bool) mode = 3;
  else if (ci == Cls::Bool && co == Cls::Int) mode = 4;  // bytes widen to int32 words
  else
    oc.fail(ErrorKind::Unsupported, std::string("conversion from ") + format::vk_dtype_name(it) + " to " +
                                        format::vk_dtype_name(ot));

  oc.output_like(out, x);
  if (mode < 0) {
    const gpu::Buffer* src = &g.buffer(x);
    const gpu::Buffer* dst = &g.buffer(out);
    if (src == dst) return;  // aliased storage: the data is already there
    // One storage on both sides: the bytes copy as they are.
    if (kernel::element_bytes(tx.storage) != kernel::element_bytes(g.tensor(out).storage))
      oc.fail(ErrorKind::Internal, std::string("copy between ") + kernel::storage_name(tx.storage) + " and " +
                                       kernel::storage_name(g.tensor(out).storage) + " storage");
    oc.node.steps.emplace_back();
    Step* s = &oc.node.steps.back();
    s->variant = "copy";
    oc.node.resize = [&g, out, s, src, dst] {
      const Tensor& to = g.tensor(out);
      // An empty tensor records nothing (copy_src null skips the step).
      s->copy_src = to.numel() ? src : nullptr;
      s->copy_dst = dst;
      s->copy_size = to.bytes(to.numel());
    };
    return;
  }
  // A dispatch cannot read and write one buffer through two bindings; memory planning never
  // aliases a converting copy's input and output, so this only guards hand-made graphs.
  if (&g.buffer(x) == &g.buffer(out))
    oc.fail(ErrorKind::Unsupported, std::string("input and output share one buffer; an in-place ") +
                                        format::vk_dtype_name(it) + " -> " + format::vk_dtype_name(ot) +
                                        " conversion is not supported");
  oc.add(kernel::Kernel("conversion_convert")
             .constant("MODE", mode)
             .input("X", x)
             .output("Y", out)
             .params<Params>([out](const kernel::Live& l) { return Params{kernel::u32(l.numel(out), "element count"), {0, 0, 0}}; })
             .flat(out)
             .variant("convert"));
}

// _to_copy: [self, dtype, layout, device, pin_memory, non_blocking, memory_format, out]
void build_to_copy(OpContext& oc) { build_copy(oc, -1); }
// _to_dim_order_copy: [self, dtype, layout, device, pin_memory, non_blocking, dim_order, out]
void build_to_dim_order_copy(OpContext& oc) { build_copy(oc, 6); }
// _clone_dim_order: [self, non_blocking, dim_order, out]
void build_clone_dim_order(OpContext& oc) { build_copy(oc, 2); }

ETW_REGISTER_OP("aten._to_copy.default", build_to_copy);
ETW_REGISTER_OP("dim_order_ops._to_dim_order_copy.default", build_to_dim_order_copy);
ETW_REGISTER_OP("dim_order_ops._clone_dim_order.default", build_clone_dim_order);

}  // namespace
}  // namespace etwebgpu::ops
