// et_vk.apply_rotary_emb(_hf) against fp64 references (tests/reference/rope).
#include "reference/rope/rope_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct RopeRun {
  std::vector<HostTensor> out;
};

// xq, xk graph inputs (optionally dynamic with max dims), freqs as graph inputs.
std::vector<HostTensor> run_rope(bool hf, const HostTensor& xq, const HostTensor& xk, const HostTensor& c,
                                 const HostTensor& s, int64_t start = 0) {
  OpGraph g;
  Id q = g.input(xq), k = g.input(xk), fc = g.input(c), fs = g.input(s);
  Id oq = g.output(DType::Float32, xq.shape), ok = g.output(DType::Float32, xk.shape);
  Id outs = g.gb.value_list({oq, ok});
  if (hf) g.gb.op("et_vk.apply_rotary_emb_hf.default", {q, k, fc, fs, g.gb.int_(start), outs});
  else g.gb.op("et_vk.apply_rotary_emb.default", {q, k, fc, fs, outs});
  return g.run();
}

TEST(OpRope, InterleavedMatchesLlamaReferenceWithBatchAndGqaHeads) {
  ETW_REQUIRE_GPU();
  auto xq = random_f32({2, 5, 3, 8}, 1), xk = random_f32({2, 5, 1, 8}, 2);
  auto c = random_f32({5, 4}, 3), s = random_f32({5, 4}, 4);
  auto out = run_rope(false, xq, xk, c, s);
  EXPECT_TRUE(Close(out[0], ref::rope_interleaved(xq, c, s), 1e-5, 1e-5));
  EXPECT_TRUE(Close(out[1], ref::rope_interleaved(xk, c, s), 1e-5, 1e-5));
}

TEST(OpRope, HfRotateHalfReadsTableRowsFromStartPos) {
  ETW_REQUIRE_GPU();
  auto xq = random_f32({1, 3, 4, 10}, 5), xk = random_f32({1, 3, 2, 10}, 6);
  auto c = random_f32({12, 10}, 7), s = random_f32({12, 10}, 8);  // cos[i] != cos[i + D/2] on purpose
  auto out = run_rope(true, xq, xk, c, s, 7);
  EXPECT_TRUE(Close(out[0], ref::rope_hf(xq, c, s, 7), 1e-5, 1e-5));
  EXPECT_TRUE(Close(out[1], ref::rope_hf(xk, c, s, 7), 1e-5, 1e-5));
}

TEST(OpRope, DynamicSequenceLengthRerunsWithSmallerShape) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  auto xq = random_f32({1, 7, 2, 6}, 9), xk = random_f32({1, 7, 1, 6}, 10);
  auto c = random_f32({16, 6}, 11), s = random_f32({16, 6}, 12);
  Id q = g.input(xq, {1, 7, 2, 6}, true), k = g.input(xk, {1, 7, 1, 6}, true), fc = g.input(c), fs = g.input(s);
  Id oq = g.output(DType::Float32, {1, 7, 2, 6}), ok = g.output(DType::Float32, {1, 7, 1, 6});
  g.gb.op("et_vk.apply_rotary_emb_hf.default", {q, k, fc, fs, g.gb.int_(9), g.gb.value_list({oq, ok})});
  auto out = g.run();
  EXPECT_TRUE(Close(out[0], ref::rope_hf(xq, c, s, 9), 1e-5, 1e-5));
  auto xq2 = random_f32({1, 3, 2, 6}, 13), xk2 = random_f32({1, 3, 1, 6}, 14);
  out = g.rerun({xq2, xk2, c, s});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 3, 2, 6}));
  EXPECT_TRUE(Close(out[0], ref::rope_hf(xq2, c, s, 9), 1e-5, 1e-5));
  EXPECT_TRUE(Close(out[1], ref::rope_hf(xk2, c, s, 9), 1e-5, 1e-5));
}

TEST(OpRope, LargeTensorPast65535WorkgroupsIsCorrect) {
  ETW_REQUIRE_GPU();
  // 2 * 8388481 pairs of xk: more than 65535 workgroups of 256 invocations.
  auto xq = random_f32({1, 2, 1, 2}, 15), xk = random_f32({1, 2, 8388481, 2}, 16);
  auto c = random_f32({2, 1}, 17), s = random_f32({2, 1}, 18);
  auto out = run_rope(false, xq, xk, c, s);
  EXPECT_TRUE(Close(out[1], ref::rope_interleaved(xk, c, s), 1e-5, 1e-5));
}

TEST(OpRope, PartialRotaryIsRejectedAtLoad) {
  ETW_REQUIRE_GPU();
  auto xq = random_f32({1, 3, 2, 8}, 1), xk = random_f32({1, 3, 2, 8}, 2);
  auto c = random_f32({4, 4}, 3), s = random_f32({4, 4}, 4);
  try {
    run_rope(true, xq, xk, c, s, 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("partial rotary"), std::string::npos) << e.what();
  }
}

TEST(OpRope, TableTooShortForStartPosFailsNamingRows) {
  ETW_REQUIRE_GPU();
  auto xq = random_f32({1, 3, 2, 8}, 1), xk = random_f32({1, 3, 2, 8}, 2);
  auto c = random_f32({4, 8}, 3), s = random_f32({4, 8}, 4);
  try {
    run_rope(true, xq, xk, c, s, 2);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exceed the freqs table"), std::string::npos) << e.what();
  }
}

TEST(OpRope, InterleavedFreqsWidthMustBeHalfHeadDim) {
  ETW_REQUIRE_GPU();
  auto xq = random_f32({1, 3, 2, 8}, 1), xk = random_f32({1, 3, 2, 8}, 2);
  auto c = random_f32({3, 8}, 3), s = random_f32({3, 8}, 4);
  EXPECT_THROW(run_rope(false, xq, xk, c, s), Error);
}

}  // namespace
