// Load-time rewrites that cut an LLM decode step's dispatches (graph/cse.h, graph/decoder_fusion.h,
// permutes of size-1 dims as copy-free views in graph/memory_plan.h): each graph is loaded with
// LoadOptions::fuse on and off (or the memory plan on and off), the dispatches show what was
// rewritten and the results match the plain graph and an fp64 reference.
#include <cmath>
#include <functional>

#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct Loaded {
  std::vector<HostTensor> out;
  std::vector<std::string> ops;  // Profile op label per dispatch
  std::unique_ptr<OpGraph> g;
};

Loaded load(const std::function<void(OpGraph&)>& build, bool fuse, bool plan_memory = true) {
  Loaded r;
  r.g = std::make_unique<OpGraph>();
  build(*r.g);
  LoadOptions o;
  o.fuse = fuse;
  o.plan_memory = plan_memory;
  r.out = r.g->run(o);
  Profile p;
  r.g->model()->run(r.g->inputs, &p);
  for (auto& d : p.dispatches) r.ops.push_back(d.op);
  return r;
}

size_t count(const std::vector<std::string>& ops, const std::string& op) {
  size_t n = 0;
  for (auto& o : ops) n += o == op;
  return n;
}

const float* f32(const HostTensor& t) { return reinterpret_cast<const float*>(t.data.data()); }

HostTensor f32_tensor(std::vector<int64_t> shape, const std::vector<double>& v) {
  HostTensor t(DType::Float32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) reinterpret_cast<float*>(t.data.data())[i] = static_cast<float>(v[i]);
  return t;
}

// ---------------------------------------------------------------- CSE

// mean(x) twice (and two constants with equal bytes added to each): one mean and one add remain.
void twin_means(OpGraph& g) {
  Id x = g.input(random_f32({3, 8}, 1));
  HostTensor c = random_f32({3, 1}, 2);
  Id c1 = g.constant(c), c2 = g.constant(c);
  auto& gb = g.gb;
  Id m1 = g.tensor(DType::Float32, {3, 1}), m2 = g.tensor(DType::Float32, {3, 1});
  Id a1 = g.tensor(DType::Float32, {3, 1}), a2 = g.tensor(DType::Float32, {3, 1});
  Id o = g.output(DType::Float32, {3, 1});
  gb.op("aten.mean.dim", {x, gb.int_list({-1}), gb.boolean(true), gb.null(), m1});
  gb.op("aten.mean.dim", {x, gb.int_list({-1}), gb.boolean(true), gb.null(), m2});
  gb.op("aten.add.Tensor", {m1, c1, gb.int_(1), a1});
  gb.op("aten.add.Tensor", {m2, c2, gb.int_(1), a2});
  gb.op("aten.mul.Tensor", {a1, a2, o});
}

TEST(Cse, RepeatedCallsOnEqualValuesRunOnceAndMatch) {
  ETW_REQUIRE_GPU();
  auto fused = load(twin_means, true), plain = load(twin_means, false);
  EXPECT_EQ(plain.ops.size(), 5u);
  EXPECT_EQ(count(fused.ops, "aten.mean.dim"), 1u);
  // The one add then joins the mul (a1 * a1) in one elementwise kernel.
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.mean.dim", "fused[add+mul]"}));
  EXPECT_EQ(fused.out[0].data, plain.out[0].data);
}

// Same op and arguments but different keepdim / different constants: nothing is merged.
TEST(Cse, CallsDifferingInAnArgumentOrConstantBytesStay) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    Id x = g.input(random_f32({3, 8}, 1));
    Id c1 = g.constant(random_f32({3}, 2)), c2 = g.constant(random_f32({3}, 3));
    auto& gb = g.gb;
    Id m1 = g.tensor(DType::Float32, {3, 1}), m2 = g.tensor(DType::Float32, {3});
    Id a1 = g.tensor(DType::Float32, {3, 3}), a2 = g.tensor(DType::Float32, {3});
    Id o = g.output(DType::Float32, {3, 3});
    gb.op("aten.mean.dim", {x, gb.int_list({-1}), gb.boolean(true), gb.null(), m1});
    gb.op("aten.mean.dim", {x, gb.int_list({-1}), gb.boolean(false), gb.null(), m2});
    gb.op("aten.add.Tensor", {m1, c1, gb.int_(1), a1});
    gb.op("aten.add.Tensor", {m2, c2, gb.int_(1), a2});
    gb.op("aten.mul.Tensor", {a1, a2, o});
  };
  auto fused = load(build, true), plain = load(build, false);
  EXPECT_EQ(count(fused.ops, "aten.mean.dim"), 2u);
  EXPECT_EQ(fused.out[0].data, plain.out[0].data);
}

