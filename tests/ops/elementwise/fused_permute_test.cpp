// fused_output_permutes (src/ops/elementwise/fused_permute.cpp): a fused elementwise call whose
// output only a permute reads writes the permuted tensor itself, one dispatch instead of two, with
// the unfused graph's and the reference's result; an output read elsewhere too keeps the permute.
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// ConvNeXt's stage end: the block's linear output [1, H, W, C] permuted to N, C, H, W, scaled by
// a per-channel constant [C, 1, 1], plus the residual [1, C, H, W], then permuted to N, H, W, C
// for the downsampling LayerNorm (here: `tail` reads the sum).
struct StageEnd {
  static constexpr int64_t C = 6, H = 3, W = 5;
  HostTensor y = random_f32({1, H, W, C}, 1), x = random_f32({1, C, H, W}, 2), gamma = random_f32({C, 1, 1}, 3);
  Id sum(OpGraph& g) const {
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id p = t({1, C, H, W}), m = t({1, C, H, W}), a = t({1, C, H, W});
    g.gb.op("aten.permute_copy.default", {g.input(y), g.gb.int_list({0, 3, 1, 2}), p});
    g.gb.op("aten.mul.Tensor", {p, g.constant(gamma), m});
    g.gb.op("aten.add.Tensor", {m, g.input(x), g.gb.int_(1), a});
    return a;
  }
  // Element (h, w, c) of the permuted sum.
  double want(int64_t h, int64_t w, int64_t c) const {
    const auto yv = f64(y), xv = f64(x), gv = f64(gamma);
    return yv[static_cast<size_t>((h * W + w) * C + c)] * gv[static_cast<size_t>(c)] + xv[static_cast<size_t>((c * H + h) * W + w)];
  }
};

TEST(FusedOutputPermutes, ConvNextStageEndWritesThePermutedSum) {
  ETW_REQUIRE_GPU();
  StageEnd s;
  auto build = [&](OpGraph& g) {
    g.gb.op("aten.permute_copy.default", {s.sum(g), g.gb.int_list({0, 2, 3, -3}), g.output(DType::Float32, {1, 3, 5, 6})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 4u);
  ASSERT_EQ(fused.ops.size(), 1u);
  EXPECT_TRUE(has(fused.ops[0], "permute+permute") && has(fused.ops[0], "mul") && has(fused.ops[0], "add")) << fused.ops[0];
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
  const auto got = f64(fused.out[0]);
  for (int64_t h = 0; h < StageEnd::H; ++h)
    for (int64_t w = 0; w < StageEnd::W; ++w)
      for (int64_t c = 0; c < StageEnd::C; ++c)
        EXPECT_NEAR(got[static_cast<size_t>((h * StageEnd::W + w) * StageEnd::C + c)], s.want(h, w, c), 1e-5);
}

// The sum read by the permute and by another call: the permute stays a dispatch of its own.
TEST(FusedOutputPermutes, ASumReadTwiceKeepsThePermute) {
  ETW_REQUIRE_GPU();
  StageEnd s;
  auto build = [&](OpGraph& g) {
    Id a = s.sum(g);
    g.gb.op("aten.permute_copy.default", {a, g.gb.int_list({0, 2, 3, 1}), g.output(DType::Float32, {1, 3, 5, 6})});
    g.gb.op("aten.neg.default", {a, g.output(DType::Float32, {1, 6, 3, 5})});
  };
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops.size(), 3u);
  EXPECT_EQ(fused.ops[1], "aten.permute_copy.default");
  for (size_t o = 0; o < 2; ++o) EXPECT_TRUE(SameAsUnfused(fused.out[o], plain.out[o])) << o;
}

}  // namespace
