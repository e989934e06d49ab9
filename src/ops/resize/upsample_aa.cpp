// _upsample_bilinear2d_aa (.default: [input, output_size, align_corners, scales_h, scales_w, out];
// .vec: [input, output_size, align_corners, scale_factors, out]) through upsample2d_aa.wgsl.
// Scales as PyTorch's area_pixel_compute_scale: align_corners (in-1)/(out-1), else 1/scale when a
// scale is given, else in/out. Input 4-D NCHW float (computed in f32).
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t total = 0, ih = 0, iw = 0, oh = 0, ow = 0, max_taps = 0;
  float scale_h = 0.f, scale_w = 0.f;
};

float aa_scale(int64_t in, int64_t out, bool align, std::optional<double> s) {
  if (align) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  if (s && *s > 0) return static_cast<float>(1.0 / *s);
  return static_cast<float>(in) / static_cast<float>(out);
}

// Taps per axis: PyTorch's max_interp_size = ceil(support) * 2 + 1.
uint32_t max_taps(float scale) { return static_cast<uint32_t>(std::ceil(scale >= 1.f ? scale : 1.f)) * 2 + 1; }

void build_aa(OpContext& oc, int32_t size_arg, std::optional<double> sh, std::optional<double> sw, bool vec) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "input");
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "output");
  if (g.tensor(x).rank() != 4) oc.fail(ErrorKind::Unsupported, "input " + shape_str(g.tensor(x).max_dims) + ": only 4-D NCHW");
  bool align = g.boolean(oc.arg(2));
  std::optional<std::vector<int64_t>> osize;
  if (!g.is_null(size_arg)) {
    osize = mem::list_arg(oc, size_arg, "output_size");
    if (osize->size() != 2 || (*osize)[0] <= 0 || (*osize)[1] <= 0)
      oc.fail(ErrorKind::InvalidArgument, "output_size must be 2 positive sizes, got " + shape_str(*osize));
  }
  if (vec) {  // exactly one of output_size and scale_factors
    if (osize && sh) oc.fail(ErrorKind::InvalidArgument, "only one of output_size and scale_factors may be given");
    if (!osize && !(sh && sw && *sh > 0 && *sw > 0))
      oc.fail(ErrorKind::InvalidArgument, "either output_size or 2 positive scale_factors must be given");
  } else if (!osize) {
    oc.fail(ErrorKind::InvalidArgument, "output_size must be given");
  }
  mem::require_distinct(oc, x, out);
  auto p = std::make_shared<Params>();
  oc.prepare([x, p, osize, sh, sw, align](const kernel::Live& l) {
    const auto& in = l.dims(x);
    int64_t H = in[2], W = in[3];
    int64_t oh = osize ? (*osize)[0] : static_cast<int64_t>(std::floor(static_cast<double>(H) * *sh));
    int64_t ow = osize ? (*osize)[1] : static_cast<int64_t>(std::floor(static_cast<double>(W) * *sw));
    if (H <= 0 || W <= 0 || oh <= 0 || ow <= 0)
      throw Error(ErrorKind::InvalidArgument, "input " + shape_str(in) + " and output size [" + std::to_string(oh) + ", " +
                                                  std::to_string(ow) + "] must be non-empty");
    p->total = kernel::u32(in[0] * in[1] * oh * ow, "output elements");
    p->ih = kernel::u32(H, "input height"), p->iw = kernel::u32(W, "input width");
    p->oh = kernel::u32(oh, "output height"), p->ow = kernel::u32(ow, "output width");
    // Scales given with output_size are used only by .default's scales_h/scales_w.
    p->scale_h = aa_scale(H, oh, align, sh);
    p->scale_w = aa_scale(W, ow, align, sw);
    p->max_taps = std::max(max_taps(p->scale_h), max_taps(p->scale_w));
  });
  oc.output(out, [x, p](const kernel::Live& l) {
    const auto& in = l.dims(x);
    return std::vector<int64_t>{in[0], in[1], p->oh, p->ow};
  });
  oc.add(kernel::Kernel("upsample2d_aa")
             .input("X", x)
             .output("O", out)
             .params<Params>([p](const kernel::Live&) { return *p; })
             .flat(out)
             .variant("bilinear_aa"));
}

void build_aa_default(OpContext& oc) {
  Graph& g = oc.g;
  build_aa(oc, oc.arg(1), g.opt_number(oc.arg(3)), g.opt_number(oc.arg(4)), false);
}

void build_aa_vec(OpContext& oc) {
  Graph& g = oc.g;
  std::optional<double> sh, sw;
  if (!g.is_null(oc.arg(3))) {
    auto v = g.double_list(oc.arg(3));
    if (v.size() != 2) oc.fail(ErrorKind::InvalidArgument, "scale_factors must have 2 elements");
    sh = v[0], sw = v[1];
  }
  build_aa(oc, oc.arg(1), sh, sw, true);
}

ETW_REGISTER_OP("aten._upsample_bilinear2d_aa.default", build_aa_default);
ETW_REGISTER_OP("aten._upsample_bilinear2d_aa.vec", build_aa_vec);

}  // namespace
}  // namespace etwebgpu::ops