// ---------------------------------------------------------------- RMSNorm

// x * rsqrt(mean(x * x, -1, keepdim) + eps) [* w], eps a number or a one-element constant.
void rms_chain(OpGraph& g, std::vector<int64_t> max_dims, bool dynamic, bool eps_tensor, bool weight, bool leak) {
  auto& gb = g.gb;
  std::vector<int64_t> rd = max_dims;
  rd.back() = 1;
  Id x = g.input(random_f32(max_dims, 4, -3.f, 3.f), max_dims, dynamic);
  Id w = weight ? g.input(random_f32({max_dims.back()}, 5)) : -1;
  Id sq = g.tensor(DType::Float32, max_dims), m = g.tensor(DType::Float32, rd), v = g.tensor(DType::Float32, rd);
  Id r = leak ? g.output(DType::Float32, rd) : g.tensor(DType::Float32, rd);
  Id y = weight ? g.tensor(DType::Float32, max_dims) : g.output(DType::Float32, max_dims);
  gb.op("aten.mul.Tensor", {x, x, sq});
  gb.op("aten.mean.dim", {sq, gb.int_list({-1}), gb.boolean(true), gb.null(), m});
  if (eps_tensor) gb.op("aten.add.Tensor", {m, g.constant(f32_tensor({}, {1e-5})), gb.int_(1), v});
  else gb.op("aten.add.Scalar", {m, gb.dbl(1e-5), gb.int_(1), v});
  gb.op("aten.rsqrt.default", {v, r});
  gb.op("aten.mul.Tensor", {x, r, y});
  if (weight) gb.op("aten.mul.Tensor", {y, w, g.output(DType::Float32, max_dims)});
}

HostTensor rms_ref(const HostTensor& x, const HostTensor* w, double eps) {
  HostTensor y(DType::Float32, x.shape);
  int64_t len = x.shape.back(), rows = x.numel() / len;
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t i = 0; i < len; ++i) s += double(f32(x)[r * len + i]) * f32(x)[r * len + i];
    double inv = 1.0 / std::sqrt(s / len + eps);
    for (int64_t i = 0; i < len; ++i)
      reinterpret_cast<float*>(y.data.data())[r * len + i] =
          static_cast<float>(f32(x)[r * len + i] * inv * (w ? f32(*w)[i] : 1.0));
  }
  return y;
}

TEST(DecoderFusion, RmsNormWithConstantEpsAndWeightIsOneDispatch) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) { rms_chain(g, {2, 3, 40}, false, true, true, false); };
  auto fused = load(build, true), plain = load(build, false);
  EXPECT_EQ(plain.ops.size(), 6u);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"et_vk.rms_norm.default"});
  EXPECT_TRUE(Close(fused.out[0], rms_ref(fused.g->inputs[0], &fused.g->inputs[1], 1e-5), 1e-5, 1e-5));
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
}

TEST(DecoderFusion, RmsNormWithoutWeightRerunsWithFewerShorterRows) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) { rms_chain(g, {6, 24}, true, false, false, false); };
  auto fused = load(build, true), plain = load(build, false);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"et_vk.rms_norm.default"});
  EXPECT_TRUE(Close(fused.out[0], rms_ref(fused.g->inputs[0], nullptr, 1e-5), 1e-5, 1e-5));
  // Fewer and shorter rows: without a weight the row length may change too.
  std::vector<HostTensor> small = {random_f32({2, 17}, 9, -3.f, 3.f)};
  auto f2 = fused.g->rerun(small), p2 = plain.g->rerun(small);
  ASSERT_EQ(f2[0].shape, (std::vector<int64_t>{2, 17}));
  EXPECT_TRUE(Close(f2[0], rms_ref(small[0], nullptr, 1e-5), 1e-5, 1e-5));
  EXPECT_TRUE(Close(f2[0], p2[0], 1e-5, 1e-5));
}

