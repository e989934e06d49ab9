// Storage types end to end: every storage's load_/store_ helpers move elements exactly (odd counts,
// bytes of one word written by different invocations), bool/uint8 tensors take one byte per
// element on the device, a kernel without a byte path is refused at load, and bool ops chained
// through the real loader give PyTorch's results.
#include <gtest/gtest.h>

#include <cstring>

#include "etwebgpu/builder.h"
#include "etwebgpu/etwebgpu.h"
#include "gpu/context.h"
#include "graph/op_registry.h"
#include "kernel/kernel.h"
#include "support/op_harness.h"

namespace etwebgpu {
namespace {

using testing::Id;

struct NParams {
  uint32_t n, pad[3];
};

constexpr const char* kHead =
    "struct Params { n: u32, pad0: u32, pad1: u32, pad2: u32 };\n"
    "override WG: u32 = 256u;\n"
    "@compute @workgroup_size(WG)\n"
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
    "        @builtin(local_invocation_index) lid: u32) {\n"
    "  let i = (wid.x + wid.y * nwg.x) * WG + lid;\n"
    "  if (i >= P.n) { return; }\n";

kernel::Kernel flat_kernel(const std::string& label, const std::string& body, int32_t x, int32_t out) {
  return kernel::Kernel::generated(label, std::string(kHead) + body + "}\n")
      .input("X", x)
      .output("Y", out)
      .params<NParams>([out](const kernel::Live& l) { return NParams{kernel::u32(l.numel(out), "n"), {}}; })
      .flat(out);
}

// out[i] = x[n - 1 - i] through load_X / store_Y: the four bytes of an output word come from
// four invocations at once. With bump = true a second kernel reads the output back through
// load_Y (the atomic path of a byte output) and adds 1 in the element's type.
void build_reverse(graph::OpContext& oc) {
  int32_t x = oc.arg(0), out = oc.out();
  bool bump = oc.g.boolean(oc.arg(1));
  oc.output_like(out, x);
  oc.add(flat_kernel("test_reverse", "  store_Y(i, Y_T(load_X(P.n - 1u - i)));\n", x, out));
  if (bump) oc.add(flat_kernel("test_bump", "  store_Y(i, load_Y(i) + Y_T(1));\n  _ = load_X(0u);\n", x, out));
}
ETW_REGISTER_OP("etwebgpu_test.reverse.default", build_reverse);

// A kernel written for 32-bit words only: it indexes its tensors directly.
void build_direct(graph::OpContext& oc) {
  int32_t x = oc.arg(0), out = oc.out();
  oc.output_like(out, x);
  oc.add(flat_kernel("test_direct", "  Y[i] = Y_T(X[i]);\n", x, out));
}
ETW_REGISTER_OP("etwebgpu_test.direct.default", build_direct);

std::unique_ptr<Model> load_unary(const char* op, DType t, std::vector<int64_t> dims, bool bump, LoadOptions lo = {}) {
  GraphBuilder gb;
  Id x = gb.input(t, dims);
  Id y = gb.tensor(t, dims);
  gb.output(y);
  if (std::string(op) == "etwebgpu_test.reverse.default") gb.op(op, {x, gb.boolean(bump), y});
  else gb.op(op, {x, y});
  return Model::load_bytes(gb.serialize(), lo);
}

// Values every storage holds exactly (f16 included): small integers, and bytes past 127 for uint8.
HostTensor values(DType t, int64_t n) {
  HostTensor h(t, {n});
  for (int64_t i = 0; i < n; ++i) {
    int32_t v = static_cast<int32_t>((i * 37 + 11) % 256);
    switch (t) {
      case DType::Float32: h.as<float>()[i] = static_cast<float>(v - 128) * 0.5f; break;
      case DType::Int32: h.as<int32_t>()[i] = (v - 128) * 100003; break;
      case DType::Bool: h.as<uint8_t>()[i] = static_cast<uint8_t>((i * 7 + i / 3) % 3 == 0); break;
      case DType::UInt8: h.as<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      default: ADD_FAILURE() << dtype_name(t);
    }
  }
  return h;
}

void expect_reversed(const HostTensor& x, const HostTensor& got, bool bump) {
  int64_t n = x.numel();
  ASSERT_EQ(got.shape, x.shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = n - 1 - i;
    switch (x.dtype) {
      case DType::Float32: ASSERT_EQ(got.as<float>()[i], x.as<float>()[j] + (bump ? 1.f : 0.f)) << i << " of " << n; break;
      case DType::Int32: ASSERT_EQ(got.as<int32_t>()[i], x.as<int32_t>()[j] + (bump ? 1 : 0)) << i << " of " << n; break;
      // uint8 wraps inside its byte: 255 + 1 is 0 and carries nothing into the next element.
      case DType::UInt8:
        ASSERT_EQ(got.as<uint8_t>()[i], static_cast<uint8_t>(x.as<uint8_t>()[j] + (bump ? 1 : 0))) << i << " of " << n;
        break;
      case DType::Bool: ASSERT_EQ(got.as<uint8_t>()[i], x.as<uint8_t>()[j]) << i << " of " << n; break;
      default: FAIL();
    }
  }
}

const int64_t kOddCounts[] = {1, 3, 5, 7, 1001, 4099};

TEST(ByteStorage, EveryStorageLoadsAndStoresOddCountsExactly) {
  ETW_REQUIRE_GPU();
  for (DType t : {DType::Float32, DType::Int32, DType::UInt8, DType::Bool})
    for (bool bump : {false, true}) {
      if (bump && t == DType::Bool) continue;  // 1 + 1 is no bool
      for (int64_t n : kOddCounts) {
        auto x = values(t, n);
        auto m = load_unary("etwebgpu_test.reverse.default", t, {n}, bump);
        SCOPED_TRACE(std::string(dtype_name(t)) + (bump ? " bump " : " ") + std::to_string(n));
        expect_reversed(x, m->run({x})[0], bump);
      }
    }
}

TEST(ByteStorage, F16StorageLoadsAndStoresOddCountsExactly) {
  ETW_REQUIRE_GPU();
  if (!gpu::Context::get()->info().shader_f16) GTEST_SKIP() << "adapter without shader-f16";
  LoadOptions lo;
  lo.precision = Precision::FP16;
  for (bool bump : {false, true})
    for (int64_t n : kOddCounts) {
      auto x = values(DType::Float32, n);
      auto m = load_unary("etwebgpu_test.reverse.default", DType::Float32, {n}, bump, lo);
      ASSERT_EQ(m->precision(), Precision::FP16);
      SCOPED_TRACE(std::to_string(n));
      expect_reversed(x, m->run({x})[0], bump);
    }
}

TEST(ByteStorage, BoolAndUint8TensorsTakeOneBytePerElement) {
  ETW_REQUIRE_GPU();
  const int64_t n = 4096;
  auto words = load_unary("etwebgpu_test.reverse.default", DType::Int32, {n}, false);
  for (DType t : {DType::Bool, DType::UInt8}) {
    auto bytes = load_unary("etwebgpu_test.reverse.default", t, {n}, false);
    // Input and output: 4 bytes per element fewer than int32 each (uniforms are the same).
    EXPECT_EQ(words->gpu_bytes() - bytes->gpu_bytes(), 2u * n * 3) << dtype_name(t);
  }
}

TEST(ByteStorage, KernelIndexingABoolTensorAsWordsIsRefusedAtLoad) {
  ETW_REQUIRE_GPU();
  // The same kernel is fine where the tensors are words.
  auto x = values(DType::Int32, 5);
  auto ok = load_unary("etwebgpu_test.direct.default", DType::Int32, {5}, false)->run({x})[0];
  EXPECT_EQ(std::memcmp(ok.data.data(), x.data.data(), x.data.size()), 0);
  for (DType t : {DType::Bool, DType::UInt8}) {
    try {
      load_unary("etwebgpu_test.direct.default", t, {5}, false);
      ADD_FAILURE() << "expected an error for " << dtype_name(t);
    } catch (const Error& e) {
      std::string w = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << w;
      EXPECT_TRUE(testing::has(w, "etwebgpu_test.direct.default (node")) << w;
      EXPECT_TRUE(testing::has(w, "kernel 'test_direct' reads X as 32-bit words")) << w;
      EXPECT_TRUE(testing::has(w, "no path for a bool/uint8 tensor")) << w;
    }
  }
}

TEST(ByteStorage, PreambleDeclaresBytesAsWordsAndEmitsOnlyTheHelpersUsed) {
  auto k = kernel::Kernel::generated("t", "fn main() { store_Y(0u, load_X(1u)); }\n").input("X", 0).output("Y", 1);
  std::string src = k.source({kernel::Storage::U8, kernel::Storage::U8});
  EXPECT_TRUE(testing::has(src, "var<storage, read> X_words: array<u32>;")) << src;
  EXPECT_TRUE(testing::has(src, "var<storage, read_write> Y_words: array<atomic<u32>>;")) << src;
  EXPECT_TRUE(testing::has(src, "atomicCompareExchangeWeak(&Y_words[w]")) << src;
  EXPECT_FALSE(testing::has(src, "fn load_Y")) << src;  // not called: not emitted
  // Word storage: the helpers are plain indexing, emitted only where called.
  std::string w = k.source({kernel::Storage::F32, kernel::Storage::I32});
  EXPECT_TRUE(testing::has(w, "fn load_X(i: u32) -> X_T { return X[i]; }")) << w;
  EXPECT_TRUE(testing::has(w, "fn store_Y(i: u32, v: Y_T) { Y[i] = v; }")) << w;
  EXPECT_FALSE(testing::has(w, "fn store_X")) << w;
  auto direct = kernel::Kernel::generated("d", "fn main() { let a = X[0]; }\n").input("X", 0);
  EXPECT_NO_THROW(direct.source({kernel::Storage::I32}));
  EXPECT_THROW(direct.source({kernel::Storage::U8}), Error);
  // Comments naming the tensor are no use of it.
  auto commented = kernel::Kernel::generated("c", "// X[i] is read below\nfn main() { let a = load_X(0u); }\n").input("X", 0);
  EXPECT_NO_THROW(commented.source({kernel::Storage::U8}));
}

// ----------------------------------------------------------------- bool ops through the loader

HostTensor i32_tensor(std::vector<int64_t> shape, uint64_t seed) { return testing::random_i32(std::move(shape), seed, -2, 2); }

// eq -> logical_not -> any.dim -> where, a bool permute and bool -> int32, over [3, 7, 5] (no
// dim a multiple of 4): every bool tensor is bytes, read and written by different kernels.
TEST(ByteStorage, BoolChainThroughTheLoaderMatchesPyTorch) {
  ETW_REQUIRE_GPU();
  const int64_t A = 3, B = 7, C = 5;
  auto x = i32_tensor({A, B, C}, 5);
  testing::OpGraph g;
  Id xi = g.input(x);
  Id m = g.tensor(DType::Bool, {A, B, C});
  Id nm = g.output(DType::Bool, {A, B, C});
  Id an = g.output(DType::Bool, {A, B, 1});
  Id w = g.output(DType::Int32, {A, B, C});
  Id p = g.output(DType::Bool, {C, A, B});
  Id c = g.output(DType::Int32, {A, B, C});
  Id negx = g.tensor(DType::Int32, {A, B, C});
  g.gb.op("aten.eq.Scalar", {xi, g.gb.int_(0), m});
  g.gb.op("aten.logical_not.default", {m, nm});
  g.gb.op("aten.any.dim", {m, g.gb.int_(2), g.gb.boolean(true), an});
  g.gb.op("aten.neg.default", {xi, negx});
  g.gb.op("aten.where.self", {an, xi, negx, w});
  g.gb.op("aten.permute_copy.default", {m, g.gb.int_list({2, 0, 1}), p});
  Id n = g.gb.null();
  g.gb.op("aten._to_copy.default", {nm, n, n, n, n, g.gb.boolean(false), n, c});
  auto out = g.run();
  ASSERT_EQ(out.size(), 5u);
  const int32_t* xv = x.as<int32_t>();
  auto at = [&](int64_t a, int64_t b, int64_t k) { return xv[(a * B + b) * C + k]; };
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) {
      bool any = false;
      for (int64_t k = 0; k < C; ++k) any = any || at(a, b, k) == 0;
      ASSERT_EQ(out[1].as<uint8_t>()[a * B + b], any ? 1 : 0) << a << "," << b;
      for (int64_t k = 0; k < C; ++k) {
        int64_t i = (a * B + b) * C + k;
        bool eq = at(a, b, k) == 0;
        ASSERT_EQ(out[0].as<uint8_t>()[i], eq ? 0 : 1) << i;
        ASSERT_EQ(out[2].as<int32_t>()[i], any ? at(a, b, k) : -at(a, b, k)) << i;
        ASSERT_EQ(out[3].as<uint8_t>()[(k * A + a) * B + b], eq ? 1 : 0) << i;
        ASSERT_EQ(out[4].as<int32_t>()[i], eq ? 0 : 1) << i;
      }
    }
}

// Accumulating index_put into bytes: uint8 adds wrap mod 256 inside their byte (no carry into a
// neighbour) and bool accumulation is an or, with repeated indices hitting one word at once.
TEST(ByteStorage, AccumulatingIndexPutIntoBytesWrapsUint8AndOrsBool) {
  ETW_REQUIRE_GPU();
  auto run = [](const HostTensor& x, const HostTensor& v, const std::vector<int64_t>& idx) {
    testing::OpGraph g;
    Id xi = g.input(x);
    Id ii = g.input(HostTensor::from<int64_t>(DType::Int64, {static_cast<int64_t>(idx.size())}, idx));
    Id vi = g.input(v);
    Id o = g.output(x.dtype, x.shape);
    g.gb.op("aten.index_put.default", {xi, g.gb.value_list({ii}), vi, g.gb.boolean(true), o});
    return g.run()[0];
  };
  std::vector<int64_t> idx = {0, 0, 3, 6, 1, 1, 1, 2};
  auto x = HostTensor::from<uint8_t>(DType::UInt8, {7}, {250, 255, 1, 128, 9, 200, 17});
  auto v = HostTensor::from<uint8_t>(DType::UInt8, {8}, {3, 4, 200, 255, 1, 1, 1, 0});
  std::vector<uint8_t> want = {1, 2, 1, 72, 9, 200, 16};
  auto got = run(x, v, idx);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(got.as<uint8_t>()[i], want[i]) << i;
  auto xb = HostTensor::from<uint8_t>(DType::Bool, {7}, {0, 0, 1, 0, 1, 0, 0});
  auto vb = HostTensor::from<uint8_t>(DType::Bool, {8}, {0, 1, 0, 1, 0, 0, 0, 0});
  std::vector<uint8_t> wantb = {1, 0, 1, 0, 1, 0, 1};
  auto gotb = run(xb, vb, idx);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(gotb.as<uint8_t>()[i], wantb[i]) << i;
}

}  // namespace
}  // namespace etwebgpu
