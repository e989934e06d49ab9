// graph::fold_score_masks (graph/score_mask_folding.h): timm Swin's shifted-window attention adds
// the relative position bias, views the scores per window, adds the window mask and views back
// before its softmax; the two constant adds become one precomputed mask, and the whole attention
// then fuses into one etwebgpu.attention call whose output matches an fp64 reference. Patterns
// whose tensors escape, whose masks are not constants or whose adds scale are left alone.
#include <algorithm>
#include <cmath>

#include "graph/score_mask_folding.h"
#include "support/ir_chain.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
using format::VkValue;
using format::VkValueKind;

namespace {

constexpr int64_t kW = 4, kH = 2, kN = 5, kD = 8;  // windows, heads, tokens per window, head dim

// bias [1, H, N, N] and window mask [W, N, N] (0 or -100, as timm builds it).
HostTensor bias_table() { return random_f32({1, kH, kN, kN}, 11, -2.f, 2.f); }
HostTensor window_mask() {
  HostTensor m(DType::Float32, {1, kW, 1, kN, kN});
  for (int64_t w = 0; w < kW; ++w)
    for (int64_t i = 0; i < kN; ++i)
      for (int64_t j = 0; j < kN; ++j) m.as<float>()[(w * kN + i) * kN + j] = (w % 2 && (i + j) % 3 == 0 && i != j) ? -100.f : 0.f;
  return m;
}

// Swin's window attention on q, k, v [W, H, N, D]: softmax(q k^T / 2 + bias + mask) v.
struct SwinAttention {
  OpGraph g;
  HostTensor q = random_f32({kW, kH, kN, kD}, 1), k = random_f32({kW, kH, kN, kD}, 2), v = random_f32({kW, kH, kN, kD}, 3);
  HostTensor bias = bias_table(), mask = window_mask();
  explicit SwinAttention(bool mask_is_input = false) {
    auto& gb = g.gb;
    auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
    Id q_ = g.input(q), k_ = g.input(k), v_ = g.input(v), b_ = g.constant(bias);
    Id m_ = mask_is_input ? g.input(mask) : g.constant(mask);
    Id qs = t({kW, kH, kN, kD}), q3 = t({kW * kH, kN, kD}), kt = t({kW, kH, kD, kN}), kt3 = t({kW * kH, kD, kN});
    gb.op("aten.mul.Scalar", {q_, gb.dbl(0.5), qs});
    gb.op("aten.view_copy.default", {qs, gb.int_list({kW * kH, kN, kD}), q3});
    gb.op("aten.permute_copy.default", {k_, gb.int_list({0, 1, 3, 2}), kt});
    gb.op("aten.view_copy.default", {kt, gb.int_list({kW * kH, kD, kN}), kt3});
    Id s3 = t({kW * kH, kN, kN}), s4 = t({kW, kH, kN, kN}), s1 = t({kW, kH, kN, kN}), s5 = t({1, kW, kH, kN, kN}),
       s2 = t({1, kW, kH, kN, kN}), s = t({kW, kH, kN, kN}), p = t({kW, kH, kN, kN}), p3 = t({kW * kH, kN, kN});
    gb.op("aten.bmm.default", {q3, kt3, s3});
    gb.op("aten.view_copy.default", {s3, gb.int_list({kW, kH, kN, kN}), s4});
    gb.op("aten.add.Tensor", {s4, b_, gb.int_(1), s1});
    gb.op("aten.view_copy.default", {s1, gb.int_list({1, kW, kH, kN, kN}), s5});
    gb.op("aten.add.Tensor", {s5, m_, gb.int_(1), s2});
    gb.op("aten.view_copy.default", {s2, gb.int_list({kW, kH, kN, kN}), s});
    gb.op("aten._softmax.default", {s, gb.int_(-1), gb.boolean(false), p});
    gb.op("aten.view_copy.default", {p, gb.int_list({kW * kH, kN, kN}), p3});
    Id v3 = t({kW * kH, kN, kD}), o3 = t({kW * kH, kN, kD}), o = g.output(DType::Float32, {kW, kH, kN, kD});
    gb.op("aten.view_copy.default", {v_, gb.int_list({kW * kH, kN, kD}), v3});
    gb.op("aten.bmm.default", {p3, v3, o3});
    gb.op("aten.view_copy.default", {o3, gb.int_list({kW, kH, kN, kD}), o});
  }
  std::vector<double> reference() const {
    std::vector<double> out(static_cast<size_t>(kW * kH * kN * kD));
    for (int64_t w = 0; w < kW; ++w)
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t i = 0; i < kN; ++i) {
          const int64_t head = (w * kH + h) * kN;
          std::vector<double> s(kN);
          for (int64_t j = 0; j < kN; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < kD; ++d) dot += double(q.as<float>()[(head + i) * kD + d]) * 0.5 * k.as<float>()[(head + j) * kD + d];
            s[j] = dot + bias.as<float>()[(h * kN + i) * kN + j] + mask.as<float>()[(w * kN + i) * kN + j];
          }
          const double mx = *std::max_element(s.begin(), s.end());
          double sum = 0;
          for (double& e : s) sum += (e = std::exp(e - mx));
          for (int64_t d = 0; d < kD; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < kN; ++j) acc += s[j] / sum * v.as<float>()[(head + j) * kD + d];
            out[(head + i) * kD + d] = acc;
          }
        }
    return out;
  }
};

