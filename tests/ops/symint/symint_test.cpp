// SymInt ops: sym_size.int, add/sub/mul/floordiv and et_vk.select_as_symint, observed through the
// start_pos of et_vk.apply_rotary_emb_hf (whose fp64 reference is tests/reference/rope).
#include "reference/rope/rope_ref.h"
#include "reference/symint/symint_ref.h"
#include "gpu/context.h"
#include "program/model_internal.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

TEST(OpSymInt, PythonFloorDivReferenceRoundsTowardNegativeInfinity) {
  EXPECT_EQ(ref::py_floordiv(-5, 3), -2);
  EXPECT_EQ(ref::py_floordiv(5, -3), -2);
  EXPECT_EQ(ref::py_floordiv(-6, 3), -2);
  EXPECT_EQ(ref::py_floordiv(7, 2), 3);
}

// start = (len(p) - 10) // 3 * 2 + 5, computed live from sym_size of a dynamic input.
TEST(OpSymInt, ArithmeticChainFromSymSizeDrivesRopeStartPos) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  auto xq = random_f32({1, 3, 2, 8}, 1), xk = random_f32({1, 3, 1, 8}, 2);
  auto c = random_f32({12, 8}, 3), s = random_f32({12, 8}, 4);
  HostTensor p0(DType::Float32, {16});
  Id q = g.input(xq), k = g.input(xk), fc = g.input(c), fs = g.input(s), p = g.input(p0, {16}, true);
  Id n = g.gb.symint(), a = g.gb.symint(), b = g.gb.symint(), m = g.gb.symint(), st = g.gb.symint();
  g.gb.op("sym_size.int", {p, g.gb.int_(0), n});
  g.gb.op("sub", {n, g.gb.int_(10), a});
  g.gb.op("floordiv", {a, g.gb.int_(3), b});
  g.gb.op("mul", {b, g.gb.int_(2), m});
  g.gb.op("add", {m, g.gb.int_(5), st});
  Id oq = g.output(DType::Float32, xq.shape), ok = g.output(DType::Float32, xk.shape);
  g.gb.op("et_vk.apply_rotary_emb_hf.default", {q, k, fc, fs, st, g.gb.value_list({oq, ok})});
  auto out = g.run();
  auto expect_start = [](int64_t len) { return ref::py_floordiv(len - 10, 3) * 2 + 5; };
  EXPECT_TRUE(Close(out[0], ref::rope_hf(xq, c, s, expect_start(16)), 1e-5, 1e-5));
  for (int64_t len : {5, 4, 12, 13}) {  // len 5: (-5)//3 == -2, not C's -1
    out = g.rerun({xq, xk, c, s, HostTensor(DType::Float32, {len})});
    EXPECT_TRUE(Close(out[0], ref::rope_hf(xq, c, s, expect_start(len)), 1e-5, 1e-5)) << "len " << len;
    EXPECT_TRUE(Close(out[1], ref::rope_hf(xk, c, s, expect_start(len)), 1e-5, 1e-5)) << "len " << len;
  }
}

TEST(OpSymInt, SelectAsSymintReadsTheInputPositionEachRun) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  auto xq = random_f32({1, 2, 2, 4}, 5), xk = random_f32({1, 2, 2, 4}, 6);
  auto c = random_f32({10, 4}, 7), s = random_f32({10, 4}, 8);
  auto pos = HostTensor::from<int32_t>(DType::Int32, {1}, {3});
  Id q = g.input(xq), k = g.input(xk), fc = g.input(c), fs = g.input(s), ip = g.input(pos);
  Id st = g.gb.symint();
  g.gb.op("et_vk.select_as_symint.default", {ip, g.gb.int_(0), g.gb.int_(0), st});
  Id oq = g.output(DType::Float32, xq.shape), ok = g.output(DType::Float32, xk.shape);
  g.gb.op("et_vk.apply_rotary_emb_hf.default", {q, k, fc, fs, st, g.gb.value_list({oq, ok})});
  auto out = g.run();
  EXPECT_TRUE(Close(out[0], ref::rope_hf(xq, c, s, 3), 1e-5, 1e-5));
  for (int32_t v : {0, 8, 5}) {
    out = g.rerun({xq, xk, c, s, HostTensor::from<int32_t>(DType::Int32, {1}, {v})});
    EXPECT_TRUE(Close(out[1], ref::rope_hf(xk, c, s, v), 1e-5, 1e-5)) << "pos " << v;
  }
}

