// _to_copy / _to_dim_order_copy / _clone_dim_order against the reference conversion.
#include <cmath>
#include <fstream>
#include <limits>

#include "etwebgpu/npy.h"
#include "reference/conversion/conversion_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

enum class Form { ToCopy, ToDimOrder, CloneDimOrder };

// Appends the op's schema arguments around self/out. `dim_order` < -1 = Null, -1 = [], else explicit.
std::vector<Id> args_for(GraphBuilder& b, Form f, Id x, Id o, const std::vector<int64_t>* dim_order) {
  auto dord = [&] { return dim_order ? b.int_list(*dim_order) : b.null(); };
  switch (f) {
    case Form::ToCopy: return {x, b.null(), b.null(), b.null(), b.null(), b.boolean(false), b.null(), o};
    case Form::ToDimOrder: return {x, b.null(), b.null(), b.null(), b.null(), b.boolean(false), dord(), o};
    default: return {x, b.boolean(false), dord(), o};
  }
}
const char* op_name(Form f) {
  return f == Form::ToCopy ? "aten._to_copy.default"
         : f == Form::ToDimOrder ? "dim_order_ops._to_dim_order_copy.default"
                                 : "dim_order_ops._clone_dim_order.default";
}

HostTensor run_copy(const HostTensor& x, DType out_t, Form f = Form::ToCopy,
                    const std::vector<int64_t>* dim_order = nullptr) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(out_t, x.shape);
  g.gb.op(op_name(f), args_for(g.gb, f, in, o, dim_order));
  return g.run()[0];
}

TEST(OpToCopy, Int32ToFloat32IsNumeric) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({3, 4, 5}, 1, -16777216, 16777216);
  x.as<int32_t>()[0] = 2;
  auto got = run_copy(x, DType::Float32);
  EXPECT_EQ(got.as<float>()[0], 2.0f);
  EXPECT_TRUE(Close(got, ref::convert(x, DType::Float32), 0, 0));
}

TEST(OpToCopy, Float32ToInt32TruncatesTowardZero) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({7, 9}, 2, -1000.f, 1000.f);
  std::vector<float> edge{2.7f, -2.7f, 0.5f, -0.5f, -0.f, 1e9f, -1e9f};
  for (size_t i = 0; i < edge.size(); ++i) x.as<float>()[i] = edge[i];
  auto got = run_copy(x, DType::Int32);
  ASSERT_EQ(got.dtype, DType::Int32);
  EXPECT_EQ(got.as<int32_t>()[0], 2);
  EXPECT_EQ(got.as<int32_t>()[1], -2);
  EXPECT_TRUE(Close(got, ref::convert(x, DType::Int32)));
}

TEST(OpToCopy, BoolBecomesZeroOrOne) {
  ETW_REQUIRE_GPU();
  auto x = random_bool({5, 7}, 3);
  EXPECT_TRUE(Close(run_copy(x, DType::Float32), ref::convert(x, DType::Float32), 0, 0));
  EXPECT_TRUE(Close(run_copy(x, DType::Int32), ref::convert(x, DType::Int32)));
}

TEST(OpToCopy, NumbersBecomeBoolByComparingWithZero) {
  ETW_REQUIRE_GPU();
  auto xf = random_f32({4, 6}, 4);
  xf.as<float>()[0] = 0.f;
  xf.as<float>()[1] = -0.f;
  xf.as<float>()[2] = std::numeric_limits<float>::quiet_NaN();  // NaN != 0 -> true
  xf.as<float>()[3] = 1e-30f;
  auto xi = random_i32({4, 6}, 5, -2, 2);
  auto gf = run_copy(xf, DType::Bool);
  EXPECT_EQ(gf.data[2], 1);
  EXPECT_TRUE(Close(gf, ref::convert(xf, DType::Bool)));
  EXPECT_TRUE(Close(run_copy(xi, DType::Bool), ref::convert(xi, DType::Bool)));
}

TEST(OpToCopy, SameDtypeIsABitExactCopy) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({3, 11}, 6, -1e30f, 1e30f);
  x.as<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  x.as<float>()[1] = -INFINITY;
  auto got = run_copy(x, DType::Float32);
  ASSERT_EQ(got.data, x.data);
  auto xi = random_i32({2, 3, 5}, 7, -2000000000, 2000000000);
  xi.as<int32_t>()[0] = std::numeric_limits<int32_t>::min();
  xi.as<int32_t>()[1] = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(run_copy(xi, DType::Int32).data, xi.data);
}

