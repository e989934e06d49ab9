#include "models/decoder_model.h"

#include <string>

#include "etwebgpu/builder.h"
#include "etwebgpu/error.h"

namespace etwebgpu::models {
namespace {

using Id = GraphBuilder::Id;

struct Builder {
  const DecoderConfig& c;
  GraphBuilder gb;
  Id seq = 0, start = 0, one = 0;

  void check(const std::vector<float>& v, int64_t n, const char* what) {
    if (static_cast<int64_t>(v.size()) != n)
      throw Error(ErrorKind::InvalidArgument, std::string("decoder weight ") + what + " has " + std::to_string(v.size()) +
                                                  " values, the config needs " + std::to_string(n));
  }
  Id f32(std::vector<int64_t> dims) { return gb.tensor(DType::Float32, std::move(dims)); }
  Id cst(std::vector<int64_t> dims, const std::vector<float>& v, const char* what) {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    check(v, n, what);
    return gb.constant_f32(std::move(dims), v);
  }
  Id view(Id x, std::vector<Id> size, std::vector<int64_t> max_dims) {
    Id o = f32(std::move(max_dims));
    gb.op("aten.view_copy.default", {x, gb.value_list(std::move(size)), o});
    return o;
  }
  Id linear(Id x, const std::vector<float>& w, int64_t in, int64_t out, const char* what) {
    Id o = f32({1, c.smax, out});
    gb.op("aten.linear.default", {x, cst({out, in}, w, what), gb.null(), o});
    return o;
  }
  Id rms(Id x, const std::vector<float>& w, std::vector<int64_t> max_dims, const char* what) {
    Id o = f32(max_dims);
    gb.op("et_vk.rms_norm.default", {x, cst({max_dims.back()}, w, what), gb.dbl(c.eps), o});
    return o;
  }
  Id add(Id a, Id b) {
    Id o = f32({1, c.smax, c.dim});
    gb.op("aten.add.Tensor", {a, b, gb.int_(1), o});
    return o;
  }
};

}  // namespace

std::vector<uint8_t> build_decoder_pte(const DecoderConfig& c, const DecoderWeights& w) {
  if (static_cast<int64_t>(w.layers.size()) != c.layers)
    throw Error(ErrorKind::InvalidArgument, "decoder has " + std::to_string(w.layers.size()) + " layers of weights, config says " +
                                                std::to_string(c.layers));
  Builder b{c, {}};
  auto& gb = b.gb;
  const int64_t D = c.head_dim, HQ = c.heads, HKV = c.kv_heads, DM = c.dim;
  Id tokens = gb.input(DType::Int32, {1, c.smax}, /*dynamic=*/true);
  Id pos = gb.input(DType::Int32, {1});
  b.seq = gb.symint();
  b.start = gb.symint();
  gb.op("sym_size.int", {tokens, gb.int_(1), b.seq});
  gb.op("et_vk.select_as_symint.default", {pos, gb.int_(0), gb.int_(0), b.start});
  Id one = gb.int_(1), seq = b.seq, start = b.start;
  Id h = b.f32({1, c.smax, DM});
  gb.op("aten.embedding.default",
        {b.cst({c.vocab, DM}, w.emb, "emb"), tokens, gb.int_(-1), gb.boolean(false), gb.boolean(false), h});
  Id cos = b.cst({c.cache, D}, w.cos, "cos"), sin = b.cst({c.cache, D}, w.sin, "sin");
  for (const auto& L : w.layers) {
    Id x = b.rms(h, L.attn_norm, {1, c.smax, DM}, "attn_norm");
    Id q = b.view(b.linear(x, L.wq, DM, HQ * D, "wq"), {one, seq, gb.int_(HQ), gb.int_(D)}, {1, c.smax, HQ, D});
    Id k = b.view(b.linear(x, L.wk, DM, HKV * D, "wk"), {one, seq, gb.int_(HKV), gb.int_(D)}, {1, c.smax, HKV, D});
    Id v = b.view(b.linear(x, L.wv, DM, HKV * D, "wv"), {one, seq, gb.int_(HKV), gb.int_(D)}, {1, c.smax, HKV, D});
    q = b.rms(q, L.q_norm, {1, c.smax, HQ, D}, "q_norm");
    k = b.rms(k, L.k_norm, {1, c.smax, HKV, D}, "k_norm");
    Id qr = b.f32({1, c.smax, HQ, D}), kr = b.f32({1, c.smax, HKV, D});
    gb.op("et_vk.apply_rotary_emb_hf.default", {q, k, cos, sin, start, gb.value_list({qr, kr})});
    Id kc = b.f32({1, c.cache, HKV, D}), vc = b.f32({1, c.cache, HKV, D});
    Id att = b.f32({1, c.smax, HQ, D});
    gb.op("sdpa_with_kv_cache.default",
          {qr, kr, v, kc, vc, start, seq, gb.null(), gb.dbl(0.0), gb.boolean(true), gb.null(), att});
    Id a2 = b.view(att, {one, seq, gb.int_(HQ * D)}, {1, c.smax, HQ * D});
    h = b.add(h, b.linear(a2, L.wo, HQ * D, DM, "wo"));
    Id x2 = b.rms(h, L.mlp_norm, {1, c.smax, DM}, "mlp_norm");
    Id gate = b.linear(x2, L.wg, DM, c.ffn, "wg"), up = b.linear(x2, L.wu, DM, c.ffn, "wu");
    Id sg = b.f32({1, c.smax, c.ffn}), m = b.f32({1, c.smax, c.ffn});
    gb.op("aten.silu.default", {gate, sg});
    gb.op("aten.mul.Tensor", {sg, up, m});
    h = b.add(h, b.linear(m, L.wd, c.ffn, DM, "wd"));
  }
  Id logits = b.f32({1, c.smax, c.vocab});
  gb.op("aten.linear.default", {b.rms(h, w.final_norm, {1, c.smax, DM}, "final_norm"), b.cst({c.vocab, DM}, w.lm, "lm"),
                                gb.null(), logits});
  gb.output(logits);
  return gb.serialize();
}

}  // namespace etwebgpu::models
