// var / var_mean, prod, max/min (with indices and whole-tensor), mean.default, any.dims against fp64
// references (tests/reference/reduction), in both spellings (VkGraph OperatorCall and out-variant
// KernelCall, including the multi-output ones whose outs travel as one ValueList).
#include <cmath>
#include <limits>
#include <optional>

#include "etwebgpu/builder.h"
#include "reference/reduction/reduction_ref.h"
#include "reference/reduction/stats_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
using ref::Reduce;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// var.correction [self, dim, correction, keepdim, out]
HostTensor run_var(const HostTensor& x, std::optional<std::vector<int64_t>> dims, std::optional<double> correction,
                   bool keepdim, std::vector<int64_t> out_shape) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, out_shape);
  g.gb.op("aten.var.correction", {in, dims ? g.gb.int_list(*dims) : g.gb.null(), correction ? g.gb.dbl(*correction) : g.gb.null(),
                                  g.gb.boolean(keepdim), o});
  return g.run()[0];
}

TEST(OpVar, CorrectionsAndNegativeDimsMatchReferenceOnShortAndLongRows) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 5, 7}, 500, -4, 4);
  for (double c : {0.0, 1.0, 2.0}) {
    for (bool kd : {false, true}) {
      auto ref = ref::var(x, {-1}, c, kd);
      EXPECT_TRUE(CloseNan(run_var(x, std::vector<int64_t>{-1}, c, kd, ref.shape), ref, 1e-5, 1e-4)) << c << kd;
    }
    auto ref = ref::var(x, {0, 2}, c, false);
    EXPECT_TRUE(CloseNan(run_var(x, std::vector<int64_t>{2, 0}, c, false, ref.shape), ref, 1e-5, 1e-4)) << c;
  }
  auto ref_all = ref::var(x, {}, 1.0, false);
  EXPECT_TRUE(CloseNan(run_var(x, std::nullopt, std::nullopt, false, {}), ref_all, 1e-5, 1e-4)) << "None = all dims, Bessel";
  // Rows of 500 take the workgroup route; an offset mean checks the two-pass form (no E[x^2]-E[x]^2).
  auto y = random_f32({4, 500}, 501, 1000, 1001);
  auto ref_long = ref::var(y, {1}, 1.0, false);
  EXPECT_TRUE(CloseNan(run_var(y, std::vector<int64_t>{1}, 1.0, false, {4}), ref_long, 1e-5, 2e-3));
  // 140 strided elements per output (dims 0 and 2): the workgroup route over a non-contiguous set.
  auto z = random_f32({70, 3, 2}, 502, -2, 2);
  EXPECT_TRUE(CloseNan(run_var(z, std::vector<int64_t>{0, -1}, 1.0, true, {1, 3, 1}), ref::var(z, {0, -1}, 1.0, true), 1e-5, 1e-4));
}

TEST(OpVar, TooFewElementsForTheCorrectionGiveNanOrInfAsPyTorch) {
  ETW_REQUIRE_GPU();
  // One element per row: N - 1 = 0 -> 0/0 = NaN. Rows of 2 with correction 3: N - c < 0 -> x/0 = inf.
  auto x = random_f32({4, 1}, 510);
  auto got = run_var(x, std::vector<int64_t>{1}, 1.0, false, {4});
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(got.as<float>()[i]));
  auto y = HostTensor::from(DType::Float32, {2, 2}, std::vector<float>{1.f, 2.f, 3.f, 3.f});
  auto g2 = run_var(y, std::vector<int64_t>{1}, 3.0, false, {2});
  EXPECT_TRUE(std::isinf(g2.as<float>()[0]) && g2.as<float>()[0] > 0);
  EXPECT_TRUE(std::isnan(g2.as<float>()[1])) << "0 / 0 where every deviation is 0";
  // NaN in a row makes its variance NaN.
  auto w = random_f32({3, 6}, 511);
  w.as<float>()[8] = kNan;
  EXPECT_TRUE(CloseNan(run_var(w, std::vector<int64_t>{1}, 0.0, false, {3}), ref::var(w, {1}, 0.0, false), 1e-5, 1e-4));
}

