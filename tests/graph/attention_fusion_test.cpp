// Attention fusion at load (graph/attention_fusion.h): the decomposed attention of ExecuTorch's
// Llama export becomes one etwebgpu.attention call with the same results, on a built graph and on
// the public KV-cache fixture (all its steps); a pattern that does not match exactly is left alone.
// The eager attention of ViT and Whisper exports (q, k, v permuted and sliced out of the
// projections, the output permuted back) fuses with its layout calls on every kernel route.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "etwebgpu/npy.h"
#include "reference/attention/attention_ref.h"
#include "reference/matmul/matmul_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

size_t count(const Profile& p, const std::string& op) {
  return std::count_if(p.dispatches.begin(), p.dispatches.end(), [&](const auto& d) { return d.op == op; });
}

enum class Variant { Llama, SoftmaxEscapes, MaskScaledByTwo };

constexpr int64_t kH = 4, kHkv = 2, kSq = 3, kC = 10, kD = 8;

// The Llama export's per-layer attention (GQA 4/2, q and k^T each scaled by 0.5, additive mask,
// safe softmax) over q [1, 4, 3, 8] and caches [1, 2, 10, 8]; mask [3, 10] hides query row 1
// entirely and keys >= 7 of the others.
struct Built {
  OpGraph g;
  HostTensor q = random_f32({1, kH, kSq, kD}, 1), kc = random_f32({1, kHkv, kC, kD}, 2),
             vc = random_f32({1, kHkv, kC, kD}, 3), mask{DType::Float32, {kSq, kC}};
  explicit Built(Variant var) {
    const float inf = std::numeric_limits<float>::infinity();
    for (int64_t r = 0; r < kSq; ++r)
      for (int64_t c = 0; c < kC; ++c) mask.as<float>()[r * kC + c] = (r == 1 || c >= 7) ? -inf : 0.f;
    auto& gb = g.gb;
    auto t = [&](std::vector<int64_t> d, DType dt = DType::Float32) { return g.tensor(dt, std::move(d)); };
    Id q_ = g.input(q), kc_ = g.input(kc), vc_ = g.input(vc), m_ = g.input(mask);
    Id k1 = t({1, kHkv, 1, kC, kD}), k2 = t({1, kHkv, 2, kC, kD}), k3 = t({1, kH, kC, kD}), kt = t({1, kH, kD, kC}),
       kts = t({1, kH, kD, kC}), kt3 = t({kH, kD, kC});
    gb.op("aten.unsqueeze_copy.default", {kc_, gb.int_(2), k1});
    gb.op("aten.expand_copy.default", {k1, gb.int_list({1, kHkv, 2, kC, kD}), gb.boolean(false), k2});
    gb.op("aten.view_copy.default", {k2, gb.int_list({1, kH, kC, kD}), k3});
    gb.op("aten.permute_copy.default", {k3, gb.int_list({0, 1, 3, 2}), kt});
    gb.op("aten.mul.Scalar", {kt, gb.dbl(0.5), kts});
    gb.op("aten.squeeze_copy.dims", {kts, gb.int_list({0}), kt3});
    Id qs = t({1, kH, kSq, kD}), q3 = t({kH, kSq, kD});
    gb.op("aten.mul.Scalar", {q_, gb.dbl(0.5), qs});
    gb.op("aten.squeeze_copy.dims", {qs, gb.int_list({0}), q3});
    Id s3 = t({kH, kSq, kC}), s4 = t({1, kH, kSq, kC}), s = t({1, kH, kSq, kC});
    gb.op("aten.bmm.default", {q3, kt3, s3});
    gb.op("aten.view_copy.default", {s3, gb.int_list({1, kH, kSq, kC}), s4});
    gb.op("aten.add.Tensor", {s4, m_, gb.int_(var == Variant::MaskScaledByTwo ? 2 : 1), s});
    Id p = var == Variant::SoftmaxEscapes ? g.output(DType::Float32, {1, kH, kSq, kC}) : t({1, kH, kSq, kC});
    gb.op("aten._softmax.default", {s, gb.int_(-1), gb.boolean(false), p});
    Id e = t({1, kH, kSq, kC}, DType::Bool), ne = t({1, kH, kSq, kC}, DType::Bool), an = t({1, kH, kSq, 1}, DType::Bool),
       z = t({1, kH, kSq, 1}, DType::Bool);
    gb.op("aten.eq.Scalar", {s, gb.dbl(-inf), e});
    gb.op("aten.logical_not.default", {e, ne});
    gb.op("aten.any.dim", {ne, gb.int_(-1), gb.boolean(true), an});
    gb.op("aten.logical_not.default", {an, z});
    Id f = t({1, kH, kSq, kC}), f2 = t({1, kH, kSq, kC}), p2 = t({1, kH, kSq, kC}), w = t({1, kH, kSq, kC}),
       w3 = t({kH, kSq, kC});
    gb.op("aten.full_like.default", {p, gb.int_(0), gb.null(), gb.null(), gb.null(), gb.boolean(false), gb.null(), f});
    gb.op("aten.clone.default", {f, gb.null(), f2});
    gb.op("aten.clone.default", {p, gb.null(), p2});
    gb.op("aten.where.self", {z, f2, p2, w});
    gb.op("aten.squeeze_copy.dims", {w, gb.int_list({0}), w3});
    Id v1 = t({1, kHkv, 1, kC, kD}), v2 = t({1, kHkv, 2, kC, kD}), v3 = t({kH, kC, kD}), o3 = t({kH, kSq, kD});
    gb.op("aten.unsqueeze_copy.default", {vc_, gb.int_(2), v1});
    gb.op("aten.expand_copy.default", {v1, gb.int_list({1, kHkv, 2, kC, kD}), gb.boolean(false), v2});
    gb.op("aten.view_copy.default", {v2, gb.int_list({kH, kC, kD}), v3});
    gb.op("aten.bmm.default", {w3, v3, o3});
    Id o = g.output(DType::Float32, {1, kH, kSq, kD});
    gb.op("aten.view_copy.default", {o3, gb.int_list({1, kH, kSq, kD}), o});
  }
  // fp64: softmax(q k^T / 4 + mask) v with k/v heads repeated, rows with no visible key 0.
  HostTensor reference() const {
    auto rep = [](const HostTensor& x) {
      HostTensor r(DType::Float32, {1, kH, kC, kD});
      for (int64_t h = 0; h < kH; ++h)
        std::copy(x.as<float>() + (h / 2) * kC * kD, x.as<float>() + (h / 2 + 1) * kC * kD, r.as<float>() + h * kC * kD);
      return r;
    };
    HostTensor o = ref::sdpa(q, rep(kc), rep(vc), &mask, 0.25);
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t d = 0; d < kD; ++d) o.as<double>()[(h * kSq + 1) * kD + d] = 0.0;
    return o;
  }
};

