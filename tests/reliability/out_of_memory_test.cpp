// Running out of device memory is an Error(Limit) naming the bytes, and the process carries on.
// On lavapipe no allocation failure ever reaches Dawn's error scopes (docs/SECURITY.md, "Out of
// memory"): buffers are host memory that the driver maps into the process when they are
// created, it ignores a failed mmap, and the first use of such a buffer is a SIGSEGV. So these
// tests provoke the two real limits safely: buffers beyond the adapter's memory heap (created but
// never used, they take address space, not RAM) and buffers beyond a lowered RLIMIT_AS (the
// failure that crashed before).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "etwebgpu/builder.h"
#include "tools/conformance/conformance.h"
#include "gpu/context.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr int64_t kElems = 32ll << 20;           // float32 elements of one tensor:
constexpr uint64_t kBytes = uint64_t(kElems) * 4;  // 128 MiB, lavapipe's maxStorageBufferBindingSize
const char* const kFixture = "add_bcast";

// x [kElems] -> n outputs x + x: n + 1 buffers of kBytes (outputs never share storage).
std::vector<uint8_t> wide_model(int n) {
  GraphBuilder g;
  auto x = g.input(DType::Float32, {kElems});
  for (int i = 0; i < n; ++i) {
    auto o = g.tensor(DType::Float32, {kElems});
    g.op("aten.add.Tensor", {x, x, g.int_(1), o});
    g.output(o);
  }
  return g.serialize();
}

std::string limit_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

bool fixture_present() { return std::filesystem::exists(conformance_dir() + "/" + kFixture + "/model.pte"); }
::testing::AssertionResult FixtureRuns() {
  const ConformanceResult r = run_conformance_case(conformance_dir(), kFixture);
  if (r.status == ConformanceResult::Status::Passed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << kFixture << ": " << r.message;
}

// Lowers the soft RLIMIT_AS to the address space in use plus `headroom`, for the scope.
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(uint64_t headroom) {
    getrlimit(RLIMIT_AS, &saved_);
    std::ifstream statm("/proc/self/statm");
    uint64_t pages = 0;
    statm >> pages;
    rlimit r = saved_;
    r.rlim_cur = pages * sysconf(_SC_PAGESIZE) + headroom;
    ok_ = setrlimit(RLIMIT_AS, &r) == 0;
  }
  ~AddressSpaceLimit() { setrlimit(RLIMIT_AS, &saved_); }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

TEST(OutOfMemory, ModelBeyondTheMemoryHeapIsRefusedBeforeAnyAllocation) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_FIXTURE(fixture_present(), conformance_dir() + "/" + kFixture);
  auto ctx = gpu::Context::get();
  const uint64_t heap = ctx->info().memory_heap;
  ASSERT_GT(heap, 0u) << "the adapter reports no memory heaps: " << ctx->info().summary();
  const int n = static_cast<int>(heap / kBytes) + 1;
  const uint64_t needs = (n + 1) * kBytes;
  LoadOptions o;
  o.max_gpu_bytes = UINT64_MAX;  // the device's limit, not this policy, must refuse it
  const size_t created = ctx->cache_stats().buffers_created;
  const auto live = gpu::Context::live_objects();
  const std::string msg = limit_error([&] { Model::load_bytes(wide_model(n), o); });
  std::printf("%s\n", msg.c_str());
  EXPECT_TRUE(has(msg, ("needs " + std::to_string(needs) + " bytes of device memory").c_str())) << msg;
  EXPECT_EQ(ctx->cache_stats().buffers_created, created) << "buffers were created before the refusal";
  EXPECT_EQ(gpu::Context::live_objects().buffer_bytes, live.buffer_bytes);
  EXPECT_TRUE(FixtureRuns());
}

