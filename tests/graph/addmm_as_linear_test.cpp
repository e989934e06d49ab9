// The addmm_as_linear rewrite (src/ops/matmul/addmm_as_linear.cpp): an addmm by a constant
// [K, N] weight with a bias of N, beta = alpha = 1, becomes a linear by the weight's transpose,
// matching the reference; any other addmm stays one.
#include "reference/matmul/matmul_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

struct Addmm {
  int64_t M = 19, K = 36, N = 28;
  HostTensor x = random_f32({M, K}, 1), w = random_f32({K, N}, 2, -0.3f, 0.3f), b = random_f32({N}, 3),
             b2 = random_f32({M, N}, 4);
  double beta = 1.0, alpha = 1.0;
  bool bias_2d = false, shared = false, w_input = false;
  void build(OpGraph& g) const {
    auto& gb = g.gb;
    Id xi = g.input(x);
    Id wi = w_input ? g.input(w) : g.constant(w);
    Id bi = bias_2d ? g.constant(b2) : g.constant(b);
    gb.op("aten.addmm.default", {bi, xi, wi, gb.dbl(beta), gb.dbl(alpha), g.output(DType::Float32, {M, N})});
    // A second reader of the weight.
    if (shared) gb.op("aten.addmm.default", {bi, xi, wi, gb.dbl(1.0), gb.dbl(1.0), g.output(DType::Float32, {M, N})});
  }
  HostTensor ref() const { return ref::addmm(bias_2d ? b2 : b, x, w, beta, alpha); }
};

TEST(AddmmAsLinear, ConstantKnWeightBecomesALinearByItsTranspose) {
  ETW_REQUIRE_GPU();
  Addmm c;
  auto build = [&](OpGraph& g) { c.build(g); };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_EQ(fused.ops, std::vector<std::string>{"aten.linear.default"});
  EXPECT_EQ(plain.ops, std::vector<std::string>{"aten.addmm.default"});
  EXPECT_TRUE(Close(fused.out[0], c.ref(), 1e-5, 1e-4));
  EXPECT_TRUE(Close(fused.out[0], plain.out[0], 1e-5, 1e-5));
}

TEST(AddmmAsLinear, OtherAddmmsStayAddmms) {
  ETW_REQUIRE_GPU();
  std::vector<std::pair<const char*, Addmm>> cases;
  Addmm scaled;
  scaled.beta = 0.5;
  cases.push_back({"beta 0.5", scaled});
  Addmm alpha;
  alpha.alpha = 2.0;
  cases.push_back({"alpha 2", alpha});
  Addmm bias2;
  bias2.bias_2d = true;
  cases.push_back({"bias [M, N]", bias2});
  Addmm input;
  input.w_input = true;
  cases.push_back({"weight an input", input});
  Addmm shared;
  shared.shared = true;
  cases.push_back({"weight read twice", shared});
  for (auto& [what, c] : cases) {
    SCOPED_TRACE(what);
    auto fused = load_graph([&](OpGraph& g) { c.build(g); }, true);
    for (const auto& op : fused.ops) EXPECT_EQ(op, "aten.addmm.default");
    EXPECT_TRUE(Close(fused.out[0], c.ref(), 1e-5, 1e-4));
  }
}

}  // namespace
