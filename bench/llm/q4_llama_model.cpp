#include "llm/q4_llama_model.h"

#include <cmath>
#include <cstring>
#include <string>

#include "etwebgpu/builder.h"
#include "etwebgpu/error.h"

namespace etwebgpu::bench {
namespace {

using Id = GraphBuilder::Id;

[[noreturn]] void invalid(const std::string& m) { throw Error(ErrorKind::InvalidArgument, "q4 llama: " + m); }

// splitmix64: one 64-bit draw per 16 packed nibbles keeps the 1B shape's 0.75 GB of weights cheap.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
};

// Every tensor draws from its own stream, so a weight does not depend on the order of the others.
Rng stream(uint64_t seed, uint64_t tensor) { return Rng{seed * 0xD1B54A32D192ED03ull + tensor * 0x9E3779B97F4A7C15ull}; }

std::vector<uint8_t> random_bytes(Rng r, size_t n) {
  std::vector<uint8_t> b(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = r.next();
    std::memcpy(b.data() + i, &v, 8);
  }
  for (uint64_t v = r.next(); i < n; ++i, v >>= 8) b[i] = static_cast<uint8_t>(v);
  return b;
}

// Scales around `base` (x0.5 .. x1.5), so groups differ.
float scale_of(Rng& r, float base) { return base * (0.5f + r.uniform()); }

Q4Linear make_linear(uint64_t seed, uint64_t tensor, int64_t n, int64_t k, int64_t group) {
  Q4Linear l;
  l.n = n, l.k = k, l.n_pad = (n + 7) / 8 * 8;
  l.packed = random_bytes(stream(seed, tensor), static_cast<size_t>(n * (k / 2)));
  Rng r = stream(seed, tensor ^ 0x5CA1Eull);
  // q is uniform on [-8, 7] (RMS ~4.6): 1/(4 sqrt(K)) keeps an O(1) input's output O(1).
  const float base = 1.0f / (4.0f * std::sqrt(static_cast<float>(k)));
  l.scales.assign(static_cast<size_t>((k / group) * l.n_pad), 0.f);
  for (int64_t g = 0; g < k / group; ++g)
    for (int64_t c = 0; c < n; ++c) l.scales[g * l.n_pad + c] = scale_of(r, base);
  return l;
}

std::vector<float> norm_weight(uint64_t seed, uint64_t tensor, int64_t n) {
  Rng r = stream(seed, tensor);
  std::vector<float> w(static_cast<size_t>(n));
  for (auto& x : w) x = 0.9f + 0.2f * r.uniform();
  return w;
}

std::vector<uint8_t> f32_bytes(std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  std::vector<float>().swap(v);  // the 1B shape's scales are 0.2 GB: do not keep two copies
  return b;
}

void check_linear(const Q4Linear& l, int64_t n, int64_t k, int64_t group, const std::string& what) {
  if (l.n != n || l.k != k || l.n_pad != (n + 7) / 8 * 8 || static_cast<int64_t>(l.packed.size()) != n * (k / 2) ||
      static_cast<int64_t>(l.scales.size()) != (k / group) * l.n_pad)
    invalid(what + " is not a " + std::to_string(n) + " x " + std::to_string(k) + " weight of the config");
}

void check_vec(const std::vector<float>& v, int64_t n, const std::string& what) {
  if (static_cast<int64_t>(v.size()) != n)
    invalid(what + " has " + std::to_string(v.size()) + " values, the config needs " + std::to_string(n));
}

struct DecoderGraph {
  const Q4LlamaConfig& c;
  GraphBuilder gb;

