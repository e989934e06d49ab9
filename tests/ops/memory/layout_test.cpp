// Strided memory ops (slice, select, split, cat, permute, expand, repeat, flip, pad,
// pixel_shuffle) against fp64 references, ranks 1..6, odd sizes, int32, dynamic shapes, errors.
#include <limits>

#include "reference/memory/memory_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

const std::vector<std::vector<int64_t>> kShapes = {
    {11}, {3, 7}, {2, 5, 3}, {3, 2, 5, 3}, {2, 3, 1, 4, 3}, {2, 1, 3, 2, 3, 2}};

TEST(OpMemSlice, StepsAndNegativeBoundsOnRanksOneToSix) {
  ETW_REQUIRE_GPU();
  uint64_t seed = 100;
  for (auto& s : kShapes) {
    auto a = random_f32(s, seed++);
    int64_t d = static_cast<int64_t>(s.size()) - 1 - static_cast<int64_t>(seed % s.size());
    auto ref = ref::slice(a, d, -s[d] + 1, std::nullopt, 2);  // start counts from the end
    auto got = run1("aten.slice_copy.Tensor", a, ref.shape, [&](OpGraph& g) {
      return std::vector<Id>{g.gb.int_(d), g.gb.int_(-s[d] + 1), g.gb.null(), g.gb.int_(2)};
    });
    EXPECT_TRUE(Close(got, ref, 0, 0)) << shape_str(s) << " dim " << d;
  }
}

TEST(OpMemSlice, DoubleDimInt64MaxEndAndClampingLikePyTorch) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({7, 5}, 3, -1000, 1000);
  auto ref1 = ref::slice(a, 0, 2, std::numeric_limits<int64_t>::max(), 3);
  auto got1 = run1("aten.slice_copy.Tensor", a, ref1.shape, [](OpGraph& g) {
    return std::vector<Id>{g.gb.dbl(0.0), g.gb.dbl(2.0), g.gb.int_(std::numeric_limits<int64_t>::max()), g.gb.int_(3)};
  });
  EXPECT_TRUE(Close(got1, ref1));
  // start below -size clamps to 0, end past size clamps to size
  auto ref2 = ref::slice(a, 1, -100, 100, 1);
  auto got2 = run1("aten.slice_copy.Tensor", a, ref2.shape, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_(-1), g.gb.int_(-100), g.gb.int_(100), g.gb.null()};
  });
  EXPECT_TRUE(Close(got2, ref2));
  // end before start is empty
  auto got3 = run1("aten.slice_copy.Tensor", a, {7, 0}, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_(1), g.gb.int_(4), g.gb.int_(2), g.gb.int_(1)};
  });
  EXPECT_EQ(got3.shape, (std::vector<int64_t>{7, 0}));
}

TEST(OpMemSlice, SymIntStartUsesItsValue) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({9, 4}, 4);
  OpGraph g;
  Id x = g.input(a);
  Id s = g.gb.symint(3);
  auto ref = ref::slice(a, 0, 3, 8, 2);
  Id o = g.output(DType::Float32, ref.shape);
  g.gb.op("aten.slice_copy.Tensor", {x, g.gb.int_(0), s, g.gb.int_(8), g.gb.int_(2), o});
  EXPECT_TRUE(Close(g.run()[0], ref, 0, 0));
}

TEST(OpMemSlice, DynamicInputRecomputesLength) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({10, 3}, 5);
  OpGraph g;
  Id x = g.input(a, {10, 3}, true);
  Id o = g.output(DType::Float32, {4, 3});
  g.gb.op("aten.slice_copy.Tensor", {x, g.gb.int_(0), g.gb.int_(1), g.gb.int_(-1), g.gb.int_(2), o});
  EXPECT_TRUE(Close(g.run()[0], ref::slice(a, 0, 1, -1, 2), 0, 0));
  auto b = random_f32({5, 3}, 6);
  auto out = g.rerun({b});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(Close(out[0], ref::slice(b, 0, 1, -1, 2), 0, 0));
}

