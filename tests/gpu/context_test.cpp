// The WebGPU device layer on the real adapter (lavapipe in CI, NVIDIA on the GPU machine).
#include <gtest/gtest.h>

#include "etwebgpu/example_model.h"
#include "gpu/context.h"
#include "gpu/selftest.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::gpu;

namespace {

const char* kAddOne = R"(
@group(0) @binding(0) var<storage, read_write> O: array<u32>;
override WG: u32 = 64u;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  if (gid.x < arrayLength(&O)) { O[gid.x] = WG; }
}
)";

TEST(GpuContext, AdapterIsVulkanWithLimitsAndFeaturesRead) {
  ETW_REQUIRE_GPU();
  const auto& i = Context::get()->info();
  EXPECT_FALSE(i.description.empty());
  EXPECT_GE(i.max_buffer_size, 256ull << 20);
  EXPECT_GE(i.max_storage_binding, 128ull << 20);
  EXPECT_GE(i.max_invocations, 256u);  // full adapter limits, not WebGPU defaults
  EXPECT_EQ(i.max_workgroups_per_dim, 65535u);
  EXPECT_NE(i.summary().find("Vulkan"), std::string::npos);
}

TEST(GpuContext, VectorAddOverOneMillionElementsIsExact) {
  ETW_REQUIRE_GPU();
  EXPECT_NO_THROW(self_test(*Context::get(), 1 << 20, 64));
}

TEST(GpuContext, DispatchPast65535WorkgroupsFoldsInto2D) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  uint64_t n = 65535ull * 64 + 4097;  // one dimension cannot hold it at workgroup size 64
  Grid g = ctx->grid((n + 63) / 64);
  EXPECT_GT(g.y, 1u);
  EXPECT_GE(uint64_t(g.x) * g.y, (n + 63) / 64);
  EXPECT_NO_THROW(self_test(*ctx, n, 64));  // checks every element, including the tail
}

TEST(GpuContext, FoldGridStaysWithinLimitsAndCoversTotal) {
  for (uint64_t total : {1ull, 65535ull, 65536ull, 1000000ull, 65535ull * 65535ull}) {
    Grid g = fold_grid(total, 65535);
    EXPECT_LE(g.x, 65535u);
    EXPECT_LE(g.y, 65535u);
    EXPECT_GE(uint64_t(g.x) * g.y, total);
  }
  EXPECT_THROW(fold_grid(65535ull * 65535ull + 1, 65535), Error);
}

TEST(GpuContext, OverrideConstantChangesWorkgroupSize) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  for (uint32_t wg : {32u, 128u}) {
    Buffer o = ctx->create_buffer(wg * 4 * 4, BufferKind::Storage, "o");
    const Pipeline& p = ctx->pipeline_from_source(kAddOne, "main", {{"WG", wg}}, "wg_test");
    BindGroup bg = ctx->bind_group(p, {{0, &o}});
    ctx->submit({ctx->dispatch(p, bg, Grid{4, 1, 1})});
    std::vector<uint32_t> v(wg * 4);
    ctx->read(o, 0, v.data(), v.size() * 4);
    for (auto x : v) ASSERT_EQ(x, wg);  // 4 workgroups of `wg` invocations cover exactly wg*4 words
  }
}

// The language feature the int8 kernels' fast path needs: where the adapter reports it (the
// enum value in gpu/webgpu_abi.h is not in DAWN_ABI.md), dot4I8Packed and pack4xI8 compile and
// compute signed 8-bit dot products of packed words.
TEST(GpuContext, ReportedPackedDot4CompilesAndMultipliesSignedBytes) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  if (!ctx->info().packed_dot4) GTEST_SKIP() << "adapter without packed_4x8_integer_dot_product";
  const char* src = R"(
