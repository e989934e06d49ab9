// view_copy / _unsafe_view / alias_copy / clone / squeeze_copy / unsqueeze_copy: buffer-copy
// reshapes (or none: the memory plan lets the output share its input's buffer), checked against
// the fp64 reshape reference, with dynamic shapes and error paths.
#include <algorithm>
#include <functional>

#include "reference/memory/memory_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

TEST(OpMemView, ViewCopyWithInferredDimMatchesReshape) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 5, 7}, 1);
  OpGraph g;
  Id x = g.input(a);
  Id o = g.output(DType::Float32, {5, 21});
  g.gb.op("aten.view_copy.default", {x, g.gb.int_list({5, -1}), o});
  auto out = g.run();
  EXPECT_TRUE(Close(out[0], ref::reshape(a, {5, 21}), 0, 0));
}

TEST(OpMemView, UnsafeViewOfInt32IsExact) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({4, 9}, 2, -100000, 100000);
  OpGraph g;
  Id x = g.input(a);
  Id o = g.output(DType::Int32, {2, 2, 9});
  g.gb.op("aten._unsafe_view.default", {x, g.gb.int_list({2, 2, 9}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::reshape(a, {2, 2, 9})));
}

TEST(OpMemView, DynamicInputResizesOutputThroughInferredDim) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({6, 4}, 3);
  OpGraph g;
  Id x = g.input(a, {6, 4}, true);
  Id o = g.output(DType::Float32, {24});
  g.gb.op("aten.view_copy.default", {x, g.gb.int_list({-1}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::reshape(a, {24}), 0, 0));
  auto b = random_f32({3, 4}, 4);
  auto out = g.rerun({b});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{12}));
  EXPECT_TRUE(Close(out[0], ref::reshape(b, {12}), 0, 0));
}

TEST(OpMemView, SymIntEntryInValueListUsesItsValue) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 3, 5}, 5);
  OpGraph g;
  Id x = g.input(a);
  Id s = g.gb.symint(6);  // a static SymInt initial value: no op sets it
  Id o = g.output(DType::Float32, {6, 5});
  g.gb.op("aten.view_copy.default", {x, g.gb.value_list({s, g.gb.int_(5)}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::reshape(a, {6, 5}), 0, 0));
}

TEST(OpMemView, SharedMemoryObjectIsANoOpAlias) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({4, 6}, 6);
  OpGraph g;
  Id x = g.input(a);
  // t1 and t2 share mem_obj 0: the view must not issue a same-buffer copy.
  Id t1 = g.gb.tensor(DType::Float32, {4, 6}, 0);
  Id t2 = g.gb.tensor(DType::Float32, {24}, 0);
  Id o = g.output(DType::Float32, {24});
  g.gb.op("aten.clone.default", {x, g.gb.null(), t1});
  g.gb.op("aten.view_copy.default", {t1, g.gb.int_list({24}), t2});
  g.gb.op("aten.alias_copy.default", {t2, o});
  EXPECT_TRUE(Close(g.run()[0], ref::reshape(a, {24}), 0, 0));
}

TEST(OpMemView, WrongElementCountFailsAtLoad) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 5}, 7));
  Id o = g.output(DType::Float32, {4, 4});
  g.gb.op("aten.view_copy.default", {x, g.gb.int_list({4, 4}), o});
  EXPECT_NE(load_error([&] { g.run(); }).find("invalid for input"), std::string::npos);
}

TEST(OpMemView, TwoInferredDimsFailAtLoad) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 4}, 8));
  Id o = g.output(DType::Float32, {3, 4});
  g.gb.op("aten.view_copy.default", {x, g.gb.int_list({-1, -1}), o});
  EXPECT_NE(load_error([&] { g.run(); }).find("only one dimension"), std::string::npos);
}

TEST(OpMemView, DtypeChangeIsRejected) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 4}, 8));
  Id o = g.output(DType::Int32, {12});
  g.gb.op("aten.view_copy.default", {x, g.gb.int_list({12}), o});
  EXPECT_NE(load_error([&] { g.run(); }).find("do not convert"), std::string::npos);
}

TEST(OpMemClone, CloneAndAliasCopyBoolAndInt) {
  ETW_REQUIRE_GPU();
  auto b = random_bool({5, 3}, 9);
  auto i = random_i32({7}, 10, -5, 5);
  OpGraph g;
  Id x = g.input(b), y = g.input(i);
  Id o1 = g.output(DType::Bool, {5, 3});
  Id o2 = g.output(DType::Int32, {7});
  g.gb.op("aten.clone.default", {x, g.gb.null(), o1});
  g.gb.op("aten.alias_copy.default", {y, o2});
  auto out = g.run();
  EXPECT_TRUE(Close(out[0], ref::reshape(b, {5, 3})));
  EXPECT_TRUE(Close(out[1], ref::reshape(i, {7})));
}

TEST(OpMemClone, DifferentByteSizeFailsAtLoad) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({3, 4}, 11));
  Id o = g.output(DType::Float32, {3, 5});
  g.gb.op("aten.clone.default", {x, g.gb.null(), o});
  EXPECT_NE(load_error([&] { g.run(); }).find("different element counts"), std::string::npos);
}