TEST(OpMemSlice, ZeroStepFractionalDimAndBadDimFail) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({4, 4}, 7);
  EXPECT_NE(load_error([&] {
              run1("aten.slice_copy.Tensor", a, {4, 4},
                   [](OpGraph& g) { return std::vector<Id>{g.gb.int_(0), g.gb.int_(0), g.gb.int_(4), g.gb.int_(0)}; });
            }).find("step must be positive"),
            std::string::npos);
  std::string frac = load_error([&] {
    run1("aten.slice_copy.Tensor", a, {4, 4},
         [](OpGraph& g) { return std::vector<Id>{g.gb.dbl(0.5), g.gb.int_(0), g.gb.int_(4), g.gb.int_(1)}; });
  });
  EXPECT_NE(frac.find("aten.slice_copy.Tensor"), std::string::npos) << frac;
  EXPECT_NE(frac.find("dim: "), std::string::npos) << frac;
  EXPECT_NE(frac.find("expected an integer"), std::string::npos) << frac;
  EXPECT_NE(load_error([&] {
              run1("aten.slice_copy.Tensor", a, {4, 4},
                   [](OpGraph& g) { return std::vector<Id>{g.gb.int_(2), g.gb.int_(0), g.gb.int_(4), g.gb.int_(1)}; });
            }).find("out of range"),
            std::string::npos);
}

TEST(OpMemSlice, LargeTensorPast65535WorkgroupsIsCorrect) {
  ETW_REQUIRE_GPU();
  int64_t rows = 65536 * 2 + 3;  // output > 65535 workgroups of 256
  auto a = random_f32({rows, 130}, 8);
  auto ref = ref::slice(a, 1, 1, 129, 1);
  auto got = run1("aten.slice_copy.Tensor", a, ref.shape, [](OpGraph& g) {
    return std::vector<Id>{g.gb.int_(1), g.gb.int_(1), g.gb.int_(129), g.gb.int_(1)};
  });
  EXPECT_TRUE(Close(got, ref, 0, 0));
}

TEST(OpMemSelect, NegativeIndexIsNormalizedAndRangeChecked) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 5, 4}, 9);
  auto got = run1("aten.select_copy.int", a, {3, 4},
                  [](OpGraph& g) { return std::vector<Id>{g.gb.int_(1), g.gb.int_(-2)}; });
  EXPECT_TRUE(Close(got, ref::select(a, 1, -2), 0, 0));
  auto v = random_i32({6}, 10, -50, 50);
  auto got0 = run1("aten.select_copy.int", v, {}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(0), g.gb.int_(5)}; });
  EXPECT_TRUE(Close(got0, ref::select(v, 0, 5)));
  EXPECT_NE(load_error([&] {
              run1("aten.select_copy.int", a, {3, 4}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(1), g.gb.int_(5)}; });
            }).find("out of range"),
            std::string::npos);
}

TEST(OpMemSplit, WithSizesProducesEachPieceAndChecksSum) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 9, 3}, 11);
  std::vector<int64_t> sizes{2, 0, 4, 3};
  auto refs = ref::split_with_sizes(a, sizes, 1);
  OpGraph g;
  Id x = g.input(a);
  std::vector<Id> outs;
  for (auto& r : refs) outs.push_back(g.output(DType::Float32, r.shape));
  g.gb.op("aten.split_with_sizes_copy.default", {x, g.gb.int_list(sizes), g.gb.int_(-2), g.gb.value_list(outs)});
  auto got = g.run();
  ASSERT_EQ(got.size(), refs.size());
  for (size_t i = 0; i < refs.size(); ++i) EXPECT_TRUE(Close(got[i], refs[i], 0, 0)) << i;

  OpGraph bad;
  Id y = bad.input(a);
  Id p = bad.output(DType::Float32, {2, 4, 3}), q = bad.output(DType::Float32, {2, 4, 3});
  bad.gb.op("aten.split_with_sizes_copy.default", {y, bad.gb.int_list({4, 4}), bad.gb.int_(1), bad.gb.value_list({p, q})});
  EXPECT_NE(load_error([&] { bad.run(); }).find("sum to 8"), std::string::npos);

  OpGraph cnt;
  Id z = cnt.input(a);
  Id r = cnt.output(DType::Float32, {2, 9, 3});
  cnt.gb.op("aten.split_with_sizes_copy.default", {z, cnt.gb.int_list({4, 5}), cnt.gb.int_(1), cnt.gb.value_list({r})});
  EXPECT_NE(load_error([&] { cnt.run(); }).find("output list has 1"), std::string::npos);
}

