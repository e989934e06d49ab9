// `etwebgpu run MODEL -i .. -e .. --then -i .. -e ..`: several steps on one loaded model, so a
// stateful program's KV cache carries from step to step, checked on the llama KV-cache fixture.
#include <filesystem>

#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

using etwebgpu::testing::conformance_dir;
using etwebgpu::testing::run_cli;

// The fixture folder, or "" when it is absent.
std::string kv_fixture() {
  std::string d = conformance_dir() + "/llama_kv_cache_decode_steps";
  return std::filesystem::exists(d + "/model.pte") ? d : "";
}

std::string step_args(const std::string& d, int k, int expect_k) {
  std::string p = d + "/" + (k ? "step" + std::to_string(k) + "_" : "");
  std::string e = d + "/" + (expect_k ? "step" + std::to_string(expect_k) + "_" : "");
  return " -i " + p + "input_0.npy " + p + "input_1.npy -e " + e + "expected_0.npy";
}

// The fixture's manifest tolerances (atol 1.3e-4, rtol 1e-3), passed explicitly; options go before
// the first --then (everything after it belongs to the steps).
const char* kTol = " --atol 1.4e-4 --rtol 1e-3";

TEST(CliSteps, ThenRunsEachStepOnOneModelSoTheKvCacheCarriesOver) {
  ETW_REQUIRE_GPU();
  std::string d = kv_fixture(), out;
  if (d.empty()) GTEST_SKIP() << "fixture llama_kv_cache_decode_steps absent under " << conformance_dir();
  std::string cmd = "run " + d + "/model.pte" + kTol + step_args(d, 0, 0) + " --then" + step_args(d, 1, 1) + " --then" +
                    step_args(d, 2, 2);
  EXPECT_EQ(run_cli(cmd, &out), 0) << cmd << "\n" << out;
  EXPECT_NE(out.find("step 2 output 0"), std::string::npos) << out;
  EXPECT_EQ(out.find("MISMATCH"), std::string::npos) << out;
}

TEST(CliSteps, StepOneAloneMismatchesBecauseItsCacheIsEmpty) {
  ETW_REQUIRE_GPU();
  std::string d = kv_fixture(), out;
  if (d.empty()) GTEST_SKIP() << "fixture llama_kv_cache_decode_steps absent under " << conformance_dir();
  // Step 1 run first (no step 0 before it): the state it needs is missing.
  std::string cmd = "run " + d + "/model.pte" + kTol + step_args(d, 1, 1);
  EXPECT_EQ(run_cli(cmd, &out), 1) << cmd << "\n" << out;
  EXPECT_NE(out.find("MISMATCH"), std::string::npos) << out;
}

TEST(CliSteps, AMismatchingLaterStepExitsOneAndNamesTheStep) {
  ETW_REQUIRE_GPU();
  std::string d = kv_fixture(), out;
  if (d.empty()) GTEST_SKIP() << "fixture llama_kv_cache_decode_steps absent under " << conformance_dir();
  // Step 1's inputs checked against step 2's golden.
  std::string cmd = "run " + d + "/model.pte" + kTol + step_args(d, 0, 0) + " --then" + step_args(d, 1, 2);
  EXPECT_EQ(run_cli(cmd, &out), 1) << cmd << "\n" << out;
  auto at = out.find("step 1 output 0");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_NE(out.find("MISMATCH", at), std::string::npos) << out;
}

TEST(CliSteps, UnknownFlagAfterThenExitsTwoAndNamesTheFlag) {
  ETW_REQUIRE_GPU();
  std::string d = kv_fixture(), out;
  if (d.empty()) GTEST_SKIP() << "fixture llama_kv_cache_decode_steps absent under " << conformance_dir();
  std::string cmd = "run " + d + "/model.pte" + step_args(d, 0, 0) + " --then --bogus-flag" + step_args(d, 1, 1);
  EXPECT_EQ(run_cli(cmd, &out), 2) << cmd << "\n" << out;
  EXPECT_NE(out.find("--bogus-flag"), std::string::npos) << out;
}

TEST(CliSteps, ThenOnAnotherCommandIsRefused) {
  std::string out;
  EXPECT_EQ(run_cli("info --then -i x.npy", &out), 2) << out;
  EXPECT_NE(out.find("--then"), std::string::npos) << out;
}

}  // namespace
