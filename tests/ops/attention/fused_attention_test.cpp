// The fused attention kernels (ops/attention: flash prefill, split-K decode) against fp64
// references: etwebgpu.attention (GQA, additive and bool masks, rows with no visible key) and
// et_vk.sdpa on every route, a decode row over a long cache with a valid length below the cache
// length, odd sizes that are not multiples of the tiles, and the decode reductions with and
// without subgroups.
#include <algorithm>
#include <cmath>
#include <limits>

#include "etwebgpu/device.h"
#include "reference/attention/attention_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// k/v [B, Hkv, S, D] with each head repeated `group` times: [B, Hkv * group, S, D] (repeat_kv).
HostTensor repeat_heads(const HostTensor& t, int64_t group) {
  int64_t B = t.shape[0], H = t.shape[1], row = t.shape[2] * t.shape[3];
  HostTensor r(DType::Float32, {B, H * group, t.shape[2], t.shape[3]});
  const float* s = t.as<float>();
  float* d = r.as<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H * group; ++h)
      std::copy(s + (b * H + h / group) * row, s + (b * H + h / group + 1) * row, d + (b * H * group + h) * row);
  return r;
}

struct Case {
  HostTensor q, k, v;
  std::optional<HostTensor> mask;
  double scale = 0.3;
  bool zero_masked = false;
};

// `variants`: where given, the kernel variants the loaded graph dispatches.
HostTensor run_fused(const Case& c, const LoadOptions& opts = {}, std::vector<std::string>* variants = nullptr) {
  OpGraph g;
  Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v);
  Id m = c.mask ? g.input(*c.mask) : g.gb.null();
  auto od = c.q.shape;
  od.back() = c.v.shape.back();
  Id o = g.output(DType::Float32, od);
  g.gb.op("etwebgpu.attention", {q, k, v, m, g.gb.dbl(c.scale), g.gb.boolean(c.zero_masked), g.gb.null(), o});
  HostTensor out = g.run(opts)[0];
  if (variants) *variants = g.variants();
  return out;
}

HostTensor run_sdpa(const Case& c, const LoadOptions& opts = {}) {
  OpGraph g;
  Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v);
  Id m = c.mask ? g.input(*c.mask) : g.gb.null();
  auto od = c.q.shape;
  od.back() = c.v.shape.back();
  Id o = g.output(DType::Float32, od);
  g.gb.op("et_vk.sdpa.default", {q, k, v, m, g.gb.dbl(c.scale), o});
  return g.run(opts)[0];
}

HostTensor reference(const Case& c) {
  int64_t group = c.q.shape[1] / c.k.shape[1];
  auto k = repeat_heads(c.k, group), v = repeat_heads(c.v, group);
  return ref::sdpa(c.q, k, v, c.mask ? &*c.mask : nullptr, c.scale);
}

LoadOptions route(const char* r) {
  LoadOptions o;
  o.force_route["sdpa"] = r;
  return o;
}

// Additive mask [rows, cols] of 0 for the first `valid` keys and -inf after.
HostTensor valid_length_mask(std::vector<int64_t> shape, int64_t valid) {
  HostTensor m(DType::Float32, shape);
  int64_t cols = shape.back();
  float* p = m.as<float>();
  for (int64_t i = 0; i < etwebgpu::numel(m.shape); ++i) p[i] = i % cols < valid ? 0.f : -std::numeric_limits<float>::infinity();
  return m;
}

