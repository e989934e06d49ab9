// View-like copies and scatters (t, transpose, narrow, diagonal, unfold, roll, tril, stack,
// unbind, select_scatter, slice_scatter, copy, fill, lift_fresh/detach, empty, native_dropout)
// against fp64 references; both the VkGraph and the KernelCall (out-variant) spellings.
#include <cmath>
#include <limits>

#include "reference/memory/view_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// Loads a one-op graph and returns the load error ("" when none).
std::string load_err(const std::string& op, const HostTensor& a, const std::vector<int64_t>& out_dims,
                     const std::function<std::vector<Id>(OpGraph&)>& mid) {
  return load_error([&] { run1(op, a, out_dims, mid); });
}

TEST(OpViewTranspose, SwapsNegativeDimsOnRankFourAndTransposesWithT) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 3, 4, 5}, 1);
  auto ref = ref::transpose(a, -1, 1);
  auto got = run1("aten.transpose_copy.int", a, ref.shape, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(-1), g.gb.int_(1)}; });
  EXPECT_TRUE(CloseNan(got, ref, 0, 0));
  auto m = random_i32({3, 7}, 2, -50, 50);
  auto tref = ref::transpose(m, 0, 1);
  EXPECT_TRUE(CloseNan(run1("aten.t_copy.default", m, tref.shape, [](OpGraph&) { return std::vector<Id>{}; }), tref, 0, 0));
  auto v = random_f32({5}, 3);  // t() of a vector is the vector
  EXPECT_TRUE(CloseNan(run1("aten.t_copy.default", v, {5}, [](OpGraph&) { return std::vector<Id>{}; }), v, 0, 0));
}

TEST(OpViewTranspose, ZeroDimTensorAcceptsDimsZeroAndMinusOne) {
  ETW_REQUIRE_GPU();
  auto s = HostTensor::from<float>(DType::Float32, {}, {4.25f});
  auto got = run1("aten.transpose_copy.int", s, {}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(0), g.gb.int_(-1)}; });
  EXPECT_TRUE(CloseNan(got, s, 0, 0));
  auto e = load_err("aten.transpose_copy.int", s, {}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(0), g.gb.int_(1)}; });
  EXPECT_TRUE(has(e, "dim 1 out of range")) << e;
}

TEST(OpViewTranspose, TOfRankThreeIsRefusedAtLoad) {
  ETW_REQUIRE_GPU();
  auto e = load_err("aten.t_copy.default", random_f32({2, 2, 2}, 1), {2, 2, 2}, [](OpGraph&) { return std::vector<Id>{}; });
  EXPECT_TRUE(has(e, "aten.t_copy.default") && has(e, "<= 2 dimensions")) << e;
}

TEST(OpViewNarrow, NegativeStartWrapsOnceAndZeroLengthIsEmpty) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({4, 9, 3}, 4);
  auto ref = ref::narrow(a, 1, -7, 5);
  auto got = run1("aten.narrow_copy.default", a, ref.shape, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_(1), g.gb.int_(-7), g.gb.int_(5)};
  });
  EXPECT_TRUE(CloseNan(got, ref, 0, 0));
  auto empty = run1("aten.narrow_copy.default", a, {4, 0, 3}, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_(-2), g.gb.int_(9), g.gb.int_(0)};
  });
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{4, 0, 3}));
}

TEST(OpViewNarrow, LengthPastTheEndIsAnErrorNamingTheOp) {
  ETW_REQUIRE_GPU();
  auto e = load_err("aten.narrow_copy.default", random_f32({4, 9}, 4), {4, 5}, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_(1), g.gb.int_(6), g.gb.int_(5)};
  });
  EXPECT_TRUE(has(e, "aten.narrow_copy.default") && has(e, "exceeds dimension size (9)")) << e;
}

TEST(OpViewDiagonal, PositiveNegativeAndOutOfRangeOffsetsOnBatchedInput) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4, 2, 6}, 5);
  for (int64_t off : {0, 2, -1, -3, 7}) {
    auto ref = ref::diagonal(a, off, 3, -3);
    auto got = run1("aten.diagonal_copy.default", a, ref.shape, [off](OpGraph& g) {
      return std::vector<Id>{g.gb.int_(off), g.gb.int_(3), g.gb.int_(-3)};
    });
    EXPECT_TRUE(CloseNan(got, ref, 0, 0)) << "offset " << off;
  }
  auto e = load_err("aten.diagonal_copy.default", a, {3, 4, 2}, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_(0), g.gb.int_(1), g.gb.int_(-3)};
  });
  EXPECT_TRUE(has(e, "cannot be identical")) << e;
}

