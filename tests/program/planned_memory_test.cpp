// Planned memory on real programs: the conformance fixtures need much less device memory with
// planning than without, copy-free views record no dispatch yet give the same outputs, and every
// fixture still passes when buffers start as NaN instead of zeros (no kernel relies on a zeroed
// output, which a reused buffer is not).
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "etwebgpu/example_model.h"
#include "etwebgpu/npy.h"
#include "gpu/context.h"
#include "tools/conformance/conformance.h"
#include "program/model_internal.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::string fixture(const std::string& name) { return conformance_dir() + "/" + name; }
bool have(const std::string& name) { return std::filesystem::exists(fixture(name) + "/model.pte"); }

std::unique_ptr<Model> load(const std::string& name, bool plan, bool fuse = true) {
  LoadOptions o;
  o.plan_memory = plan;
  o.fuse = fuse;
  return Model::load(fixture(name) + "/model.pte", o);
}

std::vector<HostTensor> inputs_of(const std::string& name) {
  std::vector<HostTensor> in;
  for (int k = 0; std::filesystem::exists(fixture(name) + "/input_" + std::to_string(k) + ".npy"); ++k)
    in.push_back(read_npy(fixture(name) + "/input_" + std::to_string(k) + ".npy"));
  return in;
}

const graph::MemoryPlan& plan_of(Model& m) { return detail::ModelAccess::graph(m).memory_plan(); }

// Whole-program fixtures whose device memory (tensors, weights, uniforms) planning brings to at
// most 0.6x. The others hold mostly weights or graph inputs and outputs, which planning keeps
// (docs/PERFORMANCE.md lists every fixture). Unfused: the attention fusion removes most of the
// intermediates the sdpa fixtures' plans share.
TEST(PlannedMemory, FixturesNeedAtMostSixTenthsOfTheUnplannedDeviceMemory) {
  ETW_REQUIRE_GPU();
  for (const char* name : {"sdpa_causal", "sdpa_standard", "pixel_shuffle"}) {
    ETW_REQUIRE_FIXTURE(have(name), fixture(name));
    auto planned = load(name, true, false), unplanned = load(name, false, false);
    planned->run(inputs_of(name));
    unplanned->run(inputs_of(name));
    EXPECT_LE(planned->gpu_bytes(), unplanned->gpu_bytes() * 6 / 10)
        << name << ": planned " << planned->gpu_bytes() << " bytes, unplanned " << unplanned->gpu_bytes();
  }
}

// The KV-cache decoder's 428 KB of weights are the same either way (its gpu_bytes() only drops
// to 0.89x); its tensor storage drops to 0.27x.
TEST(PlannedMemory, DecoderTensorStorageNeedsAtMostSixTenthsAndGpuBytesDropsByTheSaving) {
  ETW_REQUIRE_GPU();
  const char* name = "llama_kv_cache_decode_steps";
  ETW_REQUIRE_FIXTURE(have(name), fixture(name));
  auto planned = load(name, true), unplanned = load(name, false);
  uint64_t p = plan_of(*planned).total_bytes(), u = plan_of(*unplanned).total_bytes();
  EXPECT_LE(p, u * 6 / 10) << "planned " << p << " bytes of tensor storage, unplanned " << u;
  // gpu_bytes() counts what is allocated: it drops by what the plan saves, and by the uniforms
  // of the permutes and selects of size-1 dims that became copy-free views (no kernel).
  ASSERT_LT(p, u);
  EXPECT_GE(unplanned->gpu_bytes() - planned->gpu_bytes(), u - p);
  EXPECT_LE(unplanned->gpu_bytes() - planned->gpu_bytes(), u - p + 8192);
}

// fp16 storage on whole programs: the KV-cache decoder (weights, caches and activations halve; its
// bool masks are bytes at either precision) and the embedded convnet need at most 0.56x of their
// fp32 device memory, planned or not. What does not halve: uniforms (one per kernel, alternative
// routes of a node included; 47 KB of the decoder's 272 KB at fp16) and int32 tensors (the
// convnet's max-pool indices).
TEST(PlannedMemory, Fp16NeedsAtMost56HundredthsOfTheFp32DeviceMemory) {
  ETW_REQUIRE_GPU();
  if (!gpu::Context::get()->info().shader_f16) GTEST_SKIP() << "adapter without shader-f16";
  const char* name = "llama_kv_cache_decode_steps";
  ETW_REQUIRE_FIXTURE(have(name), fixture(name));
  auto ex = make_example_model();
  for (bool plan : {true, false}) {
    auto bytes_of = [&](bool decoder, Precision p) {
      LoadOptions o;
      o.plan_memory = plan;
      o.precision = p;
      // Storage width alone: fusion at load removes float intermediates at both precisions (the
      // example convnet: 29312 -> 23136 bytes at fp32), after which the parts that do not halve
      // (int indices, uniforms) weigh more in the ratio.
      o.fuse = false;
      auto m = decoder ? Model::load(fixture(name) + "/model.pte", o) : Model::load_bytes(ex.pte, o);
      if (decoder) m->run(inputs_of(name));
      else m->run({ex.input});
      return m->gpu_bytes();
    };
    for (bool decoder : {true, false}) {
      uint64_t b32 = bytes_of(decoder, Precision::FP32), b16 = bytes_of(decoder, Precision::FP16);
      EXPECT_LE(b16 * 100, b32 * 56) << (decoder ? name : "example convnet") << (plan ? "" : " unplanned") << ": fp16 "
                                     << b16 << " bytes, fp32 " << b32;
    }
  }
}

