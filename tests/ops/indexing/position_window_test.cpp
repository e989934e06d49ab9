// The position_windows rewrite (src/ops/indexing/position_window.cpp) and etwebgpu.position_rows:
// tables gathered at input_pos[k] + arange(0, S), as ExecuTorch's Llama takes its RoPE rows, are
// slices. Checked against the rows themselves and the unrewritten graph, over positions, chunk
// lengths and negative positions; positions out of range are the gather's error; what keeps the
// gather.
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr int64_t kRows = 12, kWidth = 4, kMaxS = 5;

HostTensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) { return HostTensor::from<int32_t>(DType::Int32, shape, v); }

// Rows p .. p + S - 1 of t (negative p counts from the end), as index.Tensor gives them.
HostTensor rows_of(const HostTensor& t, int64_t p, int64_t S) {
  std::vector<double> v = f64(t), out;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t r = p + s < 0 ? p + s + kRows : p + s;
    out.insert(out.end(), v.begin() + r * kWidth, v.begin() + (r + 1) * kWidth);
  }
  return ref_tensor({S, kWidth}, out);
}

struct Form {
  int64_t alpha = 1;         // 1: the window; 2: input_pos[k] + 2 * arange, not consecutive
  bool clone = true;          // the arange through a contiguous clone, as the export has it
  bool pos_from_constant = false;
  bool pos_is_output = false;  // the positions read by another call too
  bool index_clones = false;   // each gather reads its own clone of the positions (the 1B export)
  bool clone_is_output = false;  // ... and the first of those clones is a graph output too
};

// x [1, S] (its S drives the arange), input_pos [2]; outputs the rows of two tables at
// input_pos[-1] + alpha * arange(0, S).
void build(OpGraph& g, const Form& f) {
  auto& gb = g.gb;
  Id x = g.input(HostTensor(DType::Float32, {1, kMaxS}), {1, kMaxS}, true);
  Id ip = f.pos_from_constant ? g.constant(i32({2}, {0, 3})) : g.input(i32({2}, {0, 3}));
  Id t1 = g.constant(random_f32({kRows, kWidth}, 1)), t2 = g.constant(random_f32({kRows, kWidth}, 2));
  Id S = gb.symint();
  gb.op("sym_size.int", {x, gb.int_(1), S});
  Id p = g.tensor(DType::Int32, {});
  gb.op("aten.select_copy.int", {ip, gb.int_(0), gb.int_(-1), p});
  Id r = g.tensor(DType::Int32, {kMaxS});
  gb.op("aten.arange.start_step", {gb.int_(0), S, gb.int_(1), gb.null(), gb.null(), gb.null(), gb.boolean(false), r});
  Id rc = r;
  if (f.clone) {
    rc = g.tensor(DType::Int32, {kMaxS});
    gb.op("aten.clone.default", {r, gb.null(), rc});
  }
  Id pos = f.pos_is_output ? g.output(DType::Int32, {kMaxS}) : g.tensor(DType::Int32, {kMaxS});
  gb.op("aten.add.Tensor", {p, rc, gb.int_(f.alpha), pos});
  for (Id t : {t1, t2}) {
    Id idx = pos;
    if (f.index_clones) {
      idx = f.clone_is_output && t == t1 ? g.output(DType::Int32, {kMaxS}) : g.tensor(DType::Int32, {kMaxS});
      gb.op("aten.clone.default", {pos, gb.null(), idx});
    }
    Id o = g.output(DType::Float32, {kMaxS, kWidth});
    gb.op("aten.index.Tensor", {t, gb.value_list({idx}), o});
  }
}

size_t count(const std::vector<std::string>& v, const std::string& what) {
  return static_cast<size_t>(std::count(v.begin(), v.end(), what));
}

TEST(OpPositionWindow, RowsAtAPositionPlusArangeAreSlicesOfTheTable) {
  ETW_REQUIRE_GPU();
  for (int form = 0; form < 3; ++form) {
    const bool clone = form != 1, index_clones = form == 2;
    SCOPED_TRACE(form == 0 ? "arange cloned" : form == 1 ? "arange read directly" : "each gather through its clone of the positions");
    Form f;
    f.clone = clone;
    f.index_clones = index_clones;
    auto fused = load_graph([&](OpGraph& g) { build(g, f); }, true);
    auto plain = load_graph([&](OpGraph& g) { build(g, f); }, false);
    // Two slices and nothing else: no gather, no arange, no add, no select.
    EXPECT_EQ(fused.variants, (std::vector<std::string>{"slice", "slice"})) << ::testing::PrintToString(fused.variants);
    EXPECT_EQ(count(plain.variants, "slice"), 0u);
    const HostTensor t1 = random_f32({kRows, kWidth}, 1), t2 = random_f32({kRows, kWidth}, 2);
    struct Run { int64_t p, S; };
    for (const Run& run : {Run{3, 5}, Run{0, 1}, Run{7, 5}, Run{11, 1}, Run{-5, 5}, Run{-12, 3}, Run{4, 2}}) {
      const std::vector<HostTensor> in = {HostTensor(DType::Float32, {1, run.S}), i32({2}, {99, static_cast<int32_t>(run.p)})};
      const auto a = fused.g->rerun(in), b = plain.g->rerun(in);
      const std::string at = "p " + std::to_string(run.p) + " S " + std::to_string(run.S);
      EXPECT_TRUE(Close(a[0], rows_of(t1, run.p, run.S), 0, 0)) << at;
      EXPECT_TRUE(Close(a[1], rows_of(t2, run.p, run.S), 0, 0)) << at;
      EXPECT_TRUE(Close(a[0], b[0], 0, 0)) << at;
    }
  }
}