// The rsqrt is also a graph output: the chain must stay (the output would vanish with it).
TEST(DecoderFusion, RmsNormWhoseIntermediateEscapesIsLeftAlone) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) { rms_chain(g, {4, 16}, false, false, true, true); };
  auto fused = load(build, true), plain = load(build, false);
  EXPECT_EQ(count(fused.ops, "et_vk.rms_norm.default"), 0u);
  ASSERT_EQ(fused.out.size(), 2u);
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-6, 1e-6));
  EXPECT_TRUE(Close(fused.out[1], plain.out[1], 1e-6, 1e-6));
}

// ---------------------------------------------------------------- RoPE

// Llama's apply_rotary_emb on x [1, S, H, D] (as [1, S, H, D/2, 2]) with cos/sin [S, D/2] viewed
// as [1, S, 1, D/2]; `swap_add` writes the imaginary part as b * cos + a * sin.
void rope_chain(OpGraph& g, int64_t S, int64_t H, int64_t D, bool swap_add) {
  auto& gb = g.gb;
  int64_t h2 = D / 2;
  auto t = [&](std::vector<int64_t> d) { return g.tensor(DType::Float32, std::move(d)); };
  Id x = g.input(random_f32({1, S, H, D}, 11));
  Id fc = g.input(random_f32({S, h2}, 12)), fs = g.input(random_f32({S, h2}, 13));
  Id x5 = t({1, S, H, h2, 2}), c4 = t({1, S, 1, h2}), s4 = t({1, S, 1, h2});
  gb.op("aten.view_copy.default", {x, gb.int_list({1, S, H, -1, 2}), x5});
  gb.op("aten.view_copy.default", {fc, gb.int_list({1, S, 1, h2}), c4});
  gb.op("aten.view_copy.default", {fs, gb.int_list({1, S, 1, h2}), s4});
  Id sl0 = t({1, S, H, h2, 1}), sl1 = t({1, S, H, h2, 1}), a = t({1, S, H, h2}), b = t({1, S, H, h2});
  gb.op("aten.slice_copy.Tensor", {x5, gb.int_(4), gb.int_(0), gb.int_(1), gb.int_(1), sl0});
  gb.op("aten.slice_copy.Tensor", {x5, gb.int_(4), gb.int_(1), gb.int_(2), gb.int_(1), sl1});
  gb.op("aten.squeeze_copy.dims", {sl0, gb.int_list({4}), a});
  gb.op("aten.squeeze_copy.dims", {sl1, gb.int_list({4}), b});
  Id ac = t({1, S, H, h2}), as = t({1, S, H, h2}), bs = t({1, S, H, h2}), bc = t({1, S, H, h2});
  gb.op("aten.mul.Tensor", {a, c4, ac});
  gb.op("aten.mul.Tensor", {a, s4, as});
  gb.op("aten.mul.Tensor", {b, s4, bs});
  gb.op("aten.mul.Tensor", {c4, b, bc});
  Id re = t({1, S, H, h2}), im = t({1, S, H, h2}), ure = t({1, S, H, h2, 1}), uim = t({1, S, H, h2, 1});
  gb.op("aten.sub.Tensor", {ac, bs, gb.int_(1), re});
  gb.op("aten.add.Tensor", {swap_add ? bc : as, swap_add ? as : bc, gb.int_(1), im});
  gb.op("aten.unsqueeze_copy.default", {re, gb.int_(4), ure});
  gb.op("aten.unsqueeze_copy.default", {im, gb.int_(4), uim});
  Id cat = t({1, S, H, h2, 2});
  gb.op("aten.cat.default", {gb.value_list({ure, uim}), gb.int_(-1), cat});
  gb.op("aten.view_copy.default", {cat, gb.int_list({1, S, H, D}), g.output(DType::Float32, {1, S, H, D})});
}

HostTensor rope_ref(const HostTensor& x, const HostTensor& fc, const HostTensor& fs, int64_t S, int64_t H, int64_t D) {
  HostTensor y(DType::Float32, x.shape);
  float* o = reinterpret_cast<float*>(y.data.data());
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < D / 2; ++i) {
        int64_t base = (s * H + h) * D + 2 * i;
        double a = f32(x)[base], b = f32(x)[base + 1], c = f32(fc)[s * D / 2 + i], sn = f32(fs)[s * D / 2 + i];
        o[base] = static_cast<float>(a * c - b * sn);
        o[base + 1] = static_cast<float>(a * sn + b * c);
      }
  return y;
}

