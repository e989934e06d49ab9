// The one harness every op test uses: build a graph with GraphBuilder, serialize it to a real
// .pte, load it through Model (the same path as exported files), run, and compare with an fp64
// reference computed by tests/reference/ (written independently of the WGSL kernels).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "etwebgpu/builder.h"
#include "etwebgpu/compare.h"
#include "etwebgpu/etwebgpu.h"
#include "format/ir.h"

namespace etwebgpu::testing {

using Id = GraphBuilder::Id;

// Deterministic data.
HostTensor random_f32(std::vector<int64_t> shape, uint64_t seed, float lo = -1.f, float hi = 1.f);
HostTensor random_i32(std::vector<int64_t> shape, uint64_t seed, int32_t lo, int32_t hi);
HostTensor random_bool(std::vector<int64_t> shape, uint64_t seed);
std::vector<double> f64(const HostTensor& t);  // values as double

class OpGraph {
 public:
  GraphBuilder gb;
  // Adds a delegate input fed with `data` at run time (dims = data.shape unless `max_dims` given).
  Id input(const HostTensor& data, std::vector<int64_t> max_dims = {}, bool dynamic = false);
  Id constant(const HostTensor& data);
  Id tensor(DType t, std::vector<int64_t> dims) { return gb.tensor(t, std::move(dims)); }
  Id output(DType t, std::vector<int64_t> dims);   // a tensor marked as graph output
  void mark_output(Id id) { gb.output(id); }
  // Loads and runs; throws etwebgpu::Error like real models do.
  std::vector<HostTensor> run(const LoadOptions& opts = {});
  // Runs again with new input data (same Model: dynamic shapes, decode loops).
  std::vector<HostTensor> rerun(const std::vector<HostTensor>& inputs);
  std::unique_ptr<Model>& model() { return model_; }
  // Kernel variants the loaded model dispatches (one profiled rerun on the same inputs).
  std::vector<std::string> variants();
  std::vector<HostTensor> inputs;