TEST(OpMemSplit, DynamicInputResplitsAndOutOfRangeDimFails) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({4, 6}, 40);
  OpGraph g;
  Id x = g.input(a, {4, 6}, true);
  Id p = g.output(DType::Float32, {4, 2}), q = g.output(DType::Float32, {4, 4});
  g.gb.op("aten.split_with_sizes_copy.default", {x, g.gb.int_list({2, 4}), g.gb.int_(1), g.gb.value_list({p, q})});
  auto out = g.run();
  EXPECT_TRUE(Close(out[0], ref::slice(a, 1, 0, 2, 1), 0, 0));
  EXPECT_TRUE(Close(out[1], ref::slice(a, 1, 2, 6, 1), 0, 0));
  auto b = random_f32({2, 6}, 41);  // fewer rows: both pieces shrink
  out = g.rerun({b});
  EXPECT_TRUE(Close(out[0], ref::slice(b, 1, 0, 2, 1), 0, 0));
  EXPECT_TRUE(Close(out[1], ref::slice(b, 1, 2, 6, 1), 0, 0));
  // a narrower split dim no longer matches the sizes: a run-time error, not a wrong answer
  EXPECT_NE(load_error([&] { g.rerun({random_f32({2, 5}, 42)}); }).find("sum to 6"), std::string::npos);

  OpGraph bad;
  Id y = bad.input(a);
  Id r = bad.output(DType::Float32, {4, 6});
  bad.gb.op("aten.split_with_sizes_copy.default", {y, bad.gb.int_list({4}), bad.gb.int_(2), bad.gb.value_list({r})});
  EXPECT_NE(load_error([&] { bad.run(); }).find("out of range"), std::string::npos);
}

TEST(OpMemSplit, SplitCopyTensorLastPieceIsShorter) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({7, 2}, 12, -9, 9);
  auto refs = ref::split_with_sizes(a, {3, 3, 1}, 0);
  OpGraph g;
  Id x = g.input(a);
  std::vector<Id> outs;
  for (auto& r : refs) outs.push_back(g.output(DType::Int32, r.shape));
  g.gb.op("aten.split_copy.Tensor", {x, g.gb.int_(3), g.gb.int_(0), g.gb.value_list(outs)});
  auto got = g.run();
  for (size_t i = 0; i < refs.size(); ++i) EXPECT_TRUE(Close(got[i], refs[i])) << i;
}

TEST(OpMemCat, RanksOneToSixWithRepeatedInputIds) {
  ETW_REQUIRE_GPU();
  uint64_t seed = 200;
  for (auto& s : kShapes) {
    int64_t d = static_cast<int64_t>(seed % s.size());
    auto a = random_f32(s, seed++);
    auto s2 = s;
    s2[d] += 2;
    auto b = random_f32(s2, seed++);
    auto ref = ref::cat({a, b, a}, d);
    OpGraph g;
    Id x = g.input(a), y = g.input(b);
    Id o = g.output(DType::Float32, ref.shape);
    g.gb.op("aten.cat.default", {g.gb.value_list({x, y, x}), g.gb.int_(d - static_cast<int64_t>(s.size())), o});
    EXPECT_TRUE(Close(g.run()[0], ref, 0, 0)) << shape_str(s) << " dim " << d;
  }
}

TEST(OpMemCat, Int32DynamicInputsAndMismatchError) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({3, 4}, 13, -99, 99), b = random_i32({2, 4}, 14, -99, 99);
  OpGraph g;
  Id x = g.input(a, {3, 4}, true), y = g.input(b, {2, 4}, true);
  Id o = g.output(DType::Int32, {5, 4});
  g.gb.op("aten.cat.default", {g.gb.value_list({x, y}), g.gb.int_(0), o});
  EXPECT_TRUE(Close(g.run()[0], ref::cat({a, b}, 0)));
  auto a2 = random_i32({1, 3}, 15, -99, 99), b2 = random_i32({2, 3}, 16, -99, 99);
  EXPECT_TRUE(Close(g.rerun({a2, b2})[0], ref::cat({a2, b2}, 0)));
  EXPECT_NE(load_error([&] { g.rerun({random_i32({1, 3}, 1, 0, 1), random_i32({2, 2}, 1, 0, 1)}); }).find("must match"),
            std::string::npos);
}

