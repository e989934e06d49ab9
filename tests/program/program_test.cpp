// Whole programs: delegate calls and kernel calls (operators left outside the delegate) run as one
// GPU graph; results checked against fp64 references.
#include <cmath>

#include "etwebgpu/builder.h"
#include "gpu/context.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// x + c, as a one-op delegate.
GraphBuilder add_const_delegate(const std::vector<int64_t>& shape, const std::vector<float>& c) {
  GraphBuilder g;
  auto x = g.input(DType::Float32, shape);
  auto k = g.constant_f32(shape, c);
  auto y = g.tensor(DType::Float32, shape);
  g.op("aten.add.Tensor", {x, k, g.int_(1), y});
  g.output(y);
  return g;
}

// a - b, as a one-op delegate with two inputs.
GraphBuilder sub_delegate(const std::vector<int64_t>& shape) {
  GraphBuilder g;
  auto a = g.input(DType::Float32, shape);
  auto b = g.input(DType::Float32, shape);
  auto y = g.tensor(DType::Float32, shape);
  g.op("aten.sub.Tensor", {a, b, g.int_(1), y});
  g.output(y);
  return g;
}

TEST(Program, TensorFlowsDelegateToKernelToDelegateOnTheGpu) {
  ETW_REQUIRE_GPU();
  std::vector<int64_t> shape{2, 3, 5};
  auto xin = random_f32(shape, 21);
  auto cin = random_f32(shape, 22);
  std::vector<float> c(cin.as<float>(), cin.as<float>() + cin.numel());
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, shape), y = p.tensor(DType::Float32, shape);
  auto z = p.tensor(DType::Float32, shape), w = p.tensor(DType::Float32, shape);
  p.input(x);
  p.delegate(add_const_delegate(shape, c), {x}, {y});     // y = x + c       (delegate)
  p.kernel("aten::mul", "Scalar_out", {y, p.dbl(2.5), z});  // z = y * 2.5     (kernel call)
  p.delegate(sub_delegate(shape), {z, x}, {w});           // w = z - x       (delegate)
  p.output(w);
  auto model = Model::load_bytes(p.serialize());
  auto kinds = model->plan_summary();
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0].kind, "delegate");
  EXPECT_EQ(kinds[1].kind, "gpu-kernel");
  EXPECT_EQ(kinds[2].kind, "delegate");
  auto out = model->run({xin});
  auto xv = xin.to_f64();
  std::vector<double> ref(xv.size());
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = (xv[i] + c[i]) * 2.5 - xv[i];
  EXPECT_TRUE(Close(out[0], ref_tensor(shape, ref)));
  // A second run with other data reuses everything.
  auto x2 = random_f32(shape, 23);
  auto out2 = model->run({x2});
  auto xv2 = x2.to_f64();
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = (xv2[i] + c[i]) * 2.5 - xv2[i];
  EXPECT_TRUE(Close(out2[0], ref_tensor(shape, ref)));
}

// ExecuTorch 1.2's Vulkan partitioner lowers a quantized ConvTranspose2d as a plain q8ta_conv2d
// whose output ([1, 8, 4, 4]) is not the program's ([1, 8, 16, 16]); the delegate's result would
// come back under the program's name with the wrong shape. The real export (ExecuTorch WebGPU's
// op test q8ta_conv2d_transposed/k3, tests/data/malformed_exports) is a load error naming both.
TEST(Program, DelegateOutputOfAnotherSizeThanItsProgramValueIsAFormatError) {
  ETW_REQUIRE_GPU();
  auto e = load_error([&] {
    Model::load(ETWEBGPU_SOURCE_DIR "/tests/data/malformed_exports/q8ta_conv2d_transposed_as_plain_conv.pte");
  });
  EXPECT_TRUE(has(e, "Format error: delegate output %22 [1, 8, 4, 4] does not match program EValue 1 [1, 8, 16, 16]"))
      << e;
}

TEST(Program, KernelCallsAloneRunWithoutAnyDelegate) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  auto a = p.tensor(DType::Float32, {4, 6}), b = p.tensor(DType::Float32, {4, 6}), o = p.tensor(DType::Float32, {4, 6});
  p.input(a);
  p.input(b);
  p.kernel("aten::add", "out", {a, b, p.int_(2), o});  // add.out(self, other, *, alpha, out)
  p.output(o);
  auto model = Model::load_bytes(p.serialize());
  auto av = random_f32({4, 6}, 1), bv = random_f32({4, 6}, 2);
  auto out = model->run({av, bv});
  auto x = av.to_f64(), y = bv.to_f64();
  std::vector<double> ref(x.size());
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = x[i] + 2 * y[i];
  EXPECT_TRUE(Close(out[0], ref_tensor({4, 6}, ref)));
}

