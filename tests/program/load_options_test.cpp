// LoadOptions as text (the one parser behind the CLI, Python, JavaScript and generate) and load
// progress: every option round-trips through its text form, bad text is an InvalidArgument error
// naming the option and the value, and a load reports read, upload and compile progress that
// ends done == total.
#include <filesystem>
#include <fstream>

#include "etwebgpu/example_model.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

void expect_refused(const std::string& name, const std::string& value, const std::string& needle) {
  LoadOptions o;
  try {
    set_load_option(o, name, value);
    ADD_FAILURE() << name << "=" << value << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(LoadOptionsText, EveryListedOptionRoundTripsThroughItsTextForm) {
  const LoadOptions defaults;
  ASSERT_GE(load_option_list().size(), 8u);
  for (const auto& info : load_option_list()) {
    std::string text = get_load_option(defaults, info.name);
    LoadOptions o;
    if (!(info.repeatable && text.empty())) set_load_option(o, info.name, text);
    EXPECT_EQ(get_load_option(o, info.name), text) << info.name;
  }
}

TEST(LoadOptionsText, TextSetsEachFieldAsTheStructWould) {
  LoadOptions o = parse_load_options({{"precision", "fp16"},
                                      {"fuse", "off"},
                                      {"plan_memory", "false"},
                                      {"poison_storage", "1"},
                                      {"max_gpu_bytes", "512M"},
                                      {"sdpa_occupancy_floor", "16"},
                                      {"force_route", "conv=direct"},
                                      {"force_route", "matmul=gemv"},
                                      {"method", "decode"}});
  EXPECT_EQ(o.precision, Precision::FP16);
  EXPECT_FALSE(o.fuse);
  EXPECT_FALSE(o.plan_memory);
  EXPECT_TRUE(o.poison_storage);
  EXPECT_EQ(o.max_gpu_bytes, 512ull << 20);
  EXPECT_EQ(o.sdpa_occupancy_floor, 16);
  EXPECT_EQ(o.force_route, (std::map<std::string, std::string>{{"conv", "direct"}, {"matmul", "gemv"}}));
  EXPECT_EQ(o.method, "decode");
  EXPECT_EQ(get_load_option(o, "force_route"), "conv=direct,matmul=gemv");
  EXPECT_EQ(parse_load_options({{"max_gpu_bytes", "3G"}}).max_gpu_bytes, 3ull << 30);
  EXPECT_EQ(parse_load_options({{"max_gpu_bytes", "1000"}}).max_gpu_bytes, 1000u);
  EXPECT_EQ(parse_load_options({{"precision", "auto"}}).precision, Precision::Auto);
}

TEST(LoadOptionsText, BadNamesAndValuesAreInvalidArgumentErrorsNamingThem) {
  expect_refused("fusion", "on", "unknown load option 'fusion' (known: method, precision");
  expect_refused("precision", "fp8", "precision 'fp8'");
  expect_refused("fuse", "maybe", "load option fuse: 'maybe' is not on|off");
  expect_refused("max_gpu_bytes", "0", "max_gpu_bytes: '0' is not a positive byte count");
  expect_refused("max_gpu_bytes", "12X", "max_gpu_bytes: '12X'");
  expect_refused("max_gpu_bytes", "99999999999999999999", "below 2^64");
  expect_refused("max_gpu_bytes", "17179869184T", "below 2^64");
  expect_refused("sdpa_occupancy_floor", "-3", "sdpa_occupancy_floor: '-3' is not an integer >= 0");
  expect_refused("force_route", "conv", "force_route: 'conv' is not OP=ROUTE");
  expect_refused("force_route", "=direct", "force_route: '=direct'");
  expect_refused("method", "", "method: '' is not a method name");
}

TEST(LoadProgressReport, ALoadReportsReadUploadAndCompileEachEndingDone) {
  ETW_REQUIRE_GPU();
  auto em = make_example_model();
  const std::string dir = ::testing::TempDir() + "/etw_progress";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/model.pte";
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(em.pte.data()), static_cast<std::streamsize>(em.pte.size()));
  }
  std::vector<LoadProgress> seen;
  LoadOptions o;
  o.on_progress = [&seen](const LoadProgress& p) { seen.push_back(p); };
  auto m = Model::load(path, o);
  EXPECT_TRUE(compare_tensors(m->run({em.input}).at(0), em.expected, em.atol, em.rtol).ok);
  for (auto stage : {LoadProgress::Stage::Read, LoadProgress::Stage::Upload, LoadProgress::Stage::Compile}) {
    std::vector<LoadProgress> mine;
    for (auto& p : seen)
      if (p.stage == stage) mine.push_back(p);
    ASSERT_FALSE(mine.empty()) << load_stage_name(stage);
    for (size_t i = 1; i < mine.size(); ++i) EXPECT_LE(mine[i - 1].done, mine[i].done) << load_stage_name(stage);
    EXPECT_EQ(mine.back().done, mine.back().total) << load_stage_name(stage);
    EXPECT_GT(mine.back().total, 0u) << load_stage_name(stage);
  }
  // Stages come in load order: the file, then constants, then kernels.
  EXPECT_EQ(seen.front().stage, LoadProgress::Stage::Read);
  EXPECT_EQ(seen.back().stage, LoadProgress::Stage::Compile);
  uint64_t read_total = 0;
  for (auto& p : seen)
    if (p.stage == LoadProgress::Stage::Read) read_total = p.total;
  EXPECT_EQ(read_total, em.pte.size());
}

TEST(LoadProgressReport, AnExceptionFromTheCallbackAbortsTheLoadAndTheNextLoadWorks) {
  ETW_REQUIRE_GPU();
  auto em = make_example_model();
  LoadOptions o;
  o.on_progress = [](const LoadProgress& p) {
    if (p.stage == LoadProgress::Stage::Compile) throw Error(ErrorKind::InvalidArgument, "cancelled by the caller");
  };
  try {
    Model::load_bytes(em.pte, o);
    ADD_FAILURE() << "the load was not aborted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cancelled by the caller"), std::string::npos) << e.what();
  }
  auto m = Model::load_bytes(em.pte);
  EXPECT_TRUE(compare_tensors(m->run({em.input}).at(0), em.expected, em.atol, em.rtol).ok);
}
