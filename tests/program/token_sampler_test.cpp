// TokenSampler on its own: the logits' storage type is part of its kernel, so a model loaded at
// fp16 precision samples from f16 logits exactly as one at fp32 does from f32 logits.
#include <algorithm>
#include <random>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "program/token_sampler.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

// f16 bits of a normal float whose mantissa fits 10 bits (the values below are k / 8).
uint16_t f16_bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return static_cast<uint16_t>(((b >> 16) & 0x8000u) | ((((b >> 23) & 0xffu) - 112u) << 10) | ((b >> 13) & 0x3ffu));
}

// Two rows of `vocab` logits; row 1 peaks at 20 and again at 30 (argmax: the first one).
std::vector<float> two_rows(uint32_t vocab) {
  std::vector<float> l;
  for (uint32_t r = 0; r < 2; ++r)
    for (uint32_t i = 0; i < vocab; ++i) l.push_back(-4.f + static_cast<float>((i * 7 + r * 3) % 23) / 8.f);
  l[vocab + 20] = l[vocab + 30] = 3.5f;
  return l;
}

// The picked token; `over_blocks`, when given, gets whether the pick ran over a first pass's block
// masses (the result's second word).
uint32_t pick(gpu::Context& ctx, const std::vector<float>& logits, kernel::Storage s, const graph::SamplerParams& p,
              bool* over_blocks = nullptr) {
  std::vector<uint8_t> bytes;
  for (float v : logits) {
    if (s == kernel::Storage::F16) {
      uint16_t h = f16_bits(v);
      bytes.insert(bytes.end(), reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h) + 2);
    } else {
      bytes.insert(bytes.end(), reinterpret_cast<const uint8_t*>(&v), reinterpret_cast<const uint8_t*>(&v) + 4);
    }
  }
  bytes.resize((bytes.size() + 15) / 16 * 16, 0);
  gpu::Buffer buf = ctx.create_buffer(bytes.size(), gpu::BufferKind::Storage, "test.logits");
  ctx.write(buf, 0, bytes.data(), bytes.size());
  graph::TokenSampler sampler(ctx, buf, s, static_cast<uint32_t>(logits.size()));
  std::vector<gpu::Command> cmds;
  sampler.commands(p, cmds);
  uint32_t token = 0, path = 0;
  ctx.submit(cmds, nullptr, {sampler.read(&token), {&sampler.result(), 4, 4, &path}});
  if (over_blocks) *over_blocks = path == 1;
  return token;
}

TEST(TokenSampler, PicksFromF16LogitsLikeFromF32Logits) {
  ETW_REQUIRE_GPU();
  auto ctx = gpu::Context::get();
  if (!ctx->info().shader_f16) GTEST_SKIP() << "adapter without shader-f16";
  const uint32_t vocab = 37;
  auto logits = two_rows(vocab);
  graph::SamplerParams greedy;
  greedy.n = vocab;
  greedy.offset = vocab;  // row 1
  EXPECT_EQ(pick(*ctx, logits, kernel::Storage::F32, greedy), 20u);
  EXPECT_EQ(pick(*ctx, logits, kernel::Storage::F16, greedy), 20u);
  // Sampling restricted to the top 1 is the argmax whatever u is.
  graph::SamplerParams top1 = greedy;
  top1.sample = 1;
  top1.top_k = 1;
  top1.u = 0.9f;
  EXPECT_EQ(pick(*ctx, logits, kernel::Storage::F16, top1), 20u);
  // Sampling over all tokens with the same u picks the same token from either storage (the
  // logits are exact in f16).
  graph::SamplerParams all = greedy;
  all.sample = 1;
  all.u = 0.37f;
  EXPECT_EQ(pick(*ctx, logits, kernel::Storage::F16, all), pick(*ctx, logits, kernel::Storage::F32, all));
}

