// The etwebgpu command-line tool end to end, as a user runs it.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "etwebgpu/device.h"
#include "etwebgpu/npy.h"
#include "tools/conformance/conformance.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

using etwebgpu::testing::cli_path;
using etwebgpu::testing::run_cli;
using etwebgpu::testing::run_shell;
using etwebgpu::testing::expected_conformance_status;

std::string tmpdir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("etwebgpu_cli_" + name + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

TEST(Cli, ExampleWriteThenRunMatchesItsGolden) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("example"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  ASSERT_EQ(run_cli("run " + d + "/model.pte -i " + d + "/input_0.npy -e " + d + "/expected_0.npy -o " + d + "/out", &out), 0)
      << out;
  EXPECT_NE(out.find("ok:"), std::string::npos) << out;
  auto written = read_npy(d + "/out/output_0.npy");
  EXPECT_EQ(written.shape, (std::vector<int64_t>{1, 10}));
  std::filesystem::remove_all(d);
}

TEST(Cli, RunExitsNonZeroAndNamesTheWorstElementOnMismatch) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("mismatch"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  HostTensor wrong(DType::Float32, {1, 10});
  write_npy(d + "/wrong.npy", wrong);
  EXPECT_EQ(run_cli("run " + d + "/model.pte -i " + d + "/input_0.npy -e " + d + "/wrong.npy", &out), 1) << out;
  EXPECT_NE(out.find("MISMATCH"), std::string::npos) << out;
  std::filesystem::remove_all(d);
}

TEST(Cli, BadFilesAndBadInputsGiveAClearErrorAndExitCode) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("bad"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  EXPECT_EQ(run_cli("run " + d + "/input_0.npy", &out), 2) << out;  // a .npy is not a .pte
  EXPECT_NE(out.find("Format error"), std::string::npos) << out;
  EXPECT_EQ(run_cli("run " + d + "/model.pte -i " + d + "/expected_0.npy", &out), 2) << out;  // wrong shape/dtype
  EXPECT_NE(out.find("input 0"), std::string::npos) << out;
  EXPECT_EQ(run_cli("inspect /nonexistent.pte", &out), 2) << out;
  std::filesystem::remove_all(d);
}

TEST(Cli, BenchPrintsWallAndPerOpGpuTimesAndWritesAChromeTrace) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("bench"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  ASSERT_EQ(run_cli("bench " + d + "/model.pte --warmup 1 --iters 3 --trace " + d + "/trace.json", &out), 0) << out;
  EXPECT_NE(out.find("wall per run: median"), std::string::npos) << out;
  if (out.find("no timestamp queries") == std::string::npos) {
    // The example's convs take their activations at load: time goes to the fused kernels (the
    // direct conv: short K over few tiles).
    EXPECT_NE(out.find("fused[convolution+relu] [conv_direct]"), std::string::npos) << out;
    EXPECT_NE(out.find("GPU total"), std::string::npos) << out;
    std::ifstream f(d + "/trace.json");
    std::string trace((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(trace.find("\"traceEvents\""), std::string::npos);
    EXPECT_NE(trace.find("aten._softmax.default"), std::string::npos);
  }
  std::filesystem::remove_all(d);
}

TEST(Cli, BenchJsonReportsMedianGpuTimeDispatchesAndTheModelsGpuBytes) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("bench_json"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  ASSERT_EQ(run_cli("bench " + d + "/model.pte --warmup 1 --iters 3 --json", &out), 0) << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  auto model = Model::load(d + "/model.pte");
  Profile prof;
  std::vector<HostTensor> in;
  for (auto& io : model->inputs()) in.emplace_back(io.dtype, io.sizes);
  model->run(in, &prof);
  EXPECT_EQ(j.at("dispatches").get<size_t>(), prof.dispatches.size());
  EXPECT_EQ(j.at("gpu_bytes").get<uint64_t>(), model->gpu_bytes());
  EXPECT_GT(j.at("wall_ms_median").get<double>(), 0.0);
  if (prof.has_gpu_times) {
    EXPECT_GT(j.at("gpu_ms").get<double>(), 0.0);
  }
  std::filesystem::remove_all(d);
}

TEST(Cli, BenchNoPlanMemoryReportsTheUnplannedGpuBytes) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("bench_noplan"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  ASSERT_EQ(run_cli("bench " + d + "/model.pte --warmup 0 --iters 1 --json --no-plan-memory", &out), 0) << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  LoadOptions opts;
  opts.plan_memory = false;
  auto unplanned = Model::load(d + "/model.pte", opts), planned = Model::load(d + "/model.pte");
  EXPECT_EQ(j.at("gpu_bytes").get<uint64_t>(), unplanned->gpu_bytes());
  EXPECT_LT(planned->gpu_bytes(), unplanned->gpu_bytes());
  std::filesystem::remove_all(d);
}

TEST(Cli, InspectGpuPlanShowsTheFusedNodesAndWithoutFusionTheOps) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("gpuplan"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  ASSERT_EQ(run_cli("inspect " + d + "/model.pte --gpu-plan", &out), 0) << out;
  EXPECT_NE(out.find("GPU plan as loaded (after fusion at load): 6 nodes"), std::string::npos) << out;
  EXPECT_NE(out.find("fused[convolution+relu] [conv_gemm | conv_direct]"), std::string::npos) << out;
  ASSERT_EQ(run_cli("inspect " + d + "/model.pte --gpu-plan --no-fuse", &out), 0) << out;
  EXPECT_NE(out.find("GPU plan as loaded (no fusion): 8 nodes"), std::string::npos) << out;
  EXPECT_NE(out.find("aten.relu.default"), std::string::npos) << out;
  std::filesystem::remove_all(d);
}

TEST(Cli, InspectDecodesEveryConformanceFixture) {
  auto dir = etwebgpu::testing::conformance_dir();
  ETW_REQUIRE_FIXTURE(std::filesystem::exists(dir + "/manifest.json"), dir);
  auto expected = expected_conformance_status();
  for (auto& name : conformance_case_names(dir)) {
    std::string out;
    EXPECT_EQ(run_cli("inspect " + dir + "/" + name + "/model.pte", &out), 0) << name << "\n" << out;
    // Cases expected unsupported (tests/conformance/expected_status.txt) must say what is missing.
    const char* want = expected[name] == "unsupported" ? "NOT SUPPORTED" : "all operators supported";
    EXPECT_NE(out.find(want), std::string::npos) << name << "\n" << out;
    EXPECT_NE(out.find("delegate"), std::string::npos) << name;
  }
}

TEST(Cli, InspectShowsWhereEachInstructionOfAPartlyDelegatedProgramRuns) {
  auto dir = etwebgpu::testing::conformance_dir();
  ETW_REQUIRE_FIXTURE(std::filesystem::exists(dir + "/sdpa_standard/model.pte"), dir);
  std::string out;
  ASSERT_EQ(run_cli("inspect " + dir + "/sdpa_standard/model.pte", &out), 0) << out;
  EXPECT_NE(out.find("gpu-kernel   aten::mul.Scalar_out -> aten.mul.Scalar"), std::string::npos) << out;
  EXPECT_NE(out.find("gpu-kernel   aten::any.out -> aten.any.dim"), std::string::npos) << out;
}

TEST(Cli, InfoPrintsTheAdapterAndPassesEverySelfTestCheck) {
  ETW_REQUIRE_GPU();
  std::string out;
  ASSERT_EQ(run_cli("info", &out), 0) << out;
  EXPECT_EQ(out.rfind("adapter: ", 0), 0u) << out;
  size_t ok = 0;
  for (size_t p = out.find("self-test: ok "); p != std::string::npos; p = out.find("self-test: ok ", p + 1)) ++ok;
  EXPECT_EQ(ok, self_test().size()) << out;
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
  EXPECT_NE(out.find("operators: " + std::to_string(etwebgpu::testing::library_op_names().size()) + " supported"),
            std::string::npos) << out;
}

}  // namespace

// The CLI's load flags come from the runtime's option table: every command that loads a model
// offers every option, under the same name Python and JavaScript use (dashes for underscores).
TEST(CliLoadFlags, EveryLoadingCommandOffersEveryLoadOption) {
  std::string out;
  for (const char* cmd : {"run", "bench", "conformance", "generate", "inspect"}) {
    ASSERT_EQ(run_cli(std::string(cmd) + " --help", &out), 0) << out;
    for (const auto& o : load_option_list()) {
      std::string flag = "--" + o.name;
      for (char& c : flag)
        if (c == '_') c = '-';
      if (o.values == "on|off" && get_load_option(LoadOptions{}, o.name) == "on") flag = "--no-" + flag.substr(2);
      EXPECT_NE(out.find(flag), std::string::npos) << cmd << " lacks " << flag << ":\n" << out;
    }
  }
}

TEST(CliLoadFlags, FlagsReachTheLoadAndBadValuesExitTwoNamingTheOption) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("loadflags"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  const std::string pte = d + "/model.pte", check = " -i " + d + "/input_0.npy -e " + d + "/expected_0.npy";
  ASSERT_EQ(run_cli("bench " + pte + " --warmup 0 --iters 1 --json --precision auto --no-fuse --max-gpu-bytes 1G", &out), 0)
      << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(j.at("precision").get<std::string>(), device_info().shader_f16 ? "fp16" : "fp32");
  ASSERT_EQ(run_cli("run " + pte + check + " --force-route conv=direct --poison-storage --method forward", &out), 0) << out;
  EXPECT_EQ(run_cli("run " + pte + check + " --max-gpu-bytes 64", &out), 2) << out;
  EXPECT_NE(out.find("max_gpu_bytes"), std::string::npos) << out;
  EXPECT_EQ(run_cli("run " + pte + check + " --max-gpu-bytes lots", &out), 2) << out;
  EXPECT_NE(out.find("load option max_gpu_bytes: 'lots'"), std::string::npos) << out;
  EXPECT_EQ(run_cli("run " + pte + check + " --precision fp8", &out), 2) << out;
  EXPECT_NE(out.find("precision 'fp8'"), std::string::npos) << out;
  EXPECT_EQ(run_cli("run " + pte + check + " --force-route conv", &out), 2) << out;
  EXPECT_NE(out.find("force_route: 'conv' is not OP=ROUTE"), std::string::npos) << out;
  std::filesystem::remove_all(d);
}

// Off a terminal (a pipe, as here) a load prints no progress bar, however long it takes.
TEST(CliLoadFlags, NoProgressBarOffATerminal) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("nobar"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  ASSERT_EQ(run_cli("run " + d + "/model.pte -i " + d + "/input_0.npy", &out), 0) << out;
  EXPECT_EQ(out.find("loading:"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  std::filesystem::remove_all(d);
}

// On a terminal (script(1) gives the CLI one) the load draws a bar on stderr that ends at 100% and
// is cleared before the run's output; ETWEBGPU_PROGRESS_DELAY_S=0 draws it however short the load.
TEST(CliLoadFlags, ProgressBarOnATerminalReachesEveryStageAndIsCleared) {
  ETW_REQUIRE_GPU();
  std::string d = tmpdir("bar"), out;
  ASSERT_EQ(run_cli("example --write " + d, &out), 0) << out;
  std::string cmd = "ETWEBGPU_PROGRESS_DELAY_S=0 script -qec '" + cli_path() + " run " + d + "/model.pte -i " + d +
                    "/input_0.npy' /dev/null";
  ASSERT_EQ(run_shell(cmd, &out), 0) << out;
  for (const char* stage : {"loading: read", "loading: upload", "loading: compile"})
    EXPECT_NE(out.find(stage), std::string::npos) << stage << " missing:\n" << out;
  EXPECT_NE(out.find("100%"), std::string::npos) << out;
  // Cleared (carriage return, erase line) before the first output line.
  size_t clear = out.rfind("\r\033[K", out.find("output 0:"));
  EXPECT_NE(clear, std::string::npos) << out;
  EXPECT_NE(out.find("output 0: float32 [1, 10]"), std::string::npos) << out;
  std::filesystem::remove_all(d);
}
