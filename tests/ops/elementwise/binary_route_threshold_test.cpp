// Binary ops pick their kernel per run (binary.cpp): float add/sub/mul/div over same-shape
// operands take the vec4 kernel exactly when the element count divides by 4. Element counts on
// both sides of that rule (4k - 1 .. 4k + 2) on the automatic route must dispatch the right kernel
// and compute every element, tails included.
#include "reference/elementwise/elementwise_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

TEST(OpBinaryRouteThreshold, AutomaticRouteTakesVec4OnlyForMultiplesOfFourAndComputesTails) {
  ETW_REQUIRE_GPU();
  for (int64_t n : {1023, 1024, 1025, 1026, 1027, 6, 8}) {
    auto a = random_f32({n}, 400 + n), b = random_f32({n}, 500 + n);
    for (auto [op, r] : {std::pair{"aten.div.Tensor", ref::BinaryOp::Div}, std::pair{"aten.mul.Tensor", ref::BinaryOp::Mul}}) {
      OpGraph g;
      Id x = g.input(a), y = g.input(b);
      Id o = g.output(DType::Float32, {n});
      g.gb.op(op, {x, y, o});
      EXPECT_TRUE(Close(g.run()[0], ref::binary(r, a, b, 1.0), 1e-6, 1e-5)) << op << " n=" << n;
      Profile p;
      g.model()->run(g.inputs, &p);
      ASSERT_EQ(p.dispatches.size(), 1u);
      EXPECT_EQ(p.dispatches[0].variant, n % 4 == 0 ? "vec4" : "tensor") << op << " n=" << n;
    }
  }
}

}  // namespace