// x -> neg -> t1 -> copy -> t2 -> neg -> out, with t1 and t2 in one memory object (delegate
// inputs/outputs never share, intermediates do).
HostTensor run_aliased_copy(const HostTensor& x, DType mid_out) {
  OpGraph g;
  Id in = g.input(x);
  Id t1 = g.gb.tensor(x.dtype, x.shape, 0);
  Id t2 = g.gb.tensor(mid_out, x.shape, 0);
  Id o = g.output(mid_out, x.shape);
  g.gb.op("aten.neg.default", {in, t1});
  g.gb.op("aten._to_copy.default", args_for(g.gb, Form::ToCopy, t1, t2, nullptr));
  g.gb.op("aten.neg.default", {t2, o});
  return g.run()[0];
}

TEST(OpToCopy, SharedBufferCopyIsANoOpThatKeepsTheData) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 5}, 8);
  EXPECT_EQ(run_aliased_copy(x, DType::Float32).data, x.data);  // -(-x) is bit-exact
}

TEST(OpToCopy, SharedBufferConversionFailsAtLoad) {
  ETW_REQUIRE_GPU();
  try {
    run_aliased_copy(random_i32({4, 5}, 15, -9, 9), DType::Float32);
    ADD_FAILURE() << "aliased conversion accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("share one buffer"), std::string::npos) << e.what();
  }
}

TEST(OpToCopy, DimOrderVariantsAcceptContiguousOrders) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({2, 3, 4}, 9, -50, 50);
  auto ref = ref::convert(x, DType::Float32);
  std::vector<int64_t> empty, explicit_order{0, 1, 2};
  EXPECT_TRUE(Close(run_copy(x, DType::Float32, Form::ToDimOrder, &empty), ref, 0, 0));
  EXPECT_TRUE(Close(run_copy(x, DType::Float32, Form::ToDimOrder, &explicit_order), ref, 0, 0));
  EXPECT_TRUE(Close(run_copy(x, DType::Float32, Form::ToDimOrder, nullptr), ref, 0, 0));
  auto xf = random_f32({2, 3, 4}, 10);
  EXPECT_EQ(run_copy(xf, DType::Float32, Form::CloneDimOrder, &explicit_order).data, xf.data);
  EXPECT_EQ(run_copy(xf, DType::Float32, Form::CloneDimOrder, nullptr).data, xf.data);
}

TEST(OpToCopy, DynamicShapeKeepsOutputEqualToInput) {
  ETW_REQUIRE_GPU();
  auto x = random_i32({6, 7}, 11, -99, 99);
  for (DType out_t : {DType::Float32, DType::Int32}) {
    OpGraph g;
    Id in = g.input(x, {}, true);
    Id o = g.output(out_t, {6, 7});
    std::vector<int64_t> empty;
    g.gb.op("dim_order_ops._to_dim_order_copy.default", args_for(g.gb, Form::ToDimOrder, in, o, &empty));
    EXPECT_TRUE(Close(g.run()[0], ref::convert(x, out_t), 0, 0));
    auto small = random_i32({3, 2}, 12, -99, 99);
    auto got = g.rerun({small})[0];
    ASSERT_EQ(got.shape, (std::vector<int64_t>{3, 2}));
    EXPECT_TRUE(Close(got, ref::convert(small, out_t), 0, 0)) << dtype_name(out_t);
  }
}

TEST(OpToCopy, ConversionPast65535WorkgroupsSpillsTo2DDispatch) {
  ETW_REQUIRE_GPU();
  int64_t n = 65536LL * 256 + 77;
  auto x = random_i32({n}, 13, -1000000, 1000000);
  EXPECT_TRUE(Close(run_copy(x, DType::Float32), ref::convert(x, DType::Float32), 0, 0));
}

TEST(OpToCopy, UnsupportedPairsAndDimOrdersFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto expect_err = [](auto fn, const std::string& needle) {
    try {
      fn();
      ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto xf = random_f32({2, 3}, 14);
  expect_err([&] { run_copy(xf, DType::Int8); }, "conversion from f32 to i8");
  expect_err([&] { run_copy(xf, DType::Float16); }, "conversion from f32 to f16");
  std::vector<int64_t> perm{1, 0};
  expect_err([&] { run_copy(xf, DType::Float32, Form::ToDimOrder, &perm); }, "dim_order [1, 0]");
  expect_err([&] { run_copy(xf, DType::Float32, Form::CloneDimOrder, &perm); }, "only the contiguous order");
}

TEST(OpToCopy, ConformanceToCopyIntToFloatPasses) {
  ETW_REQUIRE_GPU();
  std::string dir = conformance_dir() + "/to_copy_int_to_float";
  ETW_REQUIRE_FIXTURE(std::ifstream(dir + "/model.pte").good(), dir);
  auto m = Model::load(dir + "/model.pte");
  auto out = m->run({read_npy(dir + "/input_0.npy"), read_npy(dir + "/input_1.npy")});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(Close(out[0], read_npy(dir + "/expected_0.npy"), 1e-4, 1e-3));
}

}  // namespace
