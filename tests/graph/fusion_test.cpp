// Fusion at load (graph/fusion.h, ops/elementwise/fused.cpp): the same graph loaded with
// LoadOptions::fuse on and off gives equal results (bit for bit at fp32, where the fused kernel
// runs the unfused kernels' math), and the dispatch counts and labels show what was fused.
#include <cmath>
#include <cstdlib>
#include <functional>

#include "ops/elementwise/elementwise_ops.h"
#include "support/ir_chain.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct Loaded {
  std::vector<HostTensor> out;
  std::vector<std::string> ops;  // Profile op label per dispatch
  std::unique_ptr<OpGraph> g;
};

Loaded load(const std::function<void(OpGraph&)>& build, bool fuse, Precision precision = Precision::FP32) {
  Loaded r;
  r.g = std::make_unique<OpGraph>();
  build(*r.g);
  LoadOptions o;
  o.fuse = fuse;
  o.precision = precision;
  r.out = r.g->run(o);
  Profile p;
  r.g->model()->run(r.g->inputs, &p);
  for (auto& d : p.dispatches) r.ops.push_back(d.op);
  return r;
}

// x[3,5,7] * w[7] + 0.5 * b[5,1] - 2 * 0.25 -> hardswish -> clamp(-0.2, 0.7) -> * 3
void broadcast_chain(OpGraph& g) {
  Id x = g.input(random_f32({3, 5, 7}, 1, -4.f, 4.f)), w = g.input(random_f32({7}, 2)), b = g.input(random_f32({5, 1}, 3));
  auto& gb = g.gb;
  Id t1 = g.tensor(DType::Float32, {3, 5, 7}), t2 = g.tensor(DType::Float32, {3, 5, 7}),
     t3 = g.tensor(DType::Float32, {3, 5, 7}), t4 = g.tensor(DType::Float32, {3, 5, 7}),
     t5 = g.tensor(DType::Float32, {3, 5, 7});
  Id o = g.output(DType::Float32, {3, 5, 7});
  gb.op("aten.mul.Tensor", {x, w, t1});
  gb.op("aten.add.Tensor", {t1, b, gb.dbl(0.5), t2});
  gb.op("aten.sub.Scalar", {t2, gb.dbl(0.25), gb.int_(2), t3});
  gb.op("aten.hardswish.default", {t3, t4});
  gb.op("aten.clamp.default", {t4, gb.dbl(-0.2), gb.dbl(0.7), t5});
  gb.op("aten.mul.Scalar", {t5, gb.dbl(3.0), o});
}

TEST(Fusion, BroadcastScalarAlphaChainIsOneBitExactDispatch) {
  ETW_REQUIRE_GPU();
  auto fused = load(broadcast_chain, true), plain = load(broadcast_chain, false);
  ASSERT_EQ(plain.ops.size(), 6u);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[mul+add+sub+hardswish+clamp+mul]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
}

// RMSNorm tail with x read by two terms: (x * rsqrt(ms + eps)) * silu(x) * weight.
void rms_dag(OpGraph& g, std::vector<int64_t> max_dims, bool dynamic) {
  int64_t d = max_dims.back();
  Id x = g.input(random_f32(max_dims, 4), max_dims, dynamic);
  std::vector<int64_t> rd = max_dims;
  rd.back() = 1;
  Id ms = g.input(random_f32(rd, 5, 0.1f, 2.f), rd, dynamic);
  Id wt = g.input(random_f32({d}, 6));
  auto& gb = g.gb;
  auto t = [&](std::vector<int64_t> dims) { return g.tensor(DType::Float32, dims); };
  Id a = t(rd), r = t(rd), n = t(max_dims), s = t(max_dims), m = t(max_dims);
  Id o = g.output(DType::Float32, max_dims);
  gb.op("aten.add.Scalar", {ms, gb.dbl(1e-6), gb.int_(1), a});
  gb.op("aten.rsqrt.default", {a, r});
  gb.op("aten.mul.Tensor", {x, r, n});
  gb.op("aten.silu.default", {x, s});
  gb.op("aten.mul.Tensor", {n, s, m});
  gb.op("aten.mul.Tensor", {m, wt, o});
}

TEST(Fusion, DagReadingOneInputTwiceFusesAndMatches) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) { rms_dag(g, {4, 16}, false); };
  auto fused = load(build, true), plain = load(build, false);
  ASSERT_EQ(plain.ops.size(), 6u);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[add+rsqrt+mul+silu+mul+mul]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
}