TEST(OpVar, DimAndDefaultOverloadsReadTheUnbiasedFlag) {
  ETW_REQUIRE_GPU();
  // 54 elements take a workgroup per output, 12 a thread per output.
  for (auto x : {random_f32({6, 9}, 520, -2, 2), random_f32({3, 4}, 521, -2, 2)})
  for (bool unbiased : {true, false}) {
    OpGraph g;
    Id in = g.input(x);
    Id o1 = g.output(DType::Float32, {x.shape[0], 1});
    Id o2 = g.output(DType::Float32, {});
    g.gb.op("aten.var.dim", {in, g.gb.int_list({-1}), g.gb.boolean(unbiased), g.gb.boolean(true), o1});
    g.gb.op("aten.var.default", {in, g.gb.boolean(unbiased), o2});
    auto out = g.run();
    EXPECT_TRUE(CloseNan(out[0], ref::var(x, {-1}, unbiased ? 1 : 0, true), 1e-5, 1e-4)) << unbiased;
    EXPECT_TRUE(CloseNan(out[1], ref::var(x, {}, unbiased ? 1 : 0, false), 1e-5, 1e-4)) << unbiased;
  }
}

TEST(OpVar, IntegerInputFailsAtLoadNamingTheOp) {
  ETW_REQUIRE_GPU();
  std::string e = load_error([] { run_var(random_i32({3, 4}, 530, 0, 9), std::vector<int64_t>{1}, 1.0, false, {3}); });
  EXPECT_TRUE(has(e, "aten.var.correction") && has(e, "float input")) << e;
}

TEST(OpVarMean, WritesVarianceAndMeanThroughTheOutputList) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3, 70}, 540, -3, 5);
  OpGraph g;
  Id in = g.input(x);
  Id v = g.output(DType::Float32, {2, 1, 70});
  Id m = g.output(DType::Float32, {2, 1, 70});
  g.gb.op("aten.var_mean.correction", {in, g.gb.int_list({1}), g.gb.dbl(0.0), g.gb.boolean(true), g.gb.value_list({v, m})});
  auto out = g.run();
  EXPECT_TRUE(CloseNan(out[0], ref::var(x, {1}, 0.0, true), 1e-5, 1e-4));
  EXPECT_TRUE(CloseNan(out[1], ref::reduce(Reduce::Mean, x, {1}, true), 1e-6, 1e-5));
}

// prod.dim_int [self, dim, keepdim, dtype, out]; prod.default [self, dtype, out]
TEST(OpProd, FloatAndIntProductsOverOneDimAndEverything) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 3, 5}, 550, 0.5f, 1.5f);
  x.as<float>()[7] = -0.f;
  auto xi = random_i32({3, 4}, 551, -3, 4);  // 12 elements: a thread per output
  OpGraph g;
  Id a = g.input(x), b = g.input(xi);
  Id o1 = g.output(DType::Float32, {4, 5}), o2 = g.output(DType::Int32, {}), o3 = g.output(DType::Float32, {3, 1});
  Id o4 = g.output(DType::Float32, {});
  g.gb.op("aten.prod.dim_int", {a, g.gb.int_(-2), g.gb.boolean(false), g.gb.null(), o1});
  g.gb.op("aten.prod.default", {b, g.gb.null(), o2});
  g.gb.op("aten.prod.dim_int", {b, g.gb.int_(1), g.gb.boolean(true), g.gb.null(), o3});  // int input, float dtype
  g.gb.op("aten.prod.default", {a, g.gb.null(), o4});
  auto out = g.run();
  EXPECT_TRUE(CloseNan(out[0], ref::prod(x, {-2}, false), 1e-6, 1e-5));
  EXPECT_TRUE(CloseNan(out[1], ref::prod(xi, {}, false), 0, 0));
  auto pi = ref::prod(xi, {1}, true);
  EXPECT_TRUE(CloseNan(out[2], ref_tensor(pi.shape, pi.to_f64()), 0, 0));
  EXPECT_TRUE(CloseNan(out[3], ref::prod(x, {}, false), 1e-6, 1e-4));
}

