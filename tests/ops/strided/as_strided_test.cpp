// aten.as_strided_copy.default inside a delegate against the fp64 reference: overlapping windows,
// a transposing stride, a storage offset, a zero stride (broadcast) and the load errors.
#include <optional>

#include "reference/strided/as_strided_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor run_as_strided(const HostTensor& x, std::vector<int64_t> size, std::vector<int64_t> stride,
                          std::optional<int64_t> offset) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, size);
  g.gb.op("aten.as_strided_copy.default",
          {in, g.gb.int_list(size), g.gb.int_list(stride), offset ? g.gb.int_(*offset) : g.gb.null(), o});
  return g.run()[0];
}

TEST(OpAsStrided, WindowsTransposeOffsetAndZeroStrideMatchReference) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({5, 7}, 300);
  struct Case { std::vector<int64_t> size, stride; std::optional<int64_t> offset; } cases[] = {
      {{4, 3}, {7, 1}, 2},          // a sub-block starting at element 2
      {{6, 4}, {5, 2}, 1},          // overlapping rows
      {{7, 5}, {1, 7}, std::nullopt},  // the transpose (Null offset = 0)
      {{3, 4}, {0, 3}, 4},          // stride 0 repeats one row
      {{2, 3, 2}, {9, 2, 1}, 0},    // rank 3
  };
  for (auto& c : cases)
    EXPECT_TRUE(Close(run_as_strided(x, c.size, c.stride, c.offset), ref::as_strided(x, c.size, c.stride, c.offset.value_or(0)), 0, 0))
        << shape_str(c.size) << " strides " << shape_str(c.stride);
}

TEST(OpAsStrided, OutOfRangeViewsFailAtLoadNamingTheProblem) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 4}, 301);
  EXPECT_TRUE(has(load_error([&] { run_as_strided(x, {4, 4}, {4, 1}, 1); }), "reads element 16"));
  EXPECT_TRUE(has(load_error([&] { run_as_strided(x, {2, 2}, {-1, 1}, 3); }), "negative size or stride"));
  EXPECT_TRUE(has(load_error([&] { run_as_strided(x, {2, 2}, {2}, 0); }), "size has 2 dims but stride has 1"));
}

}  // namespace