@group(0) @binding(0) var<storage, read_write> O: array<i32>;
@compute @workgroup_size(1)
fn main() {
  let a = pack4xI8(vec4<i32>(-128, 127, -1, 5));
  let b = pack4xI8(vec4<i32>(-128, -128, 3, 7));
  O[0] = dot4I8Packed(a, b);
  O[1] = bitcast<i32>(a);
}
)";
  Buffer o = ctx->create_buffer(8, BufferKind::Storage, "o");
  const Pipeline& p = ctx->pipeline_from_source(src, "main", {}, "dot4_test");
  BindGroup bg = ctx->bind_group(p, {{0, &o}});
  ctx->submit({ctx->dispatch(p, bg, Grid{1, 1, 1})});
  int32_t v[2];
  ctx->read(o, 0, v, 8);
  EXPECT_EQ(v[0], 128 * 128 - 127 * 128 - 3 + 35);
  EXPECT_EQ(static_cast<uint32_t>(v[1]), 0x05ff7f80u);  // element j in byte j, two's complement
}

TEST(GpuContext, PipelineCacheHitsOnSameShaderEntryAndConstants) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  const Pipeline& a = ctx->pipeline_from_source(kAddOne, "main", {{"WG", 16}}, "cache_test");
  auto before = ctx->cache_stats();
  const Pipeline& b = ctx->pipeline_from_source(kAddOne, "main", {{"WG", 16}}, "cache_test");
  auto after = ctx->cache_stats();
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.pipelines, before.pipelines);
  const Pipeline& c = ctx->pipeline_from_source(kAddOne, "main", {{"WG", 8}}, "cache_test");
  EXPECT_NE(a.handle, c.handle);
  EXPECT_EQ(ctx->cache_stats().pipelines, after.pipelines + 1);
}

TEST(GpuContext, InvalidWgslThrowsWithDawnsMessage) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  try {
    ctx->pipeline_from_source("@compute @workgroup_size(1) fn main() { let x: u32 = undefined_thing; }", "main", {},
                              "bad_wgsl");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Gpu);
    EXPECT_NE(std::string(e.what()).find("undefined_thing"), std::string::npos) << e.what();
  }
  // The device stays usable.
  EXPECT_NO_THROW(self_test(*ctx, 1024, 64));
}

TEST(GpuContext, OverLimitWorkgroupSizeThrowsWithDawnsMessage) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  uint32_t too_big = ctx->info().max_invocations * 2;
  try {
    ctx->pipeline_from_source(kAddOne, "main", {{"WG", too_big}}, "too_big");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Gpu);
    EXPECT_NE(std::string(e.what()).find("workgroup"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(self_test(*ctx, 1024, 64));
}

TEST(GpuContext, UnknownOverrideConstantIsAnError) {
  ETW_REQUIRE_GPU();
  EXPECT_THROW(Context::get()->pipeline_from_source(kAddOne, "main", {{"NOPE", 1}}, "nope"), Error);
}

// O[i] = i * K + WG: each pipeline of a batch below computes its own sequence.
const char* kAffine = R"(
@group(0) @binding(0) var<storage, read_write> O: array<u32>;
override WG: u32 = 64u;
override K: u32 = 1u;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < arrayLength(&O)) { O[gid.x] = gid.x * K + WG; }
}
)";

// What pipeline `p` writes into 256 words.
std::vector<uint32_t> affine_output(Context& ctx, const Pipeline& p, uint32_t wg) {
  Buffer o = ctx.create_buffer(256 * 4, BufferKind::Storage, "affine");
  BindGroup bg = ctx.bind_group(p, {{0, &o}});
  ctx.submit({ctx.dispatch(p, bg, Grid{256 / wg, 1, 1})});
  std::vector<uint32_t> v(256);
  ctx.read(o, 0, v.data(), v.size() * 4);
  return v;
}