struct Ran {
  std::vector<HostTensor> out;
  Profile prof;
};

Ran run(Built& b, bool fuse) {
  LoadOptions o;
  o.fuse = fuse;
  Ran r;
  r.out = b.g.run(o);
  b.g.model()->run(b.g.inputs, &r.prof);
  return r;
}

TEST(AttentionFusion, LlamaDecomposedAttentionBecomesOneKernelWithTheSameResults) {
  ETW_REQUIRE_GPU();
  Built fused_graph(Variant::Llama), plain_graph(Variant::Llama);
  Ran fused = run(fused_graph, true), plain = run(plain_graph, false);
  EXPECT_EQ(count(fused.prof, "etwebgpu.attention"), 1u);
  for (const char* op : {"aten.bmm.default", "aten._softmax.default", "aten.expand_copy.default", "aten.where.self"}) {
    EXPECT_EQ(count(fused.prof, op), 0u) << op;
    EXPECT_GT(count(plain.prof, op), 0u) << op;
  }
  EXPECT_EQ(count(plain.prof, "etwebgpu.attention"), 0u);
  EXPECT_LT(fused.prof.dispatches.size() + 10, plain.prof.dispatches.size());
  auto ref = fused_graph.reference();
  EXPECT_TRUE(Close(fused.out[0], ref, 1e-5, 1e-4));
  EXPECT_TRUE(Close(plain.out[0], ref, 1e-5, 1e-4));
}

TEST(AttentionFusion, PatternWithAnEscapingIntermediateOrAScaledMaskIsLeftAlone) {
  ETW_REQUIRE_GPU();
  {
    // The softmax output is also a graph output: fusing would lose it.
    Built b(Variant::SoftmaxEscapes);
    Ran r = run(b, true);
    EXPECT_EQ(count(r.prof, "etwebgpu.attention"), 0u);
    EXPECT_EQ(count(r.prof, "aten.bmm.default"), 2u);
    ASSERT_EQ(r.out.size(), 2u);
    EXPECT_TRUE(Close(r.out[1], b.reference(), 1e-5, 1e-4));
  }
  {
    // scores + 2 * mask is not the attention the fused op computes.
    Built b(Variant::MaskScaledByTwo);
    Ran r = run(b, true);
    EXPECT_EQ(count(r.prof, "etwebgpu.attention"), 0u);
    EXPECT_EQ(count(r.prof, "aten._softmax.default"), 1u);
  }
}

std::string fixture() { return conformance_dir() + "/llama_kv_cache_decode_steps"; }

