// Attention fusion at load (graph/attention_fusion.h): the decomposed attention of ExecuTorch's
// Llama export becomes one etwebgpu.attention call with the same results, on a built graph and on
// the public KV-cache fixture (all its steps); a pattern that does not match exactly is left alone.
#include <algorithm>
#include <filesystem>
#include <limits>

#include "etwebgpu/npy.h"
#include "reference/attention/attention_ref.h"
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

}  // namespace
