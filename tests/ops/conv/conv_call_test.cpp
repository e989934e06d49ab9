// read_conv (ops/conv/conv_call.h), the one reading of a conv call's argument layout that the conv
// load rewrites share (no GPU): each call form's own arguments, clamp bounds and passthrough; where
// a prologue and an epilogue sit and how many inputs each has; and the calls it refuses (other ops,
// transposed convs, arguments that do not follow the layout), which the rewrites then leave alone.
#include <gtest/gtest.h>

#include "ops/conv/conv_call.h"
#include "ops/conv/conv_shuffle.h"
#include "support/ir_chain.h"

using namespace etwebgpu;
using namespace etwebgpu::ops;
using namespace etwebgpu::testing;

namespace {

struct Convs : IrChain {
  int32_t x = input({1, 4, 5, 5}), w = tensor({4, 4, 1, 1}), b = tensor({4}), y = output({1, 4, 5, 5});
  int32_t p1 = ints({1, 1}), p0 = ints({0, 0}), no = boolean(false), yes = boolean(true);
  int32_t groups = [this] {
    format::VkValue v;
    v.kind = format::VkValueKind::Int;
    v.int_val = 1;
    return add(v);
  }();
  // aten.convolution's nine arguments with `transposed`.
  std::vector<int32_t> own(int32_t transposed) { return {x, w, b, p1, p0, p1, transposed, p0, groups}; }
  // A fused expression with `inputs` operands (its views), on the input (prologue) or the output.
  int32_t expression(size_t inputs, bool on_input) {
    format::VkExpr e;
    e.views.assign(inputs, std::nullopt);
    e.on_input = on_input;
    return expr(std::move(e));
  }
  std::optional<ConvCall> read(const std::string& name, std::vector<int32_t> args) {
    format::VkOpCall c;
    c.name = name;
    c.args = std::move(args);
    return read_conv(ir, c);
  }
  template <class... T>
  static std::vector<int32_t> cat(std::vector<int32_t> a, T... more) {
    (a.insert(a.end(), more.begin(), more.end()), ...);
    return a;
  }
};

TEST(ConvCallLayout, ReadsEachFormsOwnArgumentsClampAndPassthrough) {
  Convs c;
  auto plain = c.read("aten.convolution.default", Convs::cat(c.own(c.no), std::vector<int32_t>{c.y}));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->kind, ConvCall::Kind::Conv);
  EXPECT_EQ(plain->own, 9u);
  EXPECT_EQ(plain->lo, -1);
  EXPECT_EQ(plain->pass, -1);
  EXPECT_EQ(plain->pro, -1);
  EXPECT_EQ(plain->ep, -1);

  const int32_t lo = c.null(), hi = c.null();
  auto clamp = c.read("et_vk.conv_with_clamp.default", Convs::cat(c.own(c.no), std::vector<int32_t>{lo, hi, c.y}));
  ASSERT_TRUE(clamp);
  EXPECT_EQ(clamp->kind, ConvCall::Kind::Clamp);
  EXPECT_EQ(clamp->own, 11u);
  EXPECT_EQ(clamp->lo, lo);
  EXPECT_EQ(clamp->hi, hi);

  const int32_t pass = c.tensor({1, 4, 5, 5});
  auto shuffle = c.read(kConvShuffle, Convs::cat(c.own(c.no), std::vector<int32_t>{pass, c.y}));
  ASSERT_TRUE(shuffle);
  EXPECT_EQ(shuffle->kind, ConvCall::Kind::Shuffle);
  EXPECT_EQ(shuffle->own, 10u);
  EXPECT_EQ(shuffle->pass, pass);
}

TEST(ConvCallLayout, FindsThePrologueAndTheEpilogueWithTheirInputs) {
  Convs c;
  const int32_t pro = c.expression(3, true), s1 = c.tensor({4}), s2 = c.tensor({1});
  const int32_t ep = c.expression(2, false), r = c.tensor({1, 4, 5, 5});
  // Both, on a conv_with_clamp: 11 own, the prologue and its 2 inputs, the epilogue and its 1.
  auto both = c.read("et_vk.conv_with_clamp.default",
                     Convs::cat(c.own(c.no), std::vector<int32_t>{c.null(), c.null(), pro, s1, s2, ep, r, c.y}));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->pro, pro);
  EXPECT_EQ(both->pro_at, 11u);
  EXPECT_EQ(both->pro_inputs, 2u);
  EXPECT_EQ(both->ep, ep);
  EXPECT_EQ(both->ep_at, 14u);
  EXPECT_EQ(both->ep_inputs, 1u);

  // An epilogue alone, without inputs, right after the own arguments.
  const int32_t bare = c.expression(1, false);
  auto ep_only = c.read("aten.convolution.default", Convs::cat(c.own(c.no), std::vector<int32_t>{bare, c.y}));
  ASSERT_TRUE(ep_only);
  EXPECT_EQ(ep_only->pro, -1);
  EXPECT_EQ(ep_only->ep, bare);
  EXPECT_EQ(ep_only->ep_at, 9u);
  EXPECT_EQ(ep_only->ep_inputs, 0u);

  // A prologue alone: nothing after its inputs but the output.
  auto pro_only = c.read("aten.convolution.default", Convs::cat(c.own(c.no), std::vector<int32_t>{pro, s1, s2, c.y}));
  ASSERT_TRUE(pro_only);
  EXPECT_EQ(pro_only->pro_at, 9u);
  EXPECT_EQ(pro_only->ep, -1);
}

TEST(ConvCallLayout, RefusesOtherOpsTransposedConvsAndArgumentsOffTheLayout) {
  Convs c;
  const std::vector<int32_t> out{c.y};
  EXPECT_FALSE(c.read("aten.add.Tensor", Convs::cat(c.own(c.no), out)));
  EXPECT_FALSE(c.read("aten.convolution.default", Convs::cat(c.own(c.yes), out)));  // transposed
  EXPECT_FALSE(c.read("aten.convolution.default", {c.x, c.w, c.b, c.y}));          // too few
  EXPECT_FALSE(c.read("et_vk.conv_with_clamp.default", Convs::cat(c.own(c.no), out)));  // no bounds
  // A tensor where an expression must sit, and a prologue whose inputs run into the output.
  EXPECT_FALSE(c.read("aten.convolution.default", Convs::cat(c.own(c.no), std::vector<int32_t>{c.b, c.y})));
  EXPECT_FALSE(c.read("aten.convolution.default", Convs::cat(c.own(c.no), std::vector<int32_t>{c.expression(3, true), c.b, c.y})));
  // Two prologues: the second is not an epilogue.
  EXPECT_FALSE(c.read("aten.convolution.default",
                      Convs::cat(c.own(c.no), std::vector<int32_t>{c.expression(1, true), c.expression(1, true), c.y})));
  // Transposed flag of another kind.
  EXPECT_FALSE(c.read("aten.convolution.default", Convs::cat(c.own(c.groups), out)));
}

}  // namespace
