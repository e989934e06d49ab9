// sdpa_with_kv_cache.default and update_cache.default (llama custom ops) against fp64 references:
// a prefill then a decode loop whose position is a runtime SymInt, the caches persisting between
// runs of the same Model.
#include "etwebgpu/device.h"
#include "gpu/context.h"
#include "reference/attention/attention_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr int64_t kHq = 4, kHkv = 2, kD = 8, kCmax = 20, kSmax = 8;
// Load-time resize sees every input at its maximum: the position input bound keeps max start + S
// within the cache.
constexpr int64_t kPosMax = kCmax - kSmax;

// Appends rows [1, S, H, D] of `src` to the history `hist` (kept as [1, L, H, D]).
void append(HostTensor& hist, const HostTensor& src) {
  HostTensor n(DType::Float32, {1, hist.shape[1] + src.shape[1], hist.shape[2], hist.shape[3]});
  if (!hist.data.empty()) std::memcpy(n.data.data(), hist.data.data(), hist.data.size());
  std::memcpy(n.data.data() + hist.data.size(), src.data.data(), src.data.size());
  hist = std::move(n);
}

struct KvGraph {
  OpGraph g;
  // Inputs: q, k, v (dynamic S), pos int32 [1] (position source when `select_pos`), or a dummy
  // float input [start_pos] whose length is the position (sym_size path).
  // `seq_const`: seq_len as that Int instead of q's live length (1 is ExecuTorch's Vulkan
  // partitioner's placeholder).
  explicit KvGraph(bool select_pos, std::optional<double> scale = std::nullopt,
                   std::optional<int64_t> seq_const = std::nullopt) {
    Id q = g.input(random_f32({1, kSmax, kHq, kD}, 1), {1, kSmax, kHq, kD}, true);
    Id k = g.input(random_f32({1, kSmax, kHkv, kD}, 2), {1, kSmax, kHkv, kD}, true);
    Id v = g.input(random_f32({1, kSmax, kHkv, kD}, 3), {1, kSmax, kHkv, kD}, true);
    Id start = g.gb.symint(), seq = g.gb.symint();
    if (select_pos) {
      Id pos = g.input(HostTensor::from<int32_t>(DType::Int32, {1}, {0}));
      g.gb.op("et_vk.select_as_symint.default", {pos, g.gb.int_(0), g.gb.int_(0), start});
    } else {
      Id len = g.input(HostTensor(DType::Float32, {0}), {kPosMax}, true);
      g.gb.op("sym_size.int", {len, g.gb.int_(0), start});
    }
    g.gb.op("sym_size.int", {q, g.gb.int_(1), seq});
    Id kc = g.gb.tensor(DType::Float32, {1, kCmax, kHkv, kD}), vc = g.gb.tensor(DType::Float32, {1, kCmax, kHkv, kD});
    Id o = g.output(DType::Float32, {1, kSmax, kHq, kD});
    if (seq_const) seq = g.gb.int_(*seq_const);
    g.gb.op("sdpa_with_kv_cache.default", {q, k, v, kc, vc, start, seq, g.gb.null(), g.gb.dbl(0.0), g.gb.boolean(true),
                                           scale ? g.gb.dbl(*scale) : g.gb.null(), o});
  }
};

void prefill_then_decode(bool select_pos, const LoadOptions& opts = {}, std::optional<int64_t> seq_const = std::nullopt) {
  KvGraph kg(select_pos, std::nullopt, seq_const);
  HostTensor keys(DType::Float32, {1, 0, kHkv, kD}), vals(DType::Float32, {1, 0, kHkv, kD});
  int64_t pos = 0;
  uint64_t seed = 100;
  bool first = true;
  for (int64_t S : {7, 1, 1, 1, 1, 1}) {
    auto q = random_f32({1, S, kHq, kD}, seed++), k = random_f32({1, S, kHkv, kD}, seed++),
         v = random_f32({1, S, kHkv, kD}, seed++);
    HostTensor p = select_pos ? HostTensor::from<int32_t>(DType::Int32, {1}, {static_cast<int32_t>(pos)})
                              : HostTensor(DType::Float32, {pos});
    std::vector<HostTensor> in{q, k, v, p};
    if (first) {
      kg.g.inputs = in;
      kg.g.run(opts);
      first = false;
    }
    auto out = kg.g.rerun(in);
    append(keys, k);
    append(vals, v);
    ASSERT_EQ(out[0].shape, q.shape);
    EXPECT_TRUE(Close(out[0], ref::sdpa_kv_causal(q, keys, vals, pos, std::nullopt), 1e-5, 1e-4)) << "pos " << pos;
    pos += S;
  }
}