// The public KV-cache decoder: both layers' attention fused (147 dispatches per step before the
// rewrite, 115 after), and every step still matches its golden.
TEST(AttentionFusion, LlamaFixtureFusesBothLayersAndPassesAllSteps) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_FIXTURE(std::filesystem::exists(fixture() + "/model.pte"), fixture());
  auto m = Model::load(fixture() + "/model.pte");
  for (int step = 0; step <= 5; ++step) {
    std::string pre = fixture() + "/" + (step ? "step" + std::to_string(step) + "_" : std::string());
    std::vector<HostTensor> in{read_npy(pre + "input_0.npy"), read_npy(pre + "input_1.npy")};
    Profile p;
    auto out = m->run(in, &p);
    EXPECT_TRUE(Close(out[0], read_npy(pre + "expected_0.npy"), 1e-5, 1e-4)) << "step " << step;
    EXPECT_EQ(count(p, "etwebgpu.attention"), 2u) << "step " << step;
    EXPECT_EQ(count(p, "aten.bmm.default"), 0u);
    EXPECT_EQ(count(p, "aten._softmax.default"), 0u);
    EXPECT_LE(p.dispatches.size(), 115u);
  }
}

// --- Eager attention as ViT and Whisper export it, over S tokens of H heads of D.
constexpr int64_t kEH = 3, kED = 8;

enum class Eager { Whisper, Vit, VitQEscapes };

// Whisper: q, k, v [S, H * D] -> view [1, S, H, D] -> permute (0, 2, 1, 3), k also (0, 1, 3, 2);
// scores scaled by mul.Tensor with a 0-dim constant after the bmm. ViT: one qkv [S, 3 * H * D]
// -> view [1, S, 3, H, D] -> permute (2, 0, 3, 1, 4) -> slices, q scaled before the bmm, v
// cloned. Both: out -> view [1, H, S, D] -> permute (0, 2, 1, 3) -> view [S, H * D] -> + 1 (a
// consumer that is not a view). VitQEscapes: the permuted qkv is also a graph output.
struct EagerBuilt {
  OpGraph g;
  int64_t S;
  HostTensor qkv;
  double scale = 0.35;
  std::vector<HostTensor> residuals;  // added after the + 1: [S, H * D] graph inputs
  EagerBuilt(Eager kind, int64_t tokens, int n_residuals = 0) : S(tokens), qkv(random_f32({tokens, 3 * kEH * kED}, 7)) {
    auto& gb = g.gb;
    const int64_t E = kEH * kED;
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    HostTensor sc(DType::Float32, {});
    sc.as<float>()[0] = static_cast<float>(scale);
    Id c = g.constant(sc);
    Id q3, kt3, v3;
    bool vit = kind != Eager::Whisper;
    if (!vit) {
      Id x[3];
      for (int i = 0; i < 3; ++i) {
        HostTensor part(DType::Float32, {S, E});
        for (int64_t r = 0; r < S; ++r)
          std::copy(qkv.as<float>() + r * 3 * E + i * E, qkv.as<float>() + r * 3 * E + (i + 1) * E,
                    part.as<float>() + r * E);
        Id in = g.input(part), v4 = t({1, S, kEH, kED});
        x[i] = t({1, kEH, S, kED});
        gb.op("aten.view_copy.default", {in, gb.int_list({1, S, kEH, kED}), v4});
        gb.op("aten.permute_copy.default", {v4, gb.int_list({0, 2, 1, 3}), x[i]});
      }
      Id kt = t({1, kEH, kED, S});
      gb.op("aten.permute_copy.default", {x[1], gb.int_list({0, 1, 3, 2}), kt});
      q3 = t({kEH, S, kED}), kt3 = t({kEH, kED, S}), v3 = t({kEH, S, kED});
      gb.op("aten.squeeze_copy.dims", {x[0], gb.int_list({0}), q3});
      gb.op("aten.squeeze_copy.dims", {kt, gb.int_list({0}), kt3});
      gb.op("aten.squeeze_copy.dims", {x[2], gb.int_list({0}), v3});
    } else {
      Id in = g.input(qkv), v5 = t({1, S, 3, kEH, kED});
      Id p5 = kind == Eager::VitQEscapes ? g.output(DType::Float32, {3, 1, kEH, S, kED}) : t({3, 1, kEH, S, kED});
      gb.op("aten.view_copy.default", {in, gb.int_list({1, S, 3, kEH, kED}), v5});
      gb.op("aten.permute_copy.default", {v5, gb.int_list({2, 0, 3, 1, 4}), p5});
      Id part[3];
      for (int i = 0; i < 3; ++i) {
        Id sl = t({1, 1, kEH, S, kED});
        part[i] = t({1, kEH, S, kED});
        gb.op("aten.slice_copy.Tensor", {p5, gb.int_(0), gb.int_(i), gb.int_(i + 1), gb.int_(1), sl});
        gb.op("aten.squeeze_copy.dims", {sl, gb.int_list({0}), part[i]});
      }
      Id qs = t({1, kEH, S, kED}), kt = t({1, kEH, kED, S}), vs = t({kEH, S, kED});
      gb.op("aten.mul.Tensor", {part[0], c, qs});
      gb.op("aten.permute_copy.default", {part[1], gb.int_list({0, 1, 3, 2}), kt});
      q3 = t({kEH, S, kED}), kt3 = t({kEH, kED, S}), v3 = t({kEH, S, kED});
      gb.op("aten.squeeze_copy.dims", {qs, gb.int_list({0}), q3});
      gb.op("aten.squeeze_copy.dims", {kt, gb.int_list({0}), kt3});
      gb.op("aten.squeeze_copy.dims", {part[2], gb.int_list({0}), vs});
      gb.op("aten.clone.default", {vs, gb.null(), v3});
    }
    Id s3 = t({kEH, S, S}), s4 = t({1, kEH, S, S}), s = t({1, kEH, S, S}), p = t({1, kEH, S, S}), p3 = t({kEH, S, S});
    gb.op("aten.bmm.default", {q3, kt3, s3});
    gb.op("aten.view_copy.default", {s3, gb.int_list({1, kEH, S, S}), s4});
    if (vit) gb.op("aten.clone.default", {s4, gb.null(), s});
    else gb.op("aten.mul.Tensor", {s4, c, s});
    gb.op("aten._softmax.default", {s, gb.int_(-1), gb.boolean(false), p});
    gb.op("aten.squeeze_copy.dims", {p, gb.int_list({0}), p3});
    Id o3 = t({kEH, S, kED}), o4 = t({1, kEH, S, kED}), ot = t({1, S, kEH, kED}), o2 = t({S, E});
    gb.op("aten.bmm.default", {p3, v3, o3});
    gb.op("aten.view_copy.default", {o3, gb.int_list({1, kEH, S, kED}), o4});
    gb.op("aten.permute_copy.default", {o4, gb.int_list({0, 2, 1, 3}), ot});
    gb.op("aten.view_copy.default", {ot, gb.int_list({S, E}), o2});
    Id y = n_residuals ? t({S, E}) : g.output(DType::Float32, {S, E});
    gb.op("aten.add.Scalar", {o2, gb.int_(1), gb.int_(1), y});
    for (int k = 0; k < n_residuals; ++k) {
      residuals.push_back(random_f32({S, E}, 30 + k));
      Id sum = k + 1 == n_residuals ? g.output(DType::Float32, {S, E}) : t({S, E});
      gb.op("aten.add.Tensor", {y, g.input(residuals.back()), gb.int_(1), sum});
      y = sum;
    }
  }
  // fp64: softmax(q k^T * scale) v per head, as [S, H * D] plus 1.
  HostTensor reference() const {
    const int64_t E = kEH * kED;
    auto head = [&](int i) { return ref::split_heads(qkv, 3 * E, kEH, kED, i * E); };
    HostTensor y = ref::merge_heads(ref::sdpa(head(0), head(1), head(2), nullptr, scale));
    for (int64_t i = 0; i < y.numel(); ++i) {
      y.as<double>()[i] += 1;
      for (const HostTensor& r : residuals) y.as<double>()[i] += r.as<float>()[i];
    }
    return y;
  }
};

