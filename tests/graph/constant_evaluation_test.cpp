// graph::evaluate_constant_calls: calls that compute the same thing on every run (they read only
// constants) run once at load with the same kernels and become constants. Each case loads a graph
// with rewrites on and off and proves the calls left, that the results are the unfused ones bit
// for bit, and that what must stay computed (inputs, SymInts, large results, an index out of
// range) stays.
#include <algorithm>
#include <cstring>

#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

Id i64_constant(GraphBuilder& gb, std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  std::vector<uint8_t> bytes(v.size() * 8);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return gb.constant(DType::Int64, std::move(dims), std::move(bytes));
}

// Swin's shifted window as exported: roll(x, 2, dim 1) = x[:, (arange(6) + 4) % 6], and its
// relative-position bias: table[index].view(4, 4, 3).permute(2, 0, 1) added to the scores.
void swin_like(OpGraph& g, const HostTensor& x, const HostTensor& scores, const HostTensor& table,
               const std::vector<int64_t>& index) {
  auto& gb = g.gb;
  Id xi = g.input(x), si = g.input(scores);
  Id r = g.tensor(DType::Int64, {6}), s = g.tensor(DType::Int64, {6}), m = g.tensor(DType::Int64, {6});
  gb.op("aten.arange.start_step", {gb.int_(0), gb.int_(6), gb.int_(1), gb.null(), gb.null(), gb.null(), gb.boolean(false), r});
  gb.op("aten.add.Scalar", {r, gb.int_(4), gb.int_(1), s});
  gb.op("aten.fmod.Scalar", {s, gb.int_(6), m});
  gb.op("aten.index.Tensor", {xi, gb.value_list({gb.null(), m}), g.output(DType::Float32, {2, 6, 3})});
  Id rows = g.tensor(DType::Float32, {16, 3}), view = g.tensor(DType::Float32, {4, 4, 3}), bias = g.tensor(DType::Float32, {3, 4, 4});
  gb.op("aten.index.Tensor", {g.constant(table), gb.value_list({i64_constant(gb, {16}, index)}), rows});
  gb.op("aten.view_copy.default", {rows, gb.int_list({4, 4, 3}), view});
  gb.op("aten.permute_copy.default", {view, gb.int_list({2, 0, 1}), bias});
  gb.op("aten.add.Tensor", {si, bias, gb.int_(1), g.output(DType::Float32, {3, 4, 4})});
}

TEST(ConstantEvaluation, RollIndicesAndPositionBiasBecomeConstants) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 6, 3}, 1), scores = random_f32({3, 4, 4}, 2), table = random_f32({10, 3}, 3);
  std::vector<int64_t> index;
  for (int64_t i = 0; i < 16; ++i) index.push_back((i * 7) % 10);
  auto build = [&](OpGraph& g) { swin_like(g, x, scores, table, index); };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), 7u);  // the view is a copy-free alias
  // What depends on the inputs: the gather of x and the add of the bias.
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.index.Tensor", "aten.add.Tensor"}));
  ASSERT_EQ(fused.out.size(), 2u);
  EXPECT_EQ(fused.out[0].data, plain.out[0].data);
  EXPECT_EQ(fused.out[1].data, plain.out[1].data);
  // roll by 2 along dim 1: out[:, j] = x[:, (j + 4) % 6].
  const float* o = fused.out[0].as<float>();
  const float* xv = x.as<float>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 6; ++j)
      for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(o[(b * 6 + j) * 3 + c], xv[(b * 6 + (j + 4) % 6) * 3 + c]);
}

// A prepacked constant (written at load, not by a dispatch) read by an evaluated call: the
// evaluation runs the prepack too, and the result is the unfused one.
TEST(ConstantEvaluation, APrepackedConstantFeedsTheEvaluation) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 3}, 8), k = random_f32({2, 3}, 9, 0.5f, 2.f);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id packed = g.tensor(DType::Float32, {2, 3}), e = g.tensor(DType::Float32, {2, 3});
    gb.op("et_vk.prepack.default", {g.constant(k), packed});
    gb.op("aten.exp.default", {packed, e});
    gb.op("aten.mul.Tensor", {g.input(x), e, g.output(DType::Float32, {2, 3})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops, (std::vector<std::string>{"aten.exp.default", "aten.mul.Tensor"}));
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"aten.mul.Tensor"}));
  EXPECT_EQ(fused.out[0].data, plain.out[0].data);
}