TEST(OpViewUnfold, WindowsWithStepAndTheWindowDimLast) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 10, 2}, 6);
  for (auto sz : std::vector<std::pair<int64_t, int64_t>>{{3, 2}, {10, 1}, {1, 4}, {0, 3}}) {
    int64_t size = sz.first, step = sz.second;  // named locals: clang 14 cannot capture structured bindings
    auto ref = ref::unfold(a, -2, size, step);
    auto got = run1("aten.unfold_copy.default", a, ref.shape, [size, step](OpGraph& g) {
      return std::vector<Id>{g.gb.int_(-2), g.gb.int_(size), g.gb.int_(step)};
    });
    EXPECT_TRUE(CloseNan(got, ref, 0, 0)) << size << " " << step;
  }
  auto e = load_err("aten.unfold_copy.default", a, {3, 1, 2, 11}, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_(1), g.gb.int_(11), g.gb.int_(1)};
  });
  EXPECT_TRUE(has(e, "maximum size for tensor at dimension 1 is 10 but size is 11")) << e;
}

TEST(OpViewRoll, PositiveNegativeLargeAndRepeatedShifts) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({3, 5, 4}, 7, -100, 100);
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2}, {1}}, {{-3, 17}, {0, -1}}, {{1, 2}, {2, 2}}, {{-13}, {}}};
  for (auto& c : cases) {
    const auto& shifts = c.first;
    const auto& dims = c.second;
    auto ref = ref::roll(a, shifts, dims);
    auto got = run1("aten.roll.default", a, ref.shape, [&](OpGraph& g) {
      return std::vector<Id>{g.gb.int_list(shifts), g.gb.int_list(dims)};
    });
    EXPECT_TRUE(CloseNan(got, ref, 0, 0)) << shape_str(shifts) << " / " << shape_str(dims);
  }
  auto e = load_err("aten.roll.default", a, {3, 5, 4}, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_list({1, 2}), g.gb.int_list({0})};
  });
  EXPECT_TRUE(has(e, "shifts and dimensions must align")) << e;
}

TEST(OpViewRoll, DynamicInputRollsTheLiveShape) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({5, 6}, 30), small = random_f32({3, 4}, 31);
  OpGraph g;
  Id x = g.input(big, {5, 6}, true);
  Id o = g.output(DType::Float32, {5, 6});
  g.gb.op("aten.roll.default", {x, g.gb.int_list({2, -1}), g.gb.int_list({0, 1}), o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::roll(big, {2, -1}, {0, 1}), 0, 0));
  EXPECT_TRUE(CloseNan(g.rerun({small})[0], ref::roll(small, {2, -1}, {0, 1}), 0, 0));
}

TEST(OpViewTril, DiagonalsZerosAboveAndNaNIsZeroedNotPropagated) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 4, 6}, 8);
  a.as<float>()[5] = std::numeric_limits<float>::quiet_NaN();  // [0, 0, 5]: above the diagonal
  a.as<float>()[6] = std::numeric_limits<float>::infinity();   // [0, 1, 0]: kept
  for (int64_t diag : {0, 2, -1, -10, 10}) {
    auto ref = ref::tril(a, diag);
    auto got = run1("aten.tril.default", a, ref.shape, [diag](OpGraph& g) { return std::vector<Id>{g.gb.int_(diag)}; });
    EXPECT_TRUE(CloseNan(got, ref, 0, 0)) << "diagonal " << diag;
  }
  auto e = load_err("aten.tril.default", random_f32({5}, 1), {5}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(0)}; });
  EXPECT_TRUE(has(e, "at least 2 dimensions")) << e;
}

TEST(OpViewStack, StacksAtEveryPositionIncludingNegativeAndLast) {
  ETW_REQUIRE_GPU();
  std::vector<HostTensor> xs = {random_f32({2, 3}, 9), random_f32({2, 3}, 10), random_f32({2, 3}, 11)};
  for (int64_t d : {0, 1, 2, -1, -3}) {
    auto ref = ref::stack(xs, d);
    OpGraph g;
    std::vector<Id> ins;
    for (auto& x : xs) ins.push_back(g.input(x));
    Id o = g.output(DType::Float32, ref.shape);
    g.gb.op("aten.stack.default", {g.gb.value_list(ins), g.gb.int_(d), o});
    EXPECT_TRUE(CloseNan(g.run()[0], ref, 0, 0)) << "dim " << d;
  }
}

