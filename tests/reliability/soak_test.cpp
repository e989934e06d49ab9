// A long-lived process: 200 load / run / free cycles over ten mixed conformance fixtures. Every
// freed model returns all its device buffers and bind groups; host RSS stays flat after the
// first pass (pipelines are compiled once and cached); the last runs are as fast as the first.
#include <algorithm>
#include <random>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

#include "etwebgpu/generate.h"
#include "tools/conformance/conformance.h"
#include "gpu/context.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// ASan's quarantine keeps freed memory (up to 256 MiB) out of reuse, so RSS grows by design there.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kRssIsMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kRssIsMeaningful = false;
#else
constexpr bool kRssIsMeaningful = true;
#endif
#else
constexpr bool kRssIsMeaningful = true;
#endif

int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0, resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return resident_pages * sysconf(_SC_PAGESIZE);
}

// CPU time of the whole process (lavapipe's worker threads included), in ms: unlike wall time it
// does not grow when other processes load the machine.
double cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Ten fixtures across op families; 20 consecutive cycles visit each twice, so the first and
// the last 20 cycles time the same work.
const std::vector<std::string> kFixtures = {
    "add_bcast",   "embedding",  "layer_norm",       "softmax_last",          "conv2d_grouped",
    "matmul_bmm",  "sdpa_causal", "linear_q4gsw_mlp", "upsample_bilinear_ac_false", "cat_dims"};

TEST(Soak, TwoHundredLoadRunFreeCyclesKeepMemoryFlatAndSpeedSteady) {
  ETW_REQUIRE_GPU();
  const std::string dir = conformance_dir();
  for (const auto& name : kFixtures)
    if (!std::filesystem::exists(dir + "/" + name + "/model.pte")) GTEST_SKIP() << "no fixture " << dir << "/" << name;
  // One pass first: compiles and caches every pipeline the fixtures use.
  for (const auto& name : kFixtures) ASSERT_EQ(run_conformance_case(dir, name).status, ConformanceResult::Status::Passed);

  const auto objects_before = gpu::Context::live_objects();
  const int cycles = 200, window = 20;
  std::vector<double> wall_ms(cycles), cpu(cycles);
  int64_t rss_after_first_window = 0;
  for (int c = 0; c < cycles; ++c) {
    const std::string& name = kFixtures[c % kFixtures.size()];
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_ms();
    const ConformanceResult r = run_conformance_case(dir, name);
    cpu[c] = cpu_ms() - c0;
    wall_ms[c] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(r.status, ConformanceResult::Status::Passed) << "cycle " << c << " " << name << ": " << r.message;
    const auto now = gpu::Context::live_objects();
    ASSERT_EQ(now.buffers, objects_before.buffers) << "cycle " << c << " " << name << " leaked device buffers";
    ASSERT_EQ(now.buffer_bytes, objects_before.buffer_bytes) << "cycle " << c << " " << name;
    ASSERT_EQ(now.bind_groups, objects_before.bind_groups) << "cycle " << c << " " << name << " leaked bind groups";
    if (c == window - 1) rss_after_first_window = rss_bytes();
  }
  const int64_t rss_growth = rss_bytes() - rss_after_first_window;
  auto first = [&](const std::vector<double>& v) { return median({v.begin(), v.begin() + window}); };
  auto last = [&](const std::vector<double>& v) { return median({v.end() - window, v.end()}); };
  std::printf("soak: %d cycles; median cycle of the first / last %d: CPU %.2f / %.2f ms, wall %.2f / %.2f ms; "
              "RSS growth %.1f MiB over the last %d cycles; %lld device buffers / %lld bind groups outside models\n",
              cycles, window, first(cpu), last(cpu), first(wall_ms), last(wall_ms), rss_growth / 1048576.0,
              cycles - window, static_cast<long long>(objects_before.buffers),
              static_cast<long long>(objects_before.bind_groups));
  // A leak of one fixture's file bytes (>= 20 KiB) per cycle would add >= 3.5 MiB; allocator noise is far below.
  if (kRssIsMeaningful) {
    EXPECT_LT(rss_growth, 8ll << 20);
  }
  // CPU time, generous for a loaded 2-core machine (shared caches); the slowdown this guards
  // against was 5x.
  EXPECT_LT(last(cpu), 2.0 * first(cpu) + 0.5);
}

// One loaded LLM (ExecuTorch's recipe export, 4-bit layers, tests/fixtures/exports) answering 1000
// generate calls with random prompts and sampling parameters: device buffers and bind groups stay
// those of the model, host memory stays flat, and a call repeated with the same seed gives the same
// tokens whatever ran in between. (Under ASan, 100 calls: its quarantine makes RSS meaningless.)
TEST(Soak, AThousandGenerateCallsWithRandomSamplingKeepMemoryFlatAndSeedsDeterministic) {
  ETW_REQUIRE_GPU();
  auto m = Model::load(std::string(ETWEBGPU_SOURCE_DIR) + "/tests/fixtures/exports/llama_recipe_q4/model.pte");
  const int calls = kRssIsMeaningful ? 1000 : 100;
  std::mt19937_64 r(7);
  auto options = [](std::mt19937_64& g) {
    GenerateOptions o;
    o.max_new_tokens = 1 + static_cast<int>(g() % 3);
    o.temperature = (g() % 4 == 0) ? 0.0 : 0.2 + (g() % 100) / 50.0;
    o.top_k = static_cast<int>(g() % 3 == 0 ? 0 : 1 + g() % 64);
    o.top_p = 0.05 + (g() % 96) / 100.0;
    o.seed = g();
    return o;
  };
  auto prompt_of = [](std::mt19937_64& g) {
    std::vector<int64_t> p(1 + g() % 12);
    for (auto& t : p) t = static_cast<int64_t>(g() % 512);
    return p;
  };
  std::mt19937_64 first_params(99);
  const auto o0 = options(first_params);
  const auto p0 = prompt_of(first_params);
  const auto want = generate(*m, p0, o0).tokens;
  // The first tenth takes every route the shapes lead to (kernels make their bind groups on first
  // use); from there on nothing may be created for good.
  auto objects = gpu::Context::live_objects();
  int64_t rss_mark = 0;
  for (int c = 0; c < calls; ++c) {
    auto o = options(r);
    auto p = prompt_of(r);
    auto res = generate(*m, p, o);
    ASSERT_EQ(static_cast<int>(res.tokens.size()), o.max_new_tokens) << "call " << c;
    for (int64_t t : res.tokens) ASSERT_TRUE(t >= 0 && t < 512) << "call " << c;
    if (c % 100 == 99) {
      ASSERT_EQ(generate(*m, p0, o0).tokens, want) << "after call " << c;
    }
    if (c == calls / 10) {
      rss_mark = rss_bytes();
      objects = gpu::Context::live_objects();
    } else if (c > calls / 10) {
      ASSERT_EQ(gpu::Context::live_objects().buffers, objects.buffers) << "call " << c;
      ASSERT_EQ(gpu::Context::live_objects().buffer_bytes, objects.buffer_bytes) << "call " << c;
      ASSERT_EQ(gpu::Context::live_objects().bind_groups, objects.bind_groups) << "call " << c;
    }
  }
  const int64_t growth = rss_bytes() - rss_mark;
  std::printf("soak: %d generate calls, RSS growth %.2f MiB after the first tenth\n", calls, growth / 1048576.0);
  if (kRssIsMeaningful) {
    EXPECT_LT(growth, 4ll << 20);
  }
}

}  // namespace
