#include "gpu/selftest.h"

#include <chrono>
#include <exception>
#include <vector>

namespace etwebgpu::gpu {

namespace {
// out = a + b over a flat (possibly 2D-folded) range. The device layer's own shader, given to the
// Context as text: the shader library is the kernel layer's, above this one.
constexpr const char* kVectorAdd = R"(
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> O: array<f32>;
@group(0) @binding(3) var<uniform> N: vec4<u32>;
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= N.x) { return; }
  O[i] = A[i] + B[i];
}
)";
const Pipeline& vector_add(Context& ctx, uint32_t wg) { return ctx.pipeline_from_source(kVectorAdd, "main", {{"WG", wg}}, "selftest"); }
}  // namespace

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
  const Pipeline& p = vector_add(ctx, wg);
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

// Each check returns what it verified or throws; the web build's surface checks and `etwebgpu
// info` run the same list, so both surfaces (Dawn, navigator.gpu) are held to the same behaviour.
std::vector<SelfTestCheck> self_test_checks(Context& ctx) {
  std::vector<SelfTestCheck> checks;
  auto check = [&](const char* name, auto&& body) {
    std::string msg;
    bool pass = false;
    try {
      msg = body();
      pass = true;
    } catch (const std::exception& e) {
      msg = e.what();
    }
    checks.push_back({name, pass, msg});
  };
  check("vector add (64 Ki floats, 2 workgroup sizes)", [&] {
    return self_test(ctx, 1 << 16, 64) + "; " + self_test(ctx, 1000, 256);
  });
  check("copy + clear + read-back in the submit", [&] {
    std::vector<uint32_t> a(256), got(256), got2(64);
    for (uint32_t i = 0; i < 256; ++i) a[i] = i * 2654435761u;
    Buffer x = ctx.create_buffer(1024, BufferKind::Storage, "check.x");
    Buffer y = ctx.create_buffer(1024, BufferKind::Storage, "check.y");
    ctx.write(x, 0, a.data(), 1024);
    ctx.submit({Context::copy(x, 0, y, 0, 1024), Context::clear(y, 256, 512), Context::copy(x, 512, y, 768, 256)},
                nullptr, {{&y, 0, 1024, got.data()}, {&x, 768, 256, got2.data()}});
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t want = i < 64 ? a[i] : i < 192 ? 0u : a[i - 192 + 128];
      if (got[i] != want)
        throw Error(ErrorKind::Gpu, "word " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
                                        std::to_string(want));
    }
    for (uint32_t i = 0; i < 64; ++i)
      if (got2[i] != a[192 + i]) throw Error(ErrorKind::Gpu, "second read-back region differs at " + std::to_string(i));
    std::vector<uint32_t> r(3);
    ctx.read(x, 4, r.data(), 12);
    if (r[0] != a[1] || r[2] != a[3]) throw Error(ErrorKind::Gpu, "ewgpu_buffer_read at an offset differs");
    return std::string("ok");
  });
  check("timestamps per dispatch", [&] {
    Buffer a = ctx.create_buffer(4096, BufferKind::Storage, "ts.a");
    Buffer o = ctx.create_buffer(4096, BufferKind::Storage, "ts.o");
    Buffer n = ctx.create_buffer(16, BufferKind::Uniform, "ts.n");
    uint32_t nv[4] = {1024, 0, 0, 0};
    ctx.write(n, 0, nv, 16);
    const Pipeline& p = vector_add(ctx, 64);
    BindGroup bg = ctx.bind_group(p, {{0, &a}, {1, &a}, {2, &o}, {3, &n}});
    std::vector<uint64_t> d;
    ctx.submit({ctx.dispatch(p, bg, ctx.grid(16)), Context::clear(a, 0, 64), ctx.dispatch(p, bg, ctx.grid(16))}, &d);
    if (d.size() != 3) throw Error(ErrorKind::Internal, "expected 3 durations");
    if (!ctx.info().timestamp_query) return std::string("device has no timestamp-query: durations are 0");
    if (d[1] != 0) throw Error(ErrorKind::Internal, "a clear got a duration");
    return "dispatch times " + std::to_string(d[0]) + " ns, " + std::to_string(d[2]) + " ns";
  });
  check("invalid WGSL is reported with the compiler's message", [&] {
    try {
      ctx.pipeline_from_source("@compute @workgroup_size(1) fn main() { let x: f32 = undefined_thing; }", "main", {},
                               "selftest_bad_wgsl");
    } catch (const Error& e) {
      std::string m = e.what();
      if (e.kind() != ErrorKind::Gpu || m.find("undefined_thing") == std::string::npos)
        throw Error(ErrorKind::Internal, "unexpected message: " + m);
      return m.substr(0, 200);
    }
    throw Error(ErrorKind::Internal, "invalid WGSL compiled");
  });
  check("a bad bind group is reported", [&] {
    const Pipeline& p = vector_add(ctx, 64);
    Buffer u = ctx.create_buffer(16, BufferKind::Uniform, "check.u");
    try {
      ctx.bind_group(p, {{0, &u}});  // a uniform buffer where storage is expected, bindings missing
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Gpu) throw;
      return std::string(e.what()).substr(0, 200);
    }
    throw Error(ErrorKind::Internal, "invalid bind group accepted");
  });
  check("a buffer over maxBufferSize is refused by the device", [&] {
    char err[1024] = {0};
    uint64_t size = ctx.info().max_buffer_size + (uint64_t(1) << 20);
    uint32_t h = ewgpu_buffer_create(size, EW_BUFFER_STORAGE, "check.too_big", err, sizeof err);
    if (h) {
      ewgpu_buffer_destroy(h);
      throw Error(ErrorKind::Internal, "buffer of " + std::to_string(size) + " bytes was created");
    }
    if (!err[0]) throw Error(ErrorKind::Internal, "refused without a message");
    // The device must still work afterwards.
    self_test(ctx, 256, 64);
    return std::string(err).substr(0, 200);
  });
  return checks;
}

}  // namespace etwebgpu::gpu
