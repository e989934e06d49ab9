// Elementwise fusion reading through layout calls (graph/fusion.h, graph/layout_view.h): a slice,
// select, narrow, permute, transpose, expand, flip, reshape ... (or a chain of them) whose output
// only a fused group reads becomes a view of the tensor it starts from, and its copies go. Each
// graph is loaded with rewrites on and off: the results agree bit for bit (the fused kernel reads
// the same elements and runs the unfused math), and the dispatch labels show what was absorbed
// and what had to stay.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>

#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// Fused equals unfused bit for bit at fp32; within half precision when both store f16.
::testing::AssertionResult Same(const HostTensor& fused, const HostTensor& plain) {
  const char* p = std::getenv("ETWEBGPU_TEST_PRECISION");
  if (p && std::string(p) == "fp16") return Close(fused, plain, 1e-2, 1e-2);
  if (fused.shape != plain.shape) return ::testing::AssertionFailure() << "shapes differ";
  if (fused.data != plain.data) return ::testing::AssertionFailure() << "fused and unfused results differ";
  return ::testing::AssertionSuccess();
}

std::string text(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Loads `build` with rewrites on and off; the fused run must dispatch exactly `want` and match the
// plain one, which must dispatch `plain_dispatches`.
void expect_fused(const std::function<void(OpGraph&)>& build, const std::vector<std::string>& want,
                  size_t plain_dispatches, const std::string& what) {
  SCOPED_TRACE(what);
  LoadedGraph fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(plain.ops.size(), plain_dispatches) << text(plain.ops);
  EXPECT_EQ(fused.ops, want) << text(fused.ops);
  ASSERT_EQ(fused.out.size(), plain.out.size());
  for (size_t k = 0; k < fused.out.size(); ++k) EXPECT_TRUE(Same(fused.out[k], plain.out[k])) << "output " << k;
}

Id f32(OpGraph& g, std::vector<int64_t> dims) { return g.tensor(DType::Float32, std::move(dims)); }

// x -> slice -> * w (broadcast over the slice's last dim) -> relu.
struct SliceCase {
  std::vector<int64_t> in;
  int64_t dim;
  std::optional<int64_t> start, end;
  int64_t step;
  std::vector<int64_t> out;
};

TEST(ViewFusion, SliceAtAnyDimStartEndAndStepIsReadThroughAView) {
  ETW_REQUIRE_GPU();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<SliceCase> cases = {
      {{4, 10}, 1, 2, 9, 3, {4, 3}},           // step past the end
      {{4, 10}, -1, -4, kMax, 1, {4, 4}},      // negative dim and start, end at int64 max
      {{6, 5}, 0, -100, -2, 2, {2, 5}},        // start clamps to 0, end wraps: rows 0 and 2
      {{2, 3, 8}, 1, std::nullopt, std::nullopt, 2, {2, 2, 8}},  // None bounds
      {{3, 7}, 1, 5, 100, 1, {3, 2}},          // end clamps to the size
      {{3, 7}, 0, 0, kMax, 1, {3, 7}},         // the whole tensor: folded to nothing
      {{2, 9, 3}, 1, 8, 9, 4, {2, 1, 3}},      // one element along the dim
  };
  for (const SliceCase& c : cases) {
    auto build = [&](OpGraph& g) {
      Id x = g.input(random_f32(c.in, 40));
      Id w = g.input(random_f32({c.out.back()}, 41));
      Id s = f32(g, c.out), m = f32(g, c.out);
      Id o = g.output(DType::Float32, c.out);
      auto bound = [&](std::optional<int64_t> b) { return b ? g.gb.int_(*b) : g.gb.null(); };
      g.gb.op("aten.slice_copy.Tensor", {x, g.gb.int_(c.dim), bound(c.start), bound(c.end), g.gb.int_(c.step), s});
      g.gb.op("aten.mul.Tensor", {s, w, m});
      g.gb.op("aten.relu.default", {m, o});
    };
    // A slice that keeps everything is no layout at all (graph/layout_folding.h): nothing to read through.
    const std::vector<std::string> want{c.in == c.out ? "fused[mul+relu]" : "fused[slice+mul+relu]"};
    expect_fused(build, want, 3, "slice of " + shape_str(c.in) + " dim " + std::to_string(c.dim));
  }
}

TEST(ViewFusion, SelectWithANegativeIndexIsReadThroughAView) {
  ETW_REQUIRE_GPU();
  for (int64_t dim : {0, 1, -1}) {
    auto build = [&](OpGraph& g) {
      const std::vector<int64_t> in{3, 5, 4};
      std::vector<int64_t> od = in;
      od.erase(od.begin() + (dim < 0 ? dim + 3 : dim));
      Id x = g.input(random_f32(in, 42)), y = g.input(random_f32(od, 43));
      Id s = f32(g, od);
      Id o = g.output(DType::Float32, od);
      g.gb.op("aten.select_copy.int", {x, g.gb.int_(dim), g.gb.int_(-2), s});
      g.gb.op("aten.sub.Tensor", {y, s, g.gb.int_(1), o});
    };
    expect_fused(build, {"fused[select+sub]"}, 2, "select dim " + std::to_string(dim));
  }
}

// expand [3, 1, 5] -> [2, 3, 4, 5] (a new leading dim, -1 keeping a dim, 1 -> 4): zero strides.
TEST(ViewFusion, ExpandIsReadThroughZeroStrides) {
  ETW_REQUIRE_GPU();
  auto build = [](OpGraph& g) {
    Id x = g.input(random_f32({3, 1, 5}, 44)), y = g.input(random_f32({2, 3, 4, 5}, 45));
    Id e = f32(g, {2, 3, 4, 5});
    Id o = g.output(DType::Float32, {2, 3, 4, 5});
    g.gb.op("aten.expand_copy.default", {x, g.gb.int_list({2, -1, 4, -1}), g.gb.boolean(false), e});
    g.gb.op("aten.mul.Tensor", {e, y, o});
  };
  expect_fused(build, {"fused[expand+mul]"}, 2, "expand");
}

// Each other layout op, alone or in a chain behind a copy, feeding an elementwise op.
TEST(ViewFusion, EveryAffineLayoutOpAndChainsOfThemAreReadThroughOneView) {
  ETW_REQUIRE_GPU();
  auto I = [](OpGraph& g, int64_t v) { return g.gb.int_(v); };
  struct Chain {
    const char* label;
    std::function<void(OpGraph&)> build;
    size_t plain;
  };
  const std::vector<Chain> chains = {
      // The select_squeeze fixture: select, then a copy-free unsqueeze.
      {"fused[select+unsqueeze+mul]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({2, 5, 7}, 46)), w = g.input(random_f32({7}, 47));
         Id s = f32(g, {2, 7}), u = f32(g, {2, 1, 7});
         Id o = g.output(DType::Float32, {2, 1, 7});
         g.gb.op("aten.select_copy.int", {x, I(g, 1), I(g, 2), s});
         g.gb.op("aten.unsqueeze_copy.default", {s, I(g, -2), u});
         g.gb.op("aten.mul.Tensor", {u, w, o});
       },
       2},
      // Rows of a slice split by a reshape: [4, 12] -> rows 1..2 -> [2, 3, 4].
      {"fused[slice+view+neg]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({4, 12}, 48));
         Id s = f32(g, {2, 12}), v = f32(g, {2, 3, 4});
         Id o = g.output(DType::Float32, {2, 3, 4});
         g.gb.op("aten.slice_copy.Tensor", {x, I(g, 0), I(g, 1), I(g, 3), I(g, 1), s});
         g.gb.op("aten.view_copy.default", {s, g.gb.int_list({2, -1, 4}), v});
         g.gb.op("aten.neg.default", {v, o});
       },
       2},
      // A permute, a slice of it, a squeeze of the size-1 dim, a reshape merging what stays in order.
      {"fused[permute+slice+squeeze+_unsafe_view+exp]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({3, 4, 6}, 49));
         Id p = f32(g, {6, 3, 4}), s = f32(g, {1, 3, 4}), q = f32(g, {3, 4}), v = f32(g, {12});
         Id o = g.output(DType::Float32, {12});
         g.gb.op("aten.permute_copy.default", {x, g.gb.int_list({2, 0, 1}), p});
         g.gb.op("aten.slice_copy.Tensor", {p, I(g, 0), I(g, 4), I(g, 5), I(g, 1), s});
         g.gb.op("aten.squeeze_copy.dims", {s, g.gb.int_list({0}), q});
         g.gb.op("aten._unsafe_view.default", {q, g.gb.int_list({12}), v});
         g.gb.op("aten.exp.default", {v, o});
       },
       3},
      {"fused[transpose+slice+squeeze+sigmoid]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({5, 1, 3, 4}, 50));
         Id t = f32(g, {5, 4, 3, 1}), s = f32(g, {5, 2, 3, 1}), q = f32(g, {5, 2, 3});
         Id o = g.output(DType::Float32, {5, 2, 3});
         g.gb.op("aten.transpose_copy.int", {x, I(g, -1), I(g, 1), t});
         g.gb.op("aten.slice_copy.Tensor", {t, I(g, 1), I(g, 1), g.gb.null(), I(g, 2), s});
         g.gb.op("aten.squeeze_copy.dim", {s, I(g, 3), q});
         g.gb.op("aten.sigmoid.default", {q, o});
       },
       3},
      {"fused[t+add]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({3, 5}, 51)), y = g.input(random_f32({5, 3}, 52));
         Id t = f32(g, {5, 3});
         Id o = g.output(DType::Float32, {5, 3});
         g.gb.op("aten.t_copy.default", {x, t});
         g.gb.op("aten.add.Tensor", {t, y, g.gb.dbl(0.5), o});
       },
       2},
      // Negative strides: flip of two dims, then a slice with a step of it.
      {"fused[flip+slice+abs]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({4, 3, 5}, 53));
         Id f = f32(g, {4, 3, 5}), s = f32(g, {4, 3, 3});
         Id o = g.output(DType::Float32, {4, 3, 3});
         g.gb.op("aten.flip.default", {x, g.gb.int_list({0, -1}), f});
         g.gb.op("aten.slice_copy.Tensor", {f, I(g, 2), I(g, 0), I(g, 5), I(g, 2), s});
         g.gb.op("aten.abs.default", {s, o});
       },
       3},
      {"fused[narrow+clone+tanh]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({6, 4}, 54));
         Id n = f32(g, {6, 2}), c = f32(g, {6, 2});
         Id o = g.output(DType::Float32, {6, 2});
         g.gb.op("aten.narrow_copy.default", {x, I(g, 1), I(g, -3), I(g, 2), n});
         g.gb.op("aten.clone.default", {n, g.gb.null(), c});
         g.gb.op("aten.tanh.default", {c, o});
       },
       2},
      // Two views of one tensor in one kernel (rotate_half's halves): x[..., 4:] * x[..., :4].
      {"fused[slice+slice+mul]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({2, 3, 8}, 55));
         Id a = f32(g, {2, 3, 4}), b = f32(g, {2, 3, 4});
         Id o = g.output(DType::Float32, {2, 3, 4});
         g.gb.op("aten.slice_copy.Tensor", {x, I(g, -1), I(g, 4), I(g, 8), I(g, 1), a});
         g.gb.op("aten.slice_copy.Tensor", {x, I(g, -1), I(g, 0), I(g, 4), I(g, 1), b});
         g.gb.op("aten.mul.Tensor", {a, b, o});
       },
       3},
  };
  for (const Chain& c : chains) expect_fused(c.build, {c.label}, c.plain, c.label);
}

