// generate(): the decode loop over the exported llama KV-cache fixture. Greedy output is checked
// against an argmax chain computed on the host from Model::run's logits (one token per run, the
// cache carried by the model's state); sampling against its defining properties.
#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "etwebgpu/generate.h"
#include "gpu/context.h"
#include "program/model_internal.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::string fixture_model(const char* name) {
  return conformance_dir() + "/" + name + "/model.pte";
}

#define ETW_REQUIRE_LLAMA_FIXTURE()                                                             \
  ETW_REQUIRE_GPU();                                                                            \
  if (!std::filesystem::exists(fixture_model("llama_kv_cache_decode_steps")))                   \
  GTEST_SKIP() << "no llama_kv_cache_decode_steps fixture under " << conformance_dir()

HostTensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) { return HostTensor::from<int64_t>(DType::Int64, shape, v); }
// One decode run's inputs: token `tok` at position `pos`.
std::vector<HostTensor> step_in(int64_t tok, int64_t pos) { return {i64({1, 1}, {tok}), i64({1}, {pos})}; }

// Host reference: feed the prompt one token per run of a freshly loaded `model`, then take argmax
// (first maximum) each step.
std::vector<int64_t> argmax_chain(const std::vector<int64_t>& prompt, int n,
                                  const std::string& model = fixture_model("llama_kv_cache_decode_steps")) {
  auto m = Model::load(model);
  std::vector<int64_t> out;
  int64_t pos = 0, next = -1;
  auto step = [&](int64_t tok) {
    auto logits = m->run(step_in(tok, pos++))[0];
    const float* l = logits.as<float>();
    int64_t best = 0;
    for (int64_t i = 1; i < logits.numel(); ++i)
      if (l[i] > l[best]) best = i;
    return best;
  };
  for (int64_t t : prompt) next = step(t);
  for (int k = 0; k < n; ++k) {
    out.push_back(next);
    if (k + 1 < n) next = step(next);
  }
  return out;
}

TEST(Generate, GreedyEqualsTheHostArgmaxChainOfPlainRuns) {
  ETW_REQUIRE_LLAMA_FIXTURE();
  auto m = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  std::vector<int64_t> prompt = {5, 17, 200};
  GenerateOptions o;
  o.max_new_tokens = 8;
  auto r = generate(*m, prompt, o);
  EXPECT_EQ(r.tokens, argmax_chain(prompt, 8));
  EXPECT_EQ(r.stop_reason, "max_new_tokens");
  EXPECT_EQ(r.context_length, 16);  // the fixture's static KV cache
  // A second call starts afresh (state reset): the same tokens again.
  EXPECT_EQ(generate(*m, prompt, o).tokens, r.tokens);
}

TEST(Generate, StopsWithContextFullWhenTheCacheRunsOut) {
  ETW_REQUIRE_LLAMA_FIXTURE();
  auto m = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  GenerateOptions o;
  o.max_new_tokens = 50;
  auto r = generate(*m, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, o);
  // 10 prompt positions + 6 decode runs fill 16 positions; the 7th token comes from the last one.
  EXPECT_EQ(r.stop_reason, "context_full");
  EXPECT_EQ(r.tokens.size(), 7u);
}

TEST(Generate, StopTokenAndCallbackEndGenerationEarly) {
  ETW_REQUIRE_LLAMA_FIXTURE();
  auto m = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  auto chain = argmax_chain({9, 8}, 3);
  GenerateOptions o;
  o.max_new_tokens = 10;
  o.stop_tokens = {chain[1]};
  auto r = generate(*m, {9, 8}, o);
  EXPECT_EQ(r.stop_reason, "stop_token");
  EXPECT_EQ(r.tokens, std::vector<int64_t>(chain.begin(), chain.begin() + 2));
  o.stop_tokens.clear();
  int seen = 0;
  auto s = generate(*m, {9, 8}, o, [&](int64_t) { return ++seen < 2; });
  EXPECT_EQ(s.stop_reason, "stopped");
  EXPECT_EQ(s.tokens.size(), 2u);
}

// generate leaves the cache of the sequence it made (each run at its own position, also those
// queued ahead): a plain run after it, at the next position, gives the logits a plain run gives
// after the prompt and the tokens were fed one by one.
TEST(Generate, LeavesTheCacheOfItsSequenceForAPlainRunAfterIt) {
  ETW_REQUIRE_LLAMA_FIXTURE();
  auto m = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  std::vector<int64_t> prompt = {5, 17, 200};
  GenerateOptions o;
  o.max_new_tokens = 6;
  o.temperature = 1.0;  // sampled: tokens a greedy argmax chain would not pick
  o.seed = 3;
  auto r = generate(*m, prompt, o);
  ASSERT_EQ(r.tokens.size(), 6u);
  const int64_t next_pos = static_cast<int64_t>(prompt.size() + r.tokens.size()) - 1;
  auto after = m->run(step_in(r.tokens.back(), next_pos))[0];
  auto fresh = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  std::vector<int64_t> fed = prompt;
  fed.insert(fed.end(), r.tokens.begin(), r.tokens.end());
  HostTensor want;
  for (size_t p = 0; p < fed.size(); ++p) want = fresh->run(step_in(fed[p], static_cast<int64_t>(p)))[0];
  EXPECT_EQ(after.data, want.data);
}

