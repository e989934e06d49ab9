// upsample_bilinear2d.vec / upsample_nearest2d.vec on NCHW (or CHW) float tensors.
// Routes, chosen per run from the live output width (force_route "upsample" = "vec4" | "general"
// pins them where both exist): output width % 4 == 0 takes upsample2d_vec4.wgsl (4 adjacent
// outputs per invocation, one vec4 store); others upsample2d.wgsl (one output per invocation).
// Both evaluate the same f32 formulas, whatever the storage.
#include <cmath>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t total = 0, ih = 0, iw = 0, oh = 0, ow = 0, align = 0;
  float scale_h = 0.f, scale_w = 0.f;
};
static_assert(sizeof(Params) == 32);

// PyTorch's area_pixel_compute_scale (float, as its CPU kernels compute it).
float pixel_scale(int64_t in, int64_t out, bool align, std::optional<double> sf) {
  if (align) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  if (sf && *sf > 0) return static_cast<float>(1.0 / *sf);
  return static_cast<float>(in) / static_cast<float>(out);
}

void build_upsample(OpContext& oc, bool bilinear) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  int32_t size_arg = oc.arg(1);
  int32_t sf_arg = oc.arg(bilinear ? 3 : 2);
  bool align = bilinear ? g.boolean(oc.arg(2)) : false;
  auto& md = g.tensor(x).max_dims;
  if (md.size() != 4 && md.size() != 3)
    oc.fail(ErrorKind::Unsupported, "input " + shape_str(md) + ": only 4D NCHW (or 3D CHW) is supported");
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "output");
  std::optional<std::pair<int64_t, int64_t>> osize;
  std::optional<std::pair<double, double>> sf;
  if (!g.is_null(size_arg)) {
    auto v = g.int_list(size_arg);
    if (v.size() != 2) oc.fail(ErrorKind::InvalidArgument, "output_size must have 2 elements, got " + shape_str(v));
    if (v[0] <= 0 || v[1] <= 0) oc.fail(ErrorKind::InvalidArgument, "output_size " + shape_str(v) + " must be positive");
    osize = std::make_pair(v[0], v[1]);
  }
  if (!g.is_null(sf_arg)) {
    auto v = g.double_list(sf_arg);
    if (v.size() != 2) oc.fail(ErrorKind::InvalidArgument, "scale_factors must have 2 elements");
    if (!(v[0] > 0) || !(v[1] > 0)) oc.fail(ErrorKind::InvalidArgument, "scale_factors must be positive");
    sf = std::make_pair(v[0], v[1]);
  }
  if (osize && sf) oc.fail(ErrorKind::InvalidArgument, "only one of output_size and scale_factors may be given");
  if (!osize && !sf) oc.fail(ErrorKind::InvalidArgument, "either output_size or scale_factors must be given");
  const std::string forced = pinned_route(oc, "upsample", {"vec4", "general"});
  // A vec4 binding needs the buffer to hold one whole vec4 at the maximum shape.
  const Tensor& to = g.tensor(out);
  uint64_t eb = kernel::element_bytes(to.storage);
  bool has_vec4 = forced != "general" && static_cast<uint64_t>(to.max_numel()) * eb >= 4 * eb;
  // Output dims and the uniform, once per run from the live input.
  auto p = std::make_shared<Params>();
  oc.prepare([x, p, osize, sf, align](const kernel::Live& l) {
    const auto& in = l.dims(x);
    int64_t H = in[in.size() - 2], W = in[in.size() - 1];
    int64_t oh, ow;
    if (osize) {
      oh = osize->first, ow = osize->second;
    } else {  // PyTorch: floor(input_size * scale) in double
      oh = static_cast<int64_t>(std::floor(static_cast<double>(H) * sf->first));
      ow = static_cast<int64_t>(std::floor(static_cast<double>(W) * sf->second));
    }
    if (H <= 0 || W <= 0 || oh <= 0 || ow <= 0)
      throw Error(ErrorKind::InvalidArgument, "input " + shape_str(in) + " gives an empty output " + std::to_string(oh) + "x" +
                                                  std::to_string(ow));
    p->total = kernel::u32(numel(in) / (H * W) * oh * ow, "output elements");
    p->ih = kernel::u32(H, "input height"), p->iw = kernel::u32(W, "input width");
    p->oh = kernel::u32(oh, "output height"), p->ow = kernel::u32(ow, "output width");
    p->align = align ? 1u : 0u;
    p->scale_h = pixel_scale(H, oh, align, sf ? std::optional<double>(sf->first) : std::nullopt);
    p->scale_w = pixel_scale(W, ow, align, sf ? std::optional<double>(sf->second) : std::nullopt);
  });
  oc.output(out, [x, p](const kernel::Live& l) {
    const auto& in = l.dims(x);
    std::vector<int64_t> od(in.begin(), in.end() - 2);
    od.push_back(p->oh);
    od.push_back(p->ow);
    return od;
  });
  auto params = [p](const kernel::Live&) { return *p; };
  oc.add(kernel::Kernel("upsample2d")
             .constant("MODE", bilinear ? 0.0 : 1.0)
             .input("X", x)
             .output("O", out)
             .params<Params>(params)
             .flat(out)
             .when([p, has_vec4](const kernel::Live&) { return !has_vec4 || p->ow % 4 != 0; })
             .variant(bilinear ? "bilinear" : "nearest"));
  if (has_vec4)
    oc.add(kernel::Kernel("upsample2d_vec4")
               .constant("MODE", bilinear ? 0.0 : 1.0)
               .input("X", x)
               .output("O", out, true)
               .params<Params>(params)
               .flat(out, 4)
               .when([p](const kernel::Live&) { return p->ow % 4 == 0; })
               .variant(bilinear ? "bilinear_vec4" : "nearest_vec4"));
}

ETW_REGISTER_OP("aten.upsample_bilinear2d.vec", [](OpContext& oc) { build_upsample(oc, true); });
ETW_REGISTER_OP("aten.upsample_nearest2d.vec", [](OpContext& oc) { build_upsample(oc, false); });

}  // namespace
}  // namespace etwebgpu::ops
