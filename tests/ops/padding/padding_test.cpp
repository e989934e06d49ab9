// reflection_pad{1,2,3}d and replication_pad{1,2,3}d against fp64 references: batched and
// unbatched inputs, asymmetric, zero and negative (cropping) pads, int32, errors, KernelCall form.
#include "reference/memory/view_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor run_pad(const std::string& op, const HostTensor& a, const std::vector<int64_t>& pad,
                   const std::vector<int64_t>& out_dims) {
  OpGraph g;
  Id x = g.input(a);
  Id o = g.output(a.dtype, out_dims);
  g.gb.op(op, {x, g.gb.int_list(pad), o});
  return g.run()[0];
}

struct PadCase { const char* op; std::vector<int64_t> shape, pad; };

const std::vector<PadCase> kCases = {
    {"1d", {2, 3, 7}, {3, 1}},        {"1d", {4, 5}, {0, 4}},          {"1d", {2, 6}, {-2, 3}},
    {"2d", {2, 3, 5, 4}, {1, 3, 2, 0}}, {"2d", {3, 4, 5}, {2, 2, 1, 1}}, {"2d", {1, 2, 6, 5}, {-1, 2, 3, -2}},
    {"3d", {1, 2, 3, 4, 5}, {1, 2, 0, 3, 2, 1}}, {"3d", {2, 4, 3, 3}, {2, 0, 1, 1, 2, 2}},
};

TEST(OpPadding, ReflectionMirrorsWithoutRepeatingTheEdge) {
  ETW_REQUIRE_GPU();
  uint64_t seed = 1;
  for (auto& c : kCases) {
    auto a = random_f32(c.shape, seed++);
    auto ref = ref::reflection_pad(a, c.pad);
    std::string op = std::string("aten.reflection_pad") + c.op + ".default";
    EXPECT_TRUE(Close(run_pad(op, a, c.pad, ref.shape), ref, 0, 0)) << op << " " << shape_str(c.shape) << " " << shape_str(c.pad);
  }
}

TEST(OpPadding, ReplicationRepeatsTheEdgeOnLargePads) {
  ETW_REQUIRE_GPU();
  uint64_t seed = 20;
  for (auto& c : kCases) {
    auto a = random_i32(c.shape, seed++, -1000, 1000);
    auto pad = c.pad;
    for (auto& p : pad) p = p > 0 ? p * 3 : p;  // replication allows pads beyond the input size
    auto ref = ref::replication_pad(a, pad);
    std::string op = std::string("aten.replication_pad") + c.op + ".default";
    EXPECT_TRUE(Close(run_pad(op, a, pad, ref.shape), ref, 0, 0)) << op << " " << shape_str(c.shape) << " " << shape_str(pad);
  }
}

TEST(OpPadding, ReflectionPadNotSmallerThanTheDimIsAnError) {
  ETW_REQUIRE_GPU();
  auto e = load_error([] { run_pad("aten.reflection_pad1d.default", random_f32({2, 4}, 1), {4, 0}, {2, 8}); });
  EXPECT_TRUE(has(e, "aten.reflection_pad1d.default") && has(e, "padding size should be less than")) << e;
}

TEST(OpPadding, WrongRankOrPadLengthAndCroppingToNothingAreErrors) {
  ETW_REQUIRE_GPU();
  auto e1 = load_error([] { run_pad("aten.replication_pad2d.default", random_f32({4, 5}, 1), {1, 1, 1, 1}, {6, 7}); });
  EXPECT_TRUE(has(e1, "expected a 3D or 4D")) << e1;
  auto e2 = load_error([] { run_pad("aten.replication_pad2d.default", random_f32({1, 4, 5}, 1), {1, 1}, {1, 4, 7}); });
  EXPECT_TRUE(has(e2, "padding must have 4 elements")) << e2;
  auto e3 = load_error([] { run_pad("aten.replication_pad1d.default", random_f32({1, 4}, 1), {-2, -2}, {1, 1}); });
  EXPECT_TRUE(has(e3, "too small")) << e3;
}

TEST(OpPadding, DynamicInputRecomputesTheOutputShapeOnRerun) {
  ETW_REQUIRE_GPU();
  auto big = random_f32({2, 3, 6, 5}, 40), small = random_f32({2, 3, 4, 3}, 41);
  OpGraph g;
  Id x = g.input(big, {2, 3, 6, 5}, true);
  Id o = g.output(DType::Float32, {2, 3, 9, 8});
  g.gb.op("aten.reflection_pad2d.default", {x, g.gb.int_list({2, 1, 1, 2}), o});
  EXPECT_TRUE(Close(g.run()[0], ref::reflection_pad(big, {2, 1, 1, 2}), 0, 0));
  EXPECT_TRUE(Close(g.rerun({small})[0], ref::reflection_pad(small, {2, 1, 1, 2}), 0, 0));
}

TEST(OpPadding, KernelCallOutVariantRunsTheSameKernel) {
  ETW_REQUIRE_GPU();
  auto av = random_f32({1, 2, 4, 3}, 30);
  ProgramBuilder p;
  auto a = p.tensor(DType::Float32, {1, 2, 4, 3}), o = p.tensor(DType::Float32, {1, 2, 7, 5});
  p.input(a);
  p.kernel("aten::reflection_pad2d", "out", {a, p.int_list({1, 1, 2, 1}), o});
  p.output(o);
  auto model = Model::load_bytes(p.serialize());
  EXPECT_TRUE(Close(model->run({av})[0], ref::reflection_pad(av, {1, 1, 2, 1}), 0, 0));
}

}  // namespace
