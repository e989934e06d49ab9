// Hostile or wrong inputs: every failure is an etwebgpu::Error naming the problem, checked before
// anything is allocated where possible, and the process (and the model) stays usable.
#include <atomic>
#include <cstdio>
#include <thread>

#include "etwebgpu/builder.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::vector<uint8_t> add_model(std::vector<int64_t> shape, bool dynamic = false) {
  GraphBuilder g;
  auto a = g.input(DType::Float32, shape, dynamic);
  auto b = g.input(DType::Float32, shape, dynamic);
  auto o = g.tensor(DType::Float32, shape);
  g.op("aten.add.Tensor", {a, b, g.int_(1), o});
  g.output(o);
  return g.serialize();
}

TEST(Robustness, DeviceLossIsAnErrorNotACrash) {
  ETW_REQUIRE_GPU();
  std::string out;
  int code = run_cli("info --simulate-device-loss", &out);
  ASSERT_NE(code, 128) << "the CLI died from a signal:\n" << out;
  EXPECT_EQ(code, 0) << out;  // the reload after the loss runs and matches its reference
  EXPECT_NE(out.find("run after the loss: Gpu error: device lost"), std::string::npos) << out;
  EXPECT_NE(out.find("check:   vs float64 CPU reference: ok"), std::string::npos) << out;
}

TEST(Robustness, DynamicInputOutsideItsExportedBoundIsRefusedAndModelStaysUsable) {
  ETW_REQUIRE_GPU();
  auto model = Model::load_bytes(add_model({2, 8, 4}, true));
  EXPECT_TRUE(model->inputs()[0].dynamic);
  try {
    model->run({random_f32({2, 9, 4}, 1), random_f32({2, 9, 4}, 2)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("bound"), std::string::npos) << e.what();
  }
  EXPECT_THROW(model->run({random_f32({2, 8}, 1), random_f32({2, 8}, 2)}), Error);  // wrong rank
  auto a = random_f32({2, 5, 4}, 3), b = random_f32({2, 5, 4}, 4);
  auto out = model->run({a, b});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 5, 4}));
  auto x = a.to_f64(), y = b.to_f64();
  for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  EXPECT_TRUE(Close(out[0], ref_tensor({2, 5, 4}, x)));
}

TEST(Robustness, TensorAboveTheStorageBindingLimitIsRefusedBeforeAllocating) {
  ETW_REQUIRE_GPU();
  try {
    Model::load_bytes(add_model({1LL << 20, 1LL << 12}));  // 2^32 floats = 16 GiB per tensor
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit);
    EXPECT_NE(std::string(e.what()).find("maxStorageBufferBindingSize"), std::string::npos) << e.what();
  }
}

TEST(Robustness, GraphAboveTheMemoryBudgetIsRefusedUpFront) {
  ETW_REQUIRE_GPU();
  LoadOptions o;
  o.max_gpu_bytes = 1000;  // three [16,16] float tensors need 3 KiB
  try {
    Model::load_bytes(add_model({16, 16}), o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit);
    EXPECT_NE(std::string(e.what()).find("max_gpu_bytes"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(Model::load_bytes(add_model({16, 16})));
}

TEST(Robustness, HugeSparseMemoryObjectIdsAreRenumberedNotTabulated) {
  ETW_REQUIRE_GPU();
  // Regression (fuzz/regressions/pte_loader/mem_obj_id_overflow.pte): ids near INT32_MAX once overflowed the
  // merge's id offset and would have sized a dense table by the largest id.
  GraphBuilder g;
  auto a = g.input(DType::Float32, {4}, false, 2000000000);
  auto b = g.input(DType::Float32, {4}, false, 1610612742);
  auto o = g.tensor(DType::Float32, {4}, 2000000000);  // shares the input's memory, as planners do
  g.op("aten.add.Tensor", {a, b, g.int_(1), o});
  g.output(o);
  auto m = Model::load_bytes(g.serialize());
  auto x = random_f32({4}, 1), y = random_f32({4}, 2);
  auto out = m->run({x, y});
  auto xv = x.to_f64(), yv = y.to_f64();
  for (size_t i = 0; i < xv.size(); ++i) xv[i] += yv[i];
  EXPECT_TRUE(Close(out[0], ref_tensor({4}, xv)));
}

TEST(Robustness, RankAboveEightIsRefused) {
  ETW_REQUIRE_GPU();
  try {
    Model::load_bytes(add_model({1, 1, 1, 1, 1, 1, 1, 1, 2}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit);
    EXPECT_NE(std::string(e.what()).find("rank"), std::string::npos) << e.what();
  }
}

TEST(Robustness, MalformedFileIsAnErrorAndTheNextModelStillLoads) {
  ETW_REQUIRE_GPU();
  auto good = add_model({3, 3});
  auto bad = good;
  bad.resize(bad.size() / 3);
  EXPECT_THROW(Model::load_bytes(bad), Error);
  std::vector<uint8_t> garbage(4096, 0xAB);
  EXPECT_THROW(Model::load_bytes(garbage), Error);
  EXPECT_THROW(Model::load("/nonexistent/model.pte"), Error);
  auto m = Model::load_bytes(good);
  EXPECT_EQ(m->run({random_f32({3, 3}, 1), random_f32({3, 3}, 2)}).size(), 1u);
}

TEST(Robustness, SeveralModelsShareOneDeviceAndRunFromSeveralThreads) {
  ETW_REQUIRE_GPU();
  auto m1 = Model::load_bytes(add_model({64}));
  auto m2 = Model::load_bytes(add_model({7, 5}));
  std::atomic<int> wrong{0};
  auto work = [&](Model& m, std::vector<int64_t> shape, uint64_t seed) {
    for (int i = 0; i < 10; ++i) {
      auto a = random_f32(shape, seed + i), b = random_f32(shape, seed + 100 + i);
      auto out = m.run({a, b});
      auto x = a.to_f64(), y = b.to_f64();
      for (size_t k = 0; k < x.size(); ++k) x[k] += y[k];
      if (!compare_tensors(out[0], ref_tensor(shape, x), 1e-6, 1e-6).ok) ++wrong;
    }
  };
  std::thread t1(work, std::ref(*m1), std::vector<int64_t>{64}, 1);
  std::thread t2(work, std::ref(*m2), std::vector<int64_t>{7, 5}, 1000);
  t1.join();
  t2.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Robustness, ConcurrentRunsOfOneModelAreRefusedWithAnErrorNeverMixed) {
  ETW_REQUIRE_GPU();
  auto m = Model::load_bytes(add_model({256, 64}));
  std::atomic<int> ok{0}, refused{0}, wrong{0};
  auto work = [&](uint64_t seed) {
    for (int i = 0; i < 15; ++i) {
      auto a = random_f32({256, 64}, seed + i), b = random_f32({256, 64}, seed + 50 + i);
      try {
        auto out = m->run({a, b});
        auto x = a.to_f64(), y = b.to_f64();
        for (size_t k = 0; k < x.size(); ++k) x[k] += y[k];
        (compare_tensors(out[0], ref_tensor({256, 64}, x), 1e-6, 1e-6).ok ? ok : wrong)++;
      } catch (const Error& e) {
        if (std::string(e.what()).find("another run") != std::string::npos) ++refused;
        else ++wrong;
      }
    }
  };
  std::thread t1(work, 1), t2(work, 500);
  t1.join();
  t2.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(ok.load() + refused.load(), 30);
  EXPECT_GT(ok.load(), 0);
}

}  // namespace
