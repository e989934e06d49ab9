// et_vk.sdpa.default against the fp64 reference (tests/reference/attention).
#include <cmath>

#include "reference/attention/attention_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct Sdpa {
  HostTensor q, k, v;
  std::optional<HostTensor> mask = std::nullopt;
  std::optional<double> scale = std::nullopt;
};

std::vector<int64_t> out_shape(const Sdpa& s) {
  auto o = s.q.shape;
  o.back() = s.v.shape.back();
  return o;
}

HostTensor run_sdpa(const Sdpa& s, const LoadOptions& opts = {}) {
  OpGraph g;
  Id q = g.input(s.q), k = g.input(s.k), v = g.input(s.v);
  Id m = s.mask ? g.input(*s.mask) : g.gb.null();
  Id sc = s.scale ? g.gb.dbl(*s.scale) : g.gb.null();
  Id o = g.output(DType::Float32, out_shape(s));
  g.gb.op("et_vk.sdpa.default", {q, k, v, m, sc, o});
  return g.run(opts)[0];
}

HostTensor reference(const Sdpa& s) { return ref::sdpa(s.q, s.k, s.v, s.mask ? &*s.mask : nullptr, s.scale); }

TEST(OpSdpa, UnmaskedDefaultScaleMatchesReference) {
  ETW_REQUIRE_GPU();
  Sdpa s{random_f32({2, 3, 5, 8}, 1), random_f32({2, 3, 7, 8}, 2), random_f32({2, 3, 7, 8}, 3)};
  EXPECT_TRUE(Close(run_sdpa(s), reference(s), 1e-5, 1e-4));
}

TEST(OpSdpa, HeadBroadcastFloatMaskWithExplicitScale) {
  ETW_REQUIRE_GPU();
  // The exported fixture's shape: mask [1, 1, S_q, S_kv] broadcast over heads, scale 0.2.
  Sdpa s{random_f32({1, 2, 8, 16}, 4), random_f32({1, 2, 12, 16}, 5), random_f32({1, 2, 12, 16}, 6),
         random_f32({1, 1, 8, 12}, 7, -2.f, 2.f), 0.2};
  EXPECT_TRUE(Close(run_sdpa(s), reference(s), 1e-5, 1e-4));
}

TEST(OpSdpa, SingleMaskRowBroadcastsOverQueries) {
  ETW_REQUIRE_GPU();
  Sdpa s{random_f32({2, 2, 5, 4}, 8), random_f32({2, 2, 9, 4}, 9), random_f32({2, 2, 9, 4}, 10),
         random_f32({2, 1, 1, 9}, 11, -3.f, 3.f), std::nullopt};
  EXPECT_TRUE(Close(run_sdpa(s), reference(s), 1e-5, 1e-4));
}

TEST(OpSdpa, BoolMaskKeepsTruePositions) {
  ETW_REQUIRE_GPU();
  auto m = random_bool({6, 10}, 12);
  for (int r = 0; r < 6; ++r) m.data[r * 10 + r] = 1;  // every query keeps at least one key
  Sdpa s{random_f32({1, 3, 6, 8}, 13), random_f32({1, 3, 10, 8}, 14), random_f32({1, 3, 10, 8}, 15), m, 0.5};
  EXPECT_TRUE(Close(run_sdpa(s), reference(s), 1e-5, 1e-4));
}

TEST(OpSdpa, OddHeadDimAndValueDimMatchReference) {
  ETW_REQUIRE_GPU();
  Sdpa s{random_f32({3, 7, 5}, 16), random_f32({3, 9, 5}, 17), random_f32({3, 9, 3}, 18)};
  EXPECT_TRUE(Close(run_sdpa(s), reference(s), 1e-5, 1e-4));
}

TEST(OpSdpa, RankFiveWithFullBatchMaskAndSingleKvHead) {
  ETW_REQUIRE_GPU();
  Sdpa s{random_f32({2, 2, 3, 4, 8}, 19), random_f32({2, 2, 1, 6, 8}, 20), random_f32({2, 2, 1, 6, 8}, 21),
         random_f32({2, 2, 1, 4, 6}, 22), std::nullopt};
  EXPECT_TRUE(Close(run_sdpa(s), reference(s), 1e-5, 1e-4));
}