// generate queues each decode run before the one ahead of it has finished. A callback that throws,
// or one that runs the model (refused: generate holds the model's run lock), leaves no run in
// flight: the next generate and a plain run give what they give on a freshly loaded model.
TEST(Generate, EarlyEndsLeaveNoRunInFlightAndTheModelUsable) {
  ETW_REQUIRE_LLAMA_FIXTURE();
  auto m = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  std::vector<int64_t> prompt = {5, 17, 200};
  GenerateOptions o;
  o.max_new_tokens = 8;
  const auto want = generate(*m, prompt, o).tokens;
  int seen = 0;
  EXPECT_THROW(generate(*m, prompt, o,
                        [&](int64_t) -> bool {
                          if (++seen == 3) throw std::runtime_error("the caller's own error");
                          return true;
                        }),
               std::runtime_error);
  EXPECT_EQ(seen, 3);
  try {
    generate(*m, prompt, o, [&](int64_t t) { return !m->run(step_in(t, 0)).empty(); });
    ADD_FAILURE() << "a run from inside generate's callback was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("in progress"), std::string::npos) << e.what();
  }
  EXPECT_EQ(generate(*m, prompt, o).tokens, want);
  m->reset_state();
  auto fresh = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  auto a = m->run(step_in(7, 0))[0];
  auto b = fresh->run(step_in(7, 0))[0];
  EXPECT_EQ(a.data, b.data);
}

TEST(Generate, SamplingIsSeededAndTopKOneOrTinyTopPIsGreedy) {
  ETW_REQUIRE_LLAMA_FIXTURE();
  auto m = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  std::vector<int64_t> prompt = {5, 17, 200};
  GenerateOptions o;
  o.max_new_tokens = 8;
  auto greedy = generate(*m, prompt, o).tokens;
  o.temperature = 1.5;
  o.seed = 7;
  auto a = generate(*m, prompt, o).tokens;
  EXPECT_EQ(generate(*m, prompt, o).tokens, a) << "same seed, same tokens";
  bool differs = false;
  for (uint64_t seed = 8; seed < 12 && !differs; ++seed) {
    o.seed = seed;
    differs = generate(*m, prompt, o).tokens != a;
  }
  EXPECT_TRUE(differs) << "temperature 1.5 over 256 tokens gave the same 8 tokens for 5 seeds";
  for (auto v : a) EXPECT_TRUE(v >= 0 && v < 256);
  o.top_k = 1;
  EXPECT_EQ(generate(*m, prompt, o).tokens, greedy) << "top_k = 1 keeps only the argmax";
  o.top_k = 0;
  o.top_p = 1e-6;
  EXPECT_EQ(generate(*m, prompt, o).tokens, greedy) << "a tiny top_p keeps only the most likely token";
}

TEST(Generate, TopKSamplesOnlyAmongTheKMostLikely) {
  ETW_REQUIRE_LLAMA_FIXTURE();
  // One step: the 3 most likely first tokens after the prompt, from the logits on the host.
  auto ref = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  auto logits = ref->run(step_in(42, 0))[0];
  std::vector<int64_t> order(256);
  for (int i = 0; i < 256; ++i) order[i] = i;
  const float* l = logits.as<float>();
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return l[x] > l[y]; });
  auto m = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  GenerateOptions o;
  o.max_new_tokens = 1;
  o.temperature = 5.0;  // nearly uniform: without top_k almost any token could come out
  o.top_k = 3;
  std::set<int64_t> seen;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    o.seed = seed;
    seen.insert(generate(*m, {42}, o).tokens.at(0));
  }
  for (int64_t t : seen) EXPECT_TRUE(t == order[0] || t == order[1] || t == order[2]) << "token " << t;
  EXPECT_GE(seen.size(), 2u) << "temperature 5 over 3 candidates should not always pick one";
}