TEST(Fusion, DynamicShapesRerunSmallerMatchesUnfused) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) { rms_dag(g, {6, 20}, true); };
  auto fused = load(build, true), plain = load(build, false);
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
  std::vector<HostTensor> small = {random_f32({3, 20}, 7), random_f32({3, 1}, 8, 0.1f, 2.f), fused.g->inputs[2]};
  auto f2 = fused.g->rerun(small), p2 = plain.g->rerun(small);
  ASSERT_EQ(f2[0].shape, (std::vector<int64_t>{3, 20}));
  EXPECT_TRUE(SameAsUnfused(f2[0], p2[0]));
}

TEST(Fusion, F16StorageStaysWithinHalfPrecisionOfUnfused) {
  ETW_REQUIRE_GPU();
  auto fused = load(broadcast_chain, true, Precision::FP16), plain = load(broadcast_chain, false, Precision::FP16);
  ASSERT_EQ(fused.ops.size(), 1u);
  // The unfused chain rounds each intermediate to f16; the fused one only the result.
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-2, 1e-2));
}

// exp(x) feeds both neg and add: it is materialized; neg + add still fuse.
TEST(Fusion, IntermediateWithTwoConsumersIsNotFused) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    Id x = g.input(random_f32({9, 4}, 9));
    Id e = g.tensor(DType::Float32, {9, 4}), n = g.tensor(DType::Float32, {9, 4});
    Id o = g.output(DType::Float32, {9, 4});
    g.gb.op("aten.exp.default", {x, e});
    g.gb.op("aten.neg.default", {e, n});
    g.gb.op("aten.add.Tensor", {e, n, g.gb.int_(1), o});
  };
  auto fused = load(build, true), plain = load(build, false);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.exp.default", "fused[neg+add]"}));
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
}

TEST(Fusion, IntermediateGraphOutputIsNotFused) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    Id x = g.input(random_f32({5, 3}, 10));
    Id e = g.output(DType::Float32, {5, 3}), o = g.output(DType::Float32, {5, 3});
    g.gb.op("aten.exp.default", {x, e});
    g.gb.op("aten.neg.default", {e, o});
  };
  auto fused = load(build, true);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.exp.default", "aten.neg.default"}));
}

TEST(Fusion, IntegerChainsAreLeftToTheirOwnKernels) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    Id x = g.input(random_i32({8}, 11, -5, 5));
    Id a = g.tensor(DType::Int32, {8});
    Id o = g.output(DType::Int32, {8});
    g.gb.op("aten.abs.default", {x, a});
    g.gb.op("aten.neg.default", {a, o});
  };
  EXPECT_EQ(load(build, true).ops.size(), 2u);
}

// Whisper's stem: gelu(conv) [B, C, T] -> permute(0, 2, 1) -> + positions [T, C]. The add is the
// permute's only reader, so the fused kernel reads the permute's input through the permutation.
void permute_add(OpGraph& g, std::vector<int64_t> max_dims, bool dynamic) {
  Id x = g.input(random_f32(max_dims, 20), max_dims, dynamic);
  std::vector<int64_t> pd{max_dims[0], max_dims[2], max_dims[1]};
  Id pos = g.input(random_f32({pd[1], pd[2]}, 21));
  Id p = g.tensor(DType::Float32, pd);
  Id o = g.output(DType::Float32, pd);
  g.gb.op("aten.permute_copy.default", {x, g.gb.int_list({0, 2, 1}), p});
  g.gb.op("aten.add.Tensor", {p, pos, g.gb.int_(1), o});
}

TEST(Fusion, PermuteReadOnlyByAnAddBecomesAPermutedReadOfItsInput) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) { permute_add(g, {2, 5, 7}, false); };
  auto fused = load(build, true), plain = load(build, false);
  ASSERT_EQ(plain.ops.size(), 2u);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[permute+add]"});
  ASSERT_EQ(fused.out[0].shape, (std::vector<int64_t>{2, 7, 5}));
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
}

