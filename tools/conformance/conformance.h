// The conformance runner, a tool over the public API: runs cases (a .pte, inputs and expected
// outputs, optionally further steps on the same loaded model) and compares every output with the
// case's tolerances. The native runner reads the fixture layout (manifest.json + CASE/model.pte,
// input_K.npy, expected_K.npy; ../shared/conformance); the browser build passes bytes the page
// fetched. Both give the same statuses and messages. Used by `etwebgpu conformance`, the tests
// (tests/conformance/) and the WebAssembly entry (web/etwebgpu_web.cpp).
#pragma once
#include <cstdint>
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
const char* conformance_status_name(ConformanceResult::Status s);  // "passed", "failed", "unsupported"

struct ConformanceSummary {
  std::vector<ConformanceResult> cases;
  int passed = 0, failed = 0, unsupported = 0;
  std::string line() const;  // "conformance: P passed, F failed, U unsupported (N cases)"
};

// One run of a case: the model's inputs and the outputs it must produce.
struct ConformanceStep {
  std::vector<HostTensor> inputs, expected;
};

// Loads `pte` with `opts` and runs the steps in order on that one model (state carries over). An
// Error(Unsupported) makes the case Unsupported; any other failure, Failed. When the model stores
// floats as fp16 the tolerances widen to rtol 2e-2, atol 2e-2 x max|expected|.
ConformanceResult run_conformance_case(const std::string& name, std::vector<uint8_t> pte,
                                       const std::vector<ConformanceStep>& steps, double atol, double rtol,
                                       const LoadOptions& opts = {});

// Fixture folders.
std::vector<std::string> conformance_case_names(const std::string& dir);
ConformanceResult run_conformance_case(const std::string& dir, const std::string& name, const LoadOptions& opts = {});
ConformanceSummary run_conformance(const std::string& dir, const std::string& filter = "",
                                   const std::function<void(const ConformanceResult&)>& on_case = {},
                                   const LoadOptions& opts = {});

}  // namespace etwebgpu