TEST(Program, AsStridedCopyKernelGathersLikePyTorch) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  auto a = p.tensor(DType::Float32, {3, 4}), o = p.tensor(DType::Float32, {2, 3});
  p.input(a);
  p.kernel("aten::as_strided_copy", "out", {a, p.int_list({2, 3}), p.int_list({4, 2}), p.int_(1), o});
  p.output(o);
  auto model = Model::load_bytes(p.serialize());
  auto av = random_f32({3, 4}, 3);
  auto out = model->run({av});
  auto x = av.to_f64();
  std::vector<double> ref;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) ref.push_back(x[1 + i * 4 + j * 2]);
  EXPECT_TRUE(Close(out[0], ref_tensor({2, 3}, ref)));
}

TEST(Program, AsStridedOutOfBoundsIsRefusedAtLoad) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  auto a = p.tensor(DType::Float32, {3, 4}), o = p.tensor(DType::Float32, {2, 3});
  p.input(a);
  p.kernel("aten::as_strided_copy", "out", {a, p.int_list({2, 3}), p.int_list({8, 2}), p.int_(1), o});
  p.output(o);
  try {
    Model::load_bytes(p.serialize());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("reads element"), std::string::npos) << e.what();
  }
}

TEST(Program, UnknownOperatorsAreAllNamedAtLoad) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  auto a = p.tensor(DType::Float32, {4}), b = p.tensor(DType::Float32, {4}), c = p.tensor(DType::Float32, {4});
  p.input(a);
  p.kernel("aten::frobnicate", "out", {a, b});
  p.kernel("custom::warp", "Tensor_out", {b, c});
  p.output(c);
  try {
    Model::load_bytes(p.serialize());
    FAIL() << "expected an Unsupported error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    std::string m = e.what();
    EXPECT_NE(m.find("aten::frobnicate.out"), std::string::npos) << m;
    EXPECT_NE(m.find("custom::warp.Tensor_out"), std::string::npos) << m;
  }
}

TEST(Program, WrongInputCountDtypeAndShapeAreClearErrorsAndModelStaysUsable) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, {2, 3}), y = p.tensor(DType::Float32, {2, 3});
  p.input(x);
  p.delegate(add_const_delegate({2, 3}, std::vector<float>(6, 1.f)), {x}, {y});
  p.output(y);
  auto model = Model::load_bytes(p.serialize());
  auto good = random_f32({2, 3}, 5);
  EXPECT_THROW(model->run({}), Error);
  EXPECT_THROW(model->run({good, good}), Error);
  EXPECT_THROW(model->run({random_i32({2, 3}, 1, 0, 3)}), Error);
  EXPECT_THROW(model->run({random_f32({3, 2}, 1)}), Error);
  HostTensor short_data = good;
  short_data.data.resize(8);  // not a contiguous [2,3] float32 tensor
  EXPECT_THROW(model->run({short_data}), Error);
  auto out = model->run({good});
  auto g = good.to_f64();
  for (auto& v : g) v += 1;
  EXPECT_TRUE(Close(out[0], ref_tensor({2, 3}, g)));
}

}  // namespace