TEST(OpMemCat, OneDimEmptyInputIsSkippedLikePyTorch) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 3}, 30), b = random_f32({2, 2}, 31);
  OpGraph g;
  Id x = g.input(a), e = g.input(HostTensor(DType::Float32, {0})), y = g.input(b);
  Id o = g.output(DType::Float32, {2, 5});
  g.gb.op("aten.cat.default", {g.gb.value_list({x, e, y}), g.gb.int_(1), o});
  EXPECT_TRUE(Close(g.run()[0], ref::cat({a, b}, 1), 0, 0));
}

TEST(OpMemPermute, RanksOneToSixAndPermuteAlias) {
  ETW_REQUIRE_GPU();
  std::vector<std::vector<int64_t>> perms = {{0}, {1, 0}, {2, 0, 1}, {3, 1, 0, 2}, {4, 2, 0, 3, 1}, {5, 0, 4, 1, 3, 2}};
  uint64_t seed = 300;
  for (size_t k = 0; k < kShapes.size(); ++k) {
    auto a = random_f32(kShapes[k], seed++);
    auto ref = ref::permute(a, perms[k]);
    auto got = run1(k % 2 ? "aten.permute.default" : "aten.permute_copy.default", a, ref.shape,
                    [&](OpGraph& g) { return std::vector<Id>{g.gb.int_list(perms[k])}; });
    EXPECT_TRUE(Close(got, ref, 0, 0)) << shape_str(kShapes[k]);
  }
  auto a = random_f32({2, 3}, 1);
  EXPECT_NE(load_error([&] { run1("aten.permute_copy.default", a, {3, 2}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({1, 1})}; }); })
                .find("repeated dim"),
            std::string::npos);
}

TEST(OpMemPermute, NegativeDimsAndDynamicShape) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({4, 3, 5}, 17);
  OpGraph g;
  Id x = g.input(a, {4, 3, 5}, true);
  Id o = g.output(DType::Float32, {5, 4, 3});
  g.gb.op("aten.permute_copy.default", {x, g.gb.int_list({-1, 0, -2}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::permute(a, {2, 0, 1}), 0, 0));
  auto b = random_f32({2, 3, 3}, 18);
  EXPECT_TRUE(Close(g.rerun({b})[0], ref::permute(b, {2, 0, 1}), 0, 0));
}

TEST(OpMemExpand, BroadcastsSizeOneAndNewLeadingDims) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 1, 5}, 19);
  auto ref = ref::expand(a, {2, 3, 4, -1});
  auto got = run1("aten.expand_copy.default", a, ref.shape,
                  [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({2, 3, 4, -1}), g.gb.boolean(false)}; });
  EXPECT_TRUE(Close(got, ref, 0, 0));
  EXPECT_NE(load_error([&] {
              run1("aten.expand_copy.default", a, {3, 2, 5},
                   [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({2, 2, 5}), g.gb.boolean(false)}; });
            }).find("cannot expand"),
            std::string::npos);
}

TEST(OpMemRepeat, TilesWithExtraLeadingRepeats) {
  ETW_REQUIRE_GPU();
  auto a = random_i32({2, 3}, 20, -9, 9);
  auto ref = ref::repeat(a, {2, 3, 2});
  auto got = run1("aten.repeat.default", a, ref.shape, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({2, 3, 2})}; });
  EXPECT_TRUE(Close(got, ref));
  EXPECT_NE(load_error([&] { run1("aten.repeat.default", a, {6}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({3})}; }); })
                .find("cannot be smaller"),
            std::string::npos);
}