TEST(OpViewStack, UnequalShapesAreAnError) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id a = g.input(random_f32({2, 3}, 1)), b = g.input(random_f32({3, 2}, 2));
  Id o = g.output(DType::Float32, {2, 2, 3});
  g.gb.op("aten.stack.default", {g.gb.value_list({a, b}), g.gb.int_(0), o});
  auto e = load_error([&] { g.run(); });
  EXPECT_TRUE(has(e, "aten.stack.default") && has(e, "equal size")) << e;
}

TEST(OpViewUnbind, EachOutputIsOneSliceAlongANegativeDim) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({2, 3, 4}, 12, -9, 9);
  OpGraph g;
  Id x = g.input(a);
  std::vector<Id> outs;
  for (int i = 0; i < 3; ++i) outs.push_back(g.output(DType::Int32, {2, 4}));
  g.gb.op("aten.unbind_copy.int", {x, g.gb.int_(-2), g.gb.value_list(outs)});
  auto got = g.run();
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(CloseNan(got[i], ref::select(a, 1, i), 0, 0)) << i;
}

TEST(OpViewSelectScatter, WritesSrcIntoTheSelectedSliceAndCopiesTheRest) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({3, 4, 5}, 13), src = random_f32({3, 5}, 14);
  auto ref = ref::select_scatter(self, src, 1, -1);
  OpGraph g;
  Id s = g.input(self), r = g.input(src);
  Id o = g.output(DType::Float32, {3, 4, 5});
  g.gb.op("aten.select_scatter.default", {s, r, g.gb.int_(1), g.gb.int_(-1), o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref, 0, 0));
}

TEST(OpViewSelectScatter, WrongSrcShapeAndIndexOutOfRangeAreErrors) {
  ETW_REQUIRE_GPU();
  auto build = [](std::vector<int64_t> src_shape, int64_t index) {
    OpGraph g;
    Id s = g.input(random_f32({3, 4}, 1)), r = g.input(random_f32(src_shape, 2));
    Id o = g.output(DType::Float32, {3, 4});
    g.gb.op("aten.select_scatter.default", {s, r, g.gb.int_(0), g.gb.int_(index), o});
    return load_error([&] { g.run(); });
  };
  EXPECT_TRUE(has(build({3}, 0), "expected src to have a size equal to the slice")) << build({3}, 0);
  EXPECT_TRUE(has(build({4}, 3), "index 3 out of range")) << build({4}, 3);
}

TEST(OpViewSliceScatter, StepNegativeStartAndClampedEnd) {
  ETW_REQUIRE_GPU();
  auto self = random_i32({4, 9}, 15, -100, 100);
  struct Case { std::optional<int64_t> start, end; int64_t step; std::vector<int64_t> src; };
  for (auto c : std::vector<Case>{{1, 8, 3, {4, 3}}, {-5, std::nullopt, 2, {4, 3}}, {std::nullopt, 100, 4, {4, 3}},
                                  {6, 2, 1, {4, 0}}}) {
    auto src = random_i32(c.src, 16, 500, 600);
    auto ref = ref::slice_scatter(self, src, -1, c.start, c.end, c.step);
    OpGraph g;
    Id s = g.input(self), r = g.input(src);
    Id o = g.output(DType::Int32, {4, 9});
    g.gb.op("aten.slice_scatter.default", {s, r, g.gb.int_(-1), c.start ? g.gb.int_(*c.start) : g.gb.null(),
                                           c.end ? g.gb.int_(*c.end) : g.gb.null(), g.gb.int_(c.step), o});
    EXPECT_TRUE(CloseNan(g.run()[0], ref, 0, 0));
  }
}

TEST(OpViewCopy, CopyBroadcastsSrcIntoSelfsShape) {
  ETW_REQUIRE_GPU();
  auto self = random_f32({2, 3, 4}, 17), src = random_f32({3, 1}, 18);
  OpGraph g;
  Id s = g.input(self), r = g.input(src);
  Id o = g.output(DType::Float32, {2, 3, 4});
  g.gb.op("aten.copy.default", {s, r, g.gb.boolean(false), o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::broadcast_to(src, {2, 3, 4}), 0, 0));
}

TEST(OpViewCopy, NonBroadcastableSrcIsAnError) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id s = g.input(random_f32({2, 3}, 1)), r = g.input(random_f32({2}, 2));
  Id o = g.output(DType::Float32, {2, 3});
  g.gb.op("aten.copy.default", {s, r, g.gb.boolean(false), o});
  auto e = load_error([&] { g.run(); });
  EXPECT_TRUE(has(e, "aten.copy.default") && has(e, "not broadcastable")) << e;
}

