// The benchmark decoder of bench/llm/q4_llama_model.h (Llama-3.2-1B shape, 4-bit weights) at a
// tiny size, run step by step and checked against an fp64 CPU evaluation of the same weights
// (dequantized on the host from the packed bytes), so the benchmark times the right computation.
#include <cmath>

#include "llm/q4_llama_model.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
using bench::Q4LlamaConfig;
using bench::Q4LlamaWeights;

namespace {

Q4LlamaConfig tiny() {
  Q4LlamaConfig c;
  c.vocab = 256, c.dim = 64, c.layers = 2, c.heads = 4, c.kv_heads = 2, c.ffn = 128, c.context = 16;
  c.seed = 7;
  return c;
}

// One-token decode in fp64: Llama's layer (RMSNorm, GQA attention with interleaved RoPE over a
// KV cache, SiLU-gated MLP) written from the model's definition, not from the kernels.
class Reference {
 public:
  Reference(const Q4LlamaConfig& c, const Q4LlamaWeights& w) : c_(c), w_(w) { reset(); }
  void reset() {
    size_t n = static_cast<size_t>(c_.context * c_.kv_heads * c_.head_dim());
    kc_.assign(static_cast<size_t>(c_.layers), std::vector<double>(n, 0.0));
    vc_ = kc_;
  }
  std::vector<double> step(int64_t token, int64_t pos) {
    const int64_t hd = c_.head_dim(), HQ = c_.heads, HKV = c_.kv_heads, DM = c_.dim;
    std::vector<double> h(static_cast<size_t>(DM));
    for (int64_t i = 0; i < DM; ++i) h[i] = w_.embedding.weight(token, i, c_.group);
    for (int64_t l = 0; l < c_.layers; ++l) {
      const auto& L = w_.layers[static_cast<size_t>(l)];
      auto x = rms(h, L.attn_norm);
      auto q = rope(linear(x, L.wq), HQ, pos), k = rope(linear(x, L.wk), HKV, pos), v = linear(x, L.wv);
      auto& kc = kc_[static_cast<size_t>(l)];
      auto& vc = vc_[static_cast<size_t>(l)];
      std::copy(k.begin(), k.end(), kc.begin() + pos * HKV * hd);
      std::copy(v.begin(), v.end(), vc.begin() + pos * HKV * hd);
      std::vector<double> att(static_cast<size_t>(HQ * hd), 0.0);
      for (int64_t hq = 0; hq < HQ; ++hq) {
        int64_t hk = hq / (HQ / HKV);  // GQA: consecutive query heads share a KV head
        std::vector<double> s(static_cast<size_t>(pos + 1));
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= pos; ++j) {
          double d = 0;
          for (int64_t e = 0; e < hd; ++e) d += q[hq * hd + e] * kc[(j * HKV + hk) * hd + e];
          s[j] = d / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, s[j]);
        }
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j <= pos; ++j)
          for (int64_t e = 0; e < hd; ++e) att[hq * hd + e] += s[j] / sum * vc[(j * HKV + hk) * hd + e];
      }
      auto o = linear(att, L.wo);
      for (int64_t i = 0; i < DM; ++i) h[i] += o[i];
      auto x2 = rms(h, L.ffn_norm);
      auto g = linear(x2, L.w_gate), u = linear(x2, L.w_up);
      for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      auto d = linear(g, L.w_down);
      for (int64_t i = 0; i < DM; ++i) h[i] += d[i];
    }
    return linear(rms(h, w_.final_norm), w_.output);
  }

 private:
  std::vector<double> rms(const std::vector<double>& x, const std::vector<float>& wt) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    double r = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + c_.eps);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * r * wt[i];
    return y;
  }
  std::vector<double> linear(const std::vector<double>& x, const bench::Q4Linear& l) const {
    std::vector<double> y(static_cast<size_t>(l.n), 0.0);
    for (int64_t n = 0; n < l.n; ++n)
      for (int64_t k = 0; k < l.k; ++k) y[n] += x[k] * l.weight(n, k, c_.group);
    return y;
  }
  // Interleaved pairs (x[2i], x[2i+1]) of each head rotated by pos * theta^(-2i/head_dim).
  std::vector<double> rope(std::vector<double> x, int64_t heads, int64_t pos) const {
    const int64_t hd = c_.head_dim();
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < hd / 2; ++i) {
        double a = static_cast<double>(pos) * std::pow(c_.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(hd));
        double re = x[h * hd + 2 * i], im = x[h * hd + 2 * i + 1];
        x[h * hd + 2 * i] = re * std::cos(a) - im * std::sin(a);
        x[h * hd + 2 * i + 1] = re * std::sin(a) + im * std::cos(a);
      }
    return x;
  }
  const Q4LlamaConfig& c_;
  const Q4LlamaWeights& w_;
  std::vector<std::vector<double>> kc_, vc_;
};