// A permute whose reshape the strides cannot express (merging permuted dims) keeps its copies;
// so does a chain of copy-free views alone, which the memory plan already gives no dispatch.
TEST(ViewFusion, ReshapesOfPermutedDimsAndCopyFreeViewsAloneStay) {
  ETW_REQUIRE_GPU();
  auto permute_view = [](OpGraph& g) {
    Id x = g.input(random_f32({3, 4}, 56));
    Id p = f32(g, {4, 3}), v = f32(g, {12});
    Id o = g.output(DType::Float32, {12});
    g.gb.op("aten.permute_copy.default", {x, g.gb.int_list({1, 0}), p});
    g.gb.op("aten.view_copy.default", {p, g.gb.int_list({12}), v});
    g.gb.op("aten.neg.default", {v, o});
  };
  expect_fused(permute_view, {"aten.permute_copy.default", "aten.neg.default"}, 2, "permute then view");
  auto free_views = [](OpGraph& g) {
    Id x = g.input(random_f32({3, 4}, 57));
    Id u = f32(g, {1, 3, 4}), v = f32(g, {1, 12}), e = f32(g, {1, 12});
    Id o = g.output(DType::Float32, {1, 12});
    g.gb.op("aten.unsqueeze_copy.default", {x, g.gb.int_(0), u});
    g.gb.op("aten.view_copy.default", {u, g.gb.int_list({1, 12}), v});
    g.gb.op("aten.exp.default", {v, e});
    g.gb.op("aten.neg.default", {e, o});
  };
  expect_fused(free_views, {"fused[exp+neg]"}, 2, "copy-free views");
}

