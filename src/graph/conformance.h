// Runs the conformance fixtures (../shared/conformance layout: manifest.json + CASE/model.pte,
// input_K.npy, expected_K.npy) and compares with the manifest's tolerances.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "etwebgpu/etwebgpu.h"

namespace etwebgpu {

struct ConformanceResult {
  enum class Status { Passed, Failed, Unsupported } status = Status::Failed;
  std::string name;
  std::string message;  // worst error per output, or why it failed / what is unsupported
};

struct ConformanceSummary {
  std::vector<ConformanceResult> cases;
  int passed = 0, failed = 0, unsupported = 0;
  std::string line() const;  // "conformance: P passed, F failed, U unsupported (N cases)"
};

std::vector<std::string> conformance_case_names(const std::string& dir);
// At fp16 precision the tolerances widen to rtol 2e-2, atol 2e-2 x max|expected|.
ConformanceResult run_conformance_case(const std::string& dir, const std::string& name, const LoadOptions& opts = {});
ConformanceSummary run_conformance(const std::string& dir, const std::string& filter = "",
                                   const std::function<void(const ConformanceResult&)>& on_case = {},
                                   const LoadOptions& opts = {});

}  // namespace etwebgpu