TEST(GpuContext, ABatchMakesPipelinesThatBehaveAsOneByOne) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  // Constants no other test uses, so the batch compiles them; the last repeats the first.
  std::vector<Constants> cs = {{{"WG", 16}, {"K", 7001}}, {{"WG", 32}, {"K", 7002}}, {{"WG", 64}, {"K", 7003}},
                               {{"WG", 128}, {"K", 7004}}, {{"WG", 16}, {"K", 7001}}};
  std::vector<Context::PipelineSource> src;
  for (auto& c : cs) src.push_back({kAffine, "main", &c, "batch"});
  auto before = ctx->cache_stats();
  std::vector<const Pipeline*> batch = ctx->pipelines_from_sources(src);
  auto after = ctx->cache_stats();
  EXPECT_EQ(after.batches, before.batches + 1);
  EXPECT_EQ(after.misses, before.misses + 4);
  EXPECT_EQ(after.hits, before.hits + 1) << "the repeated source is compiled once";
  EXPECT_EQ(after.pipelines, before.pipelines + 4);
  ASSERT_EQ(batch.size(), cs.size());
  EXPECT_EQ(batch[4], batch[0]);
  // The same shaders made one at a time (a different source text, so not from the cache).
  std::string one_by_one = std::string(kAffine) + "// one by one\n";
  for (size_t i = 0; i < cs.size(); ++i) {
    const Pipeline& p = ctx->pipeline_from_source(one_by_one, "main", cs[i], "single");
    EXPECT_NE(p.handle, batch[i]->handle);
    auto wg = static_cast<uint32_t>(cs[i].at("WG"));
    std::vector<uint32_t> got = affine_output(*ctx, *batch[i], wg);
    EXPECT_EQ(got, affine_output(*ctx, p, wg)) << i;
    EXPECT_EQ(got[3], 3 * static_cast<uint32_t>(cs[i].at("K")) + wg) << i;
  }
  EXPECT_EQ(ctx->cache_stats().batches, after.batches + 4) << "one batch of one per new pipeline";
  // Asked again, the whole batch comes from the cache without a compile.
  EXPECT_EQ(ctx->pipelines_from_sources(src), batch);
  EXPECT_EQ(ctx->cache_stats().batches, after.batches + 4);
}

TEST(GpuContext, ABadShaderFailsItsWholeBatchNamingItAndTheDeviceStaysUsable) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  Constants good1{{"WG", 16}, {"K", 8001}}, good2{{"WG", 32}, {"K", 8002}}, none;
  std::vector<Context::PipelineSource> src = {
      {kAffine, "main", &good1, "good_one"},
      {"@compute @workgroup_size(1) fn main() { let x: u32 = undefined_thing; }", "main", &none, "bad_one"},
      {kAffine, "main", &good2, "good_two"}};
  auto before = ctx->cache_stats();
  size_t failed = 99;
  try {
    ctx->pipelines_from_sources(src, &failed);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Gpu);
    std::string m = e.what();
    EXPECT_NE(m.find("bad_one"), std::string::npos) << m;
    EXPECT_NE(m.find("undefined_thing"), std::string::npos) << m;
    EXPECT_EQ(m.find("good_"), std::string::npos) << m;
  }
  EXPECT_EQ(failed, 1u);
  EXPECT_EQ(ctx->cache_stats().pipelines, before.pipelines) << "nothing of the failed batch is kept";
  // The good ones still compile, and the device still runs work.
  src.erase(src.begin() + 1);
  auto ok = ctx->pipelines_from_sources(src);
  EXPECT_EQ(affine_output(*ctx, *ok[1], 32)[2], 2 * 8002u + 32u);
  EXPECT_NO_THROW(self_test(*ctx, 1024, 64));
}

TEST(GpuContext, AModelLoadCompilesItsPipelinesInOneBatch) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  auto em = make_example_model();
  auto before = ctx->cache_stats();
  auto m = Model::load_bytes(em.pte);
  auto after = ctx->cache_stats();
  // The kernels may already be cached by an earlier test in this process: then no batch at all.
  EXPECT_EQ(after.batches - before.batches, after.misses > before.misses ? 1u : 0u);
  EXPECT_GT(after.bind_groups_created, before.bind_groups_created);
  HostTensor first = m->run({em.input}).at(0);
  EXPECT_TRUE(compare_tensors(first, em.expected, em.atol, em.rtol).ok);
  // A second load finds every pipeline in the cache and computes the same bits.
  auto m2 = Model::load_bytes(em.pte);
  EXPECT_EQ(ctx->cache_stats().batches, after.batches);
  HostTensor second = m2->run({em.input}).at(0);
  EXPECT_EQ(second.data, first.data);
}

TEST(GpuContext, BufferLargerThanDeviceLimitIsAClearError) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  try {
    ctx->create_buffer(ctx->info().max_buffer_size + 4, BufferKind::Storage, "huge");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit);
    EXPECT_NE(std::string(e.what()).find("maxBufferSize"), std::string::npos) << e.what();
  }
  try {
    ctx->create_buffer(ctx->info().max_storage_binding + 4, BufferKind::Storage, "wide");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit);
  }
}