// The legality checks keep the copy: a second reader, a graph output, a write to the source
// between the slice and the group, a SymInt bound, a dynamic input.
TEST(ViewFusion, SliceReadTwiceOrEscapingOrOverwrittenOrSymbolicOrDynamicStays) {
  ETW_REQUIRE_GPU();
  auto slice = [](OpGraph& g, Id x, Id s, Id end) {
    g.gb.op("aten.slice_copy.Tensor", {x, g.gb.int_(1), g.gb.int_(1), end, g.gb.int_(1), s});
  };
  auto two_readers = [&](OpGraph& g) {
    Id x = g.input(random_f32({4, 6}, 58));
    Id s = f32(g, {4, 4}), n = f32(g, {4, 4});
    Id o = g.output(DType::Float32, {4, 4});
    slice(g, x, s, g.gb.int_(5));
    g.gb.op("aten.neg.default", {s, n});
    g.gb.op("aten.add.Tensor", {n, s, g.gb.int_(1), o});
  };
  expect_fused(two_readers, {"aten.slice_copy.Tensor", "fused[neg+add]"}, 3, "read twice");
  auto escaping = [&](OpGraph& g) {
    Id x = g.input(random_f32({4, 6}, 59));
    Id s = g.output(DType::Float32, {4, 4}), n = f32(g, {4, 4});
    Id o = g.output(DType::Float32, {4, 4});
    slice(g, x, s, g.gb.int_(5));
    g.gb.op("aten.neg.default", {s, n});
    g.gb.op("aten.exp.default", {n, o});
  };
  expect_fused(escaping, {"aten.slice_copy.Tensor", "fused[neg+exp]"}, 3, "a graph output");
  // t = exp(x); s = t[:, 1:5]; t = y (copy_); the group after it must read the old t.
  auto overwritten = [&](OpGraph& g) {
    Id x = g.input(random_f32({4, 6}, 60)), y = g.input(random_f32({4, 6}, 61));
    Id t = f32(g, {4, 6}), s = f32(g, {4, 4}), n = f32(g, {4, 4});
    Id o = g.output(DType::Float32, {4, 4});
    g.gb.op("aten.exp.default", {x, t});
    slice(g, t, s, g.gb.int_(5));
    g.gb.op("aten.copy_.default", {t, y, g.gb.boolean(false), t});
    g.gb.op("aten.neg.default", {s, n});
    g.gb.op("aten.abs.default", {n, o});
    g.mark_output(t);
  };
  expect_fused(overwritten,
               {"aten.exp.default", "aten.slice_copy.Tensor", "aten.copy_.default", "fused[neg+abs]"}, 5, "written between");
  auto symbolic = [&](OpGraph& g) {
    Id x = g.input(random_f32({4, 6}, 62));
    Id s = f32(g, {4, 4});
    Id o = g.output(DType::Float32, {4, 4});
    slice(g, x, s, g.gb.symint(5));
    g.gb.op("aten.neg.default", {s, o});
  };
  expect_fused(symbolic, {"aten.slice_copy.Tensor", "aten.neg.default"}, 2, "a SymInt end");
  auto dynamic = [&](OpGraph& g) {
    Id x = g.input(random_f32({4, 6}, 63), {4, 6}, true);
    Id s = f32(g, {4, 4});
    Id o = g.output(DType::Float32, {4, 4});
    slice(g, x, s, g.gb.int_(5));
    g.gb.op("aten.neg.default", {s, o});
  };
  expect_fused(dynamic, {"aten.slice_copy.Tensor", "aten.neg.default"}, 2, "a dynamic input");
}

}  // namespace
