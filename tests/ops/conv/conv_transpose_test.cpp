// aten.convolution with transposed = true (conv_transpose.wgsl: a gather computing four output
// channels of a group per invocation, visiting only the taps that divide) against the fp64
// reference: channel counts that leave a partial block of four, the tap stepping for strides,
// paddings, output_padding and dilation, groups, bias, a fused epilogue, f16 storage and a grid
// past 65535 workgroups.
#include "reference/conv/conv_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// Builds one transposed convolution of x (rank 3 or 4) by w, with `a`'s settings.
std::unique_ptr<OpGraph> make(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const ref::ConvArgs& a,
                              const std::vector<int64_t>& od) {
  auto g = std::make_unique<OpGraph>();
  bool c1 = x.shape.size() == 3;
  auto pair = [c1](int64_t h, int64_t w) { return c1 ? std::vector<int64_t>{w} : std::vector<int64_t>{h, w}; };
  auto& gb = g->gb;
  gb.op("aten.convolution.default",
        {g->input(x), g->constant(w), bias ? g->constant(*bias) : gb.null(), gb.int_list(pair(a.sh, a.sw)),
         gb.int_list(pair(a.ph, a.pw)), gb.int_list(pair(a.dh, a.dw)), gb.boolean(true), gb.int_list(pair(a.oph, a.opw)),
         gb.int_(a.groups), g->output(DType::Float32, od)});
  return g;
}

ref::ConvArgs args(int64_t s, int64_t p = 0, int64_t op = 0, int64_t d = 1, int64_t groups = 1) {
  ref::ConvArgs a;
  a.sh = a.sw = s;
  a.ph = a.pw = p;
  a.oph = a.opw = op;
  a.dh = a.dw = d;
  a.groups = groups;
  a.transposed = true;
  return a;
}

void expect_transposed(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const ref::ConvArgs& a,
                       const std::string& what, double tol = 1e-4, LoadOptions o = {}) {
  auto ref = ref::conv(x, w, bias, a);
  auto g = make(x, w, bias, a, ref.shape);
  auto got = g->run(o)[0];
  EXPECT_EQ(got.shape, ref.shape) << what;
  EXPECT_TRUE(Close(got, ref, tol, tol)) << what;
  EXPECT_EQ(g->variants(), std::vector<std::string>{"conv_transpose"}) << what;
}

}  // namespace

// The UNet decoder's ConvTranspose2d(C, C/2, 2, stride 2): every output has exactly one tap.
// OC 8 fills blocks of four; OC 6 and 3 leave a partial block whose missing channels are not stored.
TEST(OpConvTranspose, Kernel2Stride2WithOutputChannelsInAndOutOfBlocksOfFour) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 16, 5, 7}, 1);
  for (int64_t oc : {8, 6, 3}) {
    auto w = random_f32({16, oc, 2, 2}, 2), b = random_f32({oc}, 3);
    expect_transposed(x, w, &b, args(2), "bias, OC " + std::to_string(oc));
    expect_transposed(x, w, nullptr, args(2), "no bias, OC " + std::to_string(oc));
  }
  auto x1 = random_f32({1, 5, 9}, 4), w1 = random_f32({5, 7, 2}, 5);  // 1-D
  expect_transposed(x1, w1, nullptr, args(2), "1-D");
}

// Kernel 3 stride 2: outputs alternate between one and two taps per dim; padding crops the
// first rows, output_padding adds rows that only the last taps (or just the bias) reach.
TEST(OpConvTranspose, Kernel3Stride2PaddingAndOutputPaddingWithAndWithoutBias) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 5, 6, 5}, 6), w = random_f32({5, 7, 3, 3}, 7), b = random_f32({7}, 8);
  expect_transposed(x, w, &b, args(2, 1, 1), "pad 1 output_padding 1, bias");
  expect_transposed(x, w, nullptr, args(2, 1, 1), "pad 1 output_padding 1, no bias");
  ref::ConvArgs a = args(2);
  a.sw = 3, a.ph = 0, a.pw = 2, a.oph = 1, a.opw = 2;  // asymmetric
  expect_transposed(x, w, &b, a, "stride 2x3, pad 0x2, output_padding 1x2");
}

// Stride 1 (every tap contributes) and stride 3 over kernel 2 (outputs no tap reaches: bias only).
TEST(OpConvTranspose, StrideOneVisitsEveryTapAndStridePastTheKernelLeavesBiasOnlyOutputs) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 6, 5, 6}, 9), b = random_f32({5}, 10);
  expect_transposed(x, random_f32({6, 5, 3, 3}, 11), &b, args(1, 1), "stride 1 pad 1");
  expect_transposed(x, random_f32({6, 5, 2, 2}, 12), &b, args(3, 0, 2), "stride 3 kernel 2 output_padding 2");
}

