// Reductions and cumsum against fp64 references (tests/reference/reduction).
#include <cmath>

#include "reference/reduction/reduction_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;
using ref::Reduce;

namespace {


// sum/mean [self, dim, keepdim, dtype, out]; amax/amin [self, dim, keepdim, out]
HostTensor run_dims(const char* op, const HostTensor& x, std::optional<std::vector<int64_t>> dims, bool keepdim,
                    DType out_t, std::vector<int64_t> out_shape, bool dtype_arg) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(out_t, out_shape);
  std::vector<Id> args{in, dims ? g.gb.int_list(*dims) : g.gb.null(), g.gb.boolean(keepdim)};
  if (dtype_arg) args.push_back(g.gb.null());
  args.push_back(o);
  g.gb.op(op, args);
  return g.run()[0];
}

TEST(OpMean, MultipleNegativeDimsWithAndWithoutKeepdim) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 5, 7, 9}, 1);
  for (bool kd : {true, false}) {
    auto ref = ref::reduce(Reduce::Mean, x, {-1, -2}, kd);
    EXPECT_TRUE(Close(run_dims("aten.mean.dim", x, std::vector<int64_t>{-1, -2}, kd, DType::Float32, ref.shape, true), ref));
  }
  auto ref = ref::reduce(Reduce::Mean, x, {0, 2}, false);
  EXPECT_TRUE(Close(run_dims("aten.mean.dim", x, std::vector<int64_t>{2, 0}, false, DType::Float32, ref.shape, true), ref));
}

TEST(OpMean, EmptyOrNullDimListReducesEverything) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 11, 13}, 2);
  auto ref = ref::reduce(Reduce::Mean, x, {}, false);
  EXPECT_TRUE(Close(run_dims("aten.mean.dim", x, std::vector<int64_t>{}, false, DType::Float32, {}, true), ref));
  EXPECT_TRUE(Close(run_dims("aten.mean.dim", x, std::nullopt, false, DType::Float32, {}, true), ref));
  auto refk = ref::reduce(Reduce::Mean, x, {}, true);
  EXPECT_TRUE(Close(run_dims("aten.mean.dim", x, std::nullopt, true, DType::Float32, {1, 1, 1}, true), refk));
}

TEST(OpSum, LongReductionUsesWorkgroupRouteAndShortUsesThreadRoute) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 5000}, 3);
  auto ref = ref::reduce(Reduce::Sum, x, {1}, false);
  EXPECT_TRUE(Close(run_dims("aten.sum.dim_IntList", x, std::vector<int64_t>{1}, false, DType::Float32, ref.shape, true), ref, 1e-4, 1e-5));
  auto y = random_f32({300, 7, 3}, 4);
  auto ref2 = ref::reduce(Reduce::Sum, y, {1}, true);
  EXPECT_TRUE(Close(run_dims("aten.sum.dim_IntList", y, std::vector<int64_t>{1}, true, DType::Float32, ref2.shape, true), ref2));
}

TEST(OpSum, Int32AndBoolInputsSumExactlyIntoIntegers) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({4, 6, 5}, 5, -1000, 1000);
  auto ref = ref::reduce(Reduce::Sum, x, {0, 2}, false);
  EXPECT_TRUE(Close(run_dims("aten.sum.dim_IntList", x, std::vector<int64_t>{0, -1}, false, DType::Int32, ref.shape, true), ref));
  auto b = random_bool({7, 70}, 6);
  auto refb = ref::reduce(Reduce::Sum, b, {1}, false);
  EXPECT_TRUE(Close(run_dims("aten.sum.dim_IntList", b, std::vector<int64_t>{1}, false, DType::Int32, refb.shape, true), refb));
}

TEST(OpSum, IntegerInputIntoFloatOutputConvertsFirst) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({5, 9}, 7, -50, 50);
  auto ref = ref::reduce(Reduce::Mean, x, {1}, false);
  EXPECT_TRUE(Close(run_dims("aten.mean.dim", x, std::vector<int64_t>{1}, false, DType::Float32, ref.shape, true), ref));
}

