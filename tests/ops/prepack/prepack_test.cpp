// et_vk.prepack.default copies a constant into a (non-constant) tensor at load: the prepacked
// tensor holds the constant's values (float and int words) on every run; bad operands fail at load.
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

TEST(OpPrepack, PrepackedTensorHoldsTheConstantOnEveryRun) {
  ETW_REQUIRE_GPU();
  auto w = random_f32({3, 5}, 310);
  auto wi = random_i32({7}, 311, -1000, 1000);
  OpGraph g;
  Id c = g.constant(w), ci = g.constant(wi);
  Id packed = g.output(DType::Float32, {3, 5}), packed_i = g.output(DType::Int32, {7});
  g.gb.op("et_vk.prepack.default", {c, packed});
  g.gb.op("et_vk.prepack.default", {ci, packed_i});
  for (int run = 0; run < 2; ++run) {
    auto out = run == 0 ? g.run() : g.rerun({});
    EXPECT_TRUE(Close(out[0], w, 0, 0)) << "run " << run;
    EXPECT_TRUE(Close(out[1], wi)) << "run " << run;
  }
}

TEST(OpPrepack, NonConstantSourceFailsAtLoad) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id in = g.input(random_f32({4}, 313));
  Id o = g.output(DType::Float32, {4});
  g.gb.op("et_vk.prepack.default", {in, o});
  auto err = load_error([&] { g.run(); });
  EXPECT_TRUE(has(err, "et_vk.prepack.default") && has(err, "is not a constant")) << err;
}

}  // namespace
