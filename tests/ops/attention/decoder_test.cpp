// A whole Llama/Qwen3-style decoder built with GraphBuilder: 2 layers, GQA, Qwen3 q/k RMSNorm,
// HF RoPE, SwiGLU MLP and KV caches. One Model serves a 7-token prefill then 5 decode steps; the
// position (select_as_symint of an int32 input) and sequence length (sym_size.int) are runtime
// SymInts. Logits are checked against an fp64 reference at every step.
#include <cmath>

#include "graph/op_registry.h"
#include "models/decoder_model.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr int64_t V = 32, DM = 32, HQ = 4, HKV = 2, D = 8, F = 48, CMAX = 16, SMAX = 8, LAYERS = 2;
constexpr double kEps = 1e-5;

using Vec = std::vector<double>;

std::vector<float> rnd(int64_t n, uint64_t seed, float lo = -0.3f, float hi = 0.3f) {
  auto t = random_f32({n}, seed, lo, hi);
  return std::vector<float>(t.as<float>(), t.as<float>() + n);
}

struct Layer {
  std::vector<float> attn_norm, q_norm, k_norm, wq, wk, wv, wo, mlp_norm, wg, wu, wd;
};
struct Weights {
  std::vector<float> emb, final_norm, lm, cos, sin;
  Layer layers[LAYERS];
  Weights() {
    uint64_t s = 1;
    emb = rnd(V * DM, s++, -1.f, 1.f);
    final_norm = rnd(DM, s++, 0.8f, 1.2f);
    lm = rnd(V * DM, s++);
    for (auto& l : layers) {
      l.attn_norm = rnd(DM, s++, 0.8f, 1.2f);
      l.q_norm = rnd(D, s++, 0.8f, 1.2f);
      l.k_norm = rnd(D, s++, 0.8f, 1.2f);
      l.wq = rnd(HQ * D * DM, s++);
      l.wk = rnd(HKV * D * DM, s++);
      l.wv = rnd(HKV * D * DM, s++);
      l.wo = rnd(DM * HQ * D, s++);
      l.mlp_norm = rnd(DM, s++, 0.8f, 1.2f);
      l.wg = rnd(F * DM, s++);
      l.wu = rnd(F * DM, s++);
      l.wd = rnd(DM * F, s++);
    }
    // HF tables: cos/sin of pos * theta^(-2i/D), duplicated over both halves.
    for (int64_t p = 0; p < CMAX; ++p)
      for (int64_t d = 0; d < D; ++d) {
        double inv = std::pow(10000.0, -2.0 * static_cast<double>(d % (D / 2)) / D);
        cos.push_back(static_cast<float>(std::cos(p * inv)));
        sin.push_back(static_cast<float>(std::sin(p * inv)));
      }
  }
};

// ---- fp64 reference (PyTorch semantics), row-major [S, ...] per step
Vec rms(const Vec& x, int64_t n, const std::vector<float>& w) {
  Vec y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += x[r * n + i] * x[r * n + i];
    double inv = 1.0 / std::sqrt(ss / n + kEps);
    for (int64_t i = 0; i < n; ++i) y[r * n + i] = x[r * n + i] * inv * w[i];
  }
  return y;
}
Vec linear(const Vec& x, int64_t in, const std::vector<float>& w, int64_t out) {
  int64_t rows = static_cast<int64_t>(x.size()) / in;
  Vec y(rows * out, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double a = 0;
      for (int64_t i = 0; i < in; ++i) a += x[r * in + i] * w[o * in + i];
      y[r * out + o] = a;
    }
  return y;
}
void rope(Vec& x, int64_t S, int64_t H, int64_t start, const Weights& w) {
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < H; ++h) {
      double* p = &x[(s * H + h) * D];
      Vec orig(p, p + D);
      for (int64_t d = 0; d < D; ++d) {
        double rot = d < D / 2 ? -orig[d + D / 2] : orig[d - D / 2];
        p[d] = orig[d] * w.cos[(start + s) * D + d] + rot * w.sin[(start + s) * D + d];
      }
    }
}

