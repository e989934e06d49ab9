// grid_sampler_2d (every interpolation x padding x align_corners combination, grids reaching
// well outside [-1, 1]) and _upsample_bilinear2d_aa (shrink, grow, mixed, scales, align_corners)
// against fp64 references; errors; the KernelCall form.
#include "reference/sampling/sampling_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor run_grid(const HostTensor& x, const HostTensor& grid, int interp, int padding, bool align) {
  OpGraph g;
  Id in = g.input(x), gr = g.input(grid);
  Id o = g.output(DType::Float32, {x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]});
  g.gb.op("aten.grid_sampler_2d.default", {in, gr, g.gb.int_(interp), g.gb.int_(padding), g.gb.boolean(align), o});
  return g.run()[0];
}

TEST(OpGridSampler2d, EveryInterpolationPaddingAndAlignCombination) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 5, 7}, 1, -2, 2);
  auto grid = random_f32({2, 4, 6, 2}, 2, -1.6f, 1.6f);  // about a third of the samples fall outside
  for (int interp : {0, 1, 2})
    for (int padding : {0, 1, 2})
      for (bool align : {false, true}) {
        auto ref = ref::grid_sampler_2d(x, grid, interp, padding, align);
        EXPECT_TRUE(Close(run_grid(x, grid, interp, padding, align), ref, 1e-5, 1e-5))
            << "interp " << interp << " padding " << padding << " align " << align;
      }
}

TEST(OpGridSampler2d, FarOutsideGridReflectsSeveralTimesAndOnePixelInputs) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 2, 4, 3}, 3);
  auto grid = random_f32({1, 3, 5, 2}, 4, -7.f, 7.f);
  for (bool align : {false, true}) {
    EXPECT_TRUE(Close(run_grid(x, grid, 0, 2, align), ref::grid_sampler_2d(x, grid, 0, 2, align), 1e-5, 1e-5)) << align;
    EXPECT_TRUE(Close(run_grid(x, grid, 2, 1, align), ref::grid_sampler_2d(x, grid, 2, 1, align), 1e-5, 1e-5)) << align;
  }
  auto one = random_f32({1, 1, 1, 1}, 5);
  for (int padding : {0, 1, 2})
    EXPECT_TRUE(Close(run_grid(one, grid, 0, padding, true), ref::grid_sampler_2d(one, grid, 0, padding, true), 1e-6, 1e-6))
        << padding;
}

TEST(OpGridSampler2d, DynamicInputAndGridRecomputeTheOutputOnRerun) {
  ETW_REQUIRE_GPU();
  auto x1 = random_f32({2, 2, 6, 5}, 10), g1 = random_f32({2, 4, 3, 2}, 11, -1.2f, 1.2f);
  auto x2 = random_f32({1, 2, 3, 4}, 12), g2 = random_f32({1, 2, 3, 2}, 13, -1.2f, 1.2f);
  OpGraph g;
  Id in = g.input(x1, {2, 2, 6, 5}, true), gr = g.input(g1, {2, 4, 3, 2}, true);
  Id o = g.output(DType::Float32, {2, 2, 4, 3});
  g.gb.op("aten.grid_sampler_2d.default", {in, gr, g.gb.int_(2), g.gb.int_(0), g.gb.boolean(false), o});
  EXPECT_TRUE(Close(g.run()[0], ref::grid_sampler_2d(x1, g1, 2, 0, false), 1e-5, 1e-5));
  EXPECT_TRUE(Close(g.rerun({x2, g2})[0], ref::grid_sampler_2d(x2, g2, 2, 0, false), 1e-5, 1e-5));
}

TEST(OpGridSampler2d, BadModesAndGridShapeAreErrorsNamingTheOp) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 1, 4, 4}, 1);
  auto e1 = load_error([&] { run_grid(x, random_f32({1, 2, 2, 2}, 2), 3, 0, false); });
  EXPECT_TRUE(has(e1, "aten.grid_sampler_2d.default") && has(e1, "interpolation_mode 3")) << e1;
  auto e2 = load_error([&] { run_grid(x, random_f32({1, 2, 2, 2}, 2), 0, 5, false); });
  EXPECT_TRUE(has(e2, "padding_mode 5")) << e2;
  auto e3 = load_error([&] { run_grid(x, random_f32({1, 2, 2, 3}, 2), 0, 0, false); });
  EXPECT_TRUE(has(e3, "must be [N, H_out, W_out, 2]")) << e3;
}