class CopyFreeViewsOnFixture : public ::testing::TestWithParam<std::string> {};

// Every aliased view node has no step; the profile is shorter by exactly the copies the unplanned
// model records for them; the outputs are bit for bit the same.
// Unfused: fusion takes the views inside the sdpa fixtures' attention.
TEST_P(CopyFreeViewsOnFixture, AliasedViewsRecordNoDispatchAndGiveTheSameOutputs) {
  ETW_REQUIRE_GPU();
  const std::string name = GetParam();
  ETW_REQUIRE_FIXTURE(have(name), fixture(name));
  auto planned = load(name, true, false), unplanned = load(name, false, false);
  const auto& plan = plan_of(*planned);
  const auto& np = detail::ModelAccess::graph(*planned).nodes();
  const auto& nu = detail::ModelAccess::graph(*unplanned).nodes();
  ASSERT_EQ(np.size(), nu.size());
  size_t saved = 0;
  for (size_t i = 0; i < np.size(); ++i)
    if (plan.aliased_view[i]) {
      EXPECT_TRUE(np[i].steps.empty()) << np[i].op << " (node " << i << ")";
      saved += nu[i].steps.size();
    }
  EXPECT_GT(saved, 0u) << name << " has no view copy to save";
  Profile pp, pu;
  auto a = planned->run(inputs_of(name), &pp);
  auto b = unplanned->run(inputs_of(name), &pu);
  EXPECT_EQ(pp.dispatches.size() + saved, pu.dispatches.size());
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].shape, b[k].shape);
    EXPECT_EQ(a[k].data, b[k].data) << name << " output " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CopyFreeViewsOnFixture,
                         ::testing::Values("llama_kv_cache_decode_steps", "sdpa_causal", "sdpa_standard", "clone_alias",
                                           "view_permute", "linear_3d", "pixel_shuffle", "dynamic_mlp_seq"));

TEST(CopyFreeViews, ViewBetweenComputedTensorsMovesNothingAndKeepsItsShape) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 3, 4}, 1);
  auto run = [&](bool plan, Profile* prof) {
    OpGraph g;
    Id x = g.input(a);
    Id t = g.tensor(DType::Float32, {2, 3, 4});
    Id v = g.tensor(DType::Float32, {6, 4});
    Id o = g.output(DType::Float32, {6, 4});
    g.gb.op("aten.relu.default", {x, t});
    g.gb.op("aten.view_copy.default", {t, g.gb.int_list({6, -1}), v});
    g.gb.op("aten.neg.default", {v, o});
    LoadOptions opts;
    opts.plan_memory = plan;
    g.run(opts);
    return g.model()->run({a}, prof)[0];
  };
  Profile pp, pu;
  auto planned = run(true, &pp), unplanned = run(false, &pu);
  auto ops = [](const Profile& p) {
    std::vector<std::string> v;
    for (auto& d : p.dispatches) v.push_back(d.op);
    return v;
  };
  EXPECT_EQ(ops(pp), (std::vector<std::string>{"aten.relu.default", "aten.neg.default"}));
  EXPECT_EQ(ops(pu), (std::vector<std::string>{"aten.relu.default", "aten.view_copy.default", "aten.neg.default"}));
  EXPECT_EQ(planned.shape, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(planned.data, unplanned.data);
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(planned.as<float>()[i], -std::max(a.as<float>()[i], 0.f));
}

TEST(PoisonedStorage, AnOutputNoKernelWritesReadsNaNInsteadOfZero) {
  ETW_REQUIRE_GPU();
  auto run = [](bool poison) {
    OpGraph g;
    Id n = g.gb.null();
    Id o = g.output(DType::Float32, {3});
    g.gb.op("aten.empty.memory_format", {g.gb.int_list({3}), n, n, n, n, n, o});
    LoadOptions opts;
    opts.poison_storage = poison;
    return g.run(opts)[0];
  };
  auto zero = run(false), nan = run(true);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(zero.as<float>()[i], 0.f);
    EXPECT_TRUE(std::isnan(nan.as<float>()[i]));
  }
}

class PoisonedConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(PoisonedConformance, PassesWithEveryComputedBufferStartingAsNaN) {
  auto dir = conformance_dir();
  ETW_REQUIRE_FIXTURE(GetParam() != "NO_FIXTURES", dir);
  ETW_REQUIRE_GPU();
  auto expected = expected_conformance_status();
  if (expected[GetParam()] != "passed") GTEST_SKIP() << GetParam() << " is not expected to pass";
  LoadOptions opts;
  opts.poison_storage = true;
  auto r = run_conformance_case(dir, GetParam(), opts);
  EXPECT_EQ(r.status, ConformanceResult::Status::Passed) << r.message;
}

std::vector<std::string> CaseNames() {
  if (!std::filesystem::exists(conformance_dir() + "/manifest.json")) return {"NO_FIXTURES"};
  return conformance_case_names(conformance_dir());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PoisonedConformance, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
