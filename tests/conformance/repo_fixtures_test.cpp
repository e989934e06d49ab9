// The repository's own real exports (tests/fixtures/exports, made by tests/fixtures/export_fixtures.sh
// from the specs in tests/fixtures/specs and bench/llm/llama_recipe_spec.py with ../shared/exporter):
// static-int8 CNNs and linears, 8da4w and 4-bit Llamas with a KV cache over several steps, and
// ExecuTorch's own LLM recipe (llama:: custom ops, a dynamic sequence length: a 7-token prefill
// chunk, a 3-token chunk, then single tokens) with 4-bit, 8da4w and fp32 layers. Every case must
// load, run and match
// its golden (the float32 eager output of the fake-quantized model) within the manifest's
// tolerance, at every step.
#include <gtest/gtest.h>

#include "support/op_harness.h"
#include "tools/conformance/conformance.h"

using namespace etwebgpu;

namespace {

const std::string kDir = ETWEBGPU_SOURCE_DIR "/tests/fixtures/exports";

class RepoFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(RepoFixture, RunsEveryStepWithinTheManifestTolerance) {
  ETW_REQUIRE_GPU();
  auto r = run_conformance_case(kDir, GetParam());
  RecordProperty("result", r.message);
  EXPECT_EQ(r.status, ConformanceResult::Status::Passed) << r.message;
}

INSTANTIATE_TEST_SUITE_P(Exports, RepoFixture, ::testing::ValuesIn(conformance_case_names(kDir)),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