TEST(OpFusedAttention, GqaWithAdditiveMaskMatchesReferenceOnFlashAndDecodeRoutes) {
  ETW_REQUIRE_GPU();
  // 4 q heads over 2 kv heads; 20 queries (a 16-row tile and a tail), 37 keys (two 16-key tiles
  // and a tail), D = 12, D_v = 10.
  Case c{random_f32({1, 4, 20, 12}, 1), random_f32({1, 2, 37, 12}, 2), random_f32({1, 2, 37, 10}, 3),
         random_f32({1, 1, 20, 37}, 4, -2.f, 2.f)};
  auto ref = reference(c);
  auto flash = run_fused(c, route("flash")), decode = run_fused(c, route("decode"));
  EXPECT_TRUE(Close(flash, ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(decode, ref, 1e-5, 1e-4));
}

TEST(OpFusedAttention, RowsWithNoVisibleKeyGiveZerosUnderZeroMaskedAndNanOtherwise) {
  ETW_REQUIRE_GPU();
  // Bool mask whose query row 2 keeps no key; the others keep their diagonal.
  auto m = random_bool({1, 1, 5, 9}, 5);
  for (int r = 0; r < 5; ++r) m.data[r * 9 + r] = 1;
  for (int c = 0; c < 9; ++c) m.data[2 * 9 + c] = 0;
  Case c{random_f32({1, 2, 5, 8}, 6), random_f32({1, 2, 9, 8}, 7), random_f32({1, 2, 9, 8}, 8), m};
  auto ref = reference(c);  // NaN in row 2, as PyTorch's softmax of all -inf gives
  HostTensor zeroed = ref;
  for (int h = 0; h < 2; ++h)
    for (int d = 0; d < 8; ++d) zeroed.as<double>()[(h * 5 + 2) * 8 + d] = 0.0;
  for (const char* r : {"flash", "decode", "staged"}) {
    EXPECT_TRUE(CloseNan(run_sdpa(c, route(r)), ref, 1e-5, 1e-4)) << r;
    c.zero_masked = true;
    EXPECT_TRUE(Close(run_fused(c, route(r)), zeroed, 1e-5, 1e-4)) << r;
    c.zero_masked = false;
  }
}

// The combine pass writes each head's value columns in 64-wide steps: value head dims past 64
// (96: a partial second step, 128: a full one) over 300 keys (several splits, so the combine
// runs) must come out whole, with subgroup and workgroup reductions.
TEST(OpFusedAttention, DecodeCombineWritesValueHeadDimsPast64OverSeveralKeySplits) {
  ETW_REQUIRE_GPU();
  for (int64_t dv : {96, 128}) {
    Case c{random_f32({1, 4, 1, dv}, 20 + dv), random_f32({1, 2, 300, dv}, 21 + dv), random_f32({1, 2, 300, dv}, 22 + dv),
           std::nullopt, 0.1};
    auto ref = reference(c);
    OpGraph g;
    Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v);
    Id o = g.output(DType::Float32, {1, 4, 1, dv});
    g.gb.op("etwebgpu.attention", {q, k, v, g.gb.null(), g.gb.dbl(c.scale), g.gb.boolean(false), g.gb.null(), o});
    EXPECT_TRUE(Close(g.run(route("decode"))[0], ref, 1e-5, 1e-4)) << "D_v " << dv;
    auto variants = g.variants();
    EXPECT_NE(std::find(variants.begin(), variants.end(), "decode_combine"), variants.end()) << "D_v " << dv << ": one split";
    LoadOptions wg = route("decode");
    wg.force_route["sdpa_reduce"] = "workgroup";
    EXPECT_TRUE(Close(run_fused(c, wg), ref, 1e-5, 1e-4)) << "D_v " << dv << ", workgroup reductions";
  }
}

