// grid_sampler_2d [input, grid, interpolation_mode, padding_mode, align_corners, out] through
// grid_sampler2d.wgsl: input [N, C, H, W], grid [N, Ho, Wo, 2] and out [N, C, Ho, Wo], float (computed in f32).
// Modes are PyTorch's enums: interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
// 1 border, 2 reflection.
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0, total = 0, pad = 0;
};

void build_grid_sampler_2d(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), grid = oc.arg(1), out = oc.out();
  mem::require_tensor(oc, x, "input");
  mem::require_tensor(oc, grid, "grid");
  for (auto [id, what] : {std::pair{x, "input"}, std::pair{grid, "grid"}, std::pair{out, "output"}})
    require_dtype(oc, id, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, what);
  int64_t interp = mem::int_arg(oc, oc.arg(2), "interpolation_mode");
  int64_t padding = mem::int_arg(oc, oc.arg(3), "padding_mode");
  bool align = g.boolean(oc.arg(4));
  if (interp < 0 || interp > 2)
    oc.fail(ErrorKind::InvalidArgument, "interpolation_mode " + std::to_string(interp) + " (0 bilinear, 1 nearest, 2 bicubic)");
  if (padding < 0 || padding > 2)
    oc.fail(ErrorKind::InvalidArgument, "padding_mode " + std::to_string(padding) + " (0 zeros, 1 border, 2 reflection)");
  if (g.tensor(x).rank() != 4)
    oc.fail(ErrorKind::Unsupported, "input " + shape_str(g.tensor(x).max_dims) + ": only 4-D [N, C, H, W] (grid_sampler_2d)");
  mem::require_distinct(oc, x, out);
  mem::require_distinct(oc, grid, out);
  auto grid_ok = [x, grid](const kernel::Live& l) {
    const auto& in = l.dims(x);
    const auto& gd = l.dims(grid);
    if (gd.size() != 4 || gd[0] != in[0] || gd[3] != 2)
      throw Error(ErrorKind::InvalidArgument, "grid " + shape_str(gd) + " must be [N, H_out, W_out, 2] with N = " +
                                                  std::to_string(in[0]) + " (input " + shape_str(in) + ")");
    if (in[2] == 0 || in[3] == 0)
      throw Error(ErrorKind::InvalidArgument, "input " + shape_str(in) + " has an empty spatial dimension");
  };
  oc.prepare(grid_ok);
  oc.output(out, [x, grid](const kernel::Live& l) {
    const auto& in = l.dims(x);
    const auto& gd = l.dims(grid);
    return std::vector<int64_t>{in[0], in[1], gd[1], gd[2]};
  });
  oc.add(kernel::Kernel("grid_sampler2d")
             .constant("INTERP", double(interp))
             .constant("PADDING", double(padding))
             .constant("ALIGN", align ? 1.0 : 0.0)
             .input("X", x)
             .input("G", grid)
             .output("O", out)
             .params<Params>([x, grid, out](const kernel::Live& l) {
               const auto& in = l.dims(x);
               const auto& gd = l.dims(grid);
               return Params{kernel::u32(in[0], "batch"), kernel::u32(in[1], "channels"), kernel::u32(in[2], "height"),
                             kernel::u32(in[3], "width"), kernel::u32(gd[1], "output height"),
                             kernel::u32(gd[2], "output width"), kernel::u32(l.numel(out), "output elements"), 0};
             })
             .flat(out)
             .variant(interp == 0 ? "bilinear" : interp == 1 ? "nearest" : "bicubic"));
}

ETW_REGISTER_OP("aten.grid_sampler_2d.default", build_grid_sampler_2d);

}  // namespace
}  // namespace etwebgpu::ops