size_t copies(const Profile& p) {
  size_t n = 0;
  for (const char* op : {"aten.permute_copy.default", "aten.slice_copy.Tensor", "aten.clone.default", "aten.mul.Tensor"})
    n += count(p, op);
  return n;
}

TEST(AttentionFusion, WhisperAndVitEagerAttentionFuseWithTheirPermutesAndSlicesOnEveryRoute) {
  ETW_REQUIRE_GPU();
  // 19 tokens: the flash route (S_q > 8) or the staged kernels when forced; 5: the decode route.
  for (Eager kind : {Eager::Whisper, Eager::Vit})
    for (int64_t S : {19, 5})
      for (const char* route : {"", "staged"}) {
        SCOPED_TRACE(std::string(kind == Eager::Whisper ? "whisper" : "vit") + " S=" + std::to_string(S) + " route=" + route);
        EagerBuilt b(kind, S), plain(kind, S);
        LoadOptions o;
        if (*route) o.force_route["sdpa"] = route;
        auto out = b.g.run(o);
        Profile p;
        b.g.model()->run(b.g.inputs, &p);
        // The + 1 after the output is the attention's epilogue, on every route (staged: QK,
        // softmax, AV; the kernels writing the output apply it).
        EXPECT_EQ(count(p, "fused[attention+add]"), *route ? 3u : 1u);
        EXPECT_EQ(count(p, "aten.add.Scalar"), 0u);
        EXPECT_EQ(count(p, "aten.bmm.default"), 0u);
        EXPECT_EQ(copies(p), 0u) << "a permute, slice, clone or scaling was left";
        EXPECT_TRUE(Close(out[0], b.reference(), 1e-5, 1e-4));
        LoadOptions off;
        off.fuse = false;
        EXPECT_TRUE(Close(plain.g.run(off)[0], b.reference(), 1e-5, 1e-4));
      }
}