// Greedy picks over a Llama-3-size vocabulary (128256: 63 blocks of the first pass, the last one
// partial) are torch.argmax's: the maximum in a late block, in the partial last block, a tie
// across blocks (the first index wins), a tie within a block, a NaN (above every number, as
// torch.argmax takes it), all equal (index 0) and a row at an offset.
TEST(TokenSampler, GreedyOverManyBlocksIsTheFirstArgmax) {
  ETW_REQUIRE_GPU();
  auto ctx = gpu::Context::get();
  const uint32_t vocab = 128256;
  auto host_argmax = [](const std::vector<float>& l, size_t from, size_t n) {
    size_t best = from;
    for (size_t i = from; i < from + n; ++i)
      if (std::isnan(l[i]) ? !std::isnan(l[best]) : (!std::isnan(l[best]) && l[i] > l[best])) best = i;
    return static_cast<uint32_t>(best - from);
  };
  std::vector<float> base(2 * vocab);
  for (size_t i = 0; i < base.size(); ++i) base[i] = -4.f + static_cast<float>((i * 7919) % 4099) / 512.f;
  struct Case { const char* what; std::vector<std::pair<uint32_t, float>> set; bool all_equal; };
  const Case cases[] = {{"late block", {{100001, 40.f}}, false},
                        {"partial last block", {{vocab - 3, 40.f}}, false},
                        {"tie across blocks", {{70000, 40.f}, {5000, 40.f}, {120000, 40.f}}, false},
                        {"tie in a block", {{4097, 40.f}, {4096 + 2047, 40.f}}, false},
                        {"NaN", {{9000, 40.f}, {77777, std::nanf("")}}, false},
                        {"all equal", {}, true}};
  for (const Case& c : cases)
    for (uint32_t row : {0u, 1u}) {
      auto l = base;
      if (c.all_equal) std::fill(l.begin(), l.end(), 1.5f);
      for (auto [i, v] : c.set) l[row * vocab + i] = v;
      graph::SamplerParams p;
      p.n = vocab;
      p.offset = row * vocab;
      EXPECT_EQ(pick(*ctx, l, kernel::Storage::F32, p), host_argmax(l, row * vocab, vocab)) << c.what << " row " << row;
    }
}

// The sampling rule in doubles (token_sampler.wgsl's header): the top_k largest logits (lower
// index first on ties), then the smallest top set of those whose mass reaches top_p (all ties of
// its last logit included), then the first token in index order where the running mass passes
// u * total. `margin` is set to how close u * total or top_p's goal came to a boundary (relative):
// a pick that close may go either way in f32.
uint32_t host_sample(const std::vector<float>& l, const graph::SamplerParams& p, double* margin) {
  const size_t n = p.n;
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return l[a] > l[b]; });
  const size_t k = p.top_k > 0 && p.top_k < n ? p.top_k : n;
  const double m = l[order[0]];
  auto w = [&](uint32_t i) { return std::exp((static_cast<double>(l[i]) - m) * p.inv_temp); };
  double z = 0;
  for (size_t j = 0; j < k; ++j) z += w(order[j]);
  *margin = 1;
  size_t kept = k;
  if (p.top_p < 1) {
    double goal = p.top_p * z, acc = 0;
    for (size_t j = 0; j < k; ++j) {
      acc += w(order[j]);
      *margin = std::min(*margin, std::abs(acc - goal) / z);
      if (acc >= goal) {
        kept = j + 1;
        while (kept < k && l[order[kept]] == l[order[j]]) ++kept;
        break;
      }
    }
  }
  std::vector<uint32_t> set(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kept));
  std::sort(set.begin(), set.end());
  double total = 0;
  for (uint32_t i : set) total += w(i);
  const double goal = p.u * total;
  double acc = 0;
  for (uint32_t i : set) {
    acc += w(i);
    *margin = std::min(*margin, std::abs(acc - goal) / total);
    if (acc > goal) return i;
  }
  return set.back();
}

// Sampling picks are the rule's, in doubles (host_sample), over a Llama-3-size vocabulary and
// over vocabularies of one block, two blocks with a one-logit last block, and a short last
// block; with top-k through the first pass over blocks (k up to 256, ties at the k-th logit
// included by index) and past it (512: the pick alone), top-p, both and neither, at several
// temperatures and seeds. Logits are multiples of 1/8, so ties are many. Picks whose u or top_p
// land within 1e-5 of a boundary are not compared.
TEST(TokenSampler, SamplingPicksAreTheRulesOverEveryVocabularyAndTopK) {
  ETW_REQUIRE_GPU();
  auto ctx = gpu::Context::get();
  int compared = 0;
  for (uint32_t vocab : {128256u, 2048u, 2049u, 5000u})
    for (uint32_t top_k : {0u, 1u, 5u, 40u, 256u, 512u})
      for (float top_p : {1.f, 0.9f, 0.3f}) {
        std::vector<float> l(vocab);
        std::mt19937 rng(vocab * 31 + top_k * 7 + static_cast<uint32_t>(top_p * 10));
        for (float& v : l) v = static_cast<float>(static_cast<int>(rng() % 97) - 60) / 8.f;
        for (float u : {0.02f, 0.5f, 0.93f})
          for (float temp : {0.7f, 1.3f}) {
            graph::SamplerParams p;
            p.n = vocab;
            p.sample = 1;
            p.top_k = top_k;
            p.top_p = top_p;
            p.inv_temp = 1.f / temp;
            p.u = u;
            double margin = 0;
            const uint32_t want = host_sample(l, p, &margin);
            if (margin < 1e-5) continue;
            ++compared;
            EXPECT_EQ(pick(*ctx, l, kernel::Storage::F32, p), want)
                << "vocab " << vocab << " top_k " << top_k << " top_p " << top_p << " u " << u << " T " << temp;
          }
      }
  EXPECT_GT(compared, 300);
}