TEST(OpPositionWindow, PositionsOutOfRangeAreTheGathersErrorAndTheModelStaysUsable) {
  ETW_REQUIRE_GPU();
  auto fused = load_graph([&](OpGraph& g) { build(g, {}); }, true);
  auto run = [&](int32_t p, int64_t S) { return fused.g->rerun({HostTensor(DType::Float32, {1, S}), i32({2}, {0, p})}); };
  struct Bad { int32_t p; int64_t S; const char* error; };
  for (const Bad& b : {Bad{9, 5, "positions 9 .. 13 of a gather: index 12 is out of bounds for dimension 0 with size 12"},
                       Bad{12, 1, "positions 12 .. 12 of a gather: index 12 is out of bounds for dimension 0 with size 12"},
                       Bad{-13, 2, "positions -13 .. -12 of a gather: index -13 is out of bounds for dimension 0 with size 12"},
                       Bad{-2, 3, "positions -2 .. 0 of a gather: they cross 0 (not one slice)"}}) {
    const std::string e = load_error([&] { run(b.p, b.S); });
    EXPECT_TRUE(has(e, "etwebgpu.position_rows")) << e;
    EXPECT_TRUE(has(e, b.error)) << e;
  }
  EXPECT_TRUE(Close(run(2, 3)[1], rows_of(random_f32({kRows, kWidth}, 2), 2, 3), 0, 0));
}

TEST(OpPositionWindow, WhatKeepsTheGather) {
  ETW_REQUIRE_GPU();
  const HostTensor t1 = random_f32({kRows, kWidth}, 1);
  // Not consecutive (input_pos[k] + 2 * arange), or positions from a constant: the gathers stay.
  for (const Form& f : {Form{2}, Form{1, true, true}}) {
    auto fused = load_graph([&](OpGraph& g) { build(g, f); }, true);
    EXPECT_EQ(count(fused.variants, "slice"), 0u) << ::testing::PrintToString(fused.variants);
    EXPECT_EQ(count(fused.variants, "index"), 2u) << ::testing::PrintToString(fused.variants);
  }
  // The positions read by another call (a graph output): the gathers are slices, the positions
  // are still computed.
  auto kept = load_graph([&](OpGraph& g) { build(g, {1, true, false, true}); }, true);
  EXPECT_EQ(count(kept.variants, "slice"), 2u) << ::testing::PrintToString(kept.variants);
  EXPECT_EQ(count(kept.variants, "index"), 0u);
  const auto out = kept.g->rerun({HostTensor(DType::Float32, {1, 4}), i32({2}, {0, 6})});
  EXPECT_EQ(f64(out[0]), (std::vector<double>{6, 7, 8, 9}));
  EXPECT_TRUE(Close(out[1], rows_of(t1, 6, 4), 0, 0));
  // A gather's clone of the positions that is also a graph output: the clone stays, and so does
  // the add it reads.
  Form f;
  f.index_clones = f.clone_is_output = true;
  auto copied = load_graph([&](OpGraph& g) { build(g, f); }, true);
  EXPECT_EQ(count(copied.variants, "slice"), 2u) << ::testing::PrintToString(copied.variants);
  const auto got = copied.g->rerun({HostTensor(DType::Float32, {1, 3}), i32({2}, {0, 5})});
  EXPECT_EQ(f64(got[0]), (std::vector<double>{5, 6, 7}));
  EXPECT_TRUE(Close(got[1], rows_of(t1, 5, 3), 0, 0));
}

// The op as a call of its own: a slice from its SymInt; malformed calls are load errors.
TEST(OpPositionWindow, PositionRowsCallsGiveTheSlicesStartAndRefuseMalformedArguments) {
  ETW_REQUIRE_GPU();
  const HostTensor t = random_f32({kRows, kWidth}, 3);
  auto build_rows = [&](OpGraph& g, bool from_input, std::vector<int64_t> pos_dims, int64_t rows) {
    auto& gb = g.gb;
    HostTensor pos(DType::Int32, pos_dims);
    Id ip = from_input ? g.input(pos) : g.constant(pos);
    Id st = gb.symint(), en = gb.symint();
    gb.op("etwebgpu.position_rows", {ip, gb.int_(0), gb.int_(3), gb.int_(rows), st});
    gb.op("add", {st, gb.int_(3), en});
    Id o = g.output(DType::Float32, {3, kWidth});
    gb.op("aten.slice_copy.Tensor", {g.constant(t), gb.int_(0), st, en, gb.int_(1), o});
  };
  OpGraph g;
  build_rows(g, true, {1}, kRows);
  g.run();
  for (int32_t p : {0, 9, -3, -12}) {
    const auto out = g.rerun({i32({1}, {p})});
    EXPECT_TRUE(Close(out[0], rows_of(t, p, 3), 0, 0)) << "p " << p;
  }
  EXPECT_TRUE(has(load_error([&] { g.rerun({i32({1}, {10})}); }), "index 12 is out of bounds for dimension 0 with size 12"));
  struct Bad { bool from_input; std::vector<int64_t> dims; int64_t rows; const char* error; };
  for (const Bad& b : {Bad{false, {1}, kRows, "must be a graph input"}, Bad{true, {1, 1}, kRows, "x must be 1-D"},
                       Bad{true, {1}, 0, "rows must be positive"}}) {
    OpGraph bad;
    build_rows(bad, b.from_input, b.dims, b.rows);
    const std::string e = load_error([&] { bad.run(); });
    EXPECT_TRUE(has(e, b.error)) << e;
  }
}

}  // namespace
