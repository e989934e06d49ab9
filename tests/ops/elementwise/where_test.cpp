// aten.where.self against the fp64 reference (tests/reference/elementwise/unary_ref).
#include <cmath>

#include "reference/elementwise/unary_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor run_where(const HostTensor& c, const HostTensor& a, const HostTensor& b, DType out_t,
                     std::vector<int64_t> out_dims) {
  OpGraph g;
  Id ic = g.input(c), ia = g.input(a), ib = g.input(b);
  Id o = g.output(out_t, std::move(out_dims));
  g.gb.op("aten.where.self", {ic, ia, ib, o});
  return g.run()[0];
}

TEST(OpWhere, BroadcastsConditionSelfAndOtherEachToTheOutput) {
  ETW_REQUIRE_GPU();
  auto c = random_bool({2, 1, 5}, 1);
  auto a = random_f32({3, 1}, 2);
  auto b = random_f32({4, 1, 1, 1}, 3);
  auto ref = ref::where(c, a, b);
  ASSERT_EQ(ref.shape, (std::vector<int64_t>{4, 2, 3, 5}));
  EXPECT_TRUE(Close(run_where(c, a, b, DType::Float32, ref.shape), ref, 0, 0));
}

TEST(OpWhere, SameShapeOperandsTakeTheContiguousPath) {
  ETW_REQUIRE_GPU();
  auto c = random_bool({5, 13}, 4);
  auto a = random_f32({5, 13}, 5), b = random_f32({5, 13}, 6);
  EXPECT_TRUE(Close(run_where(c, a, b, DType::Float32, {5, 13}), ref::where(c, a, b), 0, 0));
}

TEST(OpWhere, Int32ValuesAreExact) {
  ETW_REQUIRE_GPU();
  auto c = random_bool({3, 7}, 7);
  auto a = random_i32({3, 7}, 8, -100000, 100000), b = random_i32({7}, 9, -100000, 100000);
  auto got = run_where(c, a, b, DType::Int32, {3, 7});
  ASSERT_EQ(got.dtype, DType::Int32);
  EXPECT_TRUE(Close(got, ref::where(c, a, b)));
}

TEST(OpWhere, IntOtherIsPromotedForAFloatOutput) {
  ETW_REQUIRE_GPU();
  auto c = random_bool({4, 6}, 10);
  auto a = random_f32({4, 6}, 11);
  auto b = random_i32({1, 6}, 12, -9, 9);
  EXPECT_TRUE(Close(run_where(c, a, b, DType::Float32, {4, 6}), ref::where(c, a, b), 0, 0));
  EXPECT_TRUE(Close(run_where(c, b, a, DType::Float32, {4, 6}), ref::where(c, b, a), 0, 0));
}

TEST(OpWhere, ZeroDimOperandsBroadcast) {
  ETW_REQUIRE_GPU();
  auto c = random_bool({3, 4}, 13);
  auto a = HostTensor::from<float>(DType::Float32, {}, std::vector<float>{-INFINITY});
  auto b = random_f32({3, 4}, 14);
  EXPECT_TRUE(Close(run_where(c, a, b, DType::Float32, {3, 4}), ref::where(c, a, b), 0, 0));
}

TEST(OpWhere, DynamicShapesRebroadcastOnRerun) {
  ETW_REQUIRE_GPU();
  auto c = random_bool({6, 8}, 15);
  auto a = random_f32({6, 8}, 16), b = random_f32({1, 8}, 17);
  OpGraph g;
  Id ic = g.input(c, {}, true), ia = g.input(a, {}, true), ib = g.input(b, {}, true);
  Id o = g.output(DType::Float32, {6, 8});
  g.gb.op("aten.where.self", {ic, ia, ib, o});
  EXPECT_TRUE(Close(g.run()[0], ref::where(c, a, b), 0, 0));
  auto c2 = random_bool({3, 1}, 18);
  auto a2 = random_f32({1, 5}, 19), b2 = random_f32({1, 5}, 20);
  auto got = g.rerun({c2, a2, b2})[0];
  ASSERT_EQ(got.shape, (std::vector<int64_t>{3, 5}));
  EXPECT_TRUE(Close(got, ref::where(c2, a2, b2), 0, 0));
}

TEST(OpWhere, Past65535WorkgroupsSpillsTo2DDispatch) {
  ETW_REQUIRE_GPU();
  int64_t n = 65536LL * 256 + 77;
  auto c = random_bool({n}, 27);
  auto a = random_f32({1}, 28), b = random_f32({n}, 29);
  EXPECT_TRUE(Close(run_where(c, a, b, DType::Float32, {n}), ref::where(c, a, b), 0, 0));
}

TEST(OpWhere, BadConditionDtypeAndShapesFailAtLoad) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4}, 21), b = random_f32({3, 4}, 22);
  try {
    run_where(random_f32({3, 4}, 23), a, b, DType::Float32, {3, 4});
    ADD_FAILURE() << "float condition accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must be bool"), std::string::npos) << e.what();
  }
  try {
    run_where(random_bool({3, 4}, 24), a, random_f32({5}, 25), DType::Float32, {3, 4});
    ADD_FAILURE() << "non-broadcastable shapes accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not broadcast"), std::string::npos) << e.what();
  }
  try {
    run_where(random_bool({3, 4}, 26), a, b, DType::Int32, {3, 4});
    ADD_FAILURE() << "float values into an int output accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("aten.where.self"), std::string::npos) << e.what();
  }
}

}  // namespace