// Negative dims, rank 4, a broadcast operand and a longer chain: x[3,4,5,6] permuted by
// (-1, 0, 2, 1) to [6,3,5,4], times w[4], relu.
TEST(Fusion, PermuteWithNegativeDimsFeedsAChainThatBroadcasts) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    Id x = g.input(random_f32({3, 4, 5, 6}, 22)), w = g.input(random_f32({4}, 23));
    Id p = g.tensor(DType::Float32, {6, 3, 5, 4}), m = g.tensor(DType::Float32, {6, 3, 5, 4});
    Id o = g.output(DType::Float32, {6, 3, 5, 4});
    g.gb.op("aten.permute_copy.default", {x, g.gb.int_list({-1, 0, 2, 1}), p});
    g.gb.op("aten.mul.Tensor", {p, w, m});
    g.gb.op("aten.relu.default", {m, o});
  };
  auto fused = load(build, true), plain = load(build, false);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[permute+mul+relu]"});
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
}

// A view is fixed at load: with a dynamic input the permute stays a copy, and reruns smaller.
TEST(Fusion, PermuteOfADynamicInputStaysACopyAndRerunsSmallerLikeTheUnfused) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) { permute_add(g, {4, 6, 3}, true); };
  auto fused = load(build, true), plain = load(build, false);
  ASSERT_EQ(fused.ops, (std::vector<std::string>{"aten.permute_copy.default", "aten.add.Tensor"}));
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
  std::vector<HostTensor> small = {random_f32({2, 6, 3}, 24), fused.g->inputs[1]};
  auto f2 = fused.g->rerun(small), p2 = plain.g->rerun(small);
  ASSERT_EQ(f2[0].shape, (std::vector<int64_t>{2, 3, 6}));
  EXPECT_TRUE(SameAsUnfused(f2[0], p2[0]));
}

// A permute read by two calls, or one whose output leaves the graph, is materialized.
TEST(Fusion, PermuteWithASecondReaderOrAsAGraphOutputStays) {
  ETW_REQUIRE_GPU();
  auto two_readers = [](OpGraph& g) {
    Id x = g.input(random_f32({4, 3}, 25));
    Id p = g.tensor(DType::Float32, {3, 4}), e = g.tensor(DType::Float32, {3, 4});
    Id o = g.output(DType::Float32, {3, 4});
    g.gb.op("aten.permute_copy.default", {x, g.gb.int_list({1, 0}), p});
    g.gb.op("aten.exp.default", {p, e});
    g.gb.op("aten.add.Tensor", {p, e, g.gb.int_(1), o});
  };
  auto fused = load(two_readers, true), plain = load(two_readers, false);
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.permute_copy.default", "fused[exp+add]"}));
  EXPECT_TRUE(SameAsUnfused(fused.out[0], plain.out[0]));
  auto as_output = [](OpGraph& g) {
    Id x = g.input(random_f32({4, 3}, 26));
    Id p = g.output(DType::Float32, {3, 4}), o = g.output(DType::Float32, {3, 4});
    g.gb.op("aten.permute_copy.default", {x, g.gb.int_list({1, 0}), p});
    g.gb.op("aten.neg.default", {p, o});
  };
  EXPECT_EQ(load(as_output, true).ops, (std::vector<std::string>{"aten.permute_copy.default", "aten.neg.default"}));
}

// A file may name the synthetic op, but cannot spell its expression: whatever it puts there is a
// Format error naming the op.
TEST(Fusion, AFusedCallInAFileIsAFormatError) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({4}, 12));
  Id o = g.output(DType::Float32, {4});
  g.gb.op("etwebgpu.fused_elementwise", {x, g.gb.str("u 13 x0 00000000 00000000 00000000 00000000 silu"), o});
  std::string err = load_error([&] { g.run(); });
  EXPECT_TRUE(has(err, "Format")) << err;
  EXPECT_TRUE(has(err, "etwebgpu.fused_elementwise")) << err;
  EXPECT_TRUE(has(err, "only the load-time fusion makes")) << err;
}

using Kind = format::VkExprOperand::Kind;

format::VkExprTerm unary(uint32_t op, format::VkExprOperand a, const char* label) {
  format::VkExprTerm t;
  t.op = op;
  t.a = a;
  t.label = label;
  return t;
}
format::VkExprTerm binary(uint32_t op, format::VkExprOperand a, format::VkExprOperand b, const char* label) {
  format::VkExprTerm t = unary(op, a, label);
  t.binary = true;
  t.b = b;
  t.c[0] = 1.f;  // alpha
  return t;
}