// Channel blocks never cross a group: 5 channels per group (blocks of 4 + 1), 4 per group, and
// one per group (each group's block is a single channel).
TEST(OpConvTranspose, GroupsKeepEachChannelBlockInsideItsGroup) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 6, 4, 5}, 13);
  auto b15 = random_f32({15}, 14), b8 = random_f32({8}, 15), b6 = random_f32({6}, 16);
  expect_transposed(x, random_f32({6, 5, 3, 3}, 17), &b15, args(2, 1, 1, 1, 3), "groups 3, 5 channels each");
  expect_transposed(x, random_f32({6, 4, 2, 2}, 18), &b8, args(2, 0, 0, 1, 2), "groups 2, 4 channels each");
  expect_transposed(x, random_f32({6, 1, 3, 3}, 19), &b6, args(2, 1, 0, 1, 6), "groups 6, 1 channel each");
  expect_transposed(x, random_f32({6, 1, 3, 3}, 19), nullptr, args(2, 1, 0, 1, 6), "groups 6, no bias");
}

// Dilation != 1 takes the path that tests every tap for divisibility: dilation 2 with stride 2
// (taps alias), dilation 2x3 with stride 3x2, and output_padding allowed by dilation alone.
TEST(OpConvTranspose, DilationTestsEveryTapForDivisibility) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 4, 5, 6}, 20), w = random_f32({4, 6, 3, 3}, 21), b = random_f32({6}, 22);
  expect_transposed(x, w, &b, args(2, 1, 1, 2), "dilation 2 stride 2");
  ref::ConvArgs a = args(3, 1, 0, 2);
  a.sw = 2, a.dw = 3, a.opw = 1;
  expect_transposed(x, w, nullptr, a, "dilation 2x3 stride 3x2");
  expect_transposed(x, w, &b, args(1, 0, 1, 2), "stride 1 dilation 2 output_padding 1");
}

// From 128 input channels per group, 2 (then 4 from 256) lanes share each output block, each summing
// every 2nd (4th) channel, and add their sums through workgroup memory. Counts that leave a
// remainder past the 4-channel unrolled steps, a partial channel block and a partial last workgroup.
TEST(OpConvTranspose, InputChannelsSplitAcrossLanesAreSummed) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 258, 3, 3}, 32), w = random_f32({258, 6, 2, 2}, 33), b = random_f32({6}, 34);
  expect_transposed(x, w, &b, args(2), "258 channels (4 lanes), k2 s2");
  auto xg = random_f32({2, 260, 3, 2}, 35), wg = random_f32({260, 3, 3, 3}, 36);
  expect_transposed(xg, wg, nullptr, args(2, 1, 1, 1, 2), "groups 2 of 130 channels (2 lanes), k3 s2");
}

// A relu after the conv runs in its store (epilogue(acc, i) per channel of the block).
TEST(OpConvTranspose, FusedReluRunsInTheStoreOfEveryChannelOfTheBlock) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 8, 6, 6}, 23), w = random_f32({8, 6, 2, 2}, 24), b = random_f32({6}, 25);
  ref::ConvArgs a = args(2);
  auto ref = ref::conv(x, w, &b, a);
  OpGraph g;
  auto& gb = g.gb;
  Id c = g.tensor(DType::Float32, ref.shape);
  gb.op("aten.convolution.default", {g.input(x), g.constant(w), g.constant(b), gb.int_list({2, 2}), gb.int_list({0, 0}),
                                     gb.int_list({1, 1}), gb.boolean(true), gb.int_list({0, 0}), gb.int_(1), c});
  gb.op("aten.relu.default", {c, g.output(DType::Float32, ref.shape)});
  auto got = g.run()[0];
  std::vector<double> rv = f64(ref);
  for (double& v : rv) v = v > 0 ? v : 0;
  EXPECT_TRUE(Close(got, ref_tensor(ref.shape, rv), 1e-4, 1e-4));
  Profile p;
  g.model()->run(g.inputs, &p);
  ASSERT_EQ(p.dispatches.size(), 1u);
  EXPECT_EQ(p.dispatches[0].op, "fused[convolution+relu]");
  EXPECT_EQ(p.dispatches[0].variant, "conv_transpose");
}

// f16 storage of x, weight, bias and output; accumulation stays f32.
TEST(OpConvTranspose, HalfPrecisionStorageMatchesTheReference) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 16, 6, 5}, 26), w = random_f32({16, 6, 3, 3}, 27), b = random_f32({6}, 28);
  LoadOptions o;
  o.precision = Precision::FP16;
  expect_transposed(x, w, &b, args(2, 1, 1), "fp16", 2e-2, o);
}

// One channel per group makes one output per invocation: 64 * 512 * 513 of them need more than
// 65535 workgroups of 256, so the grid folds into 2-D.
TEST(OpConvTranspose, GridPast65535WorkgroupsIsCorrect) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({1, 64, 512, 513}, 29), w = random_f32({64, 1, 1, 1}, 30), b = random_f32({64}, 31);
  ASSERT_GT(64LL * 512 * 513, 65535LL * 256);
  expect_transposed(x, w, &b, args(1, 0, 0, 1, 64), "depthwise 1x1");
}