namespace {

// softmax(x) * x over a dynamic [4, <=8, 8] input.
std::vector<uint8_t> softmax_mul_model() {
  GraphBuilder g;
  auto x = g.input(DType::Float32, {4, 8, 8}, /*dynamic=*/true);
  auto y = g.tensor(DType::Float32, {4, 8, 8});
  g.op("aten._softmax.default", {x, g.int_(-1), g.boolean(false), y});
  auto z = g.tensor(DType::Float32, {4, 8, 8});
  g.op("aten.mul.Tensor", {y, x, z});
  g.output(z);
  return g.serialize();
}

TEST(Program, SteadyStateRunsCreateNoBufferPipelineOrBindGroup) {
  ETW_REQUIRE_GPU();
  auto model = Model::load_bytes(softmax_mul_model());
  auto ctx = gpu::Context::get();
  model->run({random_f32({4, 8, 8}, 1)});
  auto before = ctx->cache_stats();
  uint64_t bytes = model->gpu_bytes();
  for (int i = 0; i < 3; ++i) model->run({random_f32({4, 8 - i, 8}, 2 + i)});  // dynamic shapes too
  auto after = ctx->cache_stats();
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(after.bind_groups_created, before.bind_groups_created);
  EXPECT_EQ(after.buffers_created, before.buffers_created);
  EXPECT_EQ(model->gpu_bytes(), bytes);
}

TEST(Program, RunIntoReusesMatchingOutputStorageAndReplacesTheRest) {
  ETW_REQUIRE_GPU();
  auto model = Model::load_bytes(softmax_mul_model());
  auto in1 = random_f32({4, 8, 8}, 1), in2 = random_f32({4, 8, 8}, 2), in3 = random_f32({4, 5, 8}, 3);
  std::vector<HostTensor> outs;
  model->run_into({in1}, outs);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].data, model->run({in1})[0].data);
  const uint8_t* storage = outs[0].data.data();
  model->run_into({in2}, outs);  // same shape: overwritten in place
  EXPECT_EQ(outs[0].data.data(), storage);
  EXPECT_EQ(outs[0].data, model->run({in2})[0].data);
  model->run_into({in3}, outs);  // a smaller dynamic shape: replaced, never a stale tail
  EXPECT_EQ(outs[0].shape, (std::vector<int64_t>{4, 5, 8}));
  EXPECT_EQ(outs[0].data, model->run({in3})[0].data);
  std::vector<HostTensor> wrong(3, HostTensor(DType::Int32, {4, 8, 8}));  // wrong count and dtype
  model->run_into({in1}, wrong);
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_EQ(wrong[0].dtype, DType::Float32);
  EXPECT_EQ(wrong[0].data, model->run({in1})[0].data);
}

}  // namespace

namespace {
// y[m][n] = sum_k x[m][k] w[n][k] + b[n] in double.
std::vector<double> linear_ref(const HostTensor& x, const std::vector<float>& w, const std::vector<float>& b,
                               int64_t M, int64_t K, int64_t N) {
  const float* xp = reinterpret_cast<const float*>(x.data.data());
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = b[n];
      for (int64_t k = 0; k < K; ++k) s += double(xp[m * K + k]) * w[n * K + k];
      y[m * N + n] = s;
    }
  return y;
}
}  // namespace

// A linear has several kernel routes (gemv, small and large GEMM); only the route a run takes is
// compiled, when it first runs, so loading compiles one and a new shape compiles its own once.
TEST(Program, KernelRoutesCompileWhenFirstActive) {
  ETW_REQUIRE_GPU();
  const int64_t M = 64, K = 64, N = 32;
  std::vector<float> w(K * N), b(N);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * float(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * float(i);
  GraphBuilder g;
  auto x = g.input(DType::Float32, {M, K}, /*dynamic=*/true);
  auto y = g.tensor(DType::Float32, {M, N});
  g.op("aten.linear.default", {x, g.constant_f32({N, K}, w), g.constant_f32({N}, b), y});
  g.output(y);
  auto ctx = gpu::Context::get();
  auto s0 = ctx->cache_stats();
  auto model = Model::load_bytes(g.serialize());
  auto s1 = ctx->cache_stats();
  size_t routes = 0;
  for (auto& n : model->gpu_plan()) routes += n.variants.size();
  ASSERT_GE(routes, 3u) << "the linear should offer several routes";
  EXPECT_EQ(s1.misses + s1.hits - s0.misses - s0.hits, 1u) << "load makes the pipeline of the route at the exported shape only";
  const int64_t rows_per_run[] = {1, 1, M};
  for (int run = 0; run < 3; ++run) {
    int64_t rows = rows_per_run[run];
    auto in = random_f32({rows, K}, 7 + run);
    auto before = ctx->cache_stats();
    auto out = model->run({in});
    auto after = ctx->cache_stats();
    auto want = linear_ref(in, w, b, rows, K, N);
    const float* got = reinterpret_cast<const float*>(out[0].data.data());
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{rows, N}));
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << i;
    // The first one-row run takes the GEMV route and makes its pipeline; repeats make nothing.
    EXPECT_EQ(after.misses + after.hits - before.misses - before.hits, run == 0 ? 1u : 0u) << "run " << run;
    EXPECT_EQ(after.bind_groups_created - before.bind_groups_created, run == 0 ? 1u : 0u) << "run " << run;
  }
}
