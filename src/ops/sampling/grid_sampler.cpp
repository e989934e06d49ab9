// grid_sampler_2d [input, grid, interpolation_mode, padding_mode, align_corners, out] through
// grid_sampler2d.wgsl: input [N, C, H, W] f32, grid [N, Ho, Wo, 2] f32, out [N, C, Ho, Wo].
// Modes are PyTorch's enums: interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
// 1 border, 2 reflection.
#include <memory>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::fail_at;
using mem::set_out;

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
  const auto& pipe = g.ctx().pipeline("grid_sampler2d", "main",
                                      {{"INTERP", double(interp)}, {"PADDING", double(padding)}, {"ALIGN", align ? 1.0 : 0.0}});
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(x)}, {1, &g.buffer(grid)}, {2, &g.buffer(out)}, {3, u->buf}}, 0,
                                      interp == 0 ? "bilinear" : interp == 1 ? "nearest" : "bicubic"));
  Step* s = &oc.node.steps.back();
  std::string w = mem::who(oc);
  oc.node.resize = [&g, x, grid, out, u, s, w] {
    const auto& in = g.tensor(x).dims;
    const auto& gd = g.tensor(grid).dims;
    if (gd.size() != 4 || gd[0] != in[0] || gd[3] != 2)
      fail_at(w, ErrorKind::InvalidArgument, "grid " + shape_str(gd) + " must be [N, H_out, W_out, 2] with N = " +
                                                 std::to_string(in[0]) + " (input " + shape_str(in) + ")");
    if (in[2] == 0 || in[3] == 0)
      fail_at(w, ErrorKind::InvalidArgument, "input " + shape_str(in) + " has an empty spatial dimension");
    std::vector<int64_t> od = {in[0], in[1], gd[1], gd[2]};
    set_out(g, w, out, od);
    Params p{static_cast<uint32_t>(in[0]), static_cast<uint32_t>(in[1]), static_cast<uint32_t>(in[2]),
             static_cast<uint32_t>(in[3]), static_cast<uint32_t>(gd[1]), static_cast<uint32_t>(gd[2]),
             static_cast<uint32_t>(numel(od)), 0};
    u->write(g, p);
    set_groups(g, *s, groups_for(numel(od)));
  };
}

ETW_REGISTER_OP("aten.grid_sampler_2d.default", build_grid_sampler_2d);

}  // namespace
}  // namespace etwebgpu::ops