TEST(ConstantEvaluation, WhatDependsOnARunStaysComputed) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({6}, 4);
  {  // a SymInt bound: arange(0, n) changes with n
    auto build = [&](OpGraph& g) {
      Id r = g.tensor(DType::Float32, {6});
      g.gb.op("aten.arange.start_step", {g.gb.int_(0), g.gb.symint(6), g.gb.int_(1), g.gb.null(), g.gb.null(), g.gb.null(),
                                         g.gb.boolean(false), r});
      g.gb.op("aten.add.Tensor", {g.input(x), r, g.gb.int_(1), g.output(DType::Float32, {6})});
    };
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    EXPECT_EQ(fused.ops, plain.ops);
    EXPECT_EQ(fused.out[0].data, plain.out[0].data);
  }
  {  // a result above kMaxEvaluatedBytes (4.4 MB of ones) would hold memory for the model's life
    auto big = random_f32({1100, 1000}, 5);
    auto build = [&](OpGraph& g) {
      Id ones = g.tensor(DType::Float32, {1100, 1000});
      g.gb.op("aten.ones.default", {g.gb.int_list({1100, 1000}), g.gb.null(), g.gb.null(), g.gb.null(), g.gb.null(), ones});
      g.gb.op("aten.add.Tensor", {g.input(big), ones, g.gb.int_(1), g.output(DType::Float32, {1100, 1000})});
    };
    auto fused = load_graph(build, true);
    EXPECT_EQ(fused.ops.size(), 2u);
    EXPECT_EQ(fused.ops[0], "aten.ones.default");
  }
  {  // 17 results of 4 MiB: the first 16 (64 MiB, kMaxEvaluatedTotalBytes) become constants
    auto in = random_f32({1024, 1024}, 10);
    auto build = [&](OpGraph& g) {
      Id xi = g.input(in);
      for (int k = 0; k < 17; ++k) {
        Id ones = g.tensor(DType::Float32, {1024, 1024});
        g.gb.op("aten.ones.default", {g.gb.int_list({1024, 1024}), g.gb.null(), g.gb.null(), g.gb.null(), g.gb.null(), ones});
        g.gb.op("aten.add.Tensor", {xi, ones, g.gb.int_(1), g.output(DType::Float32, {1024, 1024})});
      }
    };
    auto fused = load_graph(build, true);
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "aten.ones.default"), 1);
    EXPECT_EQ(std::count(fused.ops.begin(), fused.ops.end(), "aten.add.Tensor"), 17);
  }
  {  // a graph output is written by the run, not made a constant
    auto build = [&](OpGraph& g) {
      g.input(x);
      g.gb.op("aten.arange.start_step", {g.gb.int_(0), g.gb.int_(6), g.gb.int_(1), g.gb.null(), g.gb.null(), g.gb.null(),
                                         g.gb.boolean(false), g.output(DType::Float32, {6})});
    };
    EXPECT_EQ(load_graph(build, true).ops, (std::vector<std::string>{"aten.arange.start_step"}));
  }
}

// A constant gather out of range is not evaluated at load: the run reports it as the unfused
// run does.
TEST(ConstantEvaluation, AnIndexOutOfRangeIsReportedByTheRun) {
  ETW_REQUIRE_GPU();
  auto s = random_f32({4}, 6);
  auto build = [&](OpGraph& g) {
    Id rows = g.tensor(DType::Float32, {4});
    g.gb.op("aten.index.Tensor", {g.constant(random_f32({3}, 7)), g.gb.value_list({i64_constant(g.gb, {4}, {0, 1, 2, 9})}), rows});
    g.gb.op("aten.add.Tensor", {g.input(s), rows, g.gb.int_(1), g.output(DType::Float32, {4})});
  };
  for (bool fuse : {true, false}) {
    std::string e;
    try {
      load_graph(build, fuse);
    } catch (const Error& err) {
      e = err.what();
    }
    EXPECT_NE(e.find("aten.index.Tensor"), std::string::npos) << fuse << ": " << e;
    EXPECT_NE(e.find("9"), std::string::npos) << fuse << ": " << e;
  }
}

}  // namespace