// Creates kBytes storage buffers into `held` until the device refuses one (at most `cap`); returns
// that refusal's message, "" when none came. `touch` writes and reads back each buffer's last word.
std::string fill(gpu::Context& ctx, std::vector<gpu::Buffer>& held, uint64_t cap, bool touch) {
  for (uint64_t i = 0; i < cap; ++i) {
    const std::string label = "oom." + std::to_string(i);
    try {
      held.push_back(ctx.create_buffer(kBytes, gpu::BufferKind::Storage, label));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Limit) << e.what();
      const std::string msg = e.what();
      EXPECT_TRUE(has(msg, ("buffer '" + label + "' of " + std::to_string(kBytes) + " bytes").c_str())) << msg;
      EXPECT_TRUE(has(msg, "out of memory")) << msg;
      return msg;
    }
    if (touch) {
      const uint32_t word = 0x600dd00d + static_cast<uint32_t>(i);
      uint32_t back = 0;
      ctx.write(held.back(), kBytes - 4, &word, 4);
      ctx.read(held.back(), kBytes - 4, &back, 4);
      EXPECT_EQ(back, word) << label;
    }
  }
  return "";
}

TEST(OutOfMemory, BufferBeyondTheMemoryHeapIsALimitErrorNamingItAndItsBytes) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_FIXTURE(fixture_present(), conformance_dir() + "/" + kFixture);
  auto ctx = gpu::Context::get();
  const uint64_t heap = ctx->info().memory_heap;
  ASSERT_GT(heap, 0u) << ctx->info().summary();
  const uint64_t before = static_cast<uint64_t>(gpu::Context::live_objects().buffer_bytes);
  std::vector<gpu::Buffer> held;
  // Never used, so lavapipe gives them address space but no memory.
  const std::string msg = fill(*ctx, held, heap / kBytes + 1, false);
  ASSERT_FALSE(msg.empty()) << held.size() << " buffers of " << kBytes << " bytes fit a heap of " << heap;
  std::printf("after %zu buffers: %s\n", held.size(), msg.c_str());
  if (ctx->info().adapter_type == 3) {
    // On lavapipe only the surface's heap check refuses, and only the buffer that does not fit
    // (a GPU's driver may refuse earlier: its other allocations share the heap).
    EXPECT_TRUE(has(msg, ("memory heap of " + std::to_string(heap)).c_str())) << msg;
    EXPECT_GT(before + (held.size() + 1) * kBytes, heap) << msg;
    EXPECT_LE(before + held.size() * kBytes, heap) << msg;
  }
  held.clear();
  EXPECT_TRUE(FixtureRuns());
}

// The failure that used to crash: lavapipe could not map a buffer into the address space, said
// nothing, and the first write to it was a SIGSEGV.
TEST(OutOfMemory, AddressSpaceExhaustionIsALimitErrorNotACrash) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_FIXTURE(fixture_present(), conformance_dir() + "/" + kFixture);
  auto ctx = gpu::Context::get();
  if (ctx->info().adapter_type != 3)
    GTEST_SKIP() << "only a CPU adapter maps its buffers into the process: " << ctx->info().summary();
  ASSERT_TRUE(FixtureRuns());  // compiles its pipelines before the limit
  {
    AddressSpaceLimit limit(640ull << 20);
    ASSERT_TRUE(limit.ok());
    // A model of 8 x 128 MiB is refused up front...
    std::string msg = limit_error([&] { Model::load_bytes(wide_model(7)); });
    std::printf("%s\n", msg.c_str());
    EXPECT_TRUE(has(msg, ("needs " + std::to_string(8 * kBytes) + " bytes of device memory").c_str())) << msg;
    EXPECT_TRUE(has(msg, "RLIMIT_AS")) << msg;
    // ...and buffer by buffer, every one created is really there (written and read back) until
    // the one that does not fit is refused.
    std::vector<gpu::Buffer> held;
    msg = fill(*ctx, held, 8, true);
    EXPECT_TRUE(has(msg, "RLIMIT_AS")) << msg;
    EXPECT_GE(held.size(), 2u) << msg;
    std::printf("after %zu buffers: %s\n", held.size(), msg.c_str());
    // Freed, they give their address space back (Dawn unmaps them a few submissions later).
    const size_t first = held.size();
    held.clear();
    msg = fill(*ctx, held, 8, true);
    EXPECT_EQ(held.size(), first) << msg;
    held.clear();
    // The process carries on under the same limit.
    EXPECT_TRUE(FixtureRuns());
  }
  EXPECT_TRUE(FixtureRuns());
}

}  // namespace