// The combine pass weighs 64 splits at a time and adds their value rows in batches of 16: two
// query heads (one row each, the second's partials right after the first's) over 4,470 keys are 70
// splits a row (a second, partial chunk of 6, no multiple of the batch), and keys 1,000..1,999
// masked out leave whole splits with no visible key (weight 0).
TEST(OpFusedAttention, DecodeCombineMergesMoreSplitsThanOneChunkWithFullyMaskedSplits) {
  ETW_REQUIRE_GPU();
  const int64_t n = 4470;
  HostTensor mask(DType::Float32, {1, 1, 1, n});
  for (int64_t i = 0; i < n; ++i)
    mask.as<float>()[i] = i >= 1000 && i < 2000 ? -std::numeric_limits<float>::infinity() : 0.f;
  Case c{random_f32({1, 2, 1, 64}, 30), random_f32({1, 1, n, 64}, 31), random_f32({1, 1, n, 64}, 32), mask, 0.125};
  auto ref = reference(c);
  OpGraph g;
  Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v), m = g.input(*c.mask);
  Id o = g.output(DType::Float32, {1, 2, 1, 64});
  g.gb.op("etwebgpu.attention", {q, k, v, m, g.gb.dbl(c.scale), g.gb.boolean(false), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run(route("decode"))[0], ref, 1e-5, 1e-4));
  auto variants = g.variants();
  EXPECT_NE(std::find(variants.begin(), variants.end(), "decode_combine"), variants.end()) << "one split only";
}

TEST(OpFusedAttention, DecodeRowOverLongCacheWithValidLengthBelowCacheLength) {
  ETW_REQUIRE_GPU();
  // One query row per head over a 1000-position cache of which the first 700 are valid (the
  // rest masked with -inf, as the Llama export's mask does): 16 splits of 64 keys, merged by the
  // combine pass; 1000 is no multiple of the 64-key tile.
  Case c{random_f32({1, 4, 1, 64}, 9), random_f32({1, 2, 1000, 64}, 10), random_f32({1, 2, 1000, 64}, 11),
         valid_length_mask({1, 1, 1, 1000}, 700), 0.125, true};
  auto ref = reference(c);
  OpGraph g;
  Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v), m = g.input(*c.mask);
  Id o = g.output(DType::Float32, {1, 4, 1, 64});
  g.gb.op("etwebgpu.attention", {q, k, v, m, g.gb.dbl(c.scale), g.gb.boolean(true), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run()[0], ref, 1e-5, 1e-4));
  auto variants = g.variants();
  EXPECT_NE(std::find(variants.begin(), variants.end(), "decode_combine"), variants.end()) << "one split only";
  LoadOptions wg;
  wg.force_route["sdpa_reduce"] = "workgroup";
  EXPECT_TRUE(Close(run_fused(c, wg), ref, 1e-5, 1e-4));
}

bool used(const std::vector<std::string>& variants, const std::string& prefix) {
  return std::any_of(variants.begin(), variants.end(), [&](const std::string& v) { return v.rfind(prefix, 0) == 0; });
}

// The one-pass decode kernel (sdpa_decode_wide) against the reference and the split route:
// GQA with an additive mask that hides a middle range of keys and a key count no multiple of its
// 256-key scoring passes or its value batches; head dims 96 / 128 (32 value column blocks) over
// its 2,048-key maximum; head dims 12 / 8; subgroup and workgroup reductions. It runs alone: no
// combine pass.
TEST(OpFusedAttention, OnePassDecodeMatchesTheReferenceAndTheSplitRoute) {
  ETW_REQUIRE_GPU();
  HostTensor mask(DType::Float32, {1, 1, 1, 700});
  for (int64_t i = 0; i < 700; ++i) mask.as<float>()[i] = i >= 300 && i < 450 ? -std::numeric_limits<float>::infinity() : 0.f;
  std::vector<Case> cases{
      {random_f32({1, 4, 1, 64}, 60), random_f32({1, 2, 700, 64}, 61), random_f32({1, 2, 700, 64}, 62), mask, 0.125},
      {random_f32({1, 2, 2, 96}, 63, -0.3f, 0.3f), random_f32({1, 1, 2048, 96}, 64, -0.3f, 0.3f),
       random_f32({1, 1, 2048, 128}, 65), std::nullopt, 0.1},
      // Three vec4s a key row: one of the four invocations sharing a row reads none of it.
      {random_f32({1, 3, 1, 12}, 66), random_f32({1, 3, 300, 12}, 67), random_f32({1, 3, 300, 8}, 68), std::nullopt, 0.3}};
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    const Case& c = cases[i];
    auto ref = reference(c);
    for (const char* reduce : {"workgroup", "subgroup"}) {
      if (std::string(reduce) == "subgroup" && !device_info().subgroups) continue;
      LoadOptions wide = route("decode"), split = route("decode");
      wide.force_route["sdpa_decode"] = "wide";
      split.force_route["sdpa_decode"] = "split";
      wide.force_route["sdpa_reduce"] = split.force_route["sdpa_reduce"] = reduce;
      std::vector<std::string> variants;
      auto one = run_fused(c, wide, &variants);
      EXPECT_TRUE(Close(one, ref, 1e-5, 1e-4)) << reduce;
      EXPECT_EQ(variants, (std::vector<std::string>{std::string("subgroup") == reduce ? "decode_wide_subgroup" : "decode_wide"}));
      EXPECT_TRUE(Close(run_fused(c, split), one, 1e-5, 1e-4)) << reduce;
    }
  }
}