TEST(GpuContext, ReadBackMatchesWrittenBytesAtOffsets) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  Buffer b = ctx->create_buffer(1024, BufferKind::Storage, "rw");
  std::vector<uint32_t> v(256);
  for (uint32_t i = 0; i < 256; ++i) v[i] = i * 2654435761u;
  ctx->write(b, 0, v.data(), 1024);
  std::vector<uint32_t> r(16);
  ctx->read(b, 64, r.data(), 64);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(r[i], v[16 + i]);
}

// Writes past Dawn's 4 MB staging ring take the surface's reused upload buffer: back-to-back
// writes to two buffers and to an offset must each land whole, the second waiting for the first.
TEST(GpuContext, LargeWritesThroughTheUploadBufferLandWholeAndInOrder) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  const uint64_t words = (5u << 20) / 4 + 3;  // 5 MB and 12 bytes
  Buffer a = ctx->create_buffer(words * 4, BufferKind::Storage, "big_a");
  Buffer b = ctx->create_buffer(words * 4 + 256, BufferKind::Storage, "big_b");
  std::vector<uint32_t> va(words), vb(words);
  for (uint64_t i = 0; i < words; ++i) va[i] = static_cast<uint32_t>(i * 2654435761u), vb[i] = ~va[i];
  for (int round = 0; round < 2; ++round) {
    ctx->write(a, 0, va.data(), words * 4);
    ctx->write(b, 256, vb.data(), words * 4);
    std::vector<uint32_t> ra(words), rb(words);
    ctx->read(a, 0, ra.data(), words * 4);
    ctx->read(b, 256, rb.data(), words * 4);
    EXPECT_EQ(ra, va);
    EXPECT_EQ(rb, vb);
    for (auto& x : va) x ^= 0x5a5a5a5au;  // new contents through the same upload buffer
  }
}

TEST(GpuContext, TimestampsMeasureEachDispatchWhenSupported) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  if (!ctx->info().timestamp_query) GTEST_SKIP() << "no timestamp-query on this adapter";
  Buffer o = ctx->create_buffer(4096, BufferKind::Storage, "ts");
  const Pipeline& p = ctx->pipeline_from_source(kAddOne, "main", {{"WG", 64}}, "ts");
  BindGroup bg = ctx->bind_group(p, {{0, &o}});
  std::vector<uint64_t> d;
  ctx->submit({ctx->dispatch(p, bg, Grid{16, 1, 1}), Context::clear(o, 0, 64), ctx->dispatch(p, bg, Grid{16, 1, 1})}, &d);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_GT(d[0] + d[2], 0u);
  EXPECT_EQ(d[1], 0u);
}

const char* kIncrement = R"(
@group(0) @binding(0) var<storage, read_write> O: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < arrayLength(&O)) { O[gid.x] = O[gid.x] * 3u + 1u; }
}
)";

// A run goes to the queue in parts of 8, 16, 32, ... commands: 61 dependent dispatches (with a
// clear and a copy among them) still run in order, each once, with a timestamp each, and the
// read-back sees the last.
TEST(GpuContext, RunsSubmittedInPartsKeepOrderAcrossParts) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  Buffer o = ctx->create_buffer(256, BufferKind::Storage, "chain");
  Buffer c = ctx->create_buffer(256, BufferKind::Storage, "chain_copy");
  const Pipeline& p = ctx->pipeline_from_source(kIncrement, "main", {}, "chain");
  BindGroup bg = ctx->bind_group(p, {{0, &o}});
  std::vector<Command> cmds{Context::clear(o, 0, 256)};
  uint32_t want = 0;
  for (int i = 0; i < 60; ++i) {
    if (i == 23) cmds.push_back(Context::copy(o, 0, c, 0, 256));  // in the second part
    cmds.push_back(ctx->dispatch(p, bg, Grid{1, 1, 1}));
    want = want * 3u + 1u;
  }
  uint32_t at23 = 0;
  for (int i = 0; i < 23; ++i) at23 = at23 * 3u + 1u;
  std::vector<uint32_t> got(64), copied(64);
  bool timed = ctx->info().timestamp_query;
  std::vector<uint64_t> d;
  ctx->submit(cmds, timed ? &d : nullptr, {{&o, 0, 256, got.data()}, {&c, 0, 256, copied.data()}});
  for (uint32_t v : got) EXPECT_EQ(v, want);
  for (uint32_t v : copied) EXPECT_EQ(v, at23);
  if (timed) {
    ASSERT_EQ(d.size(), cmds.size());
    size_t measured = 0;
    for (size_t i = 0; i < cmds.size(); ++i) measured += d[i] > 0;
    EXPECT_GE(measured, 50u);  // a one-workgroup kernel may round to 0 ns on a coarse clock
  }
}