TEST(OpSdpaKvCache, PrefillThenDecodeWithSelectAsSymintPosition) {
  ETW_REQUIRE_GPU();
  prefill_then_decode(true);
}

TEST(OpSdpaKvCache, PrefillThenDecodeWithSymSizePosition) {
  ETW_REQUIRE_GPU();
  prefill_then_decode(false);
}

// Causal attention over the cache on each route pinned: the 7-row prefill and the 1-row steps
// (the decode route in one pass and split over keys).
TEST(OpSdpaKvCache, PrefillThenDecodeOnFlashDecodeAndStagedRoutes) {
  ETW_REQUIRE_GPU();
  for (const char* r : {"flash", "decode", "decode/wide", "decode/split", "staged"}) {
    SCOPED_TRACE(r);
    LoadOptions o;
    const std::string route = r;
    o.force_route["sdpa"] = route.substr(0, route.find('/'));
    if (route.find('/') != std::string::npos) o.force_route["sdpa_decode"] = route.substr(route.find('/') + 1);
    prefill_then_decode(true, o);
  }
}

// The one-pass decode kernel stores a step's new rows into the caches itself, so the node is one
// dispatch; pinned "separate" (or on the split route) the kv_cache_write dispatch runs first. The
// decode loops above (default routes: the one-pass kernel writes every step's rows) read them back.
TEST(OpSdpaKvCache, OnePassDecodeStoresTheNewRowsItselfAndTheCacheWriteDispatchIsSkipped) {
  ETW_REQUIRE_GPU();
  const std::string wide = device_info().subgroups ? "decode_wide_subgroup" : "decode_wide";
  const std::string split = device_info().subgroups ? "decode_subgroup" : "decode";
  auto variants = [](const std::map<std::string, std::string>& routes) {
    KvGraph kg(true);
    kg.g.inputs = {random_f32({1, 1, kHq, kD}, 1), random_f32({1, 1, kHkv, kD}, 2), random_f32({1, 1, kHkv, kD}, 3),
                   HostTensor::from<int32_t>(DType::Int32, {1}, {5})};
    LoadOptions o;
    o.force_route = routes;
    kg.g.run(o);
    return kg.g.variants();
  };
  EXPECT_EQ(variants({}), std::vector<std::string>{wide});
  EXPECT_EQ(variants({{"sdpa_cache_write", "separate"}}), (std::vector<std::string>{"kv_cache_write", wide}));
  EXPECT_EQ(variants({{"sdpa_decode", "split"}}), (std::vector<std::string>{"kv_cache_write", split}));
  LoadOptions separate;
  separate.force_route["sdpa_cache_write"] = "separate";
  prefill_then_decode(true, separate);
}

// ExecuTorch's Vulkan partitioner writes seq_len as the constant 1 (patterns/sdpa.py) even for a
// prefill chunk: q's live length is the sequence length then.
TEST(OpSdpaKvCache, PartitionersSeqLenPlaceholderOfOneFollowsQsLength) {
  ETW_REQUIRE_GPU();
  prefill_then_decode(true, {}, 1);
}

TEST(OpSdpaKvCache, SeqLenOtherThanQsLengthOrThePlaceholderIsARunTimeError) {
  ETW_REQUIRE_GPU();
  KvGraph kg(true, std::nullopt, 3);
  auto q = random_f32({1, 2, kHq, kD}, 1), k = random_f32({1, 2, kHkv, kD}, 2), v = random_f32({1, 2, kHkv, kD}, 3);
  kg.g.inputs = {q, k, v, HostTensor::from<int32_t>(DType::Int32, {1}, {0})};
  auto e = load_error([&] { kg.g.run(); });
  EXPECT_TRUE(has(e, "seq_len 3 differs from q's sequence length")) << e;
}