// An elementwise consumer of the fused attention is its epilogue on every route (flash, decode
// in one pass and split over keys, staged): a residual add reads its tensor at the output's flat
// index (written through the permuted layout). One with more tensor operands than the attention's
// kernels have bindings left for (two) stays a kernel of its own.
TEST(AttentionFusion, AnElementwiseConsumerIsTheAttentionsEpilogueOnEveryRoute) {
  ETW_REQUIRE_GPU();
  // 300 tokens: the flash pass splits its keys and the combine pass writes the output; 150: a
  // prefill over few keys in one pass; 5: the decode route (one pass, or pinned "split": one
  // split, written by sdpa_decode).
  for (int residuals : {1, 3})
    for (int64_t S : {300, 150, 19, 5})
      for (const char* route : {"", "staged", "split"}) {
        SCOPED_TRACE(std::to_string(residuals) + " residuals, S=" + std::to_string(S) + " route=" + route);
        EagerBuilt b(Eager::Whisper, S, residuals);
        LoadOptions o;
        if (std::string(route) == "split") {
          o.force_route["sdpa"] = "decode";
          o.force_route["sdpa_decode"] = "split";
        } else if (*route) {
          o.force_route["sdpa"] = route;
        }
        auto out = b.g.run(o);
        Profile p;
        b.g.model()->run(b.g.inputs, &p);
        const size_t kernels = p.dispatches.size();
        if (residuals == 1) {
          EXPECT_EQ(count(p, "fused[attention+add+add]"), kernels);
        } else {
          EXPECT_EQ(count(p, "etwebgpu.attention") + 1, kernels);
          EXPECT_EQ(count(p, "fused[add+add+add+add]"), 1u);
        }
        auto ran = [&p](const char* v) {
          return std::any_of(p.dispatches.begin(), p.dispatches.end(), [v](const auto& d) { return d.variant.rfind(v, 0) == 0; });
        };
        if (S == 300 && !*route) {
          EXPECT_TRUE(ran("decode_combine"));
        }
        if (S == 150 && !*route) {
          EXPECT_TRUE(ran("decode_wide"));
        }
        EXPECT_TRUE(Close(out[0], b.reference(), 1e-5, 1e-4));
      }
}

TEST(AttentionFusion, AnEscapingPermuteKeepsItsCopyAndTheResultIsUnchanged) {
  ETW_REQUIRE_GPU();
  EagerBuilt b(Eager::VitQEscapes, 19);
  auto out = b.g.run();
  Profile p;
  b.g.model()->run(b.g.inputs, &p);
  EXPECT_EQ(count(p, "aten.permute_copy.default"), 1u);  // the qkv permute, a graph output
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(Close(out[1], b.reference(), 1e-5, 1e-4));
}

