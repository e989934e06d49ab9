// Every fixture again with f16 storage (LoadOptions::precision = FP16) and issue 14's fp16
// tolerance (rtol 2e-2, atol 2e-2 x max|expected|), checked against the per-case status in
// tests/conformance/expected_status_fp16.txt the same way the fp32 suite checks its file: a
// regression fails, and so does an improvement until its line says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gpu/context.h"
#include "tools/conformance/conformance.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

const char* const kFp16StatusFile = ETWEBGPU_SOURCE_DIR "/tests/conformance/expected_status_fp16.txt";

std::map<std::string, std::string> fp16_status() {
  std::map<std::string, std::string> m;
  std::ifstream f(kFp16StatusFile);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line.substr(0, line.find('#')));
    std::string name, status;
    if (ls >> name >> status) m[name] = status;
  }
  return m;
}

std::vector<std::string> CaseNames() {
  auto dir = etwebgpu::testing::conformance_dir();
  if (!std::filesystem::exists(dir + "/manifest.json")) return {"NO_FIXTURES"};
  return conformance_case_names(dir);
}

class ConformanceFp16 : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceFp16, MatchesGoldenWithFp16Tolerance) {
  auto dir = etwebgpu::testing::conformance_dir();
  ETW_REQUIRE_FIXTURE(GetParam() != "NO_FIXTURES", dir);
  ETW_REQUIRE_GPU();
  if (!gpu::Context::get()->info().shader_f16) GTEST_SKIP() << "adapter without shader-f16";
  auto expected = fp16_status();
  auto it = expected.find(GetParam());
  ASSERT_NE(it, expected.end()) << "case " << GetParam() << " has no line in " << kFp16StatusFile;
  LoadOptions lo;
  lo.precision = Precision::FP16;
  auto r = run_conformance_case(dir, GetParam(), lo);
  RecordProperty("result", r.message);
  if (it->second == "unsupported") {
    ASSERT_NE(r.status, ConformanceResult::Status::Passed)
        << GetParam() << " now passes at fp16 (" << r.message << "): change its line in " << kFp16StatusFile;
    ASSERT_EQ(r.status, ConformanceResult::Status::Unsupported) << "runs at fp16 and fails: " << r.message;
    GTEST_SKIP() << "expected unsupported at fp16: " << r.message;
  }
  ASSERT_EQ(it->second, "passed") << kFp16StatusFile << ": status must be passed or unsupported";
  EXPECT_EQ(r.status, ConformanceResult::Status::Passed) << r.message;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ConformanceFp16, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