TEST(OpMemSqueeze, DimsDimAndDefaultDropSizeOneDims) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({1, 3, 1, 5, 1}, 12);
  OpGraph g;
  Id x = g.input(a);
  Id o1 = g.output(DType::Float32, {3, 1, 5, 1});
  Id o2 = g.output(DType::Float32, {1, 3, 5, 1});
  Id o3 = g.output(DType::Float32, {3, 5});
  Id o4 = g.output(DType::Float32, {1, 3, 1, 5});
  g.gb.op("aten.squeeze_copy.dims", {x, g.gb.int_list({0, 1}), o1});  // dim 1 (size 3) stays
  g.gb.op("aten.squeeze_copy.dim", {x, g.gb.int_(2), o2});
  g.gb.op("aten.squeeze_copy.default", {x, o3});
  g.gb.op("aten.squeeze_copy.dims", {x, g.gb.int_list({-1}), o4});
  auto out = g.run();
  EXPECT_TRUE(Close(out[0], ref::reshape(a, {3, 1, 5, 1}), 0, 0));
  EXPECT_TRUE(Close(out[1], ref::reshape(a, {1, 3, 5, 1}), 0, 0));
  EXPECT_TRUE(Close(out[2], ref::reshape(a, {3, 5}), 0, 0));
  EXPECT_TRUE(Close(out[3], ref::reshape(a, {1, 3, 1, 5}), 0, 0));
}

TEST(OpMemSqueeze, UnsqueezeNegativeDimAndDynamicShape) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({4, 6}, 13, -9, 9);
  OpGraph g;
  Id x = g.input(a, {4, 6}, true);
  Id o = g.output(DType::Int32, {4, 6, 1});
  Id t = g.gb.tensor(DType::Int32, {4, 1, 6});
  Id o2 = g.output(DType::Int32, {4, 6});
  g.gb.op("aten.unsqueeze_copy.default", {x, g.gb.int_(-1), o});
  g.gb.op("aten.unsqueeze_copy.default", {x, g.gb.dbl(1.0), t});
  g.gb.op("aten.squeeze_copy.dims", {t, g.gb.int_list({1}), o2});
  auto out = g.run();
  EXPECT_TRUE(Close(out[0], ref::reshape(a, {4, 6, 1})));
  EXPECT_TRUE(Close(out[1], a));
  auto b = random_i32({2, 5}, 14, -9, 9);
  out = g.rerun({b});
  EXPECT_TRUE(Close(out[0], ref::reshape(b, {2, 5, 1})));
  EXPECT_TRUE(Close(out[1], b));
}

TEST(OpMemSqueeze, OutputRankMismatchAndBadDimFail) {
  ETW_REQUIRE_GPU();
  {
    OpGraph g;
    Id x = g.input(random_f32({1, 3}, 15));
    Id o = g.output(DType::Float32, {1, 3});
    g.gb.op("aten.squeeze_copy.dims", {x, g.gb.int_list({0}), o});
    EXPECT_NE(load_error([&] { g.run(); }).find("gives rank 1"), std::string::npos);
  }
  {
    OpGraph g;
    Id x = g.input(random_f32({1, 3}, 15));
    Id o = g.output(DType::Float32, {1, 3, 1});
    g.gb.op("aten.unsqueeze_copy.default", {x, g.gb.int_(4), o});
    EXPECT_NE(load_error([&] { g.run(); }).find("out of range"), std::string::npos);
  }
}

// Each reshape, with memory planning off (a buffer copy) and on (no step: the output shares the
// input's buffer), gives the reshaped input.
TEST(OpMemView, EveryReshapeCopiesWithoutPlanningAndMovesNothingWithIt) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({1, 3, 1, 4}, 40, 0.f, 1.f);  // relu leaves it as it is
  struct Case {
    const char* op;
    std::vector<int64_t> out;
    std::function<std::vector<Id>(OpGraph&)> mid;
  };
  std::vector<Case> cases = {
      {"aten.view_copy.default", {12}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({12})}; }},
      {"aten._unsafe_view.default", {3, 4}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({3, 4})}; }},
      {"aten.alias_copy.default", {1, 3, 1, 4}, [](OpGraph&) { return std::vector<Id>{}; }},
      {"aten.detach_copy.default", {1, 3, 1, 4}, [](OpGraph&) { return std::vector<Id>{}; }},
      {"aten.lift_fresh_copy.default", {1, 3, 1, 4}, [](OpGraph&) { return std::vector<Id>{}; }},
      {"aten.clone.default", {1, 3, 1, 4}, [](OpGraph& g) { return std::vector<Id>{g.gb.null()}; }},
      {"aten.squeeze_copy.default", {3, 4}, [](OpGraph&) { return std::vector<Id>{}; }},
      {"aten.squeeze_copy.dim", {3, 1, 4}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(0)}; }},
      {"aten.squeeze_copy.dims", {1, 3, 4}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({2})}; }},
      {"aten.unsqueeze_copy.default", {1, 3, 1, 4, 1}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(4)}; }},
  };
  for (const auto& c : cases)
    for (bool plan : {false, true}) {
      OpGraph g;
      Id x = g.input(a);
      Id t = g.tensor(DType::Float32, {1, 3, 1, 4});
      Id v = g.tensor(DType::Float32, c.out);
      Id o = g.output(DType::Float32, c.out);
      g.gb.op("aten.relu.default", {x, t});  // a computed input, not a graph input
      std::vector<Id> args = {t};
      for (Id m : c.mid(g)) args.push_back(m);
      args.push_back(v);
      g.gb.op(c.op, args);
      g.gb.op("aten.relu.default", {v, o});
      LoadOptions opts;
      opts.plan_memory = plan;
      auto out = g.run(opts);
      EXPECT_TRUE(Close(out[0], ref::reshape(a, c.out), 0, 0)) << c.op;
      auto variants = g.variants();
      EXPECT_EQ(std::count(variants.begin(), variants.end(), "copy"), plan ? 0 : 1) << c.op << " plan " << plan;
    }
}

}  // namespace