std::vector<HostTensor> step_inputs(int64_t token, int64_t pos) {
  return {HostTensor::from<int64_t>(DType::Int64, {1, 1}, {token}), HostTensor::from<int64_t>(DType::Int64, {1}, {pos})};
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

const std::vector<int64_t> kTokens = {3, 200, 17, 17, 255, 0};

TEST(Q4Llama, TinyDecoderMatchesAnFp64ReferenceAtEveryStepOnBothLinearRoutes) {
  ETW_REQUIRE_GPU();
  const auto c = tiny();
  const auto w = bench::make_q4_llama_weights(c);
  const auto pte = bench::build_q4_llama_pte(c, w);
  for (std::string route : {"gemv", "gemm"}) {
    SCOPED_TRACE("linear_q4gsw route " + route);
    LoadOptions opts;
    opts.force_route = {{"linear_q4gsw", route}};
    auto model = Model::load_bytes(pte, opts);
    EXPECT_EQ(model->num_state_buffers(), static_cast<size_t>(2 * c.layers)) << "a K and a V cache per layer";
    Reference ref(c, w);
    for (size_t i = 0; i < kTokens.size(); ++i) {
      auto expect = ref.step(kTokens[i], static_cast<int64_t>(i));
      ASSERT_GT(max_abs(expect), 0.1) << "step " << i << ": reference logits are too small to test anything";
      auto out = model->run(step_inputs(kTokens[i], static_cast<int64_t>(i)));
      ASSERT_EQ(out.size(), 1u);
      EXPECT_TRUE(Close(out[0], ref_tensor({1, c.vocab}, expect), 1e-4, 1e-3)) << "step " << i;
    }
  }
}

// Steps after the first read what earlier steps left in the caches; reset_state empties them.
TEST(Q4Llama, ResetStateEmptiesTheKvCachesAndTheSequenceReplays) {
  ETW_REQUIRE_GPU();
  const auto c = tiny();
  const auto w = bench::make_q4_llama_weights(c);
  auto model = Model::load_bytes(bench::build_q4_llama_pte(c, w));
  Reference ref(c, w);
  std::vector<std::vector<double>> expect;
  for (int64_t i = 0; i < 3; ++i) {
    expect.push_back(ref.step(kTokens[i], i));
    model->run(step_inputs(kTokens[i], i));
  }
  model->reset_state();
  // Position 2 right after a reset: positions 0 and 1 of the caches hold zeros, not steps 0 and 1.
  auto got_alone = model->run(step_inputs(kTokens[2], 2))[0];
  EXPECT_FALSE(Close(got_alone, ref_tensor({1, c.vocab}, expect[2]), 1e-4, 1e-3))
      << "position 2 right after reset_state reproduced the filled-cache logits";
  model->reset_state();
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_TRUE(Close(model->run(step_inputs(kTokens[i], i))[0], ref_tensor({1, c.vocab}, expect[i]), 1e-4, 1e-3))
        << "replayed step " << i;
}

TEST(Q4Llama, ConfigsThatCannotFormTheDecoderAreRejectedNamingTheField) {
  auto bad = [](auto edit) {
    auto c = tiny();
    edit(c);
    return load_error([&] { bench::validate(c); });
  };
  EXPECT_TRUE(has(bad([](Q4LlamaConfig& c) { c.heads = 5; }), "does not split into 5 heads"));
  EXPECT_TRUE(has(bad([](Q4LlamaConfig& c) { c.kv_heads = 3; }), "multiple of kv_heads 3"));
  EXPECT_TRUE(has(bad([](Q4LlamaConfig& c) { c.group = 12; }), "group 12 must be a multiple of 8"));
  EXPECT_TRUE(has(bad([](Q4LlamaConfig& c) { c.ffn = 100; }), "multiples of group 32"));
  EXPECT_TRUE(has(bad([](Q4LlamaConfig& c) { c.context = 0; }), "context must be positive"));
  EXPECT_TRUE(has(bad([](Q4LlamaConfig& c) { c.heads = 64; }), "head_dim 1 must be even"));
}

TEST(Q4Llama, WeightsOfAnotherConfigAreRejectedBeforeAnythingIsBuilt) {
  auto c = tiny();
  auto w = bench::make_q4_llama_weights(c);
  auto more_layers = c;
  more_layers.layers = 3;
  EXPECT_TRUE(has(load_error([&] { bench::build_q4_llama_pte(more_layers, w); }), "weights have 2 layers, the config 3"));
  auto wide = c;
  wide.ffn = 256;
  EXPECT_TRUE(has(load_error([&] { bench::build_q4_llama_pte(wide, w); }), "w_gate of layer 0 is not a 256 x 64 weight"));
}

}  // namespace