// By shape the one-pass kernel takes rows with up to 2,048 keys when there are 16 rows or more
// (Llama-3.2-1B decode: 32 heads) or at most 256 keys; fewer rows over more keys split them.
// Pinning it where it cannot run is a run error saying why.
TEST(OpFusedAttention, OnePassDecodeIsChosenByRowsAndKeysAndPinningItWhereItCannotRunIsAnError) {
  ETW_REQUIRE_GPU();
  auto variants_of = [](int64_t heads, int64_t keys, int64_t dv, const LoadOptions& opts) {
    Case c{random_f32({1, heads, 1, 16}, 70), random_f32({1, heads, keys, 16}, 71), random_f32({1, heads, keys, dv}, 72),
           std::nullopt, 0.25};
    std::vector<std::string> variants;
    EXPECT_TRUE(Close(run_fused(c, opts, &variants), reference(c), 1e-5, 1e-4)) << heads << " heads, " << keys << " keys";
    return variants;
  };
  EXPECT_TRUE(used(variants_of(16, 1000, 16, {}), "decode_wide"));
  EXPECT_TRUE(used(variants_of(4, 200, 16, {}), "decode_wide"));
  auto split = variants_of(4, 1000, 16, {});
  EXPECT_FALSE(used(split, "decode_wide"));
  EXPECT_TRUE(used(split, "decode_combine"));
  EXPECT_FALSE(used(variants_of(16, 2100, 16, {}), "decode_wide")) << "past 2,048 keys";
  EXPECT_FALSE(used(variants_of(16, 200, 10, {}), "decode_wide")) << "D_v 10: no whole vec4s";
  LoadOptions pin;
  pin.force_route["sdpa_decode"] = "wide";
  for (auto [keys, dv] : {std::pair<int64_t, int64_t>{2100, 16}, {200, 10}}) {
    try {
      variants_of(16, keys, dv, pin);
      ADD_FAILURE() << "expected an error for " << keys << " keys, D_v " << dv;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find("at most 2048 keys and head dims, offsets and strides that are multiples of 4"),
                std::string::npos)
          << e.what();
    }
  }
  // k and v of one 2-wide key: too small to read as a vec4 (at load) or no whole vec4 (at run).
  Case tiny{random_f32({1, 1, 1, 2}, 73), random_f32({1, 1, 1, 2}, 74), random_f32({1, 1, 1, 2}, 75), std::nullopt, 0.5};
  try {
    run_fused(tiny, pin);
    ADD_FAILURE() << "expected an error for 2-wide heads";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("force_route sdpa_decode = \"wide\" needs"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(Close(run_fused(tiny), reference(tiny), 1e-5, 1e-4)) << "by shape: the split route";
}

TEST(OpFusedAttention, SubgroupAndWorkgroupReductionsGiveTheSameDecodeResult) {
  ETW_REQUIRE_GPU();
  Case c{random_f32({2, 3, 2, 33}, 12), random_f32({2, 3, 300, 33}, 13), random_f32({2, 3, 300, 33}, 14),
         random_f32({2, 1, 2, 300}, 15, -3.f, 3.f)};
  LoadOptions wg, sg;
  wg.force_route["sdpa_reduce"] = "workgroup";
  auto a = run_fused(c, wg);
  EXPECT_TRUE(Close(a, reference(c), 1e-5, 1e-4));
  if (!device_info().subgroups) GTEST_SKIP() << "the device has no subgroups";
  sg.force_route["sdpa_reduce"] = "subgroup";
  EXPECT_TRUE(Close(run_fused(c, sg), a, 1e-6, 1e-5));
}

TEST(OpSdpa, FlashDecodeAndStagedRoutesMatchReferenceWithBoolMaskAndOddSizes) {
  ETW_REQUIRE_GPU();
  // Batch 2, 3 heads, 37 queries, 45 keys, D = 20, D_v = 70 (past 64: the DMAX 128 variant).
  auto m = random_bool({2, 3, 37, 45}, 16);
  for (int b = 0; b < 6; ++b)
    for (int r = 0; r < 37; ++r) m.data[(b * 37 + r) * 45 + r] = 1;
  Case c{random_f32({2, 3, 37, 20}, 17), random_f32({2, 3, 45, 20}, 18), random_f32({2, 3, 45, 70}, 19), m};
  auto ref = reference(c);
  for (const char* r : {"flash", "decode", "staged"}) EXPECT_TRUE(Close(run_sdpa(c, route(r)), ref, 1e-5, 1e-4)) << r;
}

TEST(OpSdpa, HeadDimsPast128TakeTheStagedKernelsAndForcingAFusedRouteIsAnError) {
  ETW_REQUIRE_GPU();
  Case c{random_f32({1, 1, 3, 130}, 20, -0.2f, 0.2f), random_f32({1, 1, 5, 130}, 21, -0.2f, 0.2f),
         random_f32({1, 1, 5, 4}, 22), std::nullopt};
  OpGraph g;
  Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v);
  Id o = g.output(DType::Float32, {1, 1, 3, 4});
  g.gb.op("et_vk.sdpa.default", {q, k, v, g.gb.null(), g.gb.dbl(c.scale), o});
  EXPECT_TRUE(Close(g.run()[0], reference(c), 1e-5, 1e-4));
  auto variants = g.variants();
  EXPECT_NE(std::find(variants.begin(), variants.end(), "softmax"), variants.end());
  try {
    run_sdpa(c, route("flash"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("head dims <= 128"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_sdpa(c, route("fast")), Error);
}

TEST(OpFusedAttention, KvHeadsNotDividingQHeadsAndWrongRankAreRejected) {
  ETW_REQUIRE_GPU();
  Case a{random_f32({1, 3, 2, 8}, 23), random_f32({1, 2, 4, 8}, 24), random_f32({1, 2, 4, 8}, 25), std::nullopt};
  try {
    run_fused(a);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must divide q heads"), std::string::npos) << e.what();
  }
  Case b{random_f32({3, 2, 8}, 26), random_f32({3, 4, 8}, 27), random_f32({3, 4, 8}, 28), std::nullopt};
  EXPECT_THROW(run_fused(b), Error);
}

// A flash pass of few workgroups (2 heads x 2 row blocks) splits its 200 keys into 7 ranges and
// the decode route's combine merges them; ranges past the visible 150 keys hold no key and add 0.
TEST(OpFusedAttention, FlashSplitsKeysWhenItsWorkgroupsAreFewAndTheMergeMatchesReference) {
  ETW_REQUIRE_GPU();
  Case c{random_f32({1, 2, 40, 16}, 44), random_f32({1, 2, 300, 16}, 45), random_f32({1, 2, 300, 16}, 46),
         valid_length_mask({40, 300}, 250)};
  OpGraph g;
  Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v), m = g.input(*c.mask);
  Id o = g.output(DType::Float32, {1, 2, 40, 16});
  g.gb.op("etwebgpu.attention", {q, k, v, m, g.gb.dbl(c.scale), g.gb.boolean(false), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run()[0], reference(c), 1e-5, 1e-4));
  EXPECT_EQ(g.variants(), (std::vector<std::string>{"flash", "decode_combine"}));
}

// Up to 1,024 prefill rows over at most 256 keys (so few rows that a flash pass would split its
// keys) take the one-pass kernel, one workgroup a row: GQA, value dims past the key dims, a mask
// hiding a key range and a random additive one. Pinned "flash", or past 1,024 rows, the flash
// kernel stays.
TEST(OpFusedAttention, PrefillOverFewKeysRunsInOnePassWhereFlashWouldSplit) {
  ETW_REQUIRE_GPU();
  auto wide = [](const std::vector<std::string>& v) { return v.size() == 1 && v[0].rfind("decode_wide", 0) == 0; };
  for (int mask = 0; mask < 2; ++mask) {
    Case c{random_f32({1, 4, 40, 16}, 50), random_f32({1, 2, 200, 16}, 51), random_f32({1, 2, 200, 24}, 52),
           mask ? random_f32({1, 1, 40, 200}, 56, -2.f, 2.f) : valid_length_mask({40, 200}, 150)};
    for (const char* pin : {"", "flash"}) {
      std::vector<std::string> used;
      EXPECT_TRUE(Close(run_fused(c, *pin ? route(pin) : LoadOptions{}, &used), reference(c), 1e-5, 1e-4)) << mask << pin;
      EXPECT_EQ(wide(used), !*pin) << mask << pin;
    }
  }
  // 64 heads of 512 rows: the flash kernel, its workgroups enough not to split.
  Case many{random_f32({1, 64, 512, 16}, 53), random_f32({1, 64, 64, 16}, 54), random_f32({1, 64, 64, 16}, 55)};
  std::vector<std::string> used;
  EXPECT_TRUE(Close(run_fused(many, {}, &used), reference(many), 1e-5, 1e-4));
  EXPECT_EQ(used, std::vector<std::string>{"flash"});
}

// A long prefill with 64-dim heads (8 heads x 512 queries over 520 keys, past the 64K entries up
// to which every prefill ran fused before) takes the flash kernel by default, not the staged
// kernels: its keys split four ways (the last range ends in a tail of 8 keys) and every one of
// the 64 head dims counts.
TEST(OpSdpa, LongPrefillWith64DimHeadsRunsTheFlashKernel) {
  ETW_REQUIRE_GPU();
  Case c{random_f32({1, 8, 512, 64}, 47, -0.5f, 0.5f), random_f32({1, 8, 520, 64}, 48, -0.5f, 0.5f),
         random_f32({1, 8, 520, 64}, 49), std::nullopt, 0.125};
  OpGraph g;
  Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v);
  Id o = g.output(DType::Float32, {1, 8, 512, 64});
  g.gb.op("et_vk.sdpa.default", {q, k, v, g.gb.null(), g.gb.dbl(c.scale), o});
  EXPECT_TRUE(Close(g.run()[0], reference(c), 1e-5, 1e-4));
  EXPECT_EQ(g.variants(), (std::vector<std::string>{"flash", "decode_combine"}));
}

// The staged AV product splits its keys when its tiles are few and the keys many (2 heads x 70
// rows over 600 keys: 4 tiles, 8 ranges of 80 keys); the partials' sum is written through the
// output strides: plain, and into a fixed layout's [S, H * D] buffer.
TEST(OpSdpa, StagedAvSplitsManyKeysAndMatchesReference) {
  ETW_REQUIRE_GPU();
  Case c{random_f32({1, 2, 70, 16}, 41), random_f32({1, 2, 600, 16}, 42), random_f32({1, 2, 600, 24}, 43),
         valid_length_mask({70, 600}, 550)};
  OpGraph g;
  Id q = g.input(c.q), k = g.input(c.k), v = g.input(c.v), m = g.input(*c.mask);
  Id o = g.output(DType::Float32, {1, 2, 70, 24});
  g.gb.op("et_vk.sdpa.default", {q, k, v, m, g.gb.dbl(c.scale), o});
  EXPECT_TRUE(Close(g.run(route("staged"))[0], reference(c), 1e-5, 1e-4));
  auto used = g.variants();
  for (const char* want : {"av_splitk", "av_reduce"})
    EXPECT_NE(std::find(used.begin(), used.end(), want), used.end()) << want;
  EXPECT_EQ(std::find(used.begin(), used.end(), "av"), used.end());
}

// A fixed layout (graph/attention_fusion.h): q, k, v and out as [S, H * D] buffers, q and k
// read at an offset into one [S, 2 * H * D] buffer. Runs on the flash, decode and staged routes
// against the reference; malformed layouts are load errors that say what is wrong.
struct LayoutCase {
  static constexpr int64_t H = 2, D = 4, E = H * D;
  int64_t S;
  HostTensor qk, v;
  explicit LayoutCase(int64_t s) : S(s), qk(random_f32({s, 2 * E}, 31)), v(random_f32({s, E}, 32)) {}
  std::vector<int64_t> layout() const {
    // B, H, Hkv, S_q, S_kv, D, D_v; (offset, batch, head, row) of q, k, v, out
    return {1, H, H, S, S, D, D, 0, 0, D, 2 * E, E, 0, D, 2 * E, 0, 0, D, E, 0, 0, D, E};
  }
  HostTensor run(std::vector<int64_t> l, const LoadOptions& o = {}) const {
    OpGraph g;
    Id a = g.input(qk), b = g.input(v), out = g.output(DType::Float32, {S, E});
    g.gb.op("etwebgpu.attention", {a, a, b, g.gb.null(), g.gb.dbl(0.4), g.gb.boolean(false), g.gb.int_list(l), out});
    return g.run(o)[0];
  }
  HostTensor reference() const {
    return ref::merge_heads(ref::sdpa(ref::split_heads(qk, 2 * E, H, D), ref::split_heads(qk, 2 * E, H, D, E),
                                      ref::split_heads(v, E, H, D), nullptr, 0.4));
  }
};

TEST(OpFusedAttention, FixedLayoutReadsAndWritesStridedBuffersOnEveryRoute) {
  ETW_REQUIRE_GPU();
  for (int64_t S : {3, 21, 600})  // 600: the staged AV splits its keys
    for (const char* r : {"", "staged"}) {
      LayoutCase c(S);
      EXPECT_TRUE(Close(c.run(c.layout(), *r ? route(r) : LoadOptions{}), c.reference(), 1e-5, 1e-4)) << S << r;
    }
}

TEST(OpFusedAttention, MalformedFixedLayoutsAreLoadErrorsNamingTheProblem) {
  ETW_REQUIRE_GPU();
  LayoutCase c(5);
  auto expect = [&](std::vector<int64_t> l, const char* what) {
    try {
      c.run(l);
      ADD_FAILURE() << "expected an error mentioning \"" << what << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto l = c.layout();
  expect(std::vector<int64_t>(l.begin(), l.end() - 1), "layout must hold 23 integers");
  auto neg = l;
  neg[9] = -1;
  expect(neg, "outside [0, 2^32)");
  auto heads = l;
  heads[2] = 3;  // kv heads 3 do not divide 2
  expect(heads, "kv heads must divide heads");
  auto far = l;
  far[10] = 4 * LayoutCase::E;  // q rows twice as far apart: the last ones lie past the buffer
  expect(far, "layout reads q past the end");
  auto huge = l;  // batch and batch stride near 2^32: the reach is computed without overflow
  huge[0] = huge[8] = 4294967295;
  expect(huge, "layout reads q past the end");
  auto twice = l;
  twice[21] = 0;  // out heads on top of each other
  expect(twice, "writes some output elements twice");
}

}  // namespace