// copy_ casts src to self's dtype: float -> int truncates toward zero, anything -> bool is != 0
// (NaN true, -0.0 false), int/bool -> float exact.
TEST(OpViewCopy, CopyCastsSrcToSelfsDtype) {
  ETW_REQUIRE_GPU();
  auto f = HostTensor::from<float>(DType::Float32, {2, 3}, {-2.75f, -0.0f, 0.5f, 3.99f, std::nanf(""), -1e6f});
  auto run = [&](HostTensor src, DType self_dtype) {
    OpGraph g;
    Id s = g.input(HostTensor(self_dtype, {2, 3})), r = g.input(src);
    Id o = g.output(self_dtype, {2, 3});
    g.gb.op("aten.copy.default", {s, r, g.gb.boolean(false), o});
    return g.run()[0];
  };
  auto to_int = run(HostTensor::from<float>(DType::Float32, {1, 3}, {-2.75f, 0.5f, 3.99f}), DType::Int32);
  EXPECT_TRUE(CloseNan(to_int, HostTensor::from<int64_t>(DType::Int64, {2, 3}, {-2, 0, 3, -2, 0, 3}), 0, 0));
  auto to_bool = run(f, DType::Bool);
  EXPECT_EQ(std::vector<uint8_t>(to_bool.data.begin(), to_bool.data.end()), (std::vector<uint8_t>{1, 0, 1, 1, 1, 1}));
  auto ints = random_i32({2, 3}, 3, -1000, 1000);
  auto as_f64 = [](const HostTensor& t) { return ref_tensor(t.shape, t.to_f64()); };
  EXPECT_TRUE(CloseNan(run(ints, DType::Float32), as_f64(ints), 0, 0));
  EXPECT_TRUE(CloseNan(run(ints, DType::Int64), ints, 0, 0));
  auto b = random_bool({2, 3}, 4);
  EXPECT_TRUE(CloseNan(run(b, DType::Float32), as_f64(b), 0, 0));
}

TEST(OpViewFill, ScalarFillUsesTheOutputDtypeAndTensorFillBroadcastsAZeroDimValue) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({3, 5}, 19, -5, 5);
  auto got = run1("aten.fill.Scalar", a, {3, 5}, [](OpGraph& g) { return std::vector<Id>{g.gb.dbl(-2.75)}; });
  EXPECT_TRUE(CloseNan(got, ref::broadcast_to(HostTensor::from<int32_t>(DType::Int32, {}, {-2}), {3, 5}), 0, 0));
  auto f = random_f32({4, 2}, 20);
  auto inf = run1("aten.fill.Scalar", f, {4, 2}, [](OpGraph& g) { return std::vector<Id>{g.gb.dbl(-INFINITY)}; });
  EXPECT_TRUE(std::isinf(inf.as<float>()[7]) && inf.as<float>()[7] < 0);
  auto v = HostTensor::from<float>(DType::Float32, {}, {3.5f});
  OpGraph g;
  Id x = g.input(f), val = g.input(v);
  Id o = g.output(DType::Float32, {4, 2});
  g.gb.op("aten.fill.Tensor", {x, val, o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::broadcast_to(v, {4, 2}), 0, 0));
  // A float value filling an int tensor is truncated, as fill_ casts it.
  OpGraph gi;
  Id xi = gi.input(a), vi = gi.input(HostTensor::from<float>(DType::Float32, {}, {-3.9f}));
  Id oi = gi.output(DType::Int32, {3, 5});
  gi.gb.op("aten.fill.Tensor", {xi, vi, oi});
  EXPECT_TRUE(CloseNan(gi.run()[0], ref::broadcast_to(HostTensor::from<int32_t>(DType::Int32, {}, {-3}), {3, 5}), 0, 0));
}

TEST(OpViewFill, NonScalarFillValueIsAnError) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({4, 2}, 1)), val = g.input(random_f32({2}, 2));
  Id o = g.output(DType::Float32, {4, 2});
  g.gb.op("aten.fill.Tensor", {x, val, o});
  auto e = load_error([&] { g.run(); });
  EXPECT_TRUE(has(e, "aten.fill.Tensor") && has(e, "0-dimension value tensor")) << e;
}

TEST(OpViewCopy, LiftFreshAndDetachCopyTheInput) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4}, 21);
  for (const char* op : {"aten.lift_fresh_copy.default", "aten.detach_copy.default"})
    EXPECT_TRUE(CloseNan(run1(op, a, {3, 4}, [](OpGraph&) { return std::vector<Id>{}; }), a, 0, 0)) << op;
}

