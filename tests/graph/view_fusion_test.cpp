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
  for (size_t k = 0; k < fused.out.size(); ++k) EXPECT_TRUE(SameAsUnfused(fused.out[k], plain.out[k])) << "output " << k;
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
      {"fused[slice+squeeze+alias+relu]",
       [&](OpGraph& g) {
         Id x = g.input(random_f32({1, 4, 1, 6}, 94));
         Id s = f32(g, {1, 4, 1, 3}), q = f32(g, {4, 3}), a = f32(g, {4, 3});
         Id o = g.output(DType::Float32, {4, 3});
         g.gb.op("aten.slice_copy.Tensor", {x, I(g, 3), I(g, 1), I(g, 6), I(g, 2), s});
         g.gb.op("aten.squeeze_copy.default", {s, q});
         g.gb.op("aten.alias_copy.default", {q, a});
         g.gb.op("aten.relu.default", {a, o});
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

// ---------------------------------------------------------------- cats read in place

// Data with zeros and negative zeros: a cat must hand each part's element over bit for bit (an
// addition of zeros would turn -0 into +0).
HostTensor with_zeros(std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t = random_f32(std::move(shape), seed);
  for (int64_t i = 0; i < t.numel(); i += 3) t.as<float>()[i] = i % 2 ? -0.f : 0.f;
  return t;
}

// Hugging Face's rotary embedding: x * cos + cat(-x[..., d/2:], x[..., :d/2]) * sin (the
// rope_hf_pattern fixture), the halves split along the last dim or another.
TEST(ViewFusion, RotateHalfIsOneKernelSelectingTheCatsPartsInPlace) {
  ETW_REQUIRE_GPU();
  for (int64_t dim : {-1, 2}) {
    auto build = [&](OpGraph& g) {
      const std::vector<int64_t> xd{1, 2, 6, 8}, td{1, 1, 6, 8};
      const int64_t half = xd[dim < 0 ? 3 : dim] / 2;
      std::vector<int64_t> hd = xd;
      hd[dim < 0 ? 3 : dim] = half;
      Id x = g.input(with_zeros(xd, 64)), cos = g.input(random_f32(td, 65)), sin = g.input(random_f32(td, 66));
      Id xc = f32(g, xd), x1 = f32(g, hd), x2 = f32(g, hd), n = f32(g, hd), r = f32(g, xd), rs = f32(g, xd);
      Id o = g.output(DType::Float32, xd);
      g.gb.op("aten.mul.Tensor", {x, cos, xc});
      g.gb.op("aten.slice_copy.Tensor", {x, g.gb.int_(dim), g.gb.int_(0), g.gb.int_(half), g.gb.int_(1), x1});
      g.gb.op("aten.slice_copy.Tensor",
              {x, g.gb.int_(dim), g.gb.int_(half), g.gb.int_(std::numeric_limits<int64_t>::max()), g.gb.int_(1), x2});
      g.gb.op("aten.neg.default", {x2, n});
      g.gb.op("aten.cat.default", {g.gb.value_list({n, x1}), g.gb.int_(dim), r});
      g.gb.op("aten.mul.Tensor", {r, sin, rs});
      g.gb.op("aten.add.Tensor", {xc, rs, g.gb.int_(1), o});
    };
    expect_fused(build, {"fused[slice+slice+mul+neg+cat+mul+add]"}, 8, "rotate_half along dim " + std::to_string(dim));
  }
}

// A cat of plain tensors (one listed twice) along a middle dim; of parts whose terms broadcast
// inputs across the cat dim (w, per element of the part) or along it (s, one column); of three
// parts, one a view, the cat itself broadcast by the output in another dim; and -0 kept.
TEST(ViewFusion, CatPartsAreReadInTheirPlaceWhateverTheyAre) {
  ETW_REQUIRE_GPU();
  struct Case {
    const char* label;
    std::function<void(OpGraph&)> build;
    size_t plain;
  };
  const std::vector<Case> cases = {
      {"fused[cat+cat+sub]",
       [](OpGraph& g) {
         Id x = g.input(with_zeros({2, 3, 4}, 67)), y = g.input(random_f32({2, 5, 4}, 68)), c = g.input(random_f32({4}, 69));
         Id cat = f32(g, {2, 11, 4});
         Id o = g.output(DType::Float32, {2, 11, 4});
         g.gb.op("aten.cat.default", {g.gb.value_list({x, y, x}), g.gb.int_(1), cat});
         g.gb.op("aten.sub.Tensor", {cat, c, g.gb.int_(1), o});
       },
       4},
      {"fused[mul+add+cat+neg]",
       [](OpGraph& g) {
         Id a = g.input(with_zeros({3, 4}, 70)), w = g.input(random_f32({4}, 71));
         Id b = g.input(random_f32({3, 2}, 72)), s = g.input(random_f32({3, 1}, 73));
         Id p = f32(g, {3, 4}), q = f32(g, {3, 2}), cat = f32(g, {3, 6});
         Id o = g.output(DType::Float32, {3, 6});
         g.gb.op("aten.mul.Tensor", {a, w, p});
         g.gb.op("aten.add.Tensor", {b, s, g.gb.int_(1), q});
         g.gb.op("aten.cat.default", {g.gb.value_list({p, q}), g.gb.int_(-1), cat});
         g.gb.op("aten.neg.default", {cat, o});
       },
       5},
      {"fused[t+permute+exp+cat+cat+mul]",
       [](OpGraph& g) {
         Id x = g.input(random_f32({5, 2}, 74)), y = g.input(with_zeros({1, 2}, 75)), z = g.input(random_f32({3, 2}, 76));
         Id w = g.input(random_f32({4, 1, 1}, 77));
         Id t = f32(g, {2, 5}), p = f32(g, {5, 2}), e = f32(g, {5, 2}), cat = f32(g, {9, 2});
         Id o = g.output(DType::Float32, {4, 9, 2});
         g.gb.op("aten.t_copy.default", {x, t});  // and back: one view of x
         g.gb.op("aten.permute_copy.default", {t, g.gb.int_list({1, 0}), p});
         g.gb.op("aten.exp.default", {p, e});
         g.gb.op("aten.cat.default", {g.gb.value_list({z, e, y}), g.gb.int_(0), cat});
         g.gb.op("aten.mul.Tensor", {cat, w, o});
       },
       7},
  };
  for (const Case& c : cases) expect_fused(c.build, {c.label}, c.plain, c.label);
}

// A cat read twice or escaping is a fused kernel of its own (one dispatch, not one per part); in a
// dynamic program, of more parts than a kernel has inputs, or inside another cat's part it keeps
// its copies. The group around it still fuses.
TEST(ViewFusion, CatsThatCannotBeReadInPlaceStay) {
  ETW_REQUIRE_GPU();
  auto two_readers = [](OpGraph& g) {
    Id x = g.input(random_f32({2, 3}, 78)), y = g.input(random_f32({2, 3}, 79));
    Id cat = f32(g, {2, 6}), n = f32(g, {2, 6});
    Id o = g.output(DType::Float32, {2, 6});
    g.gb.op("aten.cat.default", {g.gb.value_list({x, y}), g.gb.int_(1), cat});
    g.gb.op("aten.neg.default", {cat, n});
    g.gb.op("aten.mul.Tensor", {n, cat, o});
  };
  expect_fused(two_readers, {"fused[cat]", "fused[neg+mul]"}, 4, "read twice");
  auto dynamic = [](OpGraph& g) {
    Id x = g.input(random_f32({2, 3}, 80), {2, 3}, true), y = g.input(random_f32({2, 3}, 81));
    Id cat = f32(g, {2, 6});
    Id o = g.output(DType::Float32, {2, 6});
    g.gb.op("aten.cat.default", {g.gb.value_list({x, y}), g.gb.int_(1), cat});
    g.gb.op("aten.neg.default", {cat, o});
  };
  expect_fused(dynamic, {"aten.cat.default", "aten.cat.default", "aten.neg.default"}, 3, "a dynamic input");
  auto many = [](OpGraph& g) {
    std::vector<Id> parts;
    for (int k = 0; k < 7; ++k) parts.push_back(g.input(random_f32({2, 1}, 82 + k)));
    Id cat = f32(g, {2, 7}), e = f32(g, {2, 7});
    Id o = g.output(DType::Float32, {2, 7});
    g.gb.op("aten.cat.default", {g.gb.value_list(parts), g.gb.int_(1), cat});
    g.gb.op("aten.exp.default", {cat, e});
    g.gb.op("aten.neg.default", {e, o});
  };
  std::vector<std::string> seven(7, "aten.cat.default");
  seven.push_back("fused[exp+neg]");
  expect_fused(many, seven, 9, "seven parts");
  // cat(neg(cat(a, b)), c) * w: the inner cat, in the outer one's part, stays; the outer is read
  // in place with neg in its first part.
  auto nested = [](OpGraph& g) {
    Id a = g.input(random_f32({2, 2}, 90)), b = g.input(random_f32({2, 3}, 91)), c = g.input(random_f32({2, 1}, 92));
    Id w = g.input(random_f32({6}, 93));
    Id inner = f32(g, {2, 5}), n = f32(g, {2, 5}), outer = f32(g, {2, 6});
    Id o = g.output(DType::Float32, {2, 6});
    g.gb.op("aten.cat.default", {g.gb.value_list({a, b}), g.gb.int_(1), inner});
    g.gb.op("aten.neg.default", {inner, n});
    g.gb.op("aten.cat.default", {g.gb.value_list({n, c}), g.gb.int_(1), outer});
    g.gb.op("aten.mul.Tensor", {outer, w, o});
  };
  expect_fused(nested, {"aten.cat.default", "aten.cat.default", "fused[neg+cat+mul]"}, 6, "a cat in a cat's part");
}

}  // namespace
