// et_vk.apply_rotary_emb (interleaved, Llama) and et_vk.apply_rotary_emb_hf (rotate-half, HF).
// xq [..., S, Hq, D], xk [..., S, Hk, D]; one flat dispatch per output (2D-folded grid).
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t pairs, d, h, s, start, width, pad0, pad1;
};

void build_rope(OpContext& oc, bool hf) {
  Graph& g = oc.g;
  int32_t xq = oc.arg(0), xk = oc.arg(1), fc = oc.arg(2), fs = oc.arg(3);
  int32_t start_id = hf ? oc.arg(4) : -1;
  auto outs = g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::Format, "expects a ValueList of 2 outputs, got " + std::to_string(outs.size()));
  for (int32_t id : {xq, xk, fc, fs, outs[0], outs[1]}) require_dtype(oc, id, {VkDType::Float32, VkDType::Float16}, "tensor");
  for (int32_t id : {xq, xk})
    if (g.tensor(id).rank() < 3) oc.fail(ErrorKind::Unsupported, "xq/xk must be [..., S, H, D], got " + shape_str(g.tensor(id).max_dims));
  for (int32_t id : {fc, fs})
    if (g.tensor(id).rank() != 2) oc.fail(ErrorKind::Unsupported, "freqs must be 2-D, got " + shape_str(g.tensor(id).max_dims));
  int64_t d = g.tensor(xq).max_dims.back();
  if (g.tensor(xk).max_dims.back() != d) oc.fail(ErrorKind::InvalidArgument, "xq and xk head dims differ");
  if (d % 2) oc.fail(ErrorKind::InvalidArgument, "head_dim " + std::to_string(d) + " must be even");
  int64_t width = g.tensor(fc).max_dims[1];
  if (g.tensor(fs).max_dims != g.tensor(fc).max_dims) oc.fail(ErrorKind::InvalidArgument, "freqs_cos and freqs_sin shapes differ");
  if (hf && width != d)
    oc.fail(ErrorKind::Unsupported, "partial rotary embedding (rotary_dim " + std::to_string(width) + " != head_dim " +
                                        std::to_string(d) + ") is not supported");
  if (!hf && width * 2 != d)
    oc.fail(ErrorKind::InvalidArgument, "freqs width " + std::to_string(width) + " must be head_dim/2 = " + std::to_string(d / 2));
  if (hf) {
    auto k = g.kind(start_id);
    if (k != format::VkValueKind::Int && k != format::VkValueKind::SymInt && k != format::VkValueKind::Double)
      oc.fail(ErrorKind::Format, "start_pos must be an Int or SymInt");
    g.integer(start_id);
  }
  for (int i = 0; i < 2; ++i)
    if (g.tensor(outs[i]).max_numel() < g.tensor(i ? xk : xq).max_numel())
      oc.fail(ErrorKind::InvalidArgument, "output " + std::to_string(i) + " is smaller than its input");

  // Live checks of the freqs table against xq and xk, before either kernel's parameters.
  oc.prepare([xq, xk, fc, fs, start_id, hf](const kernel::Live& l) {
    const auto& tc = l.dims(fc);
    if (l.dims(fs) != tc)
      throw Error(ErrorKind::InvalidArgument, "freqs_cos " + shape_str(tc) + " and freqs_sin " + shape_str(l.dims(fs)) + " differ");
    int64_t s = l.dims(xq).end()[-3];
    if (l.dims(xk).end()[-3] != s) throw Error(ErrorKind::InvalidArgument, "xq and xk sequence lengths differ");
    int64_t start = hf ? l.integer(start_id) : 0;
    if (hf && (start < 0 || start + s > tc[0]))
      throw Error(ErrorKind::InvalidArgument, "rows start_pos " + std::to_string(start) + " + S " + std::to_string(s) +
                                                  " exceed the freqs table of " + std::to_string(tc[0]) + " rows");
    if (!hf && tc[0] != s)
      throw Error(ErrorKind::InvalidArgument, "freqs have " + std::to_string(tc[0]) + " rows but the sequence length is " +
                                                  std::to_string(s));
  });
  for (int i = 0; i < 2; ++i) {
    int32_t x = i ? xk : xq, out = outs[i];
    oc.output_like(out, x);
    oc.add(kernel::Kernel("rope_rotary")
               .constant("HF", hf ? 1.0 : 0.0)
               .input("X", x)
               .input("COS", fc)
               .input("SIN", fs)
               .output("Y", out)
               .params<Params>([x, fc, start_id, hf](const kernel::Live& l) {
                 const auto& d = l.dims(x);
                 int64_t start = hf ? l.integer(start_id) : 0;
                 return Params{kernel::u32(l.numel(x) / 2, "pair count"), kernel::u32(d.end()[-1], "head_dim"),
                               kernel::u32(d.end()[-2], "heads"), kernel::u32(d.end()[-3], "sequence length"),
                               kernel::u32(start, "start_pos"), kernel::u32(l.dims(fc)[1], "freqs width"), 0, 0};
               })
               .flat(x, 2)
               .variant(hf ? "hf" : "interleaved"));
  }
}

void build_interleaved(OpContext& oc) { build_rope(oc, false); }
void build_hf(OpContext& oc) { build_rope(oc, true); }

ETW_REGISTER_OP("et_vk.apply_rotary_emb.default", build_interleaved);
ETW_REGISTER_OP("et_vk.apply_rotary_emb_hf.default", build_hf);

}  // namespace
}  // namespace etwebgpu::ops
