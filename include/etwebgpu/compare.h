// Tolerance comparison used by `etwebgpu run --expect`, the conformance runner and the tests:
// an element fails iff |got - exp| > atol + rtol * |exp| (in float64); a NaN in got always fails
// (the conformance fixtures' rule) unless the caller opts in to NaN matching a NaN expected value;
// an infinity matches only the same infinity; integer and bool tensors must match exactly; shape or dtype mismatch fails.
#pragma once
#include <string>

#include "etwebgpu/tensor.h"

namespace etwebgpu {

struct CompareResult {
  bool ok = false;
  int64_t mismatches = 0;
  double max_abs_err = 0.0;     // over all elements
  int64_t worst_index = -1;     // element with the largest error relative to its tolerance
  double worst_got = 0.0, worst_expected = 0.0;
  std::string message;          // one line, e.g. "ok: max |err| 3.1e-07" or what failed
};

enum class NanPolicy {
  Strict,           // a NaN in got fails, whatever is expected
  MatchExpectedNan  // a NaN in got passes exactly where expected is NaN (op tests of NaN semantics)
};

CompareResult compare_tensors(const HostTensor& got, const HostTensor& expected, double atol, double rtol,
                              NanPolicy nan = NanPolicy::Strict);

}  // namespace etwebgpu
