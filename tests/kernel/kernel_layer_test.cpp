// The kernel layer: a builder that only declares output dims and a kernel (no resize closure of
// its own) gets dynamic shapes, bound checks, error prefixes and storage variants from Graph.
#include <gtest/gtest.h>

#include <cmath>

#include "etwebgpu/builder.h"
#include "etwebgpu/etwebgpu.h"
#include "gpu/context.h"
#include "graph/op_registry.h"
#include "kernel/kernel.h"
#include "ops/elementwise/elementwise_ops.h"
#include "support/op_harness.h"

namespace etwebgpu {
namespace {

using testing::Id;

struct NegParams {
  uint32_t n, i0, i1, pad;
  float f0, f1, f2;
  uint32_t pad2;
};

// A new op written the new way: argument parsing, output dims, one kernel. Nothing else.
void build_test_neg(graph::OpContext& oc) {
  int32_t x = oc.arg(0), out = oc.out();
  oc.output_like(out, x);
  oc.add(kernel::Kernel("elementwise_unary")
             .prelude(ops::unary_ops_wgsl())
             .constant("OP", ops::code(ops::UnaryOp::Neg))
             .input("X", x)
             .output("Y", out)
             .params<NegParams>([out](const kernel::Live& l) {
               return NegParams{kernel::u32(l.numel(out), "element count"), 0, 0, 0, 0, 0, 0, 0};
             })
             .flat(out));
}
ETW_REGISTER_OP("etwebgpu_test.neg.default", build_test_neg);

std::unique_ptr<Model> load_neg(std::vector<int64_t> max_dims, std::vector<int64_t> out_dims, LoadOptions lo = {}) {
  GraphBuilder gb;
  Id x = gb.input(DType::Float32, max_dims, /*dynamic=*/true);
  Id y = gb.tensor(DType::Float32, out_dims);
  gb.output(y);
  gb.op("etwebgpu_test.neg.default", {x, y});
  return Model::load_bytes(gb.serialize(), lo);
}

// The neg kernel with an override constant its shader lacks: its pipeline cannot be made.
void build_test_bad_pipeline(graph::OpContext& oc) {
  int32_t x = oc.arg(0), out = oc.out();
  oc.output_like(out, x);
  oc.add(kernel::Kernel("elementwise_unary")
             .prelude(ops::unary_ops_wgsl())
             .constant("OP", ops::code(ops::UnaryOp::Neg))
             .constant("NO_SUCH_CONSTANT", 1)
             .input("X", x)
             .output("Y", out)
             .params<NegParams>([out](const kernel::Live& l) {
               return NegParams{kernel::u32(l.numel(out), "element count"), 0, 0, 0, 0, 0, 0, 0};
             })
             .flat(out));
}
ETW_REGISTER_OP("etwebgpu_test.bad_pipeline.default", build_test_bad_pipeline);

TEST(KernelLayer, APipelineFailingInTheLoadsBatchIsAnErrorNamingItsOp) {
  GraphBuilder gb;
  Id x = gb.input(DType::Float32, {4, 8});
  Id y = gb.tensor(DType::Float32, {4, 8}), z = gb.tensor(DType::Float32, {4, 8}), w = gb.tensor(DType::Float32, {4, 8});
  gb.output(w);
  gb.op("etwebgpu_test.neg.default", {x, y});
  gb.op("etwebgpu_test.bad_pipeline.default", {y, z});
  gb.op("etwebgpu_test.neg.default", {z, w});
  try {
    Model::load_bytes(gb.serialize());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::Gpu);
    EXPECT_NE(m.find("etwebgpu_test.bad_pipeline.default (node"), std::string::npos) << m;
    EXPECT_NE(m.find("NO_SUCH_CONSTANT"), std::string::npos) << m;
  }
  // The device is still usable.
  auto ok = load_neg({4, 8}, {4, 8});
  HostTensor in = testing::random_f32({4, 8}, 5);
  EXPECT_EQ(ok->run({in})[0].as<float>()[3], -in.as<float>()[3]);
}

TEST(KernelLayer, NewOpWithoutResizeClosureFollowsDynamicShapes) {
  auto m = load_neg({4, 8}, {4, 8});
  for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 8}, {2, 8}, {1, 3}, {4, 8}}) {
    HostTensor x = testing::random_f32(shape, 7);
    auto out = m->run({x});
    ASSERT_EQ(out[0].shape, shape);
    for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(out[0].as<float>()[i], -x.as<float>()[i]);
  }
}

