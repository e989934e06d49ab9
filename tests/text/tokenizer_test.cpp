// Tokenizers against the libraries that define them: byte-level BPE tokenizer.json files and the
// ids Hugging Face `tokenizers` gave for test strings (ASCII, contractions, digit runs, whitespace
// runs, CRLF, accents, CJK, emoji, special tokens), a SentencePiece model and spm_encode's ids;
// round trips and error paths. Fixtures: tests/data/tokenizers (see make_tokenizer_fixtures.py).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "etwebgpu/error.h"
#include "etwebgpu/tokenizer.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using etwebgpu::testing::has;
using etwebgpu::testing::load_error;

namespace {

std::string data(const std::string& f) { return std::string(ETWEBGPU_SOURCE_DIR) + "/tests/data/tokenizers/" + f; }

nlohmann::json expected() {
  std::ifstream f(data("expected_ids.json"));
  return nlohmann::json::parse(f);
}

void check_file(const std::string& name, bool lossless) {
  auto tok = Tokenizer::load(data(name));
  auto e = expected();
  const auto& tests = e.at("tests");
  const auto& ids = e.at(name);
  ASSERT_EQ(tests.size(), ids.size());
  for (size_t k = 0; k < tests.size(); ++k) {
    std::string text = tests[k].get<std::string>();
    if (!ids[k].is_null()) {
      auto want = ids[k].get<std::vector<int64_t>>();
      EXPECT_EQ(tok->encode(text), want) << name << ": \"" << text << "\"";
      EXPECT_EQ(tok->decode(want), text) << name << ": decode of the reference ids";
    }
    if (lossless) {
      EXPECT_EQ(tok->decode(tok->encode(text)), text) << name << ": round trip of \"" << text << "\"";
    }
  }
}

TEST(Tokenizer, Gpt2StyleByteLevelBpeMatchesHuggingFaceIds) {
  check_file("bpe_gpt2.json", true);
  auto tok = Tokenizer::load(data("bpe_gpt2.json"));
  EXPECT_EQ(tok->kind(), "bpe");
  EXPECT_EQ(tok->eos(), 0);  // <|endoftext|>
}

TEST(Tokenizer, Llama3StyleSplitRegexBpeMatchesHuggingFaceIds) { check_file("bpe_llama3.json", true); }

TEST(Tokenizer, SentencePieceMatchesSpmEncodeIds) {
  check_file("sp_bpe.model", false);
  auto tok = Tokenizer::load(data("sp_bpe.model"));
  EXPECT_EQ(tok->kind(), "sentencepiece");
  EXPECT_EQ(tok->bos(), 1);
  EXPECT_EQ(tok->eos(), 2);
  // Byte fallback: characters outside the training data still round-trip.
  EXPECT_EQ(tok->decode(tok->encode("Zebra ζ")), "Zebra ζ");
}

TEST(Tokenizer, ErrorsNameTheFileAndTheProblem) {
  EXPECT_TRUE(has(load_error([] { Tokenizer::load(data("no_such_file.json")); }), "cannot open tokenizer"));
  std::string bad = ::testing::TempDir() + "/etw_bad_tokenizer.json";
  std::ofstream(bad) << "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}";
  EXPECT_TRUE(has(load_error([&] { Tokenizer::load(bad); }), "only BPE"));
  std::ofstream(bad) << "{\"model\": ";
  EXPECT_TRUE(has(load_error([&] { Tokenizer::load(bad); }), "etw_bad_tokenizer.json"));
  std::string junk = ::testing::TempDir() + "/etw_junk.model";
  std::ofstream(junk) << "not a sentencepiece model";
  EXPECT_TRUE(has(load_error([&] { Tokenizer::load(junk); }), "neither a tokenizer.json nor a SentencePiece model"));
  // Names from the file reach the message escaped (an ESC byte could drive the user's terminal).
  std::ofstream(bad) << "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, "
                        "\"pre_tokenizer\": {\"type\": \"Evil\\u001b[2J\"}}";
  auto esc = load_error([&] { Tokenizer::load(bad); });
  EXPECT_TRUE(has(esc, "Evil\\x1b[2J") && esc.find('\x1b') == std::string::npos) << esc;
  auto tok = Tokenizer::load(data("bpe_gpt2.json"));
  EXPECT_TRUE(has(load_error([&] { tok->decode({100000}); }), "outside the tokenizer's vocabulary"));
  EXPECT_TRUE(has(load_error([&] { tok->decode({-1}); }), "outside the tokenizer's vocabulary"));
}

TEST(CliGenerateText, PromptTextThroughATokenizerPrintsTheDecodedTokens) {
  ETW_REQUIRE_GPU();
  std::string m = etwebgpu::testing::conformance_dir() + "/llama_kv_cache_decode_steps/model.pte", out;
  std::ifstream probe(m);
  if (!probe) GTEST_SKIP() << "fixture llama_kv_cache_decode_steps absent";
  // Single bytes only: the fixture's vocabulary is 256 ids, the tokenizer's byte tokens are 1..256.
  ASSERT_EQ(etwebgpu::testing::run_cli("generate " + m + " --tokenizer " + data("bpe_gpt2.json") +
                                           " --prompt zq --max-new-tokens 5 --stop-tokens 999 --json",
                                       &out),
            0)
      << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  auto tok = Tokenizer::load(data("bpe_gpt2.json"));
  EXPECT_EQ(j.at("prompt_tokens").get<size_t>(), tok->encode("zq").size());
  // JSON text is UTF-8: bytes that do not form characters (random tokens can end mid-character)
  // come out as U+FFFD, as nlohmann::json's replace handler writes them.
  std::string want = nlohmann::json(tok->decode(j.at("tokens").get<std::vector<int64_t>>()))
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  EXPECT_EQ(j.at("text"), nlohmann::json::parse(want));
}

}  // namespace