TEST(DecoderFusion, InterleavedRopeIsOneDispatchAndMatchesTheReference) {
  ETW_REQUIRE_GPU();
  for (bool swap_add : {false, true}) {
    auto build = [swap_add](OpGraph& g) { rope_chain(g, 3, 4, 12, swap_add); };
    auto fused = load(build, true), plain = load(build, false);
    EXPECT_EQ(fused.ops, std::vector<std::string>{"etwebgpu.rope_interleaved"}) << "swap_add " << swap_add;
    EXPECT_GE(plain.ops.size(), 9u);
    auto& in = fused.g->inputs;
    EXPECT_TRUE(Close(fused.out[0], rope_ref(in[0], in[1], in[2], 3, 4, 12), 1e-6, 1e-5));
    EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-6, 1e-5));
  }
}

// ---------------------------------------------------------------- permute as a view

// exp -> permute [1,4,1,16] -> [1,1,4,16] -> exp: the permute moves only a size-1 dim.
TEST(PermuteView, PermuteOfSizeOneDimsNeedsNoDispatch) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    auto& gb = g.gb;
    Id x = g.input(random_f32({1, 4, 1, 16}, 21));
    Id e = g.tensor(DType::Float32, {1, 4, 1, 16}), p = g.tensor(DType::Float32, {1, 1, 4, 16});
    gb.op("aten.exp.default", {x, e});
    gb.op("aten.permute_copy.default", {e, gb.int_list({0, 2, 1, 3}), p});
    gb.op("aten.exp.default", {p, g.output(DType::Float32, {1, 1, 4, 16})});
  };
  auto planned = load(build, true), apart = load(build, true, false);
  EXPECT_EQ(planned.ops, (std::vector<std::string>{"aten.exp.default", "aten.exp.default"}));
  EXPECT_EQ(apart.ops.size(), 3u);
  EXPECT_EQ(planned.out[0].shape, (std::vector<int64_t>{1, 1, 4, 16}));
  EXPECT_EQ(planned.out[0].data, apart.out[0].data);
}

// A real transpose ([2, 3] dims swapped) still dispatches its copy. (Its reader is a softmax:
// an elementwise reader would read through the permutation instead, graph/fusion.h.)
TEST(PermuteView, PermuteThatMovesDataStillDispatches) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    auto& gb = g.gb;
    Id x = g.input(random_f32({1, 2, 3}, 22));
    Id e = g.tensor(DType::Float32, {1, 2, 3}), p = g.tensor(DType::Float32, {1, 3, 2});
    gb.op("aten.exp.default", {x, e});
    gb.op("aten.permute_copy.default", {e, gb.int_list({0, 2, 1}), p});
    gb.op("aten._softmax.default", {p, gb.int_(-1), gb.boolean(false), g.output(DType::Float32, {1, 3, 2})});
  };
  auto planned = load(build, true), apart = load(build, true, false);
  EXPECT_EQ(planned.ops.size(), 3u);
  EXPECT_EQ(planned.out[0].data, apart.out[0].data);
}

}  // namespace

namespace {

// exp -> select(dim 1 of size 1, index -1) -> exp: the select is a view; a bad index still fails.
TEST(PermuteView, SelectFromASizeOneDimNeedsNoDispatch) {
  ETW_REQUIRE_GPU();
  auto build = [](int64_t index) {
    return [index](OpGraph& g) {
      auto& gb = g.gb;
      Id x = g.input(random_f32({2, 1, 8}, 23));
      Id e = g.tensor(DType::Float32, {2, 1, 8}), s = g.tensor(DType::Float32, {2, 8});
      gb.op("aten.exp.default", {x, e});
      gb.op("aten.select_copy.int", {e, gb.int_(1), gb.int_(index), s});
      gb.op("aten.exp.default", {s, g.output(DType::Float32, {2, 8})});
    };
  };
  auto planned = load(build(-1), true), apart = load(build(-1), true, false);
  EXPECT_EQ(planned.ops, (std::vector<std::string>{"aten.exp.default", "aten.exp.default"}));
  EXPECT_EQ(apart.ops.size(), 3u);
  EXPECT_EQ(planned.out[0].data, apart.out[0].data);
  EXPECT_THROW(load(build(1), true), Error);
}

}  // namespace