TEST(Generate, BadOptionsAndNonDecoderModelsAreClearErrors) {
  ETW_REQUIRE_LLAMA_FIXTURE();
  auto m = Model::load(fixture_model("llama_kv_cache_decode_steps"));
  GenerateOptions o;
  EXPECT_TRUE(has(load_error([&] { generate(*m, {}, o); }), "prompt is empty"));
  EXPECT_TRUE(has(load_error([&] { generate(*m, {300}, o); }), "outside the vocabulary"));
  EXPECT_TRUE(has(load_error([&] { generate(*m, std::vector<int64_t>(17, 1), o); }), "context holds 16"));
  o.top_p = 0;
  EXPECT_TRUE(has(load_error([&] { generate(*m, {1}, o); }), "top_p"));
  o.top_p = 1;
  o.temperature = -1;
  EXPECT_TRUE(has(load_error([&] { generate(*m, {1}, o); }), "temperature"));
  auto add = Model::load(fixture_model("add_bcast"));
  EXPECT_TRUE(has(load_error([&] { generate(*add, {1}, GenerateOptions{}); }), "generate needs a decoder"));
}

}  // namespace

// ExecuTorch's own LLM recipe (tests/fixtures/exports/llama_recipe_*: llama:: update_cache +
// custom_sdpa lowered to sdpa_with_kv_cache, a dynamic token dimension up to 31): generate feeds
// the prompt in chunks as large as the program allows, finds the context length from the caches
// sdpa_with_kv_cache writes, and picks the same tokens as a prompt fed one token per run,
// without waiting on the GPU between its runs.
TEST(Generate, RecipeExportPrefillsInChunksLikeTokenByToken) {
  ETW_REQUIRE_GPU();
  for (const char* name : {"llama_recipe_fp32", "llama_recipe_8da4w"}) {
    SCOPED_TRACE(name);
    const std::string path = std::string(ETWEBGPU_SOURCE_DIR) + "/tests/fixtures/exports/" + name + "/model.pte";
    auto m = Model::load(path);
    ASSERT_TRUE(m->inputs()[0].dynamic);
    EXPECT_EQ(m->inputs()[0].sizes[1], 31);
    std::vector<int64_t> prompt;
    for (int64_t i = 0; i < 12; ++i) prompt.push_back((i * 37 + 11) % 512);
    std::vector<std::pair<int64_t, int64_t>> chunks;
    GenerateOptions o;
    o.max_new_tokens = 6;
    o.on_prefill = [&](int64_t done, int64_t total) { chunks.emplace_back(done, total); };
    auto r = generate(*m, prompt, o);
    EXPECT_EQ(r.context_length, 32);
    ASSERT_EQ(chunks.size(), 1u);  // the whole 12-token prompt in one run
    EXPECT_EQ(chunks[0], std::make_pair(int64_t(12), int64_t(12)));
    // Token by token through Model::run: the same argmax chain.
    EXPECT_EQ(r.tokens, argmax_chain(prompt, 6, path));
    // A prompt longer than the context is refused, naming the limit; the model stays usable.
    auto e = load_error([&] { generate(*m, std::vector<int64_t>(40, 1), o); });
    EXPECT_TRUE(has(e, "the prompt has 40 tokens, the model's context holds 32")) << e;
    // No synchronous read-back in the loop: the position's SymInt comes from the host upload, so
    // each decode run is queued while the GPU still runs the one before it.
    const gpu::Context& ctx = detail::ModelAccess::graph(*m).ctx();
    const uint64_t reads = ctx.sync_reads();
    EXPECT_EQ(generate(*m, prompt, o).tokens, r.tokens);
    EXPECT_EQ(ctx.sync_reads(), reads);
  }
}

// The recipe export run directly: a position past the cache, a token outside the vocabulary and a
// chunk above the program's dynamic bound are errors naming the limit; the model then runs a good
// chunk as before.
TEST(Generate, RecipeExportBadPositionTokenOrChunkAreErrorsAndTheModelStaysUsable) {
  ETW_REQUIRE_GPU();
  auto m = Model::load(std::string(ETWEBGPU_SOURCE_DIR) + "/tests/fixtures/exports/llama_recipe_q4/model.pte");
  auto good = [&] { return m->run({i64({1, 3}, {1, 2, 3}), i64({1}, {0})})[0]; };
  auto before = good();
  std::vector<int64_t> seven(7, 4);
  // The RoPE tables' rows (32 of them, as the cache) are taken first (ops/indexing/position_window.cpp).
  EXPECT_TRUE(has(load_error([&] { m->run({i64({1, 7}, seven), i64({1}, {30})}); }),
                  "the rows at positions 30 .. 36 of a gather: index 32 is out of bounds for dimension 0 with size 32"));
  EXPECT_TRUE(has(load_error([&] { m->run(step_in(600, 0)); }),
                  "index 600 is out of bounds for dimension 0 with size 512"));
  EXPECT_TRUE(has(load_error([&] { m->run({i64({1, 40}, std::vector<int64_t>(40, 0)), i64({1}, {0})}); }),
                  "input 0 has shape [1, 40], outside the exported bound [1, 31]"));
  EXPECT_TRUE(Close(good(), before, 0, 0));
}
