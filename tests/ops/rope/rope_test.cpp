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

namespace {

// etwebgpu.rope_interleaved [x, cos, sin, out] (made at load by graph/decoder_fusion.h): x as the
// [B, S, H, D/2, 2] view of [B, S, H, D], tables broadcasting as [1, S, 1, D/2].
std::vector<HostTensor> run_rope_view(OpGraph& g, const HostTensor& x, const HostTensor& c, const HostTensor& s,
                                      std::vector<int64_t> table_dims, bool dynamic = false) {
  auto& gb = g.gb;
  std::vector<int64_t> x5 = x.shape;
  x5.back() /= 2;
  x5.push_back(2);
  Id xi = g.input(x, x.shape, dynamic), fc = g.input(c, c.shape, dynamic), fs = g.input(s, s.shape, dynamic);
  Id xv = g.tensor(DType::Float32, x5), cv = g.tensor(DType::Float32, table_dims), sv = g.tensor(DType::Float32, table_dims);
  std::vector<int64_t> x5_size = x5, t_size = table_dims;
  if (dynamic) x5_size[1] = t_size[t_size.size() - 3] = -1;
  gb.op("aten.view_copy.default", {xi, gb.int_list(x5_size), xv});
  gb.op("aten.view_copy.default", {fc, gb.int_list(t_size), cv});
  gb.op("aten.view_copy.default", {fs, gb.int_list(t_size), sv});
  Id y = g.tensor(DType::Float32, x5);
  gb.op("etwebgpu.rope_interleaved", {xv, cv, sv, y});
  gb.op("aten.view_copy.default", {y, gb.int_list(dynamic ? std::vector<int64_t>{x.shape[0], -1, x.shape[2], x.shape[3]} : x.shape),
                                   g.output(DType::Float32, x.shape)});
  return g.run();
}

TEST(OpRopeView, InterleavedViewMatchesLlamaReferenceWithBatch) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  auto x = random_f32({2, 5, 3, 8}, 31), c = random_f32({5, 4}, 32), s = random_f32({5, 4}, 33);
  auto out = run_rope_view(g, x, c, s, {1, 5, 1, 4});
  EXPECT_TRUE(Close(out[0], ref::rope_interleaved(x, c, s), 1e-5, 1e-5));
}

TEST(OpRopeView, DynamicSequenceLengthRerunsWithSmallerShape) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  auto x = random_f32({1, 6, 2, 4}, 34), c = random_f32({6, 2}, 35), s = random_f32({6, 2}, 36);
  auto out = run_rope_view(g, x, c, s, {1, 6, 1, 2}, true);
  EXPECT_TRUE(Close(out[0], ref::rope_interleaved(x, c, s), 1e-5, 1e-5));
  auto x2 = random_f32({1, 2, 2, 4}, 37), c2 = random_f32({2, 2}, 38), s2 = random_f32({2, 2}, 39);
  out = g.rerun({x2, c2, s2});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 2, 2, 4}));
  EXPECT_TRUE(Close(out[0], ref::rope_interleaved(x2, c2, s2), 1e-5, 1e-5));
}

// Tables indexed per head ([1, S, H, D/2]) are not the broadcast the kernel reads: refused at load.
TEST(OpRopeView, TablesThatDoNotBroadcastOverHeadsAreRejectedAtLoad) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  auto x = random_f32({1, 2, 3, 4}, 40), c = random_f32({2, 3, 2}, 41), s = random_f32({2, 3, 2}, 42);
  try {
    run_rope_view(g, x, c, s, {1, 2, 3, 2});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("[.., S, 1, D/2]"), std::string::npos) << e.what();
  }
}

}  // namespace