TEST(OpProd, LongRowsTakeTheWorkgroupRoute) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 150}, 555, 0.97f, 1.03f);
  OpGraph g;
  Id a = g.input(x);
  Id o = g.output(DType::Float32, {3});
  g.gb.op("aten.prod.dim_int", {a, g.gb.int_(1), g.gb.boolean(false), g.gb.null(), o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref::prod(x, {1}, false), 1e-6, 1e-5));
}

TEST(OpProd, EmptyReductionIsOne) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id a = g.input(HostTensor(DType::Float32, {3, 0}));
  Id o = g.output(DType::Float32, {3});
  g.gb.op("aten.prod.dim_int", {a, g.gb.int_(1), g.gb.boolean(false), g.gb.null(), o});
  EXPECT_TRUE(CloseNan(g.run()[0], ref_tensor({3}, {1, 1, 1}), 0, 0));
}

// max.dim / min.dim [self, dim, keepdim, ValueList(values, indices)]
std::vector<HostTensor> run_value_index(const char* op, const HostTensor& x, int64_t dim, bool keepdim,
                                        std::vector<int64_t> out_shape, DType vt) {
  OpGraph g;
  Id in = g.input(x);
  Id v = g.output(vt, out_shape);
  Id i = g.output(DType::Int64, out_shape);
  g.gb.op(op, {in, g.gb.int_(dim), g.gb.boolean(keepdim), g.gb.value_list({v, i})});
  return g.run();
}

TEST(OpMaxMinDim, ValuesAndFirstIndicesWithTiesNanAndNegativeDims) {
  ETW_REQUIRE_GPU();
  for (int64_t len : {5, 200}) {
    auto xi = random_i32({3, len, 2}, 560, -2, 2);  // many ties
    for (auto [op, vr, ir] : {std::tuple{"aten.max.dim", Reduce::Amax, Reduce::Argmax}, std::tuple{"aten.min.dim", Reduce::Amin, Reduce::Argmin}}) {
      auto out = run_value_index(op, xi, -2, false, {3, 2}, DType::Int32);
      EXPECT_TRUE(CloseNan(out[0], ref::reduce(vr, xi, {-2}, false), 0, 0)) << op << len;
      EXPECT_TRUE(CloseNan(out[1], ref::reduce(ir, xi, {-2}, false), 0, 0)) << op << len;
    }
  }
  auto x = random_f32({4, 9}, 561);
  x.as<float>()[3] = kNan;
  x.as<float>()[5] = kNan;
  for (auto [op, vr, ir] : {std::tuple{"aten.max.dim", Reduce::Amax, Reduce::Argmax}, std::tuple{"aten.min.dim", Reduce::Amin, Reduce::Argmin}}) {
    auto out = run_value_index(op, x, 1, true, {4, 1}, DType::Float32);
    EXPECT_TRUE(std::isnan(out[0].as<float>()[0])) << op;
    EXPECT_EQ(out[1].to_f64()[0], 3) << op << ": the first NaN is the extreme";
    EXPECT_TRUE(CloseNan(out[0], ref::reduce(vr, x, {1}, true), 0, 0)) << op;
    EXPECT_TRUE(CloseNan(out[1], ref::reduce(ir, x, {1}, true), 0, 0)) << op;
  }
}

TEST(OpMaxMinDim, EmptyReducedDimAndWrongOutputCountFail) {
  ETW_REQUIRE_GPU();
  std::string e = load_error([] { run_value_index("aten.max.dim", HostTensor(DType::Float32, {2, 0}), 1, false, {2}, DType::Float32); });
  EXPECT_TRUE(has(e, "aten.max.dim") && has(e, "empty")) << e;
  e = load_error([] {
    OpGraph g;
    Id in = g.input(random_f32({2, 3}, 570));
    Id v = g.output(DType::Float32, {2});
    g.gb.op("aten.min.dim", {in, g.gb.int_(1), g.gb.boolean(false), g.gb.value_list({v})});
    g.run();
  });
  EXPECT_TRUE(has(e, "aten.min.dim") && has(e, "2 outputs")) << e;
}