// select_as_symint's element, for positions held by the host (inputs up to 64 bytes: no GPU
// read-back, so a run need not wait for the runs queued before it) and by the GPU only (larger
// inputs: one synchronous read a run), in int32 words and in int8 bytes packed four to a word.
TEST(OpSymInt, SelectAsSymintTakesSmallInputsFromTheHostUploadAndLargeOnesFromTheGpu) {
  ETW_REQUIRE_GPU();
  struct Case { DType dt; int64_t n, index; bool host; };
  for (const Case& k : {Case{DType::Int32, 1, 0, true}, Case{DType::Int32, 3, -1, true}, Case{DType::Int8, 5, 3, true},
                        Case{DType::Int32, 20, 17, false}, Case{DType::Int8, 80, -7, false}}) {
    const std::string what = std::string(k.dt == DType::Int8 ? "int8" : "int32") + "[" + std::to_string(k.n) + "] at " +
                             std::to_string(k.index);
    OpGraph g;
    auto xq = random_f32({1, 2, 2, 4}, 5), xk = random_f32({1, 2, 2, 4}, 6);
    auto c = random_f32({10, 4}, 7), s = random_f32({10, 4}, 8);
    // Positions 0..8 at the selected element, other elements 100 + i (or -100 - i: int8 signs).
    auto positions = [&](int64_t p) {
      HostTensor t(k.dt, {k.n});
      const int64_t at = k.index < 0 ? k.index + k.n : k.index;
      for (int64_t i = 0; i < k.n; ++i) {
        int64_t v = i == at ? p : (k.dt == DType::Int8 ? -100 - i % 20 : 100 + i);
        if (k.dt == DType::Int8) t.as<int8_t>()[i] = static_cast<int8_t>(v);
        else t.as<int32_t>()[i] = static_cast<int32_t>(v);
      }
      return t;
    };
    Id q = g.input(xq), kk = g.input(xk), fc = g.input(c), fs = g.input(s), ip = g.input(positions(3));
    Id st = g.gb.symint();
    g.gb.op("et_vk.select_as_symint.default", {ip, g.gb.int_(0), g.gb.int_(k.index), st});
    Id oq = g.output(DType::Float32, xq.shape), ok = g.output(DType::Float32, xk.shape);
    g.gb.op("et_vk.apply_rotary_emb_hf.default", {q, kk, fc, fs, st, g.gb.value_list({oq, ok})});
    auto out = g.run();
    EXPECT_TRUE(Close(out[0], ref::rope_hf(xq, c, s, 3), 1e-5, 1e-5)) << what;
    const gpu::Context& ctx = detail::ModelAccess::graph(*g.model()).ctx();
    const uint64_t before = ctx.sync_reads();
    for (int64_t p : {0, 8, 5}) {
      out = g.rerun({xq, xk, c, s, positions(p)});
      EXPECT_TRUE(Close(out[1], ref::rope_hf(xk, c, s, p), 1e-5, 1e-5)) << what << " pos " << p;
    }
    EXPECT_EQ(ctx.sync_reads() - before, k.host ? 0u : 3u) << what;
  }
}

TEST(OpSymInt, SelectAsSymintOfNonInputIsRejected) {
  ETW_REQUIRE_GPU();
  OpGraph g;
  Id x = g.input(random_f32({4}, 1));
  Id cst = g.constant(HostTensor::from<int32_t>(DType::Int32, {1}, {2}));
  Id st = g.gb.symint();
  g.gb.op("et_vk.select_as_symint.default", {cst, g.gb.int_(0), g.gb.int_(0), st});
  Id o = g.output(DType::Float32, {4});
  g.gb.op("aten.add.Tensor", {x, x, g.gb.int_(1), o});
  try {
    g.run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph input"), std::string::npos) << e.what();
  }
}

TEST(OpSymInt, FloorDivByZeroAndBadDimFail) {
  ETW_REQUIRE_GPU();
  {
    OpGraph g;
    Id x = g.input(random_f32({4}, 1));
    Id n = g.gb.symint(), d = g.gb.symint();
    g.gb.op("sym_size.int", {x, g.gb.int_(0), n});
    g.gb.op("floordiv", {n, g.gb.int_(0), d});
    Id o = g.output(DType::Float32, {4});
    g.gb.op("aten.add.Tensor", {x, x, g.gb.int_(1), o});
    try {
      g.run();
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("floordiv by zero"), std::string::npos) << e.what();
    }
  }
  {
    OpGraph g;
    Id x = g.input(random_f32({4}, 1));
    Id n = g.gb.symint();
    g.gb.op("sym_size.int", {x, g.gb.int_(2), n});
    Id o = g.output(DType::Float32, {4});
    g.gb.op("aten.add.Tensor", {x, x, g.gb.int_(1), o});
    EXPECT_THROW(g.run(), Error);
  }
}

}  // namespace