TEST(OpViewEmpty, TakesTheRequestedShape) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({1}, 1));  // a graph needs an input
  Id y = g.output(DType::Float32, {1});
  g.gb.op("aten.alias_copy.default", {x, y});
  Id o = g.output(DType::Float32, {2, 0, 3});
  Id n = g.gb.null();
  g.gb.op("aten.empty.memory_format", {g.gb.int_list({2, 0, 3}), n, n, n, n, n, o});
  EXPECT_EQ(g.run()[1].shape, (std::vector<int64_t>{2, 0, 3}));
}

TEST(OpViewDropout, InferenceIsIdentityWithAnAllTrueMaskAndTrainingIsUnsupported) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 7}, 22);
  auto build = [&](int train, double p) {  // train -1 = None
    OpGraph g;
    Id x = g.input(a);
    Id y = g.output(DType::Float32, {3, 7}), m = g.output(DType::Bool, {3, 7});
    Id t = train < 0 ? g.gb.null() : g.gb.boolean(train != 0);
    g.gb.op("aten.native_dropout.default", {x, g.gb.dbl(p), t, g.gb.value_list({y, m})});
    return g.run();
  };
  for (auto [train, p] : std::vector<std::pair<int, double>>{{0, 0.5}, {1, 0.0}}) {
    auto out = build(train, p);
    EXPECT_TRUE(CloseNan(out[0], a, 0, 0));
    EXPECT_TRUE(CloseNan(out[1], ref::broadcast_to(HostTensor::from<uint8_t>(DType::Bool, {}, {1}), {3, 7}), 0, 0));
  }
  auto e = load_error([&] { build(1, 0.5); });
  EXPECT_TRUE(has(e, "aten.native_dropout.default") && has(e, "training-mode dropout")) << e;
  auto e2 = load_error([&] { build(-1, 0.1); });
  EXPECT_TRUE(has(e2, "train=None")) << e2;
}

// Out-variant KernelCalls map to the same kernels: generic ".out", "X_out", a special mapping
// (empty.out) and a TensorList out (unbind_copy.int_out).
TEST(OpViewKernelCall, RollTransposeEmptyAndUnbindOutVariantsRunAsTheirOps) {
  ETW_REQUIRE_GPU();
  auto av = random_f32({3, 4}, 23);
  ProgramBuilder p;
  auto a = p.tensor(DType::Float32, {3, 4});
  auto r = p.tensor(DType::Float32, {3, 4}), t = p.tensor(DType::Float32, {4, 3}), e = p.tensor(DType::Float32, {2, 5});
  std::vector<ProgramBuilder::Id> u;
  for (int i = 0; i < 4; ++i) u.push_back(p.tensor(DType::Float32, {3}));
  p.input(a);
  p.kernel("aten::roll", "out", {a, p.int_list({1}), p.int_list({1}), r});
  p.kernel("aten::transpose_copy", "int_out", {r, p.int_(0), p.int_(1), t});
  p.kernel("aten::empty", "out", {p.int_list({2, 5}), p.null(), e});
  p.kernel("aten::unbind_copy", "int_out", {a, p.int_(1), p.tensor_list(u)});
  p.output(t);
  p.output(e);
  for (auto id : u) p.output(id);
  auto model = Model::load_bytes(p.serialize());
  for (auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto out = model->run({av});
  EXPECT_TRUE(CloseNan(out[0], ref::transpose(ref::roll(av, {1}, {1}), 0, 1), 0, 0));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 5}));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(CloseNan(out[2 + i], ref::select(av, 1, i), 0, 0)) << i;
}

// native_dropout.out (2 outs: output and mask) as a KernelCall runs the same inference kernel.
TEST(OpViewKernelCall, NativeDropoutOutVariantPassesBothOutsAsOneList) {
  ETW_REQUIRE_GPU();
  auto av = random_f32({2, 5}, 24);
  ProgramBuilder p;
  auto a = p.tensor(DType::Float32, {2, 5});
  auto y = p.tensor(DType::Float32, {2, 5}), m = p.tensor(DType::Bool, {2, 5});
  p.input(a);
  p.kernel("aten::native_dropout", "out", {a, p.dbl(0.25), p.boolean(false), y, m}, 2);
  p.output(y);
  p.output(m);
  auto model = Model::load_bytes(p.serialize());
  for (auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto out = model->run({av});
  EXPECT_TRUE(CloseNan(out[0], av, 0, 0));
  EXPECT_TRUE(CloseNan(out[1], ref::broadcast_to(HostTensor::from<uint8_t>(DType::Bool, {}, {1}), {2, 5}), 0, 0));
}

}  // namespace
