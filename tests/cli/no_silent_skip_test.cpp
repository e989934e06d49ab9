// CI must not pass by skipping: runs this test binary again as a child process with the
// conditions CI could meet (no WebGPU adapter, no fixtures, a conformance case whose status
// changed) and checks the child fails when scripts/test.sh's switches are on, and only skips
// when they are off (a developer running a subset by hand).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
namespace fs = std::filesystem;

namespace {

// Runs this binary with `env` assignments and a gtest filter; returns the exit code, output in `out`.
int run_self(const std::string& env, const std::string& filter, std::string* out) {
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  // The child runs its filter whole: not this run's coverage log, nor its shard (scripts/test.sh).
  std::string cmd = "env -u ETWEBGPU_COVERAGE_DIR -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX " + env + " '" + exe +
                    "' --gtest_filter='" + filter + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[1024];
  out->clear();
  while (p && fgets(buf, sizeof buf, p)) *out += buf;
  int st = p ? pclose(p) : -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

// A fixture tree with one case named `name` holding the files of the real case `source`;
// model.pte replaced by `model` when given.
std::string make_fixtures(const std::string& name, const std::string& source, const std::vector<uint8_t>* model) {
  fs::path src = conformance_dir(), dir = fs::temp_directory_path() / ("etw-fixtures-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / name);
  for (auto& f : fs::directory_iterator(src / source)) fs::copy_file(f.path(), dir / name / f.path().filename());
  if (model) std::ofstream(dir / name / "model.pte", std::ios::binary | std::ios::trunc)
                 .write(reinterpret_cast<const char*>(model->data()), static_cast<std::streamsize>(model->size()));
  auto manifest = nlohmann::json::parse(std::ifstream(src / "manifest.json"));
  nlohmann::json m = manifest;
  m["cases"] = nlohmann::json::object();
  m["cases"][name] = manifest["cases"][source];
  std::ofstream(dir / "manifest.json") << m.dump();
  return dir.string();
}

TEST(NoSilentSkips, GpuTestFailsWithoutAnAdapterOnlyWhenRequired) {
  std::string out;
  const char* no_driver = "VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json";
  EXPECT_NE(run_self(std::string(no_driver) + " ETWEBGPU_REQUIRE_GPU=1", "GpuContext.AdapterIsVulkanWithLimitsAndFeaturesRead", &out), 0) << out;
  EXPECT_TRUE(has(out, "no WebGPU device and ETWEBGPU_REQUIRE_GPU=1")) << out;
  EXPECT_EQ(run_self(std::string(no_driver) + " ETWEBGPU_REQUIRE_GPU=0", "GpuContext.AdapterIsVulkanWithLimitsAndFeaturesRead", &out), 0) << out;
  EXPECT_TRUE(has(out, "[  SKIPPED ]")) << out;
}

TEST(NoSilentSkips, MissingFixturesFailOnlyWhenRequired) {
  std::string out;
  const char* none = "ETWEBGPU_CONFORMANCE_DIR=/nonexistent/conformance";
  EXPECT_NE(run_self(std::string(none) + " ETWEBGPU_REQUIRE_FIXTURES=1", "Fixtures/Conformance.*:OpToCopy.Conformance*", &out), 0) << out;
  EXPECT_TRUE(has(out, "ETWEBGPU_REQUIRE_FIXTURES=1")) << out;
  EXPECT_EQ(run_self(std::string(none) + " ETWEBGPU_REQUIRE_FIXTURES=0", "Fixtures/Conformance.*:OpToCopy.Conformance*", &out), 0) << out;
  EXPECT_TRUE(has(out, "[  SKIPPED ]")) << out;
}

TEST(NoSilentSkips, ExpectedPassingCaseThatTurnsUnsupportedFails) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_FIXTURE(fs::exists(conformance_dir() + "/add_bcast/model.pte"), conformance_dir());
  ASSERT_EQ(expected_conformance_status()["add_bcast"], "passed");
  // add_bcast's inputs and golden, but a program whose operator the registry lacks.
  GraphBuilder gb;
  auto a = gb.input(DType::Float32, {2, 3, 4, 5}), b = gb.input(DType::Float32, {1, 3, 1, 5});
  auto o = gb.tensor(DType::Float32, {2, 3, 4, 5});
  gb.op("aten.not_a_registered_op.default", {a, b, o});
  gb.output(o);
  auto pte = gb.serialize();
  auto dir = make_fixtures("add_bcast", "add_bcast", &pte);
  std::string out;
  EXPECT_NE(run_self("ETWEBGPU_CONFORMANCE_DIR=" + dir, "Fixtures/Conformance.*", &out), 0) << out;
  EXPECT_TRUE(has(out, "REGRESSION: expected to pass, now unsupported")) << out;
  fs::remove_all(dir);
}

TEST(NoSilentSkips, ExpectedUnsupportedCaseThatPassesAsksToUpdateTheStatusFile) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_FIXTURE(fs::exists(conformance_dir() + "/add_bcast/model.pte"), conformance_dir());
  // A status file that expects add_bcast (which passes) to be unsupported.
  auto dir = make_fixtures("add_bcast", "add_bcast", nullptr);
  std::string status = dir + "/expected_status.txt";
  std::ofstream(status) << "add_bcast unsupported\n";
  std::string out;
  EXPECT_NE(run_self("ETWEBGPU_CONFORMANCE_DIR=" + dir + " ETWEBGPU_EXPECTED_STATUS=" + status, "Fixtures/Conformance.*", &out), 0)
      << out;
  EXPECT_TRUE(has(out, "now passes") && has(out, "to 'passed'")) << out;
  fs::remove_all(dir);
}

}  // namespace