 private:
  std::vector<HostTensor> run_logged(const std::vector<HostTensor>& in);
  std::unique_ptr<Model> model_;
  std::vector<std::string> op_names_;  // operators of the graph, for the coverage log
};

// A graph built by `build`, loaded with fusion on or off (and forced routes), run once, then once
// more profiled: its outputs and, per dispatch, the node's op label and kernel variant. `g` stays
// loaded for reruns.
struct LoadedGraph {
  std::vector<HostTensor> out;
  std::vector<std::string> ops, variants;
  std::unique_ptr<OpGraph> g;
};
LoadedGraph load_graph(const std::function<void(OpGraph&)>& build, bool fuse,
                       std::map<std::string, std::string> routes = {});

// With $ETWEBGPU_COVERAGE_DIR set, every successful OpGraph run appends to DIR/ops-<pid>.log one
// line "op NAME" per operator of its graph and "route OP VARIANT" per kernel dispatched;
// scripts/coverage_check.sh compares them with `etwebgpu ops` and tests/coverage/kernel_routes.txt.
// Op tests that load programs without OpGraph log through this too.
void log_coverage(const std::vector<std::string>& op_names, const Profile& profile);
// The operator names of a serialized program's "forward" plan (delegate ops and kernel calls).
std::vector<std::string> program_op_names(const std::vector<uint8_t>& pte);
bool coverage_logging();
// The registry's operators from src/ops/, as the CLI lists them: the test binary also registers
// test-only operators (tests/kernel/).
std::vector<std::string> library_op_names();

// One op over one input: args = x, then `mid(g)`, then the output; returns the output.
HostTensor run1(const std::string& op, const HostTensor& a, const std::vector<int64_t>& out_dims,
                const std::function<std::vector<Id>(OpGraph&)>& mid);

// Builds a reference HostTensor (float64) from values and a shape.
HostTensor ref_tensor(std::vector<int64_t> shape, std::vector<double> values);
// Builds `ir` (made in memory, e.g. with IrChain: it may hold fused expressions, which no program
// can spell) on the device without rewrites, runs it once on `inputs` and returns its outputs (in
// the host dtype of each), logging its ops for the coverage check. Errors propagate.
std::vector<HostTensor> run_ir(const format::VkGraphIR& ir, const std::vector<HostTensor>& inputs);

// gtest assertion: `got` matches reference `ref` within atol + rtol*|ref|; any NaN in `got` fails.
::testing::AssertionResult Close(const HostTensor& got, const HostTensor& ref, double atol = 1e-5,
                                 double rtol = 1e-4);
// As Close, but a NaN in `got` passes exactly where the fp64 reference is NaN (PyTorch's NaN results).
::testing::AssertionResult CloseNan(const HostTensor& got, const HostTensor& ref, double atol = 1e-5,
                                    double rtol = 1e-4);

// A fused run against the unfused one (the load rewrites' tests): bit for bit at fp32; under
// ETWEBGPU_TEST_PRECISION=fp16 both store f16 and only the unfused chain rounds its
// intermediates, so within `half_tol` (absolute and relative).
::testing::AssertionResult SameAsUnfused(const HostTensor& fused, const HostTensor& plain, double half_tol = 1e-2);

// The message of the etwebgpu::Error `f` throws ("" when it throws none).
template <class F>
std::string load_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
inline bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// True when a WebGPU device is present; GPU tests call ETW_REQUIRE_GPU() first. Without a device
// they skip, unless $ETWEBGPU_REQUIRE_GPU=1 (set by scripts/test.sh): then they fail, so CI never
// passes by skipping.
bool gpu_available(std::string* why = nullptr);
// True when $NAME is set to 1: CI's switch from "skip" to "fail" (ETWEBGPU_REQUIRE_GPU, ETWEBGPU_REQUIRE_FIXTURES).
bool env_flag(const char* name);
#define ETW_REQUIRE_GPU()                                                                     \
  do {                                                                                        \
    std::string why_;                                                                         \
    if (!::etwebgpu::testing::gpu_available(&why_)) {                                         \
      if (::etwebgpu::testing::env_flag("ETWEBGPU_REQUIRE_GPU"))                              \
        FAIL() << "no WebGPU device and ETWEBGPU_REQUIRE_GPU=1: " << why_;                    \
      GTEST_SKIP() << "no WebGPU device: " << why_;                                           \
    }                                                                                         \
  } while (0)

// Skips the test when the conformance fixtures it reads are absent; fails instead when
// $ETWEBGPU_REQUIRE_FIXTURES=1 (CI: missing fixtures must not pass as skips).
#define ETW_REQUIRE_FIXTURE(present, where)                                                  \
  do {                                                                                       \
    if (!(present)) {                                                                        \
      if (::etwebgpu::testing::env_flag("ETWEBGPU_REQUIRE_FIXTURES"))                        \
        FAIL() << "conformance fixtures missing and ETWEBGPU_REQUIRE_FIXTURES=1: " << (where); \
      GTEST_SKIP() << "conformance fixtures not present: " << (where);                       \
    }                                                                                        \
  } while (0)

// tests/conformance/expected_status.txt: case name -> "passed" | "unsupported".
extern const char* const kExpectedStatusFile;
std::map<std::string, std::string> expected_conformance_status();

// $ETWEBGPU_CONFORMANCE_DIR, defaulting to <source>/../shared/conformance.
std::string conformance_dir();

// Runs the etwebgpu CLI ($ETWEBGPU_CLI, defaulting to the one this build made) with `args`;
// returns its exit code (128 when killed by a signal) and its stdout+stderr in `out`.
int run_cli(const std::string& args, std::string* out);
// The CLI's path ($ETWEBGPU_CLI or the build's), and a shell command run with stderr joined to
// stdout: its exit code, its output in `out`.
std::string cli_path();
int run_shell(const std::string& command, std::string* out);

}  // namespace etwebgpu::testing