TEST(OpSdpaKvCache, CacheOverflowIsARunTimeError) {
  ETW_REQUIRE_GPU();
  KvGraph kg(true);
  kg.g.run();
  auto q = random_f32({1, 4, kHq, kD}, 1), k = random_f32({1, 4, kHkv, kD}, 2), v = random_f32({1, 4, kHkv, kD}, 3);
  try {
    kg.g.rerun({q, k, v, HostTensor::from<int32_t>(DType::Int32, {1}, {18})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the cache length"), std::string::npos) << e.what();
  }
}

TEST(OpSdpaKvCache, MaskDropoutNonCausalAndBadGqaAreRejected) {
  ETW_REQUIRE_GPU();
  auto build = [](int variant) {
    OpGraph g;
    int64_t hq = variant == 3 ? 3 : kHq;
    Id q = g.input(random_f32({1, 2, hq, kD}, 1));
    Id k = g.input(random_f32({1, 2, kHkv, kD}, 2)), v = g.input(random_f32({1, 2, kHkv, kD}, 3));
    Id kc = g.gb.tensor(DType::Float32, {1, kCmax, kHkv, kD}), vc = g.gb.tensor(DType::Float32, {1, kCmax, kHkv, kD});
    Id mask = variant == 0 ? g.input(random_f32({2, 2}, 4)) : g.gb.null();
    Id o = g.output(DType::Float32, {1, 2, hq, kD});
    g.gb.op("sdpa_with_kv_cache.default", {q, k, v, kc, vc, g.gb.int_(0), g.gb.int_(2), mask,
                                           g.gb.dbl(variant == 1 ? 0.1 : 0.0), g.gb.boolean(variant != 2), g.gb.null(), o});
    return g.run();
  };
  const char* want[] = {"attn_mask", "dropout_p", "is_causal", "multiple of kv heads"};
  for (int i = 0; i < 4; ++i) {
    try {
      build(i);
      ADD_FAILURE() << "variant " << i << " loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want[i]), std::string::npos) << e.what();
    }
  }
}

TEST(OpUpdateCache, WritesRowsAtStartPosAndPersistsAcrossRuns) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id val = g.input(random_f32({1, 3, 2, 4}, 1), {1, 3, 2, 4}, true);
  Id pos = g.input(HostTensor::from<int32_t>(DType::Int32, {1}, {2}));
  Id start = g.gb.symint();
  g.gb.op("et_vk.select_as_symint.default", {pos, g.gb.int_(0), g.gb.int_(0), start});
  Id cache = g.output(DType::Float32, {1, 9, 2, 4});
  Id dummy = g.gb.tensor(DType::Float32, {1});
  g.gb.op("update_cache.default", {val, cache, start, dummy});
  auto a = random_f32({1, 3, 2, 4}, 5), b = random_f32({1, 2, 2, 4}, 6);
  g.inputs = {a, HostTensor::from<int32_t>(DType::Int32, {1}, {1})};
  g.run();
  auto out = g.rerun({b, HostTensor::from<int32_t>(DType::Int32, {1}, {6})})[0];
  std::vector<double> expect(9 * 8, 0.0);
  auto av = a.to_f64(), bv = b.to_f64();
  for (int i = 0; i < 24; ++i) expect[8 * 1 + i] = av[i];
  for (int i = 0; i < 16; ++i) expect[8 * 6 + i] = bv[i];
  EXPECT_TRUE(Close(out, ref_tensor({1, 9, 2, 4}, expect), 0, 0));
}

// The cache writes move 32-bit words: at fp16 a cache row of an odd number of elements (1 head x
// 3) cannot be written that way and is refused at load, naming the row, instead of writing half
// words.
TEST(OpUpdateCache, AnF16CacheRowOfOddLengthIsRefusedAtLoad) {
  ETW_REQUIRE_GPU();
  if (!gpu::Context::get()->info().shader_f16) GTEST_SKIP() << "adapter without shader-f16";
  OpGraph g;
  Id val = g.input(random_f32({1, 1, 1, 3}, 1));
  Id cache = g.output(DType::Float32, {1, 4, 1, 3});
  g.gb.op("update_cache.default", {val, cache, g.gb.int_(0), g.gb.tensor(DType::Float32, {1})});
  LoadOptions o;
  o.precision = Precision::FP16;
  try {
    g.run(o);
    FAIL() << "an odd f16 cache row loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("not a whole number of 32-bit words"), std::string::npos) << e.what();
  }
}

}  // namespace
