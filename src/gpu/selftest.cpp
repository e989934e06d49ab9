#include "gpu/selftest.h"

#include <chrono>
#include <vector>

namespace etwebgpu::gpu {

std::string self_test(Context& ctx, uint64_t n, uint32_t wg) {
  std::vector<float> a(n), b(n), o(n);
  for (uint64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000) * 0.5f;
    b[i] = static_cast<float>(i % 7) - 3.0f;
  }
  Buffer ba = ctx.create_buffer(n * 4, BufferKind::Storage, "selftest.a");
  Buffer bb = ctx.create_buffer(n * 4, BufferKind::Storage, "selftest.b");
  Buffer bo = ctx.create_buffer(n * 4, BufferKind::Storage, "selftest.o");
  Buffer bn = ctx.create_buffer(16, BufferKind::Uniform, "selftest.n");
  uint32_t nv[4] = {static_cast<uint32_t>(n), 0, 0, 0};
  ctx.write(ba, 0, a.data(), n * 4);
  ctx.write(bb, 0, b.data(), n * 4);
  ctx.write(bn, 0, nv, 16);
  const Pipeline& p = ctx.pipeline("selftest", "main", {{"WG", wg}});
  BindGroup bg = ctx.bind_group(p, {{0, &ba}, {1, &bb}, {2, &bo}, {3, &bn}});
  Grid g = ctx.grid((n + wg - 1) / wg);
  auto t0 = std::chrono::steady_clock::now();
  ctx.submit({ctx.dispatch(p, bg, g)});
  auto t1 = std::chrono::steady_clock::now();
  ctx.read(bo, 0, o.data(), n * 4);
  for (uint64_t i = 0; i < n; ++i)
    if (o[i] != a[i] + b[i])
      throw Error(ErrorKind::Gpu, "self-test mismatch at element " + std::to_string(i) + ": got " +
                                      std::to_string(o[i]) + ", expected " + std::to_string(a[i] + b[i]));
  double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  return "vector add of " + std::to_string(n) + " floats verified (grid " + std::to_string(g.x) + "x" +
         std::to_string(g.y) + ", " + std::to_string(ms) + " ms)";
}

}  // namespace etwebgpu::gpu