TEST(OpMemFlip, FlipsSeveralDimsIncludingNegative) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({3, 4, 5}, 21);
  auto ref = ref::flip(a, {0, -1});
  auto got = run1("aten.flip.default", a, ref.shape, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({0, -1})}; });
  EXPECT_TRUE(Close(got, ref, 0, 0));
  EXPECT_NE(load_error([&] { run1("aten.flip.default", a, {3, 4, 5}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({1, -2})}; }); })
                .find("duplicates"),
            std::string::npos);
}

TEST(OpMemPad, PadsAndCropsFromTheLastDimWithValue) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 5, 6}, 22);
  std::vector<int64_t> pad{1, 2, -1, 3};  // last dim +1/+2, dim 1 crops 1 in front, +3 behind
  auto ref = ref::constant_pad(a, pad, -1.5);
  auto got = run1("aten.constant_pad_nd.default", a, ref.shape,
                  [&](OpGraph& g) { return std::vector<Id>{g.gb.int_list(pad), g.gb.dbl(-1.5)}; });
  EXPECT_TRUE(Close(got, ref, 0, 0));
  auto i = random_i32({3, 4}, 23, -9, 9);
  auto refi = ref::constant_pad(i, {2, 0}, 7);
  auto goti = run1("aten.constant_pad_nd.default", i, refi.shape,
                   [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({2, 0}), g.gb.int_(7)}; });
  EXPECT_TRUE(Close(goti, refi));
  EXPECT_NE(load_error([&] {
              run1("aten.constant_pad_nd.default", a, {2, 5, 6},
                   [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({1}), g.gb.int_(0)}; });
            }).find("even"),
            std::string::npos);
  EXPECT_NE(load_error([&] {
              run1("aten.constant_pad_nd.default", a, {2, 5, 6},
                   [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({-4, -3}), g.gb.int_(0)}; });
            }).find("negative size"),
            std::string::npos);
  // An int32 tensor padded with a value past int32 (scalar_word, shared with masked_fill and scatter).
  const auto big = load_error([&] {
    run1("aten.constant_pad_nd.default", i, refi.shape, [](OpGraph& g) { return std::vector<Id>{g.gb.int_list({2, 0}), g.gb.dbl(3e9)}; });
  });
  EXPECT_NE(big.find("pad value 3000000000"), std::string::npos) << big;
  EXPECT_NE(big.find("does not fit an int32 tensor"), std::string::npos) << big;
}

TEST(OpMemPixelShuffle, ShuffleAndUnshuffleWithBatchDims) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({2, 1, 18, 3, 5}, 24);
  auto ref = ref::pixel_shuffle(a, 3);
  auto got = run1("aten.pixel_shuffle.default", a, ref.shape, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(3)}; });
  EXPECT_TRUE(Close(got, ref, 0, 0));
  auto b = random_f32({3, 6, 4}, 25);
  auto refu = ref::pixel_unshuffle(b, 2);
  auto gotu = run1("aten.pixel_unshuffle.default", b, refu.shape, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(2)}; });
  EXPECT_TRUE(Close(gotu, refu, 0, 0));
  EXPECT_NE(load_error([&] { run1("aten.pixel_shuffle.default", b, {3, 6, 4}, [](OpGraph& g) { return std::vector<Id>{g.gb.int_(2)}; }); })
                .find("not divisible"),
            std::string::npos);
}

TEST(OpMemPixelShuffle, DynamicSpatialSizeIsRecomputed) {
  ETW_REQUIRE_GPU();
  auto a = random_f32({1, 8, 3, 5}, 43);
  OpGraph g;
  Id x = g.input(a, {1, 8, 3, 5}, true);
  Id o = g.output(DType::Float32, {1, 2, 6, 10});
  g.gb.op("aten.pixel_shuffle.default", {x, g.gb.int_(2), o});
  EXPECT_TRUE(Close(g.run()[0], ref::pixel_shuffle(a, 2), 0, 0));
  auto b = random_f32({1, 8, 2, 3}, 44);
  auto out = g.rerun({b});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{1, 2, 4, 6}));
  EXPECT_TRUE(Close(out[0], ref::pixel_shuffle(b, 2), 0, 0));
}

}  // namespace
