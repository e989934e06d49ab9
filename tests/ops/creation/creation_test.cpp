// full / full_like / zeros(_like) / ones(_like) / scalar_tensor / arange against references.
#include <cmath>
#include <limits>

#include "reference/creation/creation_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

template <class Fn>
void expect_error(Fn fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// full(size, v): [size, fill_value, dtype, layout, device, pin_memory, out]
HostTensor run_full(std::vector<int64_t> size, double v, bool v_int, DType t, std::vector<int64_t> out_dims = {}) {
  OpGraph g;
  // The op needs no input, but the harness feeds one: keep a dummy graph input.
  g.input(random_f32({1}, 0));
  Id o = g.output(t, out_dims.empty() ? size : out_dims);
  Id fv = v_int ? g.gb.int_(static_cast<int64_t>(v)) : g.gb.dbl(v);
  g.gb.op("aten.full.default", {g.gb.int_list(size), fv, g.gb.null(), g.gb.null(), g.gb.null(), g.gb.boolean(false), o});
  return g.run()[0];
}


Id num(GraphBuilder& b, double v) { return v == std::trunc(v) ? b.int_(static_cast<int64_t>(v)) : b.dbl(v); }

HostTensor arange3(double s, double e, double st, DType t, int64_t n) {
  OpGraph g;
  g.input(random_f32({1}, 0));
  Id o = g.output(t, {n});
  g.gb.op("aten.arange.start_step", {num(g.gb, s), num(g.gb, e), num(g.gb, st), g.gb.null(), g.gb.null(), g.gb.null(),
                                     g.gb.boolean(false), o});
  return g.run()[0];
}

TEST(OpCreation, FullFillsEachDtype) {
  ETW_REQUIRE_GPU();
  EXPECT_TRUE(Close(run_full({3, 5, 7}, 2.5, false, DType::Float32), ref::full({3, 5, 7}, 2.5, DType::Float32), 0, 0));
  EXPECT_TRUE(Close(run_full({4, 3}, -7, true, DType::Int32), ref::full({4, 3}, -7, DType::Int32)));
  EXPECT_TRUE(Close(run_full({2, 9}, 3, true, DType::Bool), ref::full({2, 9}, 3, DType::Bool)));
  EXPECT_TRUE(Close(run_full({2, 9}, 0, true, DType::Bool), ref::full({2, 9}, 0, DType::Bool)));
  // A float fill into an int tensor truncates like a torch cast.
  EXPECT_TRUE(Close(run_full({5}, -2.75, false, DType::Int32), ref::full({5}, -2.75, DType::Int32)));
}

TEST(OpCreation, FullAcceptsNegativeInfinityAndBoolFillWithEmptySize) {
  ETW_REQUIRE_GPU();
  auto got = run_full({6, 5}, -INFINITY, false, DType::Float32);
  for (int64_t i = 0; i < got.numel(); ++i) ASSERT_EQ(got.as<float>()[i], -INFINITY) << i;
  // size [] (0-dim) with a Bool fill value: the observed causal-mask pattern.
  OpGraph g;
  g.input(random_f32({1}, 0));
  Id o = g.output(DType::Bool, {});
  g.gb.op("aten.full.default", {g.gb.int_list({}), g.gb.boolean(true), g.gb.null(), g.gb.null(), g.gb.null(),
                                g.gb.boolean(false), o});
  auto b = g.run()[0];
  ASSERT_EQ(b.shape, std::vector<int64_t>{});
  EXPECT_EQ(b.data[0], 1);
}

TEST(OpCreation, FullPast65535WorkgroupsSpillsTo2DDispatch) {
  ETW_REQUIRE_GPU();
  int64_t n = 65536LL * 256 + 77;
  EXPECT_TRUE(Close(run_full({n}, 1.5, false, DType::Float32), ref::full({n}, 1.5, DType::Float32), 0, 0));
}

TEST(OpCreation, ZerosAndOnesUseTheOutputDtype) {
  ETW_REQUIRE_GPU();
  for (auto [op, v] : {std::pair{"aten.zeros.default", 0.0}, {"aten.ones.default", 1.0}}) {
    for (DType t : {DType::Float32, DType::Int32, DType::Bool}) {
      OpGraph g;
      g.input(random_f32({1}, 0));
      Id o = g.output(t, {3, 7});
      // zeros/ones: [size, dtype, layout, device, pin_memory, out]
      g.gb.op(op, {g.gb.int_list({3, 7}), g.gb.null(), g.gb.null(), g.gb.null(), g.gb.boolean(false), o});
      EXPECT_TRUE(Close(g.run()[0], ref::full({3, 7}, v, t), 0, 0)) << op << " " << dtype_name(t);
    }
  }
}

TEST(OpCreation, LikeOpsFollowTheLiveShapeOfSelf) {
  ETW_REQUIRE_GPU();
  struct C { const char* op; double v; bool has_fill; } cs[] = {
      {"aten.full_like.default", -3, true}, {"aten.zeros_like.default", 0, false}, {"aten.ones_like.default", 1, false}};
  for (auto& c : cs) {
    auto x = random_f32({5, 6}, 1);
    OpGraph g;
    Id in = g.input(x, {}, true);
    Id o = g.output(DType::Int32, {5, 6});
    // full_like: [self, fill_value, dtype, layout, device, pin_memory, memory_format, out];
    // zeros_like/ones_like: the same without fill_value.
    std::vector<Id> args{in};
    if (c.has_fill) args.push_back(g.gb.int_(static_cast<int64_t>(c.v)));
    for (Id a : {g.gb.null(), g.gb.null(), g.gb.null(), g.gb.boolean(false), g.gb.null()}) args.push_back(a);
    args.push_back(o);
    g.gb.op(c.op, args);
    EXPECT_TRUE(Close(g.run()[0], ref::full({5, 6}, c.v, DType::Int32))) << c.op;
    auto got = g.rerun({random_f32({2, 3}, 2)})[0];
    EXPECT_TRUE(Close(got, ref::full({2, 3}, c.v, DType::Int32))) << c.op;
  }
}

TEST(OpCreation, ScalarTensorIsZeroDim) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  g.input(random_f32({1}, 0));
  Id o = g.output(DType::Float32, {});
  g.gb.op("aten.scalar_tensor.default", {g.gb.dbl(-0.125), g.gb.null(), g.gb.null(), g.gb.null(), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run()[0], ref::full({}, -0.125, DType::Float32), 0, 0));
}