// The fused kernel on an expression made in memory (as the pass makes them): silu(x) * y.
TEST(Fusion, ExpressionRunsLikeTheOps) {
  ETW_REQUIRE_GPU();
  auto xv = random_f32({4, 3}, 13), yv = random_f32({3}, 14);
  IrChain c;
  int32_t x = c.input({4, 3}), y = c.input({3});
  format::VkExpr e;
  e.terms = {unary(ops::code(ops::UnaryOp::Silu), {Kind::Input, 0}, "silu"),
             binary(ops::code(ops::BinaryOp::Mul), {Kind::Term, 0}, {Kind::Input, 1}, "mul")};
  c.op("etwebgpu.fused_elementwise", {x, y, c.expr(e), c.output({4, 3})});
  auto out = run_ir(c.ir, {xv, yv})[0];
  std::vector<double> ref, xs = f64(xv), ys = f64(yv);
  for (size_t i = 0; i < xs.size(); ++i) ref.push_back(xs[i] / (1 + std::exp(-xs[i])) * ys[i % 3]);
  EXPECT_TRUE(Close(out, ref_tensor({4, 3}, ref)));
}

// An epilogue with more tensor inputs than its host's kernels have bindings left for is a Limit
// error naming the op: three for fused attention (two are left), four for a linear (three).
TEST(Fusion, AnEpilogueWithMoreInputsThanItsHostBindsIsALimitError) {
  ETW_REQUIRE_GPU();
  auto sum_of = [](uint32_t inputs) {
    format::VkExpr e;
    format::VkExprOperand acc{Kind::Input, 0};
    for (uint32_t k = 1; k < inputs; ++k) {
      e.terms.push_back(binary(ops::code(ops::BinaryOp::Add), acc, {Kind::Input, k}, "add"));
      acc = {Kind::Term, k - 1};
    }
    e.views.assign(inputs, std::nullopt);
    return e;
  };
  auto expect_limit = [](IrChain& c, const std::vector<HostTensor>& in, const std::string& want) {
    try {
      run_ir(c.ir, in);
      ADD_FAILURE() << "loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Limit) << e.what();
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  {
    IrChain c;
    const std::vector<int64_t> d{1, 2, 4, 8};
    int32_t q = c.input(d), k = c.input(d), v = c.input(d), e1 = c.input(d), e2 = c.input(d), e3 = c.input(d);
    c.op("etwebgpu.attention", {q, k, v, c.null(), c.null(), c.boolean(false), c.null(), c.expr(sum_of(4)), e1, e2, e3, c.output(d)});
    std::vector<HostTensor> in;
    for (int i = 0; i < 6; ++i) in.push_back(random_f32(d, 40 + i));
    expect_limit(c, in, "etwebgpu.attention");
    expect_limit(c, in, "3 epilogue inputs; at most 2");
  }
  {
    IrChain c;
    int32_t x = c.input({2, 3}), w = c.input({4, 3});
    std::vector<int32_t> args{x, w, c.null(), c.expr(sum_of(5))};
    std::vector<HostTensor> in{random_f32({2, 3}, 50), random_f32({4, 3}, 51)};
    for (int i = 0; i < 4; ++i) args.push_back(c.input({2, 4})), in.push_back(random_f32({2, 4}, 52 + i));
    args.push_back(c.output({2, 4}));
    c.op("aten.linear.default", args);
    expect_limit(c, in, "4 epilogue inputs; at most 3");
  }
}

format::VkExprView view(int64_t offset, std::vector<int64_t> dims, std::vector<int64_t> strides, const char* label) {
  format::VkExprView v;
  v.offset = offset;
  v.dims = std::move(dims);
  v.strides = std::move(strides);
  v.label = label;
  return v;
}

// An input read through a view: -x^T.
TEST(Fusion, ViewedInputReadsThroughTheView) {
  ETW_REQUIRE_GPU();
  auto xv = random_f32({2, 3}, 28);
  IrChain c;
  int32_t x = c.input({2, 3});
  format::VkExpr e;
  e.terms = {unary(ops::code(ops::UnaryOp::Neg), {Kind::Input, 0}, "neg")};
  e.views = {view(0, {3, 2}, {1, 3}, "permute")};
  c.op("etwebgpu.fused_elementwise", {x, c.expr(e), c.output({3, 2})});
  auto out = run_ir(c.ir, {xv})[0];
  std::vector<double> ref, xs = f64(xv);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) ref.push_back(-xs[j * 3 + i]);
  EXPECT_TRUE(Close(out, ref_tensor({3, 2}, ref)));
}

// A cat of two inputs read in place: cat(-a, b) along dim 1 of [2, 5], a [2, 3] and b [2, 2].
TEST(Fusion, CatTermSelectsEachPartInItsPlace) {
  ETW_REQUIRE_GPU();
  auto av = random_f32({2, 3}, 30), bv = random_f32({2, 2}, 31);
  IrChain c;
  int32_t a = c.input({2, 3}), b = c.input({2, 2});
  format::VkExpr e;
  format::VkExprTerm cat;
  cat.binary = true;
  cat.a = {Kind::Term, 0};
  cat.b = {Kind::Input, 1};
  cat.split = format::VkExprTerm::Split{1, 3};
  cat.label = "cat";
  e.terms = {unary(ops::code(ops::UnaryOp::Neg), {Kind::Input, 0}, "neg"), cat};
  e.views = {view(0, {2, 3}, {3, 1}, ""), view(0, {2, 2}, {2, 1}, "")};
  e.views[0]->part = format::VkExprView::Part{1, 0, 5};
  e.views[1]->part = format::VkExprView::Part{1, 3, 5};
  c.op("etwebgpu.fused_elementwise", {a, b, c.expr(e), c.output({2, 5})});
  auto out = run_ir(c.ir, {av, bv})[0];
  std::vector<double> ref, as = f64(av), bs = f64(bv);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j) ref.push_back(j < 3 ? -as[i * 3 + j] : bs[i * 2 + j - 3]);
  EXPECT_TRUE(Close(out, ref_tensor({2, 5}, ref), 0, 0));
}

