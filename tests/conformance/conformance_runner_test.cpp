// The conformance runner (tools/conformance/) on cases made here: the bytes entry the browser
// build uses and the fixture-folder entry the CLI and tests use give the same statuses and
// messages, for passing, mismatching, short, stateful-step, unsupported and unreadable cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "etwebgpu/builder.h"
#include "etwebgpu/example_model.h"
#include "etwebgpu/npy.h"
#include "support/op_harness.h"
#include "tools/conformance/conformance.h"

using namespace etwebgpu;
using Status = ConformanceResult::Status;

namespace {

std::vector<uint8_t> unsupported_pte() {
  GraphBuilder g;
  auto x = g.input(DType::Float32, {4});
  auto y = g.tensor(DType::Float32, {4});
  g.op("custom.frobnicate.default", {x, y});
  g.output(y);
  return g.serialize();
}

TEST(ConformanceRunner, BytesEntryGivesEachStatusWithItsMessage) {
  ETW_REQUIRE_GPU();
  const ExampleModel em = make_example_model();
  auto pass = run_conformance_case("ex", em.pte, {{{em.input}, {em.expected}}}, em.atol, em.rtol);
  EXPECT_EQ(pass.status, Status::Passed) << pass.message;
  EXPECT_EQ(pass.name, "ex");
  EXPECT_EQ(pass.message.rfind("out0 ok: 10 elements", 0), 0u) << pass.message;

  auto steps = run_conformance_case("ex", em.pte, {{{em.input}, {em.expected}}, {{em.input}, {em.expected}}}, em.atol, em.rtol);
  EXPECT_EQ(steps.status, Status::Passed) << steps.message;
  EXPECT_NE(steps.message.find("step0 out0 ok"), std::string::npos) << steps.message;
  EXPECT_NE(steps.message.find("; 1 steps ok"), std::string::npos) << steps.message;

  HostTensor wrong(DType::Float32, {1, 10});
  auto bad_step = run_conformance_case("ex", em.pte, {{{em.input}, {em.expected}}, {{em.input}, {wrong}}}, em.atol, em.rtol);
  EXPECT_EQ(bad_step.status, Status::Failed);
  EXPECT_NE(bad_step.message.find("step1 out0 MISMATCH"), std::string::npos) << bad_step.message;

  auto short_out = run_conformance_case("ex", em.pte, {{{em.input}, {em.expected, em.expected}}}, em.atol, em.rtol);
  EXPECT_EQ(short_out.status, Status::Failed);
  EXPECT_EQ(short_out.message, "model produced 1 outputs, expected 2");

  auto unsupported = run_conformance_case("u", unsupported_pte(), {{{HostTensor(DType::Float32, {4})}, {}}}, 0, 0);
  EXPECT_EQ(unsupported.status, Status::Unsupported);
  EXPECT_NE(unsupported.message.find("custom.frobnicate.default"), std::string::npos) << unsupported.message;

  auto garbage = run_conformance_case("g", std::vector<uint8_t>(64, 7), {}, 0, 0);
  EXPECT_EQ(garbage.status, Status::Failed);
  EXPECT_NE(garbage.message.find("Format error"), std::string::npos) << garbage.message;
  EXPECT_STREQ(conformance_status_name(Status::Unsupported), "unsupported");
}

TEST(ConformanceRunner, FolderEntryReadsTheManifestStepsAndFilesLikeTheBytesEntry) {
  ETW_REQUIRE_GPU();
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("etwebgpu_conf_runner_" + std::to_string(getpid()));
  const ExampleModel em = make_example_model();
  auto write_bytes = [](const fs::path& p, const std::vector<uint8_t>& b) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  };
  const nlohmann::json io = {{"inputs", {{{"file", "input_0.npy"}}}}, {"outputs", {{{"file", "expected_0.npy"}}}}};
  nlohmann::json manifest;
  for (const char* name : {"ok", "stateful", "mismatch", "no_input_file", "unsupported"}) {
    write_bytes(dir / name / "model.pte", std::string(name) == "unsupported" ? unsupported_pte() : em.pte);
    write_npy((dir / name / "input_0.npy").string(), em.input);
    write_npy((dir / name / "expected_0.npy").string(), em.expected);
    manifest["cases"][name] = io;
    manifest["cases"][name]["atol"] = em.atol;
    manifest["cases"][name]["rtol"] = em.rtol;
  }
  manifest["cases"]["stateful"]["steps"] = {io, io};
  write_npy((dir / "mismatch" / "expected_0.npy").string(), HostTensor(DType::Float32, {1, 10}));
  fs::remove(dir / "no_input_file" / "input_0.npy");
  std::ofstream(dir / "manifest.json") << manifest.dump();

  std::vector<std::string> seen;
  auto s = run_conformance(dir.string(), "", [&](const ConformanceResult& r) { seen.push_back(r.name); });
  EXPECT_EQ(seen, conformance_case_names(dir.string()));
  EXPECT_EQ(s.line(), "conformance: 2 passed, 2 failed, 1 unsupported (5 cases)");
  for (const auto& r : s.cases) {
    if (r.name == "ok") {
      EXPECT_EQ(r.message, run_conformance_case("ok", em.pte, {{{em.input}, {em.expected}}}, em.atol, em.rtol).message);
    } else if (r.name == "stateful") {
      EXPECT_NE(r.message.find("; 2 steps ok"), std::string::npos) << r.message;
    } else if (r.name == "mismatch") {
      EXPECT_NE(r.message.find("out0 MISMATCH"), std::string::npos) << r.message;
    } else if (r.name == "no_input_file") {
      EXPECT_NE(r.message.find("input_0.npy"), std::string::npos) << r.message;
    }
  }
  EXPECT_EQ(run_conformance(dir.string(), "state").cases.size(), 1u);
  fs::remove_all(dir);
}

}  // namespace