TEST(ScoreMaskFolding, SwinWindowAttentionFusesIntoOneCallMatchingFp64) {
  ETW_REQUIRE_GPU();
  SwinAttention a;
  LoadOptions plain;
  plain.fuse = false;
  auto unfused = a.g.run(plain);
  auto fused = a.g.run();
  Profile prof;
  a.g.model()->run(a.g.inputs, &prof);
  std::vector<std::string> ops;
  for (const auto& d : prof.dispatches) ops.push_back(d.op);
  EXPECT_EQ(ops, std::vector<std::string>{"etwebgpu.attention"});
  const auto ref = a.reference();
  for (const auto* out : {&fused[0], &unfused[0]}) {
    ASSERT_EQ(out->numel(), static_cast<int64_t>(ref.size()));
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(out->as<float>()[i], ref[i], 2e-6) << i;
  }
}

TEST(ScoreMaskFolding, AMaskThatIsNoConstantStaysTwoAdds) {
  ETW_REQUIRE_GPU();
  SwinAttention a(true);
  auto fused = a.g.run();
  Profile prof;
  a.g.model()->run(a.g.inputs, &prof);
  EXPECT_TRUE(std::none_of(prof.dispatches.begin(), prof.dispatches.end(), [](const auto& d) { return d.op == "etwebgpu.attention"; }));
  const auto ref = a.reference();
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(fused[0].as<float>()[i], ref[i], 2e-6) << i;
}

// The IR-level pattern: x + bias -> view -> + mask -> view -> softmax.
struct Pattern {
  IrChain c;
  int32_t x, bias, mask, s1, s5, s2, s, p, alpha;
  Pattern() {
    x = c.input({kW, kH, kN, kN});
    HostTensor b = bias_table(), m = window_mask();
    bias = c.constant({1, kH, kN, kN}, b.data);
    mask = c.constant({1, kW, 1, kN, kN}, m.data);
    s1 = c.tensor({kW, kH, kN, kN}), s5 = c.tensor({1, kW, kH, kN, kN}), s2 = c.tensor({1, kW, kH, kN, kN});
    s = c.tensor({kW, kH, kN, kN}), p = c.output({kW, kH, kN, kN});
    VkValue one;
    one.kind = VkValueKind::Int;
    one.int_val = 1;
    alpha = c.add(one);
  }
  void build() {
    c.op("aten.add.Tensor", {x, bias, alpha, s1});
    c.op("aten.view_copy.default", {s1, c.ints({1, kW, kH, kN, kN}), s5});
    c.op("aten.add.Tensor", {s5, mask, alpha, s2});
    c.op("aten.view_copy.default", {s2, c.ints({kW, kH, kN, kN}), s});
    VkValue dim;
    dim.kind = VkValueKind::Int;
    dim.int_val = -1;
    c.op("aten._softmax.default", {s, c.add(dim), c.boolean(false), p});
  }
};

TEST(ScoreMaskFolding, TheSumIsBiasPlusMaskInTheScoresShape) {
  Pattern t;
  t.build();
  EXPECT_EQ(graph::fold_score_masks(t.c.ir, graph::UseDef(t.c.ir)), 1u);
  ASSERT_EQ(t.c.ops(), (std::vector<std::string>{"aten.add.Tensor", "aten._softmax.default"}));
  const auto& add = t.c.ir.chain[0];
  EXPECT_EQ(add.args[0], t.x);
  EXPECT_EQ(add.args[3], t.s);  // writes the softmax's input
  const auto& sum = t.c.ir.values[add.args[1]].tensor;
  ASSERT_TRUE(sum.is_constant());
  EXPECT_EQ(sum.dims, (std::vector<int64_t>{kW, kH, kN, kN}));
  const float* got = reinterpret_cast<const float*>(t.c.ir.constants[sum.constant_id].data.data());
  HostTensor b = bias_table(), m = window_mask();
  for (int64_t w = 0; w < kW; ++w)
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t e = 0; e < kN * kN; ++e)
        EXPECT_EQ(got[(w * kH + h) * kN * kN + e], b.as<float>()[h * kN * kN + e] + m.as<float>()[w * kN * kN + e]);
}

TEST(ScoreMaskFolding, PatternsThatAreNotExactlyTwoConstantAddsIntoASoftmaxStay) {
  auto unchanged = [](Pattern& t, const char* what) {
    const size_t n = t.c.ir.chain.size();
    EXPECT_EQ(graph::fold_score_masks(t.c.ir, graph::UseDef(t.c.ir)), 0u) << what;
    EXPECT_EQ(t.c.ir.chain.size(), n) << what;
  };
  {
    Pattern t;
    t.build();
    t.c.ir.output_ids.push_back(static_cast<uint32_t>(t.s5));  // a middle view escapes
    unchanged(t, "escaping view");
  }
  {
    Pattern t;
    t.build();
    t.c.op("aten.relu.default", {t.s1, t.c.tensor({kW, kH, kN, kN})});  // the first sum has a second reader
    unchanged(t, "second reader");
  }
  {
    Pattern t;
    VkValue two;
    two.kind = VkValueKind::Int;
    two.int_val = 2;
    t.alpha = t.c.add(two);  // x + 2 * bias
    t.build();
    unchanged(t, "alpha 2");
  }
  {
    Pattern t;
    t.mask = t.c.input({1, kW, 1, kN, kN});  // a mask fed each run
    t.build();
    unchanged(t, "mask input");
  }
  {
    Pattern t;
    t.build();
    t.c.ir.chain.back().name = "aten.relu.default";  // no softmax reads it
    t.c.ir.chain.back().args = {t.s, t.p};
    unchanged(t, "no softmax");
  }
}

}  // namespace