// Swin's window attention: W windows of S tokens, qkv [W * S, 3 * H * D] -> view [W, S, 3, H, D]
// -> permute (2, 0, 3, 1, 4) -> slices; q, k and v go to [W * H, S, D] by view_copy, although the
// window and head strides (both from the permute) do not merge into one; v is cloned after its
// view and the scores before the softmax, with a constant bias [1, H, S, S] added; out -> view
// [W, H, S, D] -> permute (0, 2, 1, 3) -> view [W * S, H * D] -> + 1.
struct SwinBuilt {
  static constexpr int64_t W = 2, S = 7, E = kEH * kED;
  OpGraph g;
  HostTensor qkv = random_f32({W * S, 3 * E}, 9), bias = random_f32({1, kEH, S, S}, 10);
  double scale = 0.35;
  SwinBuilt() {
    auto& gb = g.gb;
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id in = g.input(qkv), b = g.constant(bias), v5 = t({W, S, 3, kEH, kED}), p5 = t({3, W, kEH, S, kED});
    gb.op("aten.view_copy.default", {in, gb.int_list({W, S, 3, kEH, kED}), v5});
    gb.op("aten.permute_copy.default", {v5, gb.int_list({2, 0, 3, 1, 4}), p5});
    Id part[3];
    for (int i = 0; i < 3; ++i) {
      Id sl = t({1, W, kEH, S, kED});
      part[i] = t({W, kEH, S, kED});
      gb.op("aten.slice_copy.Tensor", {p5, gb.int_(0), gb.int_(i), gb.int_(i + 1), gb.int_(1), sl});
      gb.op("aten.squeeze_copy.dims", {sl, gb.int_list({0}), part[i]});
    }
    Id qs = t({W, kEH, S, kED}), kt = t({W, kEH, kED, S}), q3 = t({W * kEH, S, kED}), kt3 = t({W * kEH, kED, S});
    Id v3 = t({W * kEH, S, kED}), vc = t({W * kEH, S, kED});
    gb.op("aten.mul.Scalar", {part[0], gb.dbl(scale), qs});
    gb.op("aten.permute_copy.default", {part[1], gb.int_list({0, 1, 3, 2}), kt});
    gb.op("aten.view_copy.default", {qs, gb.int_list({W * kEH, S, kED}), q3});
    gb.op("aten.view_copy.default", {kt, gb.int_list({W * kEH, kED, S}), kt3});
    gb.op("aten.view_copy.default", {part[2], gb.int_list({W * kEH, S, kED}), v3});
    gb.op("aten.clone.default", {v3, gb.null(), vc});
    Id s3 = t({W * kEH, S, S}), s4 = t({W, kEH, S, S}), sb = t({W, kEH, S, S}), s = t({W, kEH, S, S});
    Id p = t({W, kEH, S, S}), p3 = t({W * kEH, S, S});
    gb.op("aten.bmm.default", {q3, kt3, s3});
    gb.op("aten.view_copy.default", {s3, gb.int_list({W, kEH, S, S}), s4});
    gb.op("aten.add.Tensor", {s4, b, gb.int_(1), sb});
    gb.op("aten.clone.default", {sb, gb.null(), s});
    gb.op("aten._softmax.default", {s, gb.int_(-1), gb.boolean(false), p});
    gb.op("aten.view_copy.default", {p, gb.int_list({W * kEH, S, S}), p3});
    Id o3 = t({W * kEH, S, kED}), o4 = t({W, kEH, S, kED}), ot = t({W, S, kEH, kED}), o2 = t({W * S, E});
    gb.op("aten.bmm.default", {p3, vc, o3});
    gb.op("aten.view_copy.default", {o3, gb.int_list({W, kEH, S, kED}), o4});
    gb.op("aten.permute_copy.default", {o4, gb.int_list({0, 2, 1, 3}), ot});
    gb.op("aten.view_copy.default", {ot, gb.int_list({W * S, E}), o2});
    Id y = g.output(DType::Float32, {W * S, E});
    gb.op("aten.add.Scalar", {o2, gb.int_(1), gb.int_(1), y});
  }
  // fp64: per window, softmax(q k^T * scale + bias) v per head, as [W * S, H * D] plus 1.
  HostTensor reference() const {
    HostTensor y(DType::Float64, {W * S, E});
    HostTensor mask(DType::Float32, {kEH, S, S});
    std::copy(bias.as<float>(), bias.as<float>() + bias.numel(), mask.as<float>());
    for (int64_t w = 0; w < W; ++w) {
      HostTensor rows(DType::Float32, {S, 3 * E});
      std::copy(qkv.as<float>() + w * S * 3 * E, qkv.as<float>() + (w + 1) * S * 3 * E, rows.as<float>());
      auto head = [&](int i) { return ref::split_heads(rows, 3 * E, kEH, kED, i * E); };
      HostTensor o = ref::merge_heads(ref::sdpa(head(0), head(1), head(2), &mask, scale));
      for (int64_t i = 0; i < S * E; ++i) y.as<double>()[w * S * E + i] = o.as<double>()[i] + 1;
    }
    return y;
  }
};

TEST(AttentionFusion, SwinWindowsAndHeadsWhoseStridesDoNotMergeFuseWithTheirLayouts) {
  ETW_REQUIRE_GPU();
  SwinBuilt b, plain;
  auto out = b.g.run();
  Profile p;
  b.g.model()->run(b.g.inputs, &p);
  EXPECT_EQ(count(p, "fused[attention+add]"), 1u);  // the + 1 after it is its epilogue
  EXPECT_EQ(count(p, "aten.bmm.default") + count(p, "aten._softmax.default"), 0u);
  EXPECT_EQ(copies(p), 0u) << "a permute, slice, clone or scaling was left";
  EXPECT_TRUE(Close(out[0], b.reference(), 1e-5, 1e-4));
  LoadOptions off;
  off.fuse = false;
  EXPECT_TRUE(Close(plain.g.run(off)[0], b.reference(), 1e-5, 1e-4));
}