TEST(OpAmaxAmin, FloatAndIntAcrossDimsWithNanPropagation) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 9, 80}, 8);
  x.as<float>()[5 * 80 + 17] = NAN;  // row (0, 5) of the dim-2 reduction
  for (auto [op, r] : {std::pair{"aten.amax.default", Reduce::Amax}, std::pair{"aten.amin.default", Reduce::Amin}}) {
    auto ref = ref::reduce(r, x, {2}, false);
    auto got = run_dims(op, x, std::vector<int64_t>{2}, false, DType::Float32, ref.shape, false);
    EXPECT_TRUE(std::isnan(got.as<float>()[5])) << op;
    EXPECT_TRUE(CloseNan(got, ref)) << op;
    auto ref2 = ref::reduce(r, x, {0, 1}, true);
    EXPECT_TRUE(CloseNan(run_dims(op, x, std::vector<int64_t>{0, 1}, true, DType::Float32, ref2.shape, false), ref2)) << op;
    auto ref3 = ref::reduce(r, x, {0}, false);  // 4 elements per output: a thread each
    EXPECT_TRUE(CloseNan(run_dims(op, x, std::vector<int64_t>{0}, false, DType::Float32, ref3.shape, false), ref3)) << op;
  }
  auto xi = random_i32({6, 5}, 9, -100, 100);
  auto refi = ref::reduce(Reduce::Amax, xi, {0}, false);
  EXPECT_TRUE(Close(run_dims("aten.amax.default", xi, std::vector<int64_t>{0}, false, DType::Int32, refi.shape, false), refi));
}

// argmax/argmin [self, dim Int|Null, keepdim, out]; any.dim/all.dim [self, dim Int, keepdim, out]
HostTensor run_one(const char* op, const HostTensor& x, std::optional<int64_t> dim, bool keepdim, DType out_t,
                   std::vector<int64_t> out_shape) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(out_t, out_shape);
  g.gb.op(op, {in, dim ? g.gb.int_(*dim) : g.gb.null(), g.gb.boolean(keepdim), o});
  return g.run()[0];
}

TEST(OpArgmaxArgmin, FirstOccurrenceOfTiesOnShortAndLongRows) {
  ETW_REQUIRE_GPU();
  for (int64_t len : {7, 300}) {
    auto x = random_i32({5, len}, 10, -3, 3);  // many ties
    for (auto [op, r] : {std::pair{"aten.argmax.default", Reduce::Argmax}, std::pair{"aten.argmin.default", Reduce::Argmin}}) {
      auto ref = ref::reduce(r, x, {1}, false);
      EXPECT_TRUE(Close(run_one(op, x, 1, false, DType::Int32, ref.shape), ref)) << op << " len " << len;
    }
  }
  auto xf = random_f32({6, 4, 5}, 11);
  auto ref = ref::reduce(Reduce::Argmax, xf, {-2}, true);
  EXPECT_TRUE(Close(run_one("aten.argmax.default", xf, -2, true, DType::Int32, ref.shape), ref));
}

TEST(OpArgmaxArgmin, NullDimFlattensAndNanIsTheMaximum) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 50}, 12);
  x.as<float>()[77] = NAN;
  x.as<float>()[120] = NAN;
  auto got = run_one("aten.argmax.default", x, std::nullopt, false, DType::Int32, {});
  EXPECT_EQ(got.as<int32_t>()[0], 77);
  EXPECT_TRUE(Close(got, ref::reduce(Reduce::Argmax, x, {}, false)));
  auto y = random_f32({3, 50}, 13);
  EXPECT_TRUE(Close(run_one("aten.argmin.default", y, std::nullopt, true, DType::Int32, {1, 1}), ref::reduce(Reduce::Argmin, y, {}, true)));
}

TEST(OpAnyAll, BoolReductionsOverOneDimAndEverything) {
  ETW_REQUIRE_GPU();
  auto b = HostTensor(DType::Bool, {4, 6});
  for (int i = 0; i < 24; ++i) b.data[i] = (i % 7 == 0) || (i >= 18);  // row 3 all true; row 2 has 1 true
  for (int64_t d : {-1, 0}) {
    auto ra = ref::reduce(Reduce::Any, b, {d}, true);
    EXPECT_TRUE(Close(run_one("aten.any.dim", b, d, true, DType::Bool, ra.shape), ra)) << d;
    auto rl = ref::reduce(Reduce::All, b, {d}, false);
    EXPECT_TRUE(Close(run_one("aten.all.dim", b, d, false, DType::Bool, rl.shape), rl)) << d;
  }
  auto b2 = HostTensor(DType::Bool, {2, 5});  // 10 elements: a thread per output
  for (int i = 0; i < 10; ++i) b2.data[i] = i != 3;
  for (auto [op, r] : {std::pair{"aten.any.default", Reduce::Any}, std::pair{"aten.all.default", Reduce::All}})
    for (const HostTensor* t : {&b, &b2}) {
      OpGraph g;
      Id in = g.input(*t);
      Id o = g.output(DType::Bool, {});
      g.gb.op(op, {in, o});
      EXPECT_TRUE(Close(g.run()[0], ref::reduce(r, *t, {}, false))) << op;
    }
  auto f = random_f32({3, 90}, 14);
  for (int i = 0; i < 90; ++i) f.as<float>()[90 + i] = 0.f;  // row 1 all zero
  auto rf = ref::reduce(Reduce::Any, f, {1}, false);
  EXPECT_TRUE(Close(run_one("aten.any.dim", f, 1, false, DType::Bool, rf.shape), rf));
}

