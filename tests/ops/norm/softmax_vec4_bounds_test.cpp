// The vec4 softmax kernel (softmax_row_vec4.wgsl) walks a row 4 vec4 loads at a time while
// k + 3 * 256 < n4 (n4 = row length / 4), then one at a time. Row lengths whose n4 lies in
// [768, 1024) end the 4-at-a-time loop exactly at the row's end for one invocation, so an
// off-by-one in either loop bound reads or writes the next row's first vec4: several rows with
// different data catch it. Also single-vec4 rows and rows one vec4 past a workgroup.
#include "reference/norm/norm_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor run_row_softmax(const char* op, const HostTensor& x, const char* route, std::vector<std::string>* variants) {
  OpGraph g;
  Id in = g.input(x);
  Id o = g.output(DType::Float32, x.shape);
  g.gb.op(op, {in, g.gb.int_(-1), g.gb.boolean(false), o});
  LoadOptions opts;
  opts.force_route["softmax"] = route;
  auto out = g.run(opts)[0];
  *variants = g.variants();
  return out;
}

TEST(OpSoftmaxVec4Bounds, RowsEndingInsideTheFourLoadLoopMatchReferenceOnBothRoutes) {
  ETW_REQUIRE_GPU();
  // n4 = 769, 896, 1023 (band of the 4-load loop), 257 (one vec4 past a workgroup), 2 and 1.
  for (auto shape : std::vector<std::vector<int64_t>>{{4, 3076}, {3, 3584}, {3, 4092}, {5, 1028}, {6, 8}, {9, 4}}) {
    auto x = random_f32(shape, 80 + shape[1], -6, 6);
    for (const char* op : {"aten._softmax.default", "aten._log_softmax.default"}) {
      auto ref = ref::softmax(x, -1, op[6] == 'l');
      std::vector<std::string> used;
      EXPECT_TRUE(Close(run_row_softmax(op, x, "vec4", &used), ref, 1e-6, 1e-4)) << op << " " << shape_str(shape);
      EXPECT_EQ(used, std::vector<std::string>{"row_vec4"}) << op << " " << shape_str(shape);
      EXPECT_TRUE(Close(run_row_softmax(op, x, "general", &used), ref, 1e-6, 1e-4)) << op << " " << shape_str(shape);
      EXPECT_EQ(used, std::vector<std::string>{"row"}) << op << " " << shape_str(shape);
    }
  }
}

}  // namespace