  Id f32(std::vector<int64_t> dims) { return gb.tensor(DType::Float32, std::move(dims)); }
  Id view(Id x, std::vector<int64_t> dims) {
    Id o = f32(dims);
    gb.op("aten.view_copy.default", {x, gb.int_list(std::move(dims)), o});
    return o;
  }
  Id rms(Id x, std::vector<float>& w, std::vector<int64_t> dims) {
    const int64_t n = static_cast<int64_t>(w.size());  // f32_bytes empties w
    Id wt = gb.constant(DType::Float32, {n}, f32_bytes(w));
    Id o = f32(std::move(dims));
    gb.op("et_vk.rms_norm.default", {x, wt, gb.dbl(c.eps), o});
    return o;
  }
  // x [..., K] -> [..., N] (out keeps x's rank).
  Id linear(Id x, Q4Linear& l, std::vector<int64_t> out_dims) {
    Id w = gb.constant(DType::UInt8, {l.n, l.k / 2}, std::move(l.packed));
    Id s = gb.constant(DType::Float32, {l.k / c.group, l.n_pad}, f32_bytes(l.scales));
    Id o = f32(std::move(out_dims));
    gb.op("et_vk.linear_q4gsw.default", {x, w, s, gb.int_(c.group), gb.null(), o});
    return o;
  }
  Id add(Id a, Id b, std::vector<int64_t> dims) {
    Id o = f32(std::move(dims));
    gb.op("aten.add.Tensor", {a, b, gb.int_(1), o});
    return o;
  }
  Id mul(Id a, Id b, std::vector<int64_t> dims) {
    Id o = f32(std::move(dims));
    gb.op("aten.mul.Tensor", {a, b, o});
    return o;
  }
};

}  // namespace

void validate(const Q4LlamaConfig& c) {
  auto positive = [](int64_t v, const char* what) {
    if (v <= 0) invalid(std::string(what) + " must be positive, got " + std::to_string(v));
  };
  positive(c.vocab, "vocab");
  positive(c.dim, "dim");
  positive(c.layers, "layers");
  positive(c.heads, "heads");
  positive(c.kv_heads, "kv_heads");
  positive(c.ffn, "ffn");
  positive(c.context, "context");
  positive(c.group, "group");
  if (c.dim % c.heads) invalid("dim " + std::to_string(c.dim) + " does not split into " + std::to_string(c.heads) + " heads");
  if (c.head_dim() % 2) invalid("head_dim " + std::to_string(c.head_dim()) + " must be even (rotary pairs)");
  if (c.heads % c.kv_heads)
    invalid("heads " + std::to_string(c.heads) + " must be a multiple of kv_heads " + std::to_string(c.kv_heads));
  if (c.group % 8) invalid("group " + std::to_string(c.group) + " must be a multiple of 8 (packed rows of whole words)");
  if (c.dim % c.group || c.ffn % c.group)
    invalid("dim " + std::to_string(c.dim) + " and ffn " + std::to_string(c.ffn) + " must be multiples of group " +
            std::to_string(c.group));
  if (!(c.eps > 0)) invalid("eps must be positive");
}

int Q4Linear::q(int64_t r, int64_t c) const {
  uint8_t b = packed[static_cast<size_t>(r * (k / 2) + c / 2)];
  return ((c % 2) ? (b >> 4) : (b & 15)) - 8;
}

int Q4Embedding::q(int64_t v, int64_t c) const {
  uint8_t b = packed[static_cast<size_t>(v * (dim / 2) + c / 2)];
  return ((c % 2) ? (b & 15) : (b >> 4)) - 8;
}