struct Reference {
  const Weights& w;
  Vec kc[LAYERS], vc[LAYERS];  // [pos, HKV, D]
  explicit Reference(const Weights& w_) : w(w_) {}
  Vec step(const std::vector<int32_t>& tokens, int64_t start) {
    int64_t S = static_cast<int64_t>(tokens.size());
    Vec h;
    for (int32_t t : tokens) h.insert(h.end(), w.emb.begin() + t * DM, w.emb.begin() + (t + 1) * DM);
    for (int l = 0; l < LAYERS; ++l) {
      const Layer& L = w.layers[l];
      Vec x = rms(h, DM, L.attn_norm);
      Vec q = rms(linear(x, DM, L.wq, HQ * D), D, L.q_norm), k = rms(linear(x, DM, L.wk, HKV * D), D, L.k_norm);
      Vec v = linear(x, DM, L.wv, HKV * D);
      rope(q, S, HQ, start, w);
      rope(k, S, HKV, start, w);
      kc[l].resize(start * HKV * D);
      vc[l].resize(start * HKV * D);
      kc[l].insert(kc[l].end(), k.begin(), k.end());
      vc[l].insert(vc[l].end(), v.begin(), v.end());
      Vec att(S * HQ * D, 0.0);
      for (int64_t s = 0; s < S; ++s)
        for (int64_t hh = 0; hh < HQ; ++hh) {
          int64_t hk = hh / (HQ / HKV), n = start + s + 1;
          Vec sc(n);
          double m = -INFINITY, sum = 0;
          for (int64_t c = 0; c < n; ++c) {
            double a = 0;
            for (int64_t d = 0; d < D; ++d) a += q[(s * HQ + hh) * D + d] * kc[l][(c * HKV + hk) * D + d];
            sc[c] = a / std::sqrt(static_cast<double>(D));
            m = std::max(m, sc[c]);
          }
          for (auto& e : sc) sum += (e = std::exp(e - m));
          for (int64_t c = 0; c < n; ++c)
            for (int64_t d = 0; d < D; ++d) att[(s * HQ + hh) * D + d] += sc[c] / sum * vc[l][(c * HKV + hk) * D + d];
        }
      Vec o = linear(att, HQ * D, L.wo, DM);
      for (size_t i = 0; i < h.size(); ++i) h[i] += o[i];
      Vec x2 = rms(h, DM, L.mlp_norm);
      Vec g = linear(x2, DM, L.wg, F), u = linear(x2, DM, L.wu, F);
      for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      Vec dn = linear(g, F, L.wd, DM);
      for (size_t i = 0; i < h.size(); ++i) h[i] += dn[i];
    }
    return linear(rms(h, DM, w.final_norm), DM, w.lm, V);
  }
};

// ---- the graph (src/models/decoder_model.cpp), fed the same weights
std::vector<uint8_t> decoder_pte(const Weights& w) {
  models::DecoderConfig c;
  c.vocab = V, c.dim = DM, c.heads = HQ, c.kv_heads = HKV, c.head_dim = D, c.ffn = F, c.cache = CMAX, c.smax = SMAX;
  c.layers = LAYERS, c.eps = kEps;
  models::DecoderWeights dw{w.emb, w.final_norm, w.lm, w.cos, w.sin, {}};
  for (const Layer& L : w.layers)
    dw.layers.push_back({L.attn_norm, L.q_norm, L.k_norm, L.wq, L.wk, L.wv, L.wo, L.mlp_norm, L.wg, L.wu, L.wd});
  return models::build_decoder_pte(c, dw);
}

TEST(OpDecoder, PrefillThenDecodeStepsMatchFp64ReferenceWithOneModel) {
  ETW_REQUIRE_GPU();
  std::string missing;
  for (const char* op : {"aten.embedding.default", "et_vk.rms_norm.default", "aten.linear.default", "aten.view_copy.default",
                         "aten.silu.default", "aten.mul.Tensor", "aten.add.Tensor"})
    if (!graph::OpRegistry::global().has(op)) missing += std::string(missing.empty() ? "" : ", ") + op;
  if (!missing.empty()) GTEST_SKIP() << "ops from other families are not in this build: " << missing;

  Weights w;
  auto model = Model::load_bytes(decoder_pte(w));
  Reference ref(w);
  std::vector<int32_t> prompt{3, 17, 5, 29, 0, 11, 8};
  std::vector<std::vector<int32_t>> steps{prompt, {21}, {4}, {30}, {9}, {14}};
  int64_t pos = 0;
  for (const auto& toks : steps) {
    int64_t S = static_cast<int64_t>(toks.size());
    std::vector<HostTensor> in{HostTensor::from<int32_t>(DType::Int32, {1, S}, toks),
                               HostTensor::from<int32_t>(DType::Int32, {1}, {static_cast<int32_t>(pos)})};
    auto out = model->run(in);
    Vec expect = ref.step(toks, pos);
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, S, V}));
    EXPECT_TRUE(Close(out[0], ref_tensor({1, S, V}, expect), 1e-4, 1e-3)) << "step at position " << pos;
    pos += S;
  }
}

}  // namespace