// LeViT's attention: qkv [1, S, H * (2 * KD + DV)] -> view [1, S, H, 2 * KD + DV] -> split
// [KD, KD, DV] along the last dim -> permutes (k straight to [1, H, KD, S]) -> squeeze -> clone
// -> bmm; scores * scale (a 0-d constant) + a constant bias [H, S, S]; out -> view -> permute ->
// view [1, S, H * DV]. The split's pieces are read where the projection wrote them.
struct LevitBuilt {
  static constexpr int64_t S = 9, KD = 4, DV = 8, W = 2 * KD + DV;
  OpGraph g;
  HostTensor qkv = random_f32({1, S, kEH * W}, 12), bias = random_f32({kEH, S, S}, 13);
  float scale = 0.5f;
  LevitBuilt() {
    auto& gb = g.gb;
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    HostTensor sc(DType::Float32, {});
    sc.as<float>()[0] = scale;
    Id in = g.input(qkv), b = g.constant(bias), c = g.constant(sc), v4 = t({1, S, kEH, W});
    gb.op("aten.view_copy.default", {in, gb.int_list({1, S, kEH, W}), v4});
    Id q = t({1, S, kEH, KD}), k = t({1, S, kEH, KD}), v = t({1, S, kEH, DV});
    gb.op("aten.split_with_sizes_copy.default", {v4, gb.int_list({KD, KD, DV}), gb.int_(3), gb.value_list({q, k, v})});
    Id qp = t({1, kEH, S, KD}), kp = t({1, kEH, KD, S}), vp = t({1, kEH, S, DV});
    gb.op("aten.permute_copy.default", {q, gb.int_list({0, 2, 1, 3}), qp});
    gb.op("aten.permute_copy.default", {k, gb.int_list({0, 2, 3, 1}), kp});
    gb.op("aten.permute_copy.default", {v, gb.int_list({0, 2, 1, 3}), vp});
    Id q3 = t({kEH, S, KD}), k3 = t({kEH, KD, S}), v3 = t({kEH, S, DV}), qc = t({kEH, S, KD}), kc = t({kEH, KD, S}),
       vc = t({kEH, S, DV});
    gb.op("aten.squeeze_copy.dims", {qp, gb.int_list({0}), q3});
    gb.op("aten.squeeze_copy.dims", {kp, gb.int_list({0}), k3});
    gb.op("aten.squeeze_copy.dims", {vp, gb.int_list({0}), v3});
    gb.op("aten.clone.default", {q3, gb.null(), qc});
    gb.op("aten.clone.default", {k3, gb.null(), kc});
    gb.op("aten.clone.default", {v3, gb.null(), vc});
    Id s3 = t({kEH, S, S}), s4 = t({1, kEH, S, S}), ss = t({1, kEH, S, S}), sb = t({1, kEH, S, S}), p = t({1, kEH, S, S}),
       p3 = t({kEH, S, S});
    gb.op("aten.bmm.default", {qc, kc, s3});
    gb.op("aten.view_copy.default", {s3, gb.int_list({1, kEH, S, S}), s4});
    gb.op("aten.mul.Tensor", {s4, c, ss});
    gb.op("aten.add.Tensor", {ss, b, gb.int_(1), sb});
    gb.op("aten._softmax.default", {sb, gb.int_(-1), gb.boolean(false), p});
    gb.op("aten.squeeze_copy.dims", {p, gb.int_list({0}), p3});
    Id o3 = t({kEH, S, DV}), o4 = t({1, kEH, S, DV}), ot = t({1, S, kEH, DV});
    gb.op("aten.bmm.default", {p3, vc, o3});
    gb.op("aten.view_copy.default", {o3, gb.int_list({1, kEH, S, DV}), o4});
    gb.op("aten.permute_copy.default", {o4, gb.int_list({0, 2, 1, 3}), ot});
    Id o2 = t({1, S, kEH * DV}), y = g.output(DType::Float32, {1, S, kEH * DV});
    gb.op("aten.view_copy.default", {ot, gb.int_list({1, S, kEH * DV}), o2});
    gb.op("aten.add.Scalar", {o2, gb.int_(1), gb.int_(1), y});
  }
  // fp64, per head h: softmax(q_h k_h^T * scale + bias_h) v_h as [S, H * DV] plus 1.
  std::vector<double> reference() const {
    std::vector<double> y(static_cast<size_t>(S * kEH * DV));
    auto at = [&](int64_t s_, int64_t h, int64_t col) { return double(qkv.as<float>()[(s_ * kEH + h) * W + col]); };
    for (int64_t h = 0; h < kEH; ++h)
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> sc(S);
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < KD; ++d) dot += at(i, h, d) * at(j, h, KD + d);
          sc[j] = dot * scale + bias.as<float>()[(h * S + i) * S + j];
          mx = std::max(mx, sc[j]);
        }
        for (double& e : sc) sum += (e = std::exp(e - mx));
        for (int64_t d = 0; d < DV; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < S; ++j) acc += sc[j] / sum * at(j, h, 2 * KD + d);
          y[(i * kEH + h) * DV + d] = acc + 1;
        }
      }
    return y;
  }
};

TEST(AttentionFusion, LevitSplitHeadsAreReadWhereTheProjectionWroteThem) {
  ETW_REQUIRE_GPU();
  LevitBuilt b;
  auto out = b.g.run();
  Profile p;
  b.g.model()->run(b.g.inputs, &p);
  EXPECT_EQ(count(p, "fused[attention+add]"), 1u);  // the + 1 after it is its epilogue
  EXPECT_EQ(count(p, "aten.split_with_sizes_copy.default"), 0u);
  EXPECT_EQ(copies(p), 0u) << "a permute, slice, clone or scaling was left";
  const auto ref = b.reference();
  ASSERT_EQ(out[0].numel(), static_cast<int64_t>(ref.size()));
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(out[0].as<float>()[i], ref[i], 1e-5) << i;
}

