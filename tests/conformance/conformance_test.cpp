// Every fixture in $ETWEBGPU_CONFORMANCE_DIR (default ../shared/conformance): load, run, compare
// with the manifest's tolerances, and check the outcome against the case's expected status in
// tests/conformance/expected_status.txt. A regression (an expected-passing case that fails or turns
// unsupported) fails; so does an improvement, with a message saying which line to update, so the
// file always states what the runtime does. Expected-unsupported cases are skipped visibly.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tools/conformance/conformance.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

using etwebgpu::testing::expected_conformance_status;
const char* const kStatusFile = etwebgpu::testing::kExpectedStatusFile;

bool HaveFixtures() { return std::filesystem::exists(etwebgpu::testing::conformance_dir() + "/manifest.json"); }

std::vector<std::string> CaseNames() {
  if (!HaveFixtures()) return {"NO_FIXTURES"};
  return conformance_case_names(etwebgpu::testing::conformance_dir());
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, MatchesGoldenWithinManifestTolerance) {
  auto dir = etwebgpu::testing::conformance_dir();
  ETW_REQUIRE_FIXTURE(GetParam() != "NO_FIXTURES", dir);
  ETW_REQUIRE_GPU();
  auto expected = expected_conformance_status();
  auto it = expected.find(GetParam());
  ASSERT_NE(it, expected.end()) << "case " << GetParam() << " has no line in " << kStatusFile
                                << ": add '" << GetParam() << " passed' (or 'unsupported')";
  ASSERT_TRUE(it->second == "passed" || it->second == "unsupported")
      << kStatusFile << ": status of " << GetParam() << " must be passed or unsupported, got '" << it->second << "'";
  auto r = run_conformance_case(dir, GetParam());
  RecordProperty("result", r.message);
  if (it->second == "unsupported") {
    ASSERT_NE(r.status, ConformanceResult::Status::Passed)
        << GetParam() << " now passes (" << r.message << "): change its line in " << kStatusFile << " to 'passed'";
    ASSERT_EQ(r.status, ConformanceResult::Status::Unsupported) << "expected unsupported, but it runs and fails: " << r.message;
    GTEST_SKIP() << "expected unsupported (" << kStatusFile << "): " << r.message;
  }
  EXPECT_EQ(r.status, ConformanceResult::Status::Passed)
      << (r.status == ConformanceResult::Status::Unsupported ? "REGRESSION: expected to pass, now unsupported: "
                                                             : "")
      << r.message;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Conformance, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(ConformanceStatus, EveryListedCaseExistsInTheFixtures) {
  auto dir = etwebgpu::testing::conformance_dir();
  ETW_REQUIRE_FIXTURE(HaveFixtures(), dir);
  auto names = conformance_case_names(dir);
  auto expected = expected_conformance_status();
  ASSERT_FALSE(expected.empty()) << kStatusFile << " is missing or empty";
  for (auto& [name, status] : expected)
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end())
        << kStatusFile << " lists '" << name << "', which is not a case in " << dir << ": remove the line";
}

}  // namespace