// A malformed expression (a bug of a pass, since no file can hold one) is an error naming the
// op and the fault, never a kernel that reads past its inputs.
TEST(Fusion, MalformedExpressionIsAnErrorNamingIt) {
  ETW_REQUIRE_GPU();
  const uint32_t neg = ops::code(ops::UnaryOp::Neg), mul = ops::code(ops::BinaryOp::Mul);
  struct Bad {
    format::VkExpr e;
    const char* says;
  };
  std::vector<Bad> bad(12);
  bad[0].says = "empty fused expression";
  bad[1].e.terms = {unary(neg, {Kind::Input, 1}, "neg")}, bad[1].says = "refers past";
  bad[2].e.terms = {unary(neg, {Kind::Term, 0}, "neg")}, bad[2].says = "refers past";
  bad[3].e.terms = {unary(99, {Kind::Input, 0}, "neg")}, bad[3].says = "not a float op";
  bad[4].e.terms = {binary(mul, {Kind::Input, 0}, {Kind::Term, 1}, "mul")}, bad[4].says = "refers past";
  bad[5].e.terms = {unary(neg, {Kind::Input, 0}, "Neg!")}, bad[5].says = "bad label";
  for (size_t k = 6; k < 11; ++k) bad[k].e.terms = {unary(neg, {Kind::Input, 0}, "neg")};
  bad[6].e.views = {view(0, {2, 2}, {1}, "permute")}, bad[6].says = "an input view of 2 dims and 1 strides";
  bad[7].e.views = {view(1, {2, 2}, {2, 1}, "slice")}, bad[7].says = "reads elements 1 to 4 of [2, 2]";
  bad[8].e.views = {view(1, {2}, {-2}, "flip")}, bad[8].says = "reads elements -1 to 1";
  bad[9].e.views = {view(0, {2, 2}, {2, 1}, "Slice!")}, bad[9].says = "bad label";
  bad[10].e.views = {view(0, {2, 2}, {2, 1}, "")}, bad[10].says = "placed outside its cat";
  bad[10].e.views[0]->part = format::VkExprView::Part{1, 1, 2};
  bad[11].e.terms = {unary(neg, {Kind::Input, 0}, "neg"), binary(0, {Kind::Term, 0}, {Kind::Input, 0}, "cat")};
  bad[11].e.terms[1].split = format::VkExprTerm::Split{2, 1}, bad[11].says = "a cat term along dim 2 of a rank 2 output";
  for (size_t k = 0; k < bad.size(); ++k) {
    IrChain c;
    int32_t x = c.input({2, 2});
    c.op("etwebgpu.fused_elementwise", {x, c.expr(bad[k].e), c.output({2, 2})});
    std::string err = load_error([&] { run_ir(c.ir, {random_f32({2, 2}, 29)}); });
    EXPECT_TRUE(has(err, "etwebgpu.fused_elementwise")) << k << ": " << err;
    EXPECT_TRUE(has(err, bad[k].says)) << k << ": " << err;
  }
}

}  // namespace
