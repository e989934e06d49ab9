// `etwebgpu generate`: the CLI over generate() on the llama KV-cache fixture: --json tokens equal
// the library's greedy tokens, streamed ids and the speed line, and argument errors (exit 2).
#include <filesystem>

#include <nlohmann/json.hpp>

#include "etwebgpu/generate.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

using etwebgpu::testing::conformance_dir;
using etwebgpu::testing::run_cli;

std::string kv_model() {
  std::string p = conformance_dir() + "/llama_kv_cache_decode_steps/model.pte";
  return std::filesystem::exists(p) ? p : "";
}

TEST(CliGenerate, JsonTokensEqualTheLibraryGreedyTokensAndCarryTheSpeedsAndLoadTime) {
  ETW_REQUIRE_GPU();
  std::string m = kv_model(), out;
  if (m.empty()) GTEST_SKIP() << "fixture llama_kv_cache_decode_steps absent under " << conformance_dir();
  ASSERT_EQ(run_cli("generate " + m + " --prompt-tokens 5,17,200 --max-new-tokens 6 --json", &out), 0) << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  auto model = Model::load(m);
  GenerateOptions o;
  o.max_new_tokens = 6;
  EXPECT_EQ(j.at("tokens").get<std::vector<int64_t>>(), generate(*model, {5, 17, 200}, o).tokens);
  EXPECT_EQ(j.at("stop_reason"), "max_new_tokens");
  EXPECT_GT(j.at("decode_tok_s").get<double>(), 0.0);
  EXPECT_GT(j.at("prefill_tok_s").get<double>(), 0.0);
  EXPECT_GT(j.at("load_s").get<double>(), 0.0);
}

TEST(CliGenerate, StreamsTokenIdsThenTheSpeedLineAndReportsAFullContext) {
  ETW_REQUIRE_GPU();
  std::string m = kv_model(), out;
  if (m.empty()) GTEST_SKIP() << "fixture llama_kv_cache_decode_steps absent under " << conformance_dir();
  ASSERT_EQ(run_cli("generate " + m + " --prompt-tokens 1,2,3,4,5,6,7,8,9,10 --max-new-tokens 40", &out), 0) << out;
  EXPECT_NE(out.find("the context is full (16 positions)"), std::string::npos) << out;
  EXPECT_NE(out.find("tok/s decode"), std::string::npos) << out;
}

TEST(CliGenerate, ArgumentErrorsExitTwoNamingTheProblem) {
  ETW_REQUIRE_GPU();
  std::string m = kv_model(), out;
  if (m.empty()) GTEST_SKIP() << "fixture llama_kv_cache_decode_steps absent under " << conformance_dir();
  EXPECT_EQ(run_cli("generate " + m + " --prompt-tokens 1,x,3", &out), 2);
  EXPECT_NE(out.find("'x' is not an integer token id"), std::string::npos) << out;
  EXPECT_EQ(run_cli("generate " + m + " --prompt hello", &out), 2);
  EXPECT_NE(out.find("--prompt needs --tokenizer"), std::string::npos) << out;
  EXPECT_EQ(run_cli("generate " + m, &out), 2);
  EXPECT_NE(out.find("exactly one of --prompt-tokens and --prompt"), std::string::npos) << out;
  EXPECT_EQ(run_cli("generate " + m + " --prompt-tokens 1 --top-p 2", &out), 2);
  EXPECT_NE(out.find("top_p must be in (0, 1]"), std::string::npos) << out;
}

}  // namespace
