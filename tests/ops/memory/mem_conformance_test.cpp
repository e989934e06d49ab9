// The exported conformance fixtures that exercise the memory and indexing families, run with
// the manifest's tolerances (skipped when ../shared/conformance is absent).
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "etwebgpu/npy.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

class OpMemConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(OpMemConformance, FixtureMatchesExpectedWithinManifestTolerance) {
  ETW_REQUIRE_GPU();
  namespace fs = std::filesystem;
  fs::path root = conformance_dir();
  ETW_REQUIRE_FIXTURE(fs::exists(root / "manifest.json"), root.string());
  auto manifest = nlohmann::json::parse(std::ifstream(root / "manifest.json"));
  const auto& c = manifest["cases"][GetParam()];
  ASSERT_FALSE(c.is_null()) << GetParam();
  fs::path dir = root / GetParam();
  std::vector<HostTensor> ins;
  for (const auto& i : c["inputs"]) ins.push_back(read_npy((dir / i["file"].get<std::string>()).string()));
  auto model = Model::load((dir / "model.pte").string());
  auto outs = model->run(ins);
  ASSERT_EQ(outs.size(), c["outputs"].size());
  for (size_t k = 0; k < outs.size(); ++k) {
    auto exp = read_npy((dir / c["outputs"][k]["file"].get<std::string>()).string());
    EXPECT_TRUE(Close(outs[k], exp, c["atol"].get<double>(), c["rtol"].get<double>())) << GetParam() << " output " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(OpMemFixtures, OpMemConformance,
                         ::testing::Values("view_permute", "select_squeeze", "slice_step", "split_with_sizes", "cat_dims",
                                           "pixel_shuffle", "clone_alias", "embedding"));

}  // namespace