HostTensor run_aa(const HostTensor& x, std::vector<int64_t> size, bool align, std::optional<double> sh,
                  std::optional<double> sw, std::vector<int64_t> out_dims) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, out_dims);
  auto opt = [&](std::optional<double> v) { return v ? g.gb.dbl(*v) : g.gb.null(); };
  g.gb.op("aten._upsample_bilinear2d_aa.default", {in, g.gb.int_list(size), g.gb.boolean(align), opt(sh), opt(sw), o});
  return g.run()[0];
}

TEST(OpUpsampleBilinearAA, ShrinkGrowAndMixedSizesWithBothAlignModes) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 12, 10}, 6, -3, 3);
  std::vector<std::pair<int64_t, int64_t>> sizes = {{3, 5}, {4, 4}, {24, 15}, {7, 20}, {1, 1}, {12, 10}};
  for (auto [oh, ow] : sizes)
    for (bool align : {false, true}) {
      auto ref = ref::upsample_bilinear2d_aa(x, oh, ow, align, std::nullopt, std::nullopt);
      EXPECT_TRUE(Close(run_aa(x, {oh, ow}, align, std::nullopt, std::nullopt, ref.shape), ref, 1e-5, 1e-5))
          << oh << "x" << ow << " align " << align;
    }
}

TEST(OpUpsampleBilinearAA, GivenScalesOverrideTheSizeRatioAndVecComputesTheSize) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 2, 9, 8}, 7);
  auto ref = ref::upsample_bilinear2d_aa(x, 3, 3, false, 0.25, 0.5);
  EXPECT_TRUE(Close(run_aa(x, {3, 3}, false, 0.25, 0.5, {1, 2, 3, 3}), ref, 1e-5, 1e-5));
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, {1, 2, 3, 2});
  g.gb.op("aten._upsample_bilinear2d_aa.vec", {in, g.gb.null(), g.gb.boolean(false), g.gb.double_list({0.4, 0.3}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::upsample_bilinear2d_aa(x, 3, 2, false, 0.4, 0.3), 1e-5, 1e-5));
}

TEST(OpUpsampleBilinearAA, NonFourDimInputAndMissingSizeAreErrors) {
  ETW_REQUIRE_GPU();
  auto e1 = load_error([] { run_aa(random_f32({2, 6, 6}, 1), {3, 3}, false, std::nullopt, std::nullopt, {2, 3, 3}); });
  EXPECT_TRUE(has(e1, "aten._upsample_bilinear2d_aa.default") && has(e1, "only 4-D")) << e1;
  OpGraph g;
  Id in = g.input(random_f32({1, 1, 4, 4}, 1));
  Id o = g.output(DType::Float32, {1, 1, 2, 2});
  g.gb.op("aten._upsample_bilinear2d_aa.vec", {in, g.gb.null(), g.gb.boolean(false), g.gb.null(), o});
  auto e2 = load_error([&] { g.run(); });
  EXPECT_TRUE(has(e2, "output_size or 2 positive scale_factors")) << e2;
}

TEST(OpSamplingKernelCall, GridSamplerAndAAUpsampleOutVariants) {
  ETW_REQUIRE_GPU();
  auto xv = random_f32({1, 2, 6, 6}, 8), gv = random_f32({1, 3, 4, 2}, 9, -1.2f, 1.2f);
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, {1, 2, 6, 6}), gr = p.tensor(DType::Float32, {1, 3, 4, 2});
  auto s = p.tensor(DType::Float32, {1, 2, 3, 4}), a = p.tensor(DType::Float32, {1, 2, 2, 3});
  p.input(x);
  p.input(gr);
  p.kernel("aten::grid_sampler_2d", "out", {x, gr, p.int_(0), p.int_(2), p.boolean(false), s});
  p.kernel("aten::_upsample_bilinear2d_aa", "out", {s, p.int_list({2, 3}), p.boolean(false), p.null(), p.null(), a});
  p.output(a);
  auto model = Model::load_bytes(p.serialize());
  auto out = model->run({xv, gv});
  auto sampled = ref::grid_sampler_2d(xv, gv, 0, 2, false);
  EXPECT_TRUE(Close(out[0], ref::upsample_bilinear2d_aa(sampled, 2, 3, false, std::nullopt, std::nullopt), 1e-5, 1e-5));
}

}  // namespace
