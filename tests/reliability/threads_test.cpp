// Several Models loaded, run and freed concurrently from several threads give the same answers
// as alone; an index error in one model stays in that model. (One Model used from two threads
// at once is refused: Robustness.ConcurrentRunsOfOneModelAreRefusedWithAnErrorNeverMixed.)
// scripts/test.sh also runs these under ThreadSanitizer.
#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "etwebgpu/builder.h"
#include "reference/indexing/indexing_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

std::vector<uint8_t> binary_model(const char* op, int64_t n, bool with_alpha) {
  GraphBuilder g;
  auto a = g.input(DType::Float32, {n});
  auto b = g.input(DType::Float32, {n});
  auto o = g.tensor(DType::Float32, {n});
  if (with_alpha) g.op(op, {a, b, g.int_(1), o});
  else g.op(op, {a, b, o});
  g.output(o);
  return g.serialize();
}

std::vector<uint8_t> embedding_model(const HostTensor& weight, int64_t n_idx) {
  GraphBuilder g;
  auto w = g.constant_f32(weight.shape, std::vector<float>(weight.as<float>(), weight.as<float>() + weight.numel()));
  auto ix = g.input(DType::Int32, {n_idx});
  auto o = g.tensor(DType::Float32, {n_idx, weight.shape[1]});
  g.op("aten.embedding.default", {w, ix, g.int_(-1), g.boolean(false), g.boolean(false), o});
  g.output(o);
  return g.serialize();
}

// One thread's work: `cycles` times load its model, run it `runs` times, check, free.
struct Worker {
  std::function<std::vector<uint8_t>()> make;
  // Runs once on the model; returns "" when right, else what was wrong.
  std::function<std::string(Model&, uint64_t seed)> check;
};

TEST(Threads, FourThreadsLoadRunAndFreeTheirOwnModelsWithCorrectResults) {
  ETW_REQUIRE_GPU();
  const HostTensor weight = random_f32({6, 5}, 7);
  auto binary_check = [](bool add) {
    return [add](Model& m, uint64_t seed) -> std::string {
      const int64_t n = m.inputs()[0].sizes[0];
      auto a = random_f32({n}, seed), b = random_f32({n}, seed + 1);
      auto x = a.to_f64(), y = b.to_f64();
      for (size_t k = 0; k < x.size(); ++k) x[k] = add ? x[k] + y[k] : x[k] * y[k];
      auto r = compare_tensors(m.run({a, b})[0], ref_tensor({n}, x), 1e-6, 1e-6);
      return r.ok ? "" : r.message;
    };
  };
  std::vector<Worker> workers = {
      {[] { return binary_model("aten.add.Tensor", 257, true); }, binary_check(true)},
      {[] { return binary_model("aten.mul.Tensor", 1000, false); }, binary_check(false)},
      {[&] { return embedding_model(weight, 9); },
       [&](Model& m, uint64_t seed) -> std::string {
         auto ix = random_i32({9}, seed, 0, 5);
         auto r = compare_tensors(m.run({ix})[0], ref::embedding(weight, ix), 0, 0);
         return r.ok ? "" : r.message;
       }},
      // Always out of range: its error must name index 6 every time and never reach the others.
      {[&] { return embedding_model(weight, 3); },
       [](Model& m, uint64_t) -> std::string {
         try {
           m.run({HostTensor::from<int32_t>(DType::Int32, {3}, std::vector<int32_t>{0, 6, 1})});
         } catch (const Error& e) {
           return std::string(e.what()).find("index 6 is out of bounds") != std::string::npos ? "" : e.what();
         }
         return "no index error raised";
       }},
  };
  const int cycles = 4, runs = 3;
  std::vector<std::string> failures(workers.size());
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers.size(); ++w) {
    threads.emplace_back([&, w] {
      try {
        for (int c = 0; c < cycles && failures[w].empty(); ++c) {
          auto model = Model::load_bytes(workers[w].make());
          for (int r = 0; r < runs && failures[w].empty(); ++r)
            failures[w] = workers[w].check(*model, 100 * w + 10 * c + r);
        }
      } catch (const std::exception& e) {
        failures[w] = std::string("threw: ") + e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t w = 0; w < workers.size(); ++w) EXPECT_EQ(failures[w], "") << "worker " << w;
}

TEST(Threads, ModelsLoadedOnOneThreadRunOnOthers) {
  ETW_REQUIRE_GPU();
  std::vector<std::unique_ptr<Model>> models;
  for (int64_t n : {31, 64, 129}) models.push_back(Model::load_bytes(binary_model("aten.add.Tensor", n, true)));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < models.size(); ++i) {
    threads.emplace_back([&, i] {
      Model& m = *models[i];
      const int64_t n = m.inputs()[0].sizes[0];
      for (int r = 0; r < 5; ++r) {
        auto a = random_f32({n}, 10 * i + r), b = random_f32({n}, 10 * i + r + 500);
        auto x = a.to_f64(), y = b.to_f64();
        for (size_t k = 0; k < x.size(); ++k) x[k] += y[k];
        if (!compare_tensors(m.run({a, b})[0], ref_tensor({n}, x), 1e-6, 1e-6).ok) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