// A bad command anywhere fails the whole call before any part is submitted.
TEST(GpuContext, BadCommandLateInARunFailsBeforeAnyPartRuns) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  Buffer o = ctx->create_buffer(256, BufferKind::Storage, "bad_chain");
  const Pipeline& p = ctx->pipeline_from_source(kIncrement, "main", {}, "bad_chain");
  BindGroup bg = ctx->bind_group(p, {{0, &o}});
  ctx->submit({Context::clear(o, 0, 256)});
  std::vector<Command> cmds;
  for (int i = 0; i < 40; ++i) cmds.push_back(ctx->dispatch(p, bg, Grid{1, 1, 1}));
  Command bad = cmds.back();
  bad.bind_group = 0xfffff;  // no such bind group
  cmds.push_back(bad);
  EXPECT_THROW(ctx->submit(cmds), Error);
  std::vector<uint32_t> got(64, 7);
  ctx->read(o, 0, got.data(), 256);
  for (uint32_t v : got) EXPECT_EQ(v, 0u) << "a part ran before the bad command was seen";
}

// Runs submitted without waiting overlap in the queue: each one's reads hold its own results when
// its ticket is waited for (a host write queued between them lands between them), at most four
// are in flight, and a ticket waited for twice or never issued is an error, not a hang.
TEST(GpuContext, AsyncSubmitsKeepQueueOrderAndEachReadLandsAtItsWait) {
  ETW_REQUIRE_GPU();
  auto ctx = Context::get();
  Buffer o = ctx->create_buffer(256, BufferKind::Storage, "async_chain");
  const Pipeline& p = ctx->pipeline_from_source(kIncrement, "main", {}, "async_chain");
  BindGroup bg = ctx->bind_group(p, {{0, &o}});
  std::vector<uint32_t> start(64, 5), reset(64, 100);
  ctx->write(o, 0, start.data(), 256);
  std::vector<Command> three(3, ctx->dispatch(p, bg, Grid{1, 1, 1}));
  std::vector<std::vector<uint32_t>> got(4, std::vector<uint32_t>(64, 0));
  std::vector<Context::Ticket> t;
  t.push_back(ctx->submit_async(three, {{&o, 0, 256, got[0].data()}}));
  ctx->write(o, 0, reset.data(), 256);  // after the first run, before the second
  t.push_back(ctx->submit_async(three, {{&o, 0, 256, got[1].data()}}));
  t.push_back(ctx->submit_async({}, {{&o, 0, 256, got[2].data()}}));
  t.push_back(ctx->submit_async({ctx->dispatch(p, bg, Grid{1, 1, 1})}, {}));
  try {
    ctx->submit_async(three, {});
    ADD_FAILURE() << "a fifth submit in flight was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in flight"), std::string::npos) << e.what();
  }
  auto thrice = [](uint32_t v) { return ((v * 3u + 1u) * 3u + 1u) * 3u + 1u; };
  for (Context::Ticket k : t) ctx->wait(k);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(got[0][i], thrice(5));
    EXPECT_EQ(got[1][i], thrice(100));
    EXPECT_EQ(got[2][i], thrice(100));
  }
  std::vector<uint32_t> last(64);
  ctx->read(o, 0, last.data(), 256);
  EXPECT_EQ(last[0], thrice(100) * 3u + 1u);
  EXPECT_THROW(ctx->wait(t[0]), Error);   // waited for already
  EXPECT_THROW(ctx->wait(0), Error);      // never issued
  EXPECT_THROW(ctx->wait(99), Error);
  Context::Ticket again = ctx->submit_async(three, {});  // the slots are free again
  EXPECT_NO_THROW(ctx->wait(again));
}

}  // namespace