TEST(KernelLayer, OutputPastItsBoundIsAnErrorNamingTheOp) {
  // The output is serialized smaller than the input can grow: Graph's bound check catches it at
  // load, where every node is sized for its inputs' bounds.
  try {
    load_neg({4, 8}, {2, 8});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("etwebgpu_test.neg.default (node"), std::string::npos) << w;
    EXPECT_NE(w.find("exceeds its bound [2, 8]"), std::string::npos) << w;
  }
}

TEST(KernelLayer, Fp16StorageHalvesFloatBytesAndRoundsLikeHalf) {
  if (!gpu::Context::get()->info().shader_f16) GTEST_SKIP() << "adapter without shader-f16";
  LoadOptions lo;
  lo.precision = Precision::FP16;
  auto m16 = load_neg({64, 64}, {64, 64}, lo);
  auto m32 = load_neg({64, 64}, {64, 64});
  EXPECT_EQ(m16->precision(), Precision::FP16);
  // Tensor storage: 2 x 64 x 64 floats at 2 instead of 4 bytes (uniforms are the same size).
  EXPECT_EQ(m32->gpu_bytes() - m16->gpu_bytes(), 2u * 64 * 64 * 2);
  HostTensor x = testing::random_f32({64, 64}, 3, -70000.f, 70000.f);
  x.as<float>()[0] = 1.0f + 1.0f / 4096;  // halfway between two halves: rounds to even (1.0)
  x.as<float>()[1] = 65520.f;             // rounds past the largest half: inf
  auto out = m16->run({x})[0];
  EXPECT_EQ(out.as<float>()[0], -1.0f);
  EXPECT_TRUE(std::isinf(out.as<float>()[1]) && out.as<float>()[1] < 0);
  for (int64_t i = 2; i < x.numel(); ++i) {
    float v = x.as<float>()[i], got = out.as<float>()[i];
    if (std::fabs(v) >= 65520.f) {
      ASSERT_TRUE(std::isinf(got)) << i;
    } else {
      ASSERT_NEAR(got, -v, std::fabs(v) * (1.0 / 2048) + 1e-7) << i;  // half: 11 significant bits
    }
  }
}

TEST(KernelLayer, Fp16LeavesIntegerTensorsAt32Bits) {
  if (!gpu::Context::get()->info().shader_f16) GTEST_SKIP() << "adapter without shader-f16";
  GraphBuilder gb;
  Id x = gb.input(DType::Int32, {5});
  Id y = gb.tensor(DType::Int32, {5});
  gb.output(y);
  gb.op("aten.neg.default", {x, y});
  LoadOptions lo;
  lo.precision = Precision::FP16;
  auto m = Model::load_bytes(gb.serialize(), lo);
  HostTensor in = HostTensor::from<int32_t>(DType::Int32, {5}, {1 << 30, -7, 0, 65537, -(1 << 30)});
  auto out = m->run({in})[0];
  std::vector<int32_t> want{-(1 << 30), 7, 0, -65537, 1 << 30};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out.as<int32_t>()[i], want[i]);
}

TEST(KernelLayer, PrecisionNamesParseAndBadOnesAreRefused) {
  EXPECT_EQ(parse_precision("fp16"), Precision::FP16);
  EXPECT_EQ(parse_precision("auto"), Precision::Auto);
  EXPECT_STREQ(precision_name(Precision::FP32), "fp32");
  try {
    parse_precision("bf16");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'bf16'"), std::string::npos);
  }
}

TEST(KernelLayer, AutoPrecisionPicksFp16ExactlyWhenTheAdapterHasShaderF16) {
  LoadOptions lo;
  lo.precision = Precision::Auto;
  auto m = load_neg({8}, {8}, lo);
  EXPECT_EQ(m->precision(), gpu::Context::get()->info().shader_f16 ? Precision::FP16 : Precision::FP32);
}

}  // namespace
}  // namespace etwebgpu