Q4LlamaWeights make_q4_llama_weights(const Q4LlamaConfig& c) {
  validate(c);
  const uint64_t s = c.seed;
  const int64_t hd = c.head_dim(), q_out = c.heads * hd, kv_out = c.kv_heads * hd;
  Q4LlamaWeights w;
  w.embedding.vocab = c.vocab, w.embedding.dim = c.dim;
  w.embedding.packed = random_bytes(stream(s, 1), static_cast<size_t>(c.vocab * (c.dim / 2)));
  Rng r = stream(s, 2);
  w.embedding.scales.resize(static_cast<size_t>(c.vocab * (c.dim / c.group)));
  for (auto& x : w.embedding.scales) x = scale_of(r, 0.25f);
  for (int64_t l = 0; l < c.layers; ++l) {
    const uint64_t t = 100 + 16 * static_cast<uint64_t>(l);
    Q4LlamaLayer L;
    L.attn_norm = norm_weight(s, t, c.dim);
    L.ffn_norm = norm_weight(s, t + 1, c.dim);
    L.wq = make_linear(s, t + 2, q_out, c.dim, c.group);
    L.wk = make_linear(s, t + 3, kv_out, c.dim, c.group);
    L.wv = make_linear(s, t + 4, kv_out, c.dim, c.group);
    L.wo = make_linear(s, t + 5, c.dim, q_out, c.group);
    L.w_gate = make_linear(s, t + 6, c.ffn, c.dim, c.group);
    L.w_up = make_linear(s, t + 7, c.ffn, c.dim, c.group);
    L.w_down = make_linear(s, t + 8, c.dim, c.ffn, c.group);
    w.layers.push_back(std::move(L));
  }
  w.final_norm = norm_weight(s, 3, c.dim);
  w.output = make_linear(s, 4, c.vocab, c.dim, c.group);
  const int64_t half = hd / 2;
  w.freqs_cos.resize(static_cast<size_t>(c.context * half));
  w.freqs_sin.resize(w.freqs_cos.size());
  for (int64_t p = 0; p < c.context; ++p)
    for (int64_t i = 0; i < half; ++i) {
      double a = static_cast<double>(p) * std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(hd));
      w.freqs_cos[p * half + i] = static_cast<float>(std::cos(a));
      w.freqs_sin[p * half + i] = static_cast<float>(std::sin(a));
    }
  return w;
}