// --- Projection fusion (graph/projection_fusion.h): Whisper's q, k (no bias) and v linears of
// one input, each read only by the fused attention, become one linear of stacked weights. As the
// export writes them, each linear reads its own squeeze + clone of the layer norm's output (CSE
// makes them one value).
struct ProjectedBuilt {
  OpGraph g;
  static constexpr int64_t S = 37, E = kEH * kED, K = 20;
  HostTensor x = random_f32({1, S, K}, 80), wq = random_f32({E, K}, 81), wk = random_f32({E, K}, 82),
             wv = random_f32({E, K}, 83), bq = random_f32({E}, 84), bv = random_f32({E}, 85);
  double scale = 0.35;
  // escape: k's projection is also a graph output, so the three stay apart.
  explicit ProjectedBuilt(bool escape) {
    auto& gb = g.gb;
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id xi = g.input(x), heads[3];
    const HostTensor* ws[3] = {&wq, &wk, &wv};
    const HostTensor* bs[3] = {&bq, nullptr, &bv};
    for (int i = 0; i < 3; ++i) {
      Id y = escape && i == 1 ? g.output(DType::Float32, {S, E}) : t({S, E}), v4 = t({1, S, kEH, kED});
      heads[i] = t({1, kEH, S, kED});
      Id sq = t({S, K}), cl = t({S, K});
      gb.op("aten.squeeze_copy.dims", {xi, gb.int_list({0}), sq});
      gb.op("aten.clone.default", {sq, gb.null(), cl});
      gb.op("aten.linear.default", {cl, g.constant(*ws[i]), bs[i] ? g.constant(*bs[i]) : gb.null(), y});
      gb.op("aten.view_copy.default", {y, gb.int_list({1, S, kEH, kED}), v4});
      gb.op("aten.permute_copy.default", {v4, gb.int_list({0, 2, 1, 3}), heads[i]});
    }
    Id kt = t({1, kEH, kED, S}), q3 = t({kEH, S, kED}), kt3 = t({kEH, kED, S}), v3 = t({kEH, S, kED});
    gb.op("aten.permute_copy.default", {heads[1], gb.int_list({0, 1, 3, 2}), kt});
    gb.op("aten.squeeze_copy.dims", {heads[0], gb.int_list({0}), q3});
    gb.op("aten.squeeze_copy.dims", {kt, gb.int_list({0}), kt3});
    gb.op("aten.squeeze_copy.dims", {heads[2], gb.int_list({0}), v3});
    Id s3 = t({kEH, S, S}), s4 = t({1, kEH, S, S}), sc = t({1, kEH, S, S}), p = t({1, kEH, S, S}), p3 = t({kEH, S, S});
    gb.op("aten.bmm.default", {q3, kt3, s3});
    gb.op("aten.view_copy.default", {s3, gb.int_list({1, kEH, S, S}), s4});
    gb.op("aten.mul.Scalar", {s4, gb.dbl(scale), sc});
    gb.op("aten._softmax.default", {sc, gb.int_(-1), gb.boolean(false), p});
    gb.op("aten.squeeze_copy.dims", {p, gb.int_list({0}), p3});
    Id o3 = t({kEH, S, kED}), o4 = t({1, kEH, S, kED}), ot = t({1, S, kEH, kED});
    gb.op("aten.bmm.default", {p3, v3, o3});
    gb.op("aten.view_copy.default", {o3, gb.int_list({1, kEH, S, kED}), o4});
    gb.op("aten.permute_copy.default", {o4, gb.int_list({0, 2, 1, 3}), ot});
    gb.op("aten.view_copy.default", {ot, gb.int_list({S, E}), g.output(DType::Float32, {S, E})});
  }
  HostTensor reference() const {
    auto heads = [&](const HostTensor& y) { return ref::split_heads(y, E, kEH, kED); };
    return ref::merge_heads(ref::sdpa(heads(ref::linear(x, wq, &bq)), heads(ref::linear(x, wk, nullptr)),
                                      heads(ref::linear(x, wv, &bv)), nullptr, scale));
  }
};

TEST(ProjectionFusion, QkvLinearsOfOneInputBecomeOneStackedLinearWithTheSameResults) {
  ETW_REQUIRE_GPU();
  for (const char* route : {"", "staged"}) {
    ProjectedBuilt b(false);
    LoadOptions o;
    if (*route) o.force_route["sdpa"] = route;
    auto out = b.g.run(o);
    Profile p;
    b.g.model()->run(b.g.inputs, &p);
    EXPECT_EQ(count(p, "aten.linear.default"), 1u) << route;
    EXPECT_EQ(copies(p), 0u) << route;
    EXPECT_TRUE(Close(out[0], b.reference(), 1e-5, 1e-4)) << route;
  }
  // A projection that escapes keeps its own linear; the others still stack, and the result holds.
  ProjectedBuilt e(true);
  auto out = e.g.run();
  Profile p;
  e.g.model()->run(e.g.inputs, &p);
  EXPECT_EQ(count(p, "aten.linear.default"), 2u);
  ASSERT_EQ(out.size(), 2u);
  HostTensor yk = ref::linear(e.x, e.wk, nullptr);
  yk.shape = {ProjectedBuilt::S, ProjectedBuilt::E};
  EXPECT_TRUE(Close(out[0], yk, 1e-5, 1e-4));
  EXPECT_TRUE(Close(out[1], e.reference(), 1e-5, 1e-4));
}

}  // namespace
