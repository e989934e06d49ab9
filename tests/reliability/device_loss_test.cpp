// Losing the WebGPU device (forced here by destroying it, as a driver reset would): models loaded
// on it fail every later call with a clear Error(Gpu), can still be freed, and the next
// Model::load gets a fresh device that works.
#include "etwebgpu/builder.h"
#include "gpu/context.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::unique_ptr<Model> load_add(int64_t n) {
  GraphBuilder g;
  auto a = g.input(DType::Float32, {n});
  auto b = g.input(DType::Float32, {n});
  auto o = g.tensor(DType::Float32, {n});
  g.op("aten.add.Tensor", {a, b, g.int_(1), o});
  g.output(o);
  return Model::load_bytes(g.serialize());
}

// Runs a + b on `m` and checks the sum.
::testing::AssertionResult AddsCorrectly(Model& m, uint64_t seed) {
  const int64_t n = m.inputs()[0].sizes[0];
  auto a = random_f32({n}, seed), b = random_f32({n}, seed + 1);
  auto x = a.to_f64(), y = b.to_f64();
  for (size_t k = 0; k < x.size(); ++k) x[k] += y[k];
  return Close(m.run({a, b})[0], ref_tensor({n}, x), 1e-6, 1e-6);
}

std::string gpu_error(Model& m) {
  try {
    AddsCorrectly(m, 99);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Gpu) << e.what();
    return e.what();
  }
  return "";
}

TEST(DeviceLoss, LoadedModelsFailClearlyAndTheNextLoadGetsAFreshDevice) {
  ETW_REQUIRE_GPU();
  auto first = load_add(33), second = load_add(7);
  ASSERT_TRUE(AddsCorrectly(*first, 1));
  const auto lost = gpu::Context::get();
  lost->debug_lose_device();
  EXPECT_FALSE(lost->alive());

  for (Model* m : {first.get(), second.get(), first.get()}) {
    const std::string msg = gpu_error(*m);
    EXPECT_NE(msg.find("device lost"), std::string::npos) << msg;
  }

  auto fresh = load_add(33);
  EXPECT_TRUE(gpu::Context::get()->alive());
  EXPECT_NE(gpu::Context::get().get(), lost.get());
  EXPECT_TRUE(AddsCorrectly(*fresh, 2));
  // Objects of the lost device are released without disturbing the fresh one.
  first.reset();
  second.reset();
  EXPECT_TRUE(AddsCorrectly(*fresh, 3));
  EXPECT_TRUE(AddsCorrectly(*load_add(5), 4));
}

TEST(DeviceLoss, LossBetweenLoadsOfTheSameFileIsInvisibleToTheSecondLoad) {
  ETW_REQUIRE_GPU();
  { auto m = load_add(16); ASSERT_TRUE(AddsCorrectly(*m, 5)); }
  gpu::Context::get()->debug_lose_device();
  auto again = load_add(16);
  EXPECT_TRUE(AddsCorrectly(*again, 6));
}

}  // namespace
