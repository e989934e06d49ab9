// The large-tile GEMM (matmul_gemm_large.wgsl) walks its tiles in groups of 8 row tiles per column
// sweep (grouped order for L2 reuse). Problems with more than 8 row tiles, and a last group that is
// not full, are the only ones where a wrong group mapping leaves tiles uncomputed or computed twice.
#include "reference/matmul/matmul_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

HostTensor run_mm(const HostTensor& a, const HostTensor& b, const char* route, std::vector<std::string>* variants) {
  OpGraph g;
  Id x = g.input(a), y = g.input(b);
  Id o = g.output(DType::Float32, {a.shape[0], b.shape[1]});
  g.gb.op("aten.mm.default", {x, y, o});
  LoadOptions opts;
  opts.force_route["matmul"] = route;
  auto out = g.run(opts)[0];
  *variants = g.variants();
  return out;
}

TEST(OpMatmulTileGroups, SeveralRowTileGroupsWithAPartialLastGroupMatchReference) {
  ETW_REQUIRE_GPU();
  struct Case { const char* route; int64_t M, N, K; const char* variant; } cases[] = {
      {"large", 128 * 9 + 5, 3 * 128 + 4, 8, "gemm_128x128"},            // 10 row tiles: groups of 8 + 2
      {"large", 128 * 10, 2 * 128, 8, "gemm_128x128_aligned"},           // 10 row tiles, aligned
      {"large_m64", 64 * 17 + 3, 2 * 128 + 4, 12, "gemm_64x128"},        // 18 row tiles: 8 + 8 + 2
      {"large_m64", 64 * 12, 2 * 128, 16, "gemm_64x128_aligned"},        // 12 row tiles: 8 + 4
  };
  uint64_t seed = 200;
  for (auto& c : cases) {
    auto a = random_f32({c.M, c.K}, seed++), b = random_f32({c.K, c.N}, seed++);
    std::vector<std::string> used;
    EXPECT_TRUE(Close(run_mm(a, b, c.route, &used), ref::matmul(a, b), 1e-5, 1e-4)) << c.route << " M=" << c.M;
    EXPECT_EQ(used, std::vector<std::string>{c.variant}) << c.route << " M=" << c.M;
  }
}

}  // namespace