std::vector<uint8_t> build_q4_llama_pte(const Q4LlamaConfig& c, Q4LlamaWeights w) {
  validate(c);
  const int64_t hd = c.head_dim(), HQ = c.heads, HKV = c.kv_heads, DM = c.dim, C = c.context;
  if (static_cast<int64_t>(w.layers.size()) != c.layers)
    invalid("weights have " + std::to_string(w.layers.size()) + " layers, the config " + std::to_string(c.layers));
  if (w.embedding.vocab != c.vocab || w.embedding.dim != DM ||
      static_cast<int64_t>(w.embedding.packed.size()) != c.vocab * (DM / 2) ||
      static_cast<int64_t>(w.embedding.scales.size()) != c.vocab * (DM / c.group))
    invalid("the embedding is not a " + std::to_string(c.vocab) + " x " + std::to_string(DM) + " table of the config");
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const auto& L = w.layers[l];
    std::string at = " of layer " + std::to_string(l);
    check_vec(L.attn_norm, DM, "attn_norm" + at);
    check_vec(L.ffn_norm, DM, "ffn_norm" + at);
    check_linear(L.wq, HQ * hd, DM, c.group, "wq" + at);
    check_linear(L.wk, HKV * hd, DM, c.group, "wk" + at);
    check_linear(L.wv, HKV * hd, DM, c.group, "wv" + at);
    check_linear(L.wo, DM, HQ * hd, c.group, "wo" + at);
    check_linear(L.w_gate, c.ffn, DM, c.group, "w_gate" + at);
    check_linear(L.w_up, c.ffn, DM, c.group, "w_up" + at);
    check_linear(L.w_down, DM, c.ffn, c.group, "w_down" + at);
  }
  check_vec(w.final_norm, DM, "final_norm");
  check_linear(w.output, c.vocab, DM, c.group, "output");
  check_vec(w.freqs_cos, C * (hd / 2), "freqs_cos");
  check_vec(w.freqs_sin, C * (hd / 2), "freqs_sin");

  ProgramBuilder p;
  const Id tokens = p.tensor(DType::Int64, {1, 1}), pos = p.tensor(DType::Int64, {1});
  std::vector<Id> delegate_ins{tokens, pos};
  const std::vector<int64_t> cache_dims{1, C, HKV, hd};
  const std::vector<uint8_t> zeros(static_cast<size_t>(C * HKV * hd * 4), 0);
  for (int64_t l = 0; l < 2 * c.layers; ++l) delegate_ins.push_back(p.mutable_tensor(DType::Float32, cache_dims, zeros));
  const Id logits = p.tensor(DType::Float32, {1, c.vocab});
  p.input(tokens);
  p.input(pos);
  {
    DecoderGraph g{c, {}};
    auto& gb = g.gb;
    // ExecuTorch's host tensors are int64; the Vulkan graph reads them as int32.
    Id tok = gb.input(DType::Int32, {1, 1}, false, -1, DType::Int64, true);
    Id ip = gb.input(DType::Int32, {1}, false, -1, DType::Int64, true);
    std::vector<Id> caches;
    for (int64_t l = 0; l < 2 * c.layers; ++l) caches.push_back(gb.input(DType::Float32, cache_dims));
    Id start = gb.symint();
    gb.op("et_vk.select_as_symint.default", {ip, gb.int_(0), gb.int_(0), start});
    Id seq = gb.int_(1);

    Id h = g.f32({1, 1, DM});
    Id emb_w = gb.constant(DType::UInt8, {c.vocab, DM / 2}, std::move(w.embedding.packed));
    Id emb_s = gb.constant(DType::Float32, {c.vocab, DM / c.group}, f32_bytes(w.embedding.scales));
    gb.op("et_vk.embedding_q4gsw.default", {emb_w, emb_s, gb.int_(c.group), tok, gb.boolean(false), h});
    // The rotary rows of this position, once for all layers (as the export's Rope module does).
    Id cos_tab = gb.constant(DType::Float32, {C, hd / 2}, f32_bytes(w.freqs_cos));
    Id sin_tab = gb.constant(DType::Float32, {C, hd / 2}, f32_bytes(w.freqs_sin));
    Id fcos = g.f32({1, hd / 2}), fsin = g.f32({1, hd / 2});
    gb.op("aten.index.Tensor", {cos_tab, gb.value_list({ip}), fcos});
    gb.op("aten.index.Tensor", {sin_tab, gb.value_list({ip}), fsin});

    for (int64_t l = 0; l < c.layers; ++l) {
      auto& L = w.layers[static_cast<size_t>(l)];
      Id x = g.rms(h, L.attn_norm, {1, 1, DM});
      Id q = g.view(g.linear(x, L.wq, {1, 1, HQ * hd}), {1, 1, HQ, hd});
      Id k = g.view(g.linear(x, L.wk, {1, 1, HKV * hd}), {1, 1, HKV, hd});
      Id v = g.view(g.linear(x, L.wv, {1, 1, HKV * hd}), {1, 1, HKV, hd});
      Id qr = g.f32({1, 1, HQ, hd}), kr = g.f32({1, 1, HKV, hd});
      gb.op("et_vk.apply_rotary_emb.default", {q, k, fcos, fsin, gb.value_list({qr, kr})});
      Id att = g.f32({1, 1, HQ, hd});
      gb.op("sdpa_with_kv_cache.default", {qr, kr, v, caches[2 * l], caches[2 * l + 1], start, seq, gb.null(),
                                           gb.dbl(0.0), gb.boolean(true), gb.null(), att});
      h = g.add(h, g.linear(g.view(att, {1, 1, HQ * hd}), L.wo, {1, 1, DM}), {1, 1, DM});
      Id x2 = g.rms(h, L.ffn_norm, {1, 1, DM});
      Id gate = g.linear(x2, L.w_gate, {1, 1, c.ffn}), up = g.linear(x2, L.w_up, {1, 1, c.ffn});
      Id act = g.f32({1, 1, c.ffn});
      gb.op("aten.silu.default", {gate, act});
      Id m = g.mul(act, up, {1, 1, c.ffn});
      h = g.add(h, g.linear(m, L.w_down, {1, 1, DM}), {1, 1, DM});
    }
    Id out = g.linear(g.view(g.rms(h, w.final_norm, {1, 1, DM}), {1, DM}), w.output, {1, c.vocab});
    gb.output(out);
    p.delegate(gb, delegate_ins, {logits});
  }  // the GraphBuilder's copy of the weights goes here, before serialize makes the file's
  p.output(logits);
  return p.serialize();
}

}  // namespace etwebgpu::bench