TEST(OpCreation, ArangeMatchesTorchCountsAndValues) {
  ETW_REQUIRE_GPU();
  struct C { double s, e, st; DType t; } cs[] = {{0, 11, 1, DType::Int32},  {3, 20, 4, DType::Int32},
                                                 {10, -7, -3, DType::Int32}, {0, 1, 0.1, DType::Float32},
                                                 {-2.5, 3.5, 0.75, DType::Float32}, {5, 2, -0.5, DType::Float32}};
  for (auto& c : cs) {
    auto ref = ref::arange(c.s, c.e, c.st, c.t);
    EXPECT_TRUE(Close(arange3(c.s, c.e, c.st, c.t, ref.shape[0]), ref, 1e-6, 1e-6))
        << c.s << " " << c.e << " " << c.st << " " << dtype_name(c.t);
  }
  // arange.default: [end, dtype, layout, device, pin_memory, out]
  OpGraph g;
  g.input(random_f32({1}, 0));
  Id o = g.output(DType::Int32, {9});
  g.gb.op("aten.arange.default", {g.gb.int_(9), g.gb.null(), g.gb.null(), g.gb.null(), g.gb.null(), o});
  EXPECT_TRUE(Close(g.run()[0], ref::arange(0, 9, 1, DType::Int32)));
}

TEST(OpCreation, BadSizesCountsAndDtypesFailAtLoad) {
  ETW_REQUIRE_GPU();
  expect_error([] { run_full({3, 4}, 1, true, DType::Float32, {4, 3}); }, "differs from the output");
  expect_error([] { run_full({3}, INFINITY, false, DType::Int32); }, "does not fit an int32");
  expect_error([] { run_full({3}, 1, true, DType::Float16); }, "output dtype f16");
  expect_error([] { arange3(0, 10, 1, DType::Int32, 9); }, "has 10 elements");
  expect_error([] { arange3(0, 10, 0, DType::Int32, 1); }, "step must be nonzero");
  expect_error([] { arange3(0, 10, -1, DType::Int32, 1); }, "inconsistent with step sign");
  expect_error([] { arange3(0, 2.5, 0.5, DType::Int32, 5); }, "non-integral");
}

}  // namespace

// et_vk.grid_priors [x, stride, offset, out]: the configurations of ExecuTorch WebGPU's own op
// test (test_grid_priors.py), a rank-3 input, a dynamic rerun at a smaller H and W, and bad calls.
HostTensor run_grid_priors(const HostTensor& x, int64_t stride, double offset, bool dynamic = false,
                           const HostTensor* later = nullptr) {
  OpGraph g;
  Id in = dynamic ? g.input(x, x.shape, true) : g.input(x);
  int64_t h = x.shape.size() >= 2 ? x.shape[x.shape.size() - 2] : 1, w = x.shape.back();  // rank 1: the error case
  Id o = g.output(DType::Float32, {h * w, 2});
  g.gb.op("et_vk.grid_priors.default", {in, g.gb.int_(stride), g.gb.dbl(offset), o});
  auto first = g.run()[0];
  return later ? g.rerun({*later})[0] : first;
}

TEST(OpGridPriors, AnchorCentresMatchTheReferenceOnUpstreamConfigs) {
  ETW_REQUIRE_GPU();
  struct C { std::vector<int64_t> shape; int64_t stride; double offset; };
  for (const C& c : {C{{1, 3, 8, 10}, 8, 0.5}, C{{1, 3, 4, 4}, 16, 0.0}, C{{1, 3, 5, 7}, 4, 0.0}, C{{2, 3, 33}, 32, 0.25}}) {
    int64_t h = c.shape[c.shape.size() - 2], w = c.shape.back();
    EXPECT_TRUE(Close(run_grid_priors(random_f32(c.shape, 1), c.stride, c.offset), ref::grid_priors(h, w, c.stride, c.offset), 0, 0))
        << shape_str(c.shape);
  }
}

TEST(OpGridPriors, DynamicRerunFollowsTheLiveHeightAndWidth) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({1, 2, 6, 9}, 2), small = random_f32({1, 2, 3, 4}, 3);
  EXPECT_TRUE(Close(run_grid_priors(big, 8, 0.5, true, &small), ref::grid_priors(3, 4, 8, 0.5), 0, 0));
}

TEST(OpGridPriors, RankBelowTwoAndAWrongOutputShapeFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] { run_grid_priors(random_f32({5}, 4), 8, 0.5); });
  EXPECT_TRUE(has(e, "needs at least 2 dims")) << e;
  e = load_error([] {
    OpGraph g;
    Id in = g.input(random_f32({1, 3, 4, 4}, 5));
    Id o = g.output(DType::Float32, {16, 3});
    g.gb.op("et_vk.grid_priors.default", {in, g.gb.int_(8), g.gb.dbl(0.5), o});
    g.run();
  });
  EXPECT_TRUE(has(e, "is not [H * W, 2]")) << e;
}
