// Every fixture in $ETWEBGPU_CONFORMANCE_DIR (default ../shared/conformance): load, run, compare
// with the manifest's tolerances. Unsupported cases are skipped visibly, naming what is missing.
#include <gtest/gtest.h>

#include <filesystem>

#include "graph/conformance.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

std::vector<std::string> CaseNames() {
  auto dir = etwebgpu::testing::conformance_dir();
  if (!std::filesystem::exists(dir + "/manifest.json")) return {"NO_FIXTURES"};
  return conformance_case_names(dir);
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, MatchesGoldenWithinManifestTolerance) {
  auto dir = etwebgpu::testing::conformance_dir();
  if (GetParam() == "NO_FIXTURES") GTEST_SKIP() << "no conformance fixtures at " << dir;
  ETW_REQUIRE_GPU();
  auto r = run_conformance_case(dir, GetParam());
  if (r.status == ConformanceResult::Status::Unsupported) GTEST_SKIP() << "UNSUPPORTED: " << r.message;
  EXPECT_EQ(r.status, ConformanceResult::Status::Passed) << r.message;
  RecordProperty("result", r.message);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Conformance, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