// top-p and temperature without top-k or with a top-k above 256 run over the first pass's block
// masses (the top-k and nucleus thresholds found over each block's sorted keys, the ties at the
// k-th logit kept by index, then one block read) on every kind of row: peaked as an LLM's
// (a few hundred high logits spread over the blocks), 600 high logits in one block, flat (the
// nucleus spans most of the vocabulary), one logit far above the rest, masked tokens (-inf), and
// a row at an offset. Logits are multiples of 1/8, so the nucleus's last logit has ties across
// blocks. Each pick is the rule's (host_sample, in doubles) where no boundary is within 1e-5.
TEST(TokenSampler, TopPTemperatureAndLargeTopKRunOverTheBlocksMassesOnEveryRow) {
  ETW_REQUIRE_GPU();
  auto ctx = gpu::Context::get();
  const uint32_t vocab = 128256;  // 63 blocks of 2048, the last one short
  struct Row { const char* name; std::vector<float> l; uint32_t offset = 0; };
  std::vector<Row> rows;
  std::mt19937 rng(11);
  auto low = [&] { return static_cast<float>(-static_cast<int>(rng() % 65)) / 8.f; };  // -8 .. 0
  auto row = [&](const char* name) {
    Row r{name, std::vector<float>(vocab)};
    for (float& v : r.l) v = low();
    return r;
  };
  {
    Row r = row("peaked, spread over the blocks");
    for (int j = 0; j < 300; ++j) r.l[(static_cast<uint32_t>(j) * 7919u) % vocab] = 6.f + static_cast<float>(rng() % 33) / 8.f;
    rows.push_back(std::move(r));
  }
  {
    Row r = row("peaked, 600 high logits in one block");
    for (int j = 0; j < 600; ++j) r.l[3 * 2048 + static_cast<uint32_t>(j) * 3u] = 8.f + static_cast<float>(rng() % 9) / 8.f;
    rows.push_back(std::move(r));
  }
  rows.push_back(row("flat"));
  {
    Row r = row("one logit far above the rest");
    r.l[vocab - 5] = 30.f;
    rows.push_back(std::move(r));
  }
  {
    Row r = row("masked tokens");
    for (uint32_t i = 0; i < vocab; ++i)
      if (i % 3 != 0 || i >= 100000) r.l[i] = -std::numeric_limits<float>::infinity();
    rows.push_back(std::move(r));
  }
  {
    Row r = row("a row at an offset");
    std::vector<float> before(1000, 50.f);  // not part of the row
    r.l.insert(r.l.begin(), before.begin(), before.end());
    r.offset = 1000;
    rows.push_back(std::move(r));
  }
  int compared = 0;
  for (const Row& r : rows) {
    const std::vector<float> own(r.l.begin() + r.offset, r.l.end());
    for (uint32_t top_k : {0u, 257u, 1000u, 100000u})
      for (float top_p : {0.01f, 0.5f, 0.9f, 0.95f, 0.999f, 1.f})
      for (float temp : {0.7f, 1.3f})
        for (float u : {0.03f, 0.41f, 0.88f}) {
          if (top_k > 0 && (top_p == 0.01f || top_p == 0.999f || temp == 1.3f)) continue;  // fewer: each pick is a run
          graph::SamplerParams p;
          p.n = vocab;
          p.offset = r.offset;
          p.sample = 1;
          p.top_k = top_k;
          p.top_p = top_p;
          p.inv_temp = 1.f / temp;
          p.u = u;
          double margin = 0;
          const uint32_t want = host_sample(own, p, &margin);
          bool over_blocks = false;
          const uint32_t got = pick(*ctx, r.l, kernel::Storage::F32, p, &over_blocks);
          EXPECT_TRUE(over_blocks) << r.name << " top_p " << top_p;
          if (margin < 1e-5) continue;
          ++compared;
          EXPECT_EQ(got, want) << r.name << " top_k " << top_k << " top_p " << top_p << " u " << u << " T " << temp;
        }
  }
  EXPECT_GT(compared, 250);
}

TEST(TokenSampler, IntegerLogitsAreRefused) {
  ETW_REQUIRE_GPU();
  auto ctx = gpu::Context::get();
  gpu::Buffer buf = ctx->create_buffer(64, gpu::BufferKind::Storage, "test.logits");
  try {
    graph::TokenSampler sampler(*ctx, buf, kernel::Storage::I32, 16);
    FAIL() << "i32 logits were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("float logits"), std::string::npos) << e.what();
  }
}

}  // namespace