TEST(OpMaxMinUnary, WholeTensorExtremesPropagateNan) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({5, 7, 3}, 580, -9, 9);
  auto xn = x;
  xn.as<float>()[40] = kNan;
  OpGraph g;
  Id a = g.input(x), b = g.input(xn);
  Id o1 = g.output(DType::Float32, {}), o2 = g.output(DType::Float32, {}), o3 = g.output(DType::Float32, {});
  g.gb.op("aten.max.default", {a, o1});
  g.gb.op("aten.min.default", {a, o2});
  g.gb.op("aten.max.default", {b, o3});
  auto out = g.run();
  EXPECT_TRUE(CloseNan(out[0], ref::reduce(Reduce::Amax, x, {}, false), 0, 0));
  EXPECT_TRUE(CloseNan(out[1], ref::reduce(Reduce::Amin, x, {}, false), 0, 0));
  EXPECT_TRUE(std::isnan(out[2].as<float>()[0]));
}

TEST(OpMeanDefault, MeanOfEverythingWithAnIntInputPromotedByDtype) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 11, 13}, 590);
  auto xi = random_i32({3, 5}, 591, -50, 50);  // 15 elements: a thread per output
  OpGraph g;
  Id a = g.input(x), b = g.input(xi);
  Id o1 = g.output(DType::Float32, {}), o2 = g.output(DType::Float32, {});
  g.gb.op("aten.mean.default", {a, g.gb.null(), o1});
  g.gb.op("aten.mean.default", {b, g.gb.int_(6), o2});  // dtype=torch.float32 (ScalarType 6)
  auto out = g.run();
  EXPECT_TRUE(CloseNan(out[0], ref::reduce(Reduce::Mean, x, {}, false), 1e-6, 1e-5));
  EXPECT_TRUE(CloseNan(out[1], ref::reduce(Reduce::Mean, xi, {}, false), 1e-6, 1e-5));
}

TEST(OpAnyDims, SeveralDimsNoneAndKeepdim) {
  ETW_REQUIRE_GPU();
  auto x = random_bool({3, 4, 5}, 600);
  HostTensor sparse(DType::Bool, {3, 4, 5});
  sparse.data[17] = 1;  // exactly one true element: any over (0, 2) is true only in its column
  for (const auto* t : {&x, &sparse}) {
    OpGraph g;
    Id a = g.input(*t);
    Id o1 = g.output(DType::Bool, {4}), o2 = g.output(DType::Bool, {1, 1, 1});
    g.gb.op("aten.any.dims", {a, g.gb.int_list({0, -1}), g.gb.boolean(false), o1});
    g.gb.op("aten.any.dims", {a, g.gb.null(), g.gb.boolean(true), o2});
    auto out = g.run();
    EXPECT_TRUE(CloseNan(out[0], ref::reduce(Reduce::Any, *t, {0, -1}, false), 0, 0));
    EXPECT_TRUE(CloseNan(out[1], ref::reduce(Reduce::Any, *t, {}, true), 0, 0));
  }
}

// ---- KernelCall spelling ----

TEST(OpStatsKernelCall, MultiOutputOutVariantsPassTheirOutsAsOneList) {
  ETW_REQUIRE_GPU();
  std::vector<int64_t> shape{4, 6};
  auto xv = random_f32(shape, 610, -5, 5);
  xv.as<float>()[2] = xv.as<float>()[4];  // a tie in row 0
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, shape);
  auto mv = p.tensor(DType::Float32, {4}), mi = p.tensor(DType::Int64, {4});
  auto nv = p.tensor(DType::Float32, {4, 1}), ni = p.tensor(DType::Int64, {4, 1});
  auto vv = p.tensor(DType::Float32, {6}), vm = p.tensor(DType::Float32, {6});
  p.input(x);
  // max.dim_max(self, dim, keepdim, *, max, max_values) -> (max, max_values)
  p.kernel("aten::max", "dim_max", {x, p.int_(1), p.boolean(false), mv, mi}, 2);
  p.kernel("aten::min", "dim_min", {x, p.int_(-1), p.boolean(true), nv, ni}, 2);
  // var_mean.correction_out(self, dim, *, correction, keepdim, out0, out1) -> (out0, out1)
  p.kernel("aten::var_mean", "correction_out", {x, p.int_list({0}), p.dbl(1.0), p.boolean(false), vv, vm}, 2);
  for (auto o : {mv, mi, nv, ni, vv, vm}) p.output(o);
  auto model = Model::load_bytes(p.serialize());
  for (const auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto out = model->run({xv});
  EXPECT_TRUE(CloseNan(out[0], ref::reduce(Reduce::Amax, xv, {1}, false), 0, 0));
  EXPECT_TRUE(CloseNan(out[1], ref::reduce(Reduce::Argmax, xv, {1}, false), 0, 0));
  EXPECT_TRUE(CloseNan(out[2], ref::reduce(Reduce::Amin, xv, {-1}, true), 0, 0));
  EXPECT_TRUE(CloseNan(out[3], ref::reduce(Reduce::Argmin, xv, {-1}, true), 0, 0));
  EXPECT_TRUE(CloseNan(out[4], ref::var(xv, {0}, 1.0, false), 1e-5, 1e-4));
  EXPECT_TRUE(CloseNan(out[5], ref::reduce(Reduce::Mean, xv, {0}, false), 1e-6, 1e-5));
}

