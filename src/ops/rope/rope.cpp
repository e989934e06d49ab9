// et_vk.apply_rotary_emb (interleaved, Llama), et_vk.apply_rotary_emb_hf (rotate-half, HF) and
// etwebgpu.rope_interleaved (the interleaved one as load-time fusion finds it, one tensor).
// xq [..., S, Hq, D], xk [..., S, Hk, D]: both in one flat dispatch (2D-folded grid).
#include "ops/rope/rope.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t pairs, d, h, s, start, width, pairs2, h2;
};

}  // namespace

namespace rope {

kernel::Kernel interleaved_rows(int32_t q, int32_t k, int32_t fc, int32_t fs, int32_t yq, int32_t yk, uint32_t head_dim,
                                std::function<int64_t(const kernel::Live&)> first_row) {
  return kernel::Kernel("rope_rotary")
      .define("PAIR")
      .constant("HF", 0.0)
      .input("X", q)
      .input("X2", k)
      .input("COS", fc)
      .input("SIN", fs)
      .output("Y", yq)
      .output("Y2", yk)
      .params<Params>([q, k, head_dim, first_row](const kernel::Live& l) {
        // Row m of [M, H * D] is sequence position m of the table (from first_row): s = M, H = width / D.
        const int64_t wq = l.dims(q).back(), wk = l.dims(k).back();
        const uint32_t start = first_row ? kernel::u32(first_row(l), "table row") : 0;
        return Params{kernel::u32(l.numel(q) / 2, "pair count"), head_dim, kernel::u32(wq / head_dim, "heads"),
                      kernel::u32(l.numel(q) / wq, "rows"), start, head_dim / 2, kernel::u32(l.numel(k) / 2, "pair count"),
                      kernel::u32(wk / head_dim, "heads")};
      })
      .groups([q, k](const kernel::Live& l) {
        return kernel::Groups::linear(ceil_div(static_cast<uint64_t>(l.numel(q) / 2 + l.numel(k) / 2), 256));
      });
}

}  // namespace rope

namespace {

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
  oc.output_like(outs[0], xq);
  oc.output_like(outs[1], xk);
  auto params = [xq, xk, fc, start_id, hf](const kernel::Live& l) {
    const auto& d = l.dims(xq);
    int64_t start = hf ? l.integer(start_id) : 0;
    return Params{kernel::u32(l.numel(xq) / 2, "pair count"), kernel::u32(d.end()[-1], "head_dim"),
                  kernel::u32(d.end()[-2], "heads"), kernel::u32(d.end()[-3], "sequence length"),
                  kernel::u32(start, "start_pos"), kernel::u32(l.dims(fc)[1], "freqs width"),
                  kernel::u32(l.numel(xk) / 2, "pair count"), kernel::u32(l.dims(xk).end()[-2], "heads")};
  };
  oc.add(kernel::Kernel("rope_rotary")
             .define("PAIR")
             .constant("HF", hf ? 1.0 : 0.0)
             .input("X", xq)
             .input("X2", xk)
             .input("COS", fc)
             .input("SIN", fs)
             .output("Y", outs[0])
             .output("Y2", outs[1])
             .params<Params>(params)
             .groups([xq, xk](const kernel::Live& l) {
               return kernel::Groups::linear(ceil_div(static_cast<uint64_t>(l.numel(xq) / 2 + l.numel(xk) / 2), 256));
             })
             .variant(hf ? "hf" : "interleaved"));
}

// etwebgpu.rope_interleaved [x, cos, sin, out] (graph/decoder_fusion.h: Llama's rotary embedding
// written out in aten ops): x and out [.., S, H, D/2, 2], cos and sin broadcasting as
// [.., S, 1, D/2]; the words of x are those of [.., S, H, D], so rope_rotary's interleaved mode
// applies with a [S, D/2] table.
void build_rope_interleaved_view(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), fc = oc.arg(1), fs = oc.arg(2), out = oc.out();
  for (int32_t id : {x, fc, fs, out}) require_dtype(oc, id, {VkDType::Float32, VkDType::Float16}, "tensor");
  const auto& xd = g.tensor(x).max_dims;
  if (xd.size() < 4 || xd.back() != 2)
    oc.fail(ErrorKind::InvalidArgument, "x must be [..., S, H, D/2, 2], got " + shape_str(xd));
  if (g.tensor(out).max_dims != xd) oc.fail(ErrorKind::InvalidArgument, "output shape differs from x " + shape_str(xd));
  // The tables right-aligned against [.., S, H, D/2]: [1.., S, 1, D/2].
  auto table_fits = [](const std::vector<int64_t>& x5, const std::vector<int64_t>& t) {
    size_t r = x5.size() - 1;
    if (t.size() > r) return false;
    std::vector<int64_t> pad(r - t.size(), 1);
    pad.insert(pad.end(), t.begin(), t.end());
    for (size_t d = 0; d + 3 < r; ++d)
      if (pad[d] != 1) return false;
    return pad[r - 1] == x5[r - 1] && pad[r - 2] == 1 && pad[r - 3] == x5[r - 3];
  };
  for (int32_t t : {fc, fs})
    if (!table_fits(xd, g.tensor(t).max_dims))
      oc.fail(ErrorKind::InvalidArgument, "cos/sin " + shape_str(g.tensor(t).max_dims) + " do not broadcast as [.., S, 1, D/2] against x " +
                                              shape_str(xd));
  oc.output_like(out, x);
  oc.add(kernel::Kernel("rope_rotary")
             .constant("HF", 0.0)
             .input("X", x)
             .input("COS", fc)
             .input("SIN", fs)
             .output("Y", out)
             .params<Params>([x, fc, fs, table_fits](const kernel::Live& l) {
               const auto& d = l.dims(x);
               for (int32_t t : {fc, fs})
                 if (!table_fits(d, l.dims(t)))
                   throw Error(ErrorKind::InvalidArgument, "cos/sin " + shape_str(l.dims(t)) +
                                                               " do not broadcast as [.., S, 1, D/2] against x " + shape_str(d));
               return Params{kernel::u32(l.numel(x) / 2, "pair count"), kernel::u32(2 * d.end()[-2], "head_dim"),
                             kernel::u32(d.end()[-3], "heads"), kernel::u32(d.end()[-4], "sequence length"), 0,
                             kernel::u32(d.end()[-2], "freqs width"), 0, 0};
             })
             .flat(x, 2)
             .variant("interleaved"));
}

void build_interleaved(OpContext& oc) { build_rope(oc, false); }
void build_hf(OpContext& oc) { build_rope(oc, true); }

ETW_REGISTER_OP("et_vk.apply_rotary_emb.default", build_interleaved);
ETW_REGISTER_OP("et_vk.apply_rotary_emb_hf.default", build_hf);
ETW_REGISTER_OP("etwebgpu.rope_interleaved", build_rope_interleaved_view);

}  // namespace
}  // namespace etwebgpu::ops