TEST(OpReduction, DynamicInputShrinksAndSwitchesRoute) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({4, 100}, 15), small = random_f32({3, 12}, 16);
  OpGraph g;
  Id in = g.input(big, {4, 100}, true);
  Id o = g.output(DType::Float32, {4, 1});
  g.gb.op("aten.mean.dim", {in, g.gb.int_list({-1}), g.gb.boolean(true), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run()[0], ref::reduce(Reduce::Mean, big, {-1}, true)));
  EXPECT_TRUE(Close(g.rerun({small})[0], ref::reduce(Reduce::Mean, small, {-1}, true)));
}

TEST(OpReduction, OutputsPast65535WorkgroupsOnBothRoutes) {
  ETW_REQUIRE_GPU();
  int64_t n = 65536LL * 256 + 3;  // thread route: R = 1
  auto x = random_f32({n, 1}, 17);
  auto ref = ref::reduce(Reduce::Sum, x, {1}, false);
  EXPECT_TRUE(Close(run_dims("aten.sum.dim_IntList", x, std::vector<int64_t>{1}, false, DType::Float32, ref.shape, true), ref));
  auto y = random_f32({70001, 64}, 18);  // workgroup route: one workgroup per output
  auto ref2 = ref::reduce(Reduce::Amax, y, {1}, false);
  EXPECT_TRUE(Close(run_dims("aten.amax.default", y, std::vector<int64_t>{1}, false, DType::Float32, ref2.shape, false), ref2));
}

TEST(OpReduction, InvalidDimsAndDtypesFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 4}, 1);
  auto e = load_error([&] { run_dims("aten.sum.dim_IntList", x, std::vector<int64_t>{2}, false, DType::Float32, {3}, true); });
  EXPECT_TRUE(has(e, "out of range")) << e;
  e = load_error([&] { run_dims("aten.sum.dim_IntList", x, std::vector<int64_t>{1, -1}, false, DType::Float32, {3}, true); });
  EXPECT_TRUE(has(e, "more than once")) << e;
  e = load_error([&] { run_dims("aten.mean.dim", random_i32({3, 4}, 1, 0, 3), std::vector<int64_t>{1}, false, DType::Int32, {3}, true); });
  EXPECT_TRUE(has(e, "float output")) << e;
  e = load_error([&] { run_one("aten.argmax.default", x, 1, false, DType::Float32, {3}); });
  EXPECT_TRUE(has(e, "integer indices")) << e;
}

HostTensor run_cumsum(const HostTensor& x, int64_t dim, DType out_t) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(out_t, x.shape);
  g.gb.op("aten.cumsum.default", {in, g.gb.int_(dim), g.gb.null(), o});
  return g.run()[0];
}

TEST(OpCumsum, FloatAlongEachDim) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 17, 5}, 20);
  for (int64_t d : {0, 1, -1}) EXPECT_TRUE(Close(run_cumsum(x, d, DType::Float32), ref::cumsum(x, d))) << d;
}

TEST(OpCumsum, BoolAndInt32GiveIntegers) {
  ETW_REQUIRE_GPU();
  auto b = random_bool({4, 33}, 21);
  auto got = run_cumsum(b, -1, DType::Int64);
  EXPECT_TRUE(Close(got, ref::cumsum(b, -1)));
  auto i = random_i32({6, 5}, 22, -100, 100);
  EXPECT_TRUE(Close(run_cumsum(i, 0, DType::Int32), ref::cumsum(i, 0)));
  auto e = load_error([] { run_cumsum(random_f32({3}, 1), 0, DType::Int32); });
  EXPECT_TRUE(has(e, "integer output")) << e;
}

}  // namespace