TEST(OpSdpa, RowAndEntryRoutesGiveTheSameNumbers) {
  ETW_REQUIRE_GPU();
  Sdpa s{random_f32({1, 2, 9, 12}, 23), random_f32({1, 2, 33, 12}, 24), random_f32({1, 2, 33, 12}, 25),
         random_f32({1, 1, 9, 33}, 26), std::nullopt};
  auto ref = reference(s);
  LoadOptions row, entry, floor0, floor_huge;
  row.force_route["sdpa_qk"] = "row";
  entry.force_route["sdpa_qk"] = "entry";
  floor0.sdpa_occupancy_floor = 0;           // 18 rows >= 0: per-row kernel
  floor_huge.sdpa_occupancy_floor = 1 << 30;  // per-entry kernel
  auto a = run_sdpa(s, row), b = run_sdpa(s, entry), c = run_sdpa(s, floor0), d = run_sdpa(s, floor_huge);
  EXPECT_TRUE(Close(a, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(b, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(c, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(d, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(a, b, 1e-6, 1e-5));
}

TEST(OpSdpa, TiledRowRouteWithSeveralTilesAndTailsMatchesEntryRoute) {
  ETW_REQUIRE_GPU();
  // 70 queries x 67 keys: two 64-row blocks and two 64-key blocks with tails; D = 20 is not a
  // multiple of the 16-wide D tile; D_v = 70 spans two 64-column AV tiles.
  Sdpa s{random_f32({1, 2, 70, 20}, 50), random_f32({1, 2, 67, 20}, 51), random_f32({1, 2, 67, 70}, 52),
         random_f32({1, 1, 70, 67}, 53, -2.f, 2.f), 0.3};
  auto ref = reference(s);
  LoadOptions row, entry;
  row.force_route["sdpa_qk"] = "row";
  entry.force_route["sdpa_qk"] = "entry";
  auto a = run_sdpa(s, row), b = run_sdpa(s, entry);
  EXPECT_TRUE(Close(a, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(b, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(a, b, 1e-6, 1e-5));
}

TEST(OpSdpa, ChannelAttentionLongHeadDimSplitsTheDotProductInBothRoutes) {
  ETW_REQUIRE_GPU();
  // Channel-attention-like: few queries, D = 2050 (128 invocations per entry, not a multiple of 4),
  // and a bool mask in which every query row keeps its diagonal key.
  auto m = random_bool({6, 6}, 54);
  for (int r = 0; r < 6; ++r) m.data[r * 6 + r] = 1;
  Sdpa s{random_f32({1, 3, 6, 2050}, 55, -0.1f, 0.1f), random_f32({1, 3, 6, 2050}, 56, -0.1f, 0.1f),
         random_f32({1, 3, 6, 2050}, 57), m, std::nullopt};
  auto ref = reference(s);
  LoadOptions row, entry;
  row.force_route["sdpa_qk"] = "row";
  entry.force_route["sdpa_qk"] = "entry";
  auto a = run_sdpa(s, row), b = run_sdpa(s, entry), c = run_sdpa(s);  // 18 rows < floor: entry
  EXPECT_TRUE(Close(a, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(b, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(c, b, 0, 0));
  EXPECT_TRUE(Close(a, b, 1e-6, 1e-5));
}

TEST(OpSdpa, DynamicSequenceLengthsRerunWithSmallerShapes) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Sdpa s{random_f32({1, 2, 9, 8}, 30), random_f32({1, 2, 11, 8}, 31), random_f32({1, 2, 11, 8}, 32)};
  Id q = g.input(s.q, {1, 2, 9, 8}, true), k = g.input(s.k, {1, 2, 11, 8}, true), v = g.input(s.v, {1, 2, 11, 8}, true);
  Id o = g.output(DType::Float32, {1, 2, 9, 8});
  g.gb.op("et_vk.sdpa.default", {q, k, v, g.gb.null(), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run()[0], reference(s), 1e-5, 1e-4));
  Sdpa t{random_f32({1, 2, 3, 8}, 33), random_f32({1, 2, 5, 8}, 34), random_f32({1, 2, 5, 8}, 35)};
  auto out = g.rerun({t.q, t.k, t.v});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 2, 3, 8}));
  EXPECT_TRUE(Close(out[0], reference(t), 1e-5, 1e-4));
}

TEST(OpSdpa, EntryKernelPast65535WorkgroupsIsCorrect) {
  ETW_REQUIRE_GPU();
  // 4096 x 4097 entries > 65535 * 256.
  Sdpa s{random_f32({1, 1, 4096, 4}, 36), random_f32({1, 1, 4097, 4}, 37), random_f32({1, 1, 4097, 4}, 38)};
  LoadOptions entry;
  entry.force_route["sdpa_qk"] = "entry";
  EXPECT_TRUE(Close(run_sdpa(s, entry), reference(s), 1e-5, 1e-3));
}

TEST(OpSdpa, ScratchPast2To32EntriesIsALimitErrorAtLoad) {
  ETW_REQUIRE_GPU();
  // The staged kernels' attn scratch (the fused routes have none).
  Sdpa s{random_f32({1, 1, 70000, 4}, 39), random_f32({1, 1, 70000, 4}, 40), random_f32({1, 1, 70000, 4}, 41)};
  LoadOptions staged;
  staged.force_route["sdpa"] = "staged";
  try {
    run_sdpa(s, staged);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit) << e.what();
    EXPECT_NE(std::string(e.what()).find("et_vk.sdpa"), std::string::npos) << e.what();
  }
}

TEST(OpSdpa, MismatchedHeadDimsAndPartialBatchMaskAreRejected) {
  ETW_REQUIRE_GPU();
  Sdpa a{random_f32({1, 2, 4, 8}, 42), random_f32({1, 2, 6, 4}, 43), random_f32({1, 2, 6, 8}, 44)};
  EXPECT_THROW(run_sdpa(a), Error);
  Sdpa b{random_f32({2, 2, 2, 4, 8}, 45), random_f32({2, 2, 2, 6, 8}, 46), random_f32({2, 2, 2, 6, 8}, 47),
         random_f32({1, 2, 1, 4, 6}, 48), std::nullopt};
  try {
    run_sdpa(b);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("only some of the batch dims"), std::string::npos) << e.what();
  }
}

}  // namespace