TEST(OpStatsKernelCall, RenamedOutVariantsMapToTheirFunctionalOverloads) {
  ETW_REQUIRE_GPU();
  std::vector<int64_t> shape{3, 5};
  auto xv = random_f32(shape, 620, 0.5f, 2.f);
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, shape);
  auto v1 = p.tensor(DType::Float32, {3}), v2 = p.tensor(DType::Float32, {3}), pr = p.tensor(DType::Float32, {5});
  auto pa = p.tensor(DType::Float32, {}), mx = p.tensor(DType::Float32, {}), mn = p.tensor(DType::Float32, {});
  auto me = p.tensor(DType::Float32, {}), an = p.tensor(DType::Bool, {3});
  auto b = p.tensor(DType::Bool, shape);
  p.input(x);
  p.input(b);
  p.kernel("aten::var", "out", {x, p.int_list({1}), p.boolean(false), p.boolean(false), v1});  // var.dim
  p.kernel("aten::var", "correction_out", {x, p.int_list({-1}), p.null(), p.boolean(false), v2});
  p.kernel("aten::prod", "int_out", {x, p.int_(0), p.boolean(false), p.null(), pr});
  p.kernel("aten::prod", "out", {x, p.null(), pa});
  p.kernel("aten::max", "unary_out", {x, mx});
  p.kernel("aten::min", "unary_out", {x, mn});
  p.kernel("aten::mean", "dtype_out", {x, p.null(), me});
  p.kernel("aten::any", "dims_out", {b, p.int_list({1}), p.boolean(false), an});
  for (auto o : {v1, v2, pr, pa, mx, mn, me, an}) p.output(o);
  auto model = Model::load_bytes(p.serialize());
  for (const auto& k : model->plan_summary()) EXPECT_EQ(k.kind, "gpu-kernel") << k.what;
  auto bv = random_bool(shape, 621);
  auto out = model->run({xv, bv});
  EXPECT_TRUE(CloseNan(out[0], ref::var(xv, {1}, 0.0, false), 1e-5, 1e-4));
  EXPECT_TRUE(CloseNan(out[1], ref::var(xv, {1}, 1.0, false), 1e-5, 1e-4));
  EXPECT_TRUE(CloseNan(out[2], ref::prod(xv, {0}, false), 1e-6, 1e-5));
  EXPECT_TRUE(CloseNan(out[3], ref::prod(xv, {}, false), 1e-6, 1e-4));
  EXPECT_TRUE(CloseNan(out[4], ref::reduce(Reduce::Amax, xv, {}, false), 0, 0));
  EXPECT_TRUE(CloseNan(out[5], ref::reduce(Reduce::Amin, xv, {}, false), 0, 0));
  EXPECT_TRUE(CloseNan(out[6], ref::reduce(Reduce::Mean, xv, {}, false), 1e-6, 1e-5));
  EXPECT_TRUE(CloseNan(out[7], ref::reduce(Reduce::Any, bv, {1}, false), 0, 0));
}

}  // namespace
