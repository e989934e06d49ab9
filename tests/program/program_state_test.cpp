// Program state: mutable buffers (KV caches, counters) written back by aten::copy_ persist on the
// GPU from one Model::run to the next, and Model::reset_state() restores their initial contents.
// Checked on the exported llama KV-cache fixture (its goldens come from PyTorch eager) and on
// ProgramBuilder-built programs against host-side references.
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "etwebgpu/builder.h"
#include "etwebgpu/npy.h"
#include "reference/indexing/advanced_index_ref.h"
#include "reference/memory/memory_ref.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

const char* kCase = "llama_kv_cache_decode_steps";

struct Fixture {
  std::string dir;
  double atol = 0, rtol = 0;
  // Step 0 is the top-level input; 1.. are the manifest's steps (file prefix "stepK_").
  std::vector<HostTensor> inputs(int k) const {
    std::string p = dir + "/" + (k ? "step" + std::to_string(k) + "_" : "");
    return {read_npy(p + "input_0.npy"), read_npy(p + "input_1.npy")};
  }
  HostTensor expected(int k) const {
    return read_npy(dir + "/" + (k ? "step" + std::to_string(k) + "_" : "") + "expected_0.npy");
  }
  CompareResult compare(const HostTensor& got, int k) const { return compare_tensors(got, expected(k), atol, rtol); }
};

// Loads the fixture's tolerances from the manifest; false when the fixture is absent.
bool load_fixture(Fixture& f) {
  std::string root = conformance_dir();
  f.dir = root + "/" + kCase;
  if (!std::filesystem::exists(f.dir + "/model.pte") || !std::filesystem::exists(root + "/manifest.json")) return false;
  std::ifstream in(root + "/manifest.json");
  auto m = nlohmann::json::parse(in);
  const auto& c = m.at("cases").at(kCase);
  f.atol = c.at("atol").get<double>();
  f.rtol = c.at("rtol").get<double>();
  return true;
}

#define ETW_REQUIRE_STATE_FIXTURE(f)                                                                 \
  Fixture f;                                                                                        \
  if (!load_fixture(f)) GTEST_SKIP() << "fixture " << kCase << " absent under " << conformance_dir();

TEST(ProgramState, KvCacheCarriesFromOneRunToTheNext) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_STATE_FIXTURE(f);
  auto a = Model::load(f.dir + "/model.pte");
  auto r0 = a->run(f.inputs(0));
  ASSERT_EQ(r0.size(), 1u);
  EXPECT_TRUE(f.compare(r0[0], 0).ok) << f.compare(r0[0], 0).message;
  auto r1 = a->run(f.inputs(1));
  EXPECT_TRUE(f.compare(r1[0], 1).ok) << f.compare(r1[0], 1).message;
  // A fresh model given step 1 alone has an empty cache: its result must differ from the golden,
  // which proves model A's step 1 used what step 0 left in the cache.
  auto b = Model::load(f.dir + "/model.pte");
  auto b1 = b->run(f.inputs(1));
  EXPECT_FALSE(f.compare(b1[0], 1).ok) << "a fresh model reproduced step 1 without state";
}

TEST(ProgramState, AllDecodeStepsMatchTheirGoldensOnOneLoadedModel) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_STATE_FIXTURE(f);
  auto a = Model::load(f.dir + "/model.pte");
  for (int k = 0; k <= 5; ++k) {
    if (k && !std::filesystem::exists(f.dir + "/step" + std::to_string(k) + "_input_0.npy")) break;
    auto r = a->run(f.inputs(k));
    auto c = f.compare(r[0], k);
    EXPECT_TRUE(c.ok) << "step " << k << ": " << c.message;
  }
}

// Load-time rewrites (CSE, RMSNorm, RoPE, permutes of size-1 dims as views, the final norm reading
// its selected row in place) cut the decode step's dispatches; every step still matches its
// golden and the unrewritten model's result.
TEST(ProgramState, DecodeRewritesCutDispatchesAndEveryStepStillMatches) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_STATE_FIXTURE(f);
  LoadOptions plain_opts;
  plain_opts.fuse = false;
  auto fused = Model::load(f.dir + "/model.pte"), plain = Model::load(f.dir + "/model.pte", plain_opts);
  size_t fused_dispatches = 0, plain_dispatches = 0, rms = 0, rms_select = 0, rope = 0;
  for (int k = 0; k <= 5; ++k) {
    if (k && !std::filesystem::exists(f.dir + "/step" + std::to_string(k) + "_input_0.npy")) break;
    Profile pf, pp;
    auto rf = fused->run(f.inputs(k), &pf);
    auto rp = plain->run(f.inputs(k), &pp);
    EXPECT_TRUE(f.compare(rf[0], k).ok) << "step " << k << ": " << f.compare(rf[0], k).message;
    EXPECT_TRUE(compare_tensors(rf[0], rp[0], f.atol, f.rtol).ok) << "step " << k;
    fused_dispatches = pf.dispatches.size(), plain_dispatches = pp.dispatches.size();
    rms = rms_select = rope = 0;
    for (auto& d : pf.dispatches)
      rms += d.op == "et_vk.rms_norm.default", rms_select += d.op == "etwebgpu.rms_norm_select",
          rope += d.op == "etwebgpu.rope_interleaved";
  }
  EXPECT_EQ(rms, 4u);         // 2 layers x 2 norms
  EXPECT_EQ(rms_select, 1u);  // the final norm, reading the last position's row in place
  EXPECT_EQ(rope, 4u);  // q and k of 2 layers
  EXPECT_LE(fused_dispatches, 80u) << "plain: " << plain_dispatches;
  EXPECT_GE(plain_dispatches, fused_dispatches + 60) << "fused: " << fused_dispatches;
}

TEST(ProgramState, ResetStateReplaysTheSequenceFromTheStart) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_STATE_FIXTURE(f);
  auto a = Model::load(f.dir + "/model.pte");
  a->run(f.inputs(0));
  a->run(f.inputs(1));
  a->run(f.inputs(2));
  a->reset_state();
  auto r0 = a->run(f.inputs(0));
  EXPECT_TRUE(f.compare(r0[0], 0).ok) << f.compare(r0[0], 0).message;
  auto r1 = a->run(f.inputs(1));
  EXPECT_TRUE(f.compare(r1[0], 1).ok) << f.compare(r1[0], 1).message;
  // After a reset, step 1 alone sees an empty cache again (as a fresh model does).
  a->reset_state();
  auto r1_alone = a->run(f.inputs(1));
  EXPECT_FALSE(f.compare(r1_alone[0], 1).ok) << "reset_state left the cache filled";
}

TEST(ProgramState, NumStateBuffersCountsTheFourKvCachesAndZeroForAStatelessModel) {
  ETW_REQUIRE_GPU();
  ETW_REQUIRE_STATE_FIXTURE(f);
  EXPECT_EQ(Model::load(f.dir + "/model.pte")->num_state_buffers(), 4u);
  std::string stateless = conformance_dir() + "/add_bcast/model.pte";
  if (!std::filesystem::exists(stateless)) GTEST_SKIP() << "fixture add_bcast absent";
  EXPECT_EQ(Model::load(stateless)->num_state_buffers(), 0u);
}

// ------------------------------------------------------------------ ProgramBuilder programs

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<double> add(std::vector<double> a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// sum = buf + x; copy_(buf, sum); returns sum. buf starts as zeros, or as `init` when given.
std::vector<uint8_t> counter_program(const std::vector<float>* init) {
  ProgramBuilder p;
  auto buf = init ? p.mutable_tensor(DType::Float32, {2, 3}, f32_bytes(*init)) : p.tensor(DType::Float32, {2, 3});
  auto x = p.tensor(DType::Float32, {2, 3});
  auto sum = p.tensor(DType::Float32, {2, 3});
  auto ret = p.tensor(DType::Float32, {2, 3});
  p.input(x);
  p.kernel("aten::add", "out", {buf, x, p.int_(1), sum});
  p.kernel_with_return("aten::copy_", "", {buf, sum, p.boolean(false)}, ret);  // ExecuTorch's layout: ret is its own EValue
  p.output(sum);
  return p.serialize();
}

TEST(ProgramState, CopyWriteBackAccumulatesAcrossRunsAndResetsToZeros) {
  ETW_REQUIRE_GPU();
  auto model = Model::load_bytes(counter_program(nullptr));
  EXPECT_EQ(model->num_state_buffers(), 1u);
  auto x1 = random_f32({2, 3}, 501), x2 = random_f32({2, 3}, 502), x3 = random_f32({2, 3}, 503);
  EXPECT_TRUE(Close(model->run({x1})[0], ref_tensor({2, 3}, x1.to_f64())));
  EXPECT_TRUE(Close(model->run({x2})[0], ref_tensor({2, 3}, add(x1.to_f64(), x2.to_f64()))));
  EXPECT_TRUE(Close(model->run({x3})[0], ref_tensor({2, 3}, add(add(x1.to_f64(), x2.to_f64()), x3.to_f64()))));
  model->reset_state();
  EXPECT_TRUE(Close(model->run({x2})[0], ref_tensor({2, 3}, x2.to_f64())));
}

TEST(ProgramState, MutableBufferStartsFromItsInitialDataAndResetRestoresIt) {
  ETW_REQUIRE_GPU();
  std::vector<float> init = {10, 20, 30, -40, 50.5f, 60};
  auto model = Model::load_bytes(counter_program(&init));
  EXPECT_EQ(model->num_state_buffers(), 1u);
  std::vector<double> i64(init.begin(), init.end());
  auto x1 = random_f32({2, 3}, 504), x2 = random_f32({2, 3}, 505);
  EXPECT_TRUE(Close(model->run({x1})[0], ref_tensor({2, 3}, add(i64, x1.to_f64()))));
  EXPECT_TRUE(Close(model->run({x2})[0], ref_tensor({2, 3}, add(add(i64, x1.to_f64()), x2.to_f64()))));
  model->reset_state();
  EXPECT_TRUE(Close(model->run({x2})[0], ref_tensor({2, 3}, add(i64, x2.to_f64()))));
}

// The method output is copy_'s return entry, which aliases the buffer: it reads the updated state.
TEST(ProgramState, OutputThroughCopyReturnEntryIsTheUpdatedBuffer) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  auto buf = p.tensor(DType::Float32, {4});
  auto x = p.tensor(DType::Float32, {4}), sum = p.tensor(DType::Float32, {4}), ret = p.tensor(DType::Float32, {4});
  p.input(x);
  p.kernel("aten::add", "out", {buf, x, p.int_(1), sum});
  p.kernel_with_return("aten::copy_", "", {buf, sum, p.boolean(false)}, ret);
  p.output(ret);
  auto model = Model::load_bytes(p.serialize());
  auto x1 = random_f32({4}, 511), x2 = random_f32({4}, 512);
  EXPECT_TRUE(Close(model->run({x1})[0], ref_tensor({4}, x1.to_f64())));
  EXPECT_TRUE(Close(model->run({x2})[0], ref_tensor({4}, add(x1.to_f64(), x2.to_f64()))));
}

TEST(ProgramState, BuilderMutableTensorRejectsInitialDataOfTheWrongSize) {
  ProgramBuilder p;
  auto msg = load_error([&] { p.mutable_tensor(DType::Float32, {2, 3}, std::vector<uint8_t>(20)); });
  EXPECT_TRUE(has(msg, "mutable_tensor")) << msg;
  EXPECT_TRUE(has(msg, "20 bytes")) << msg;
}

// An int64 position counter (as decode loops keep): pos = pos + step; copy_(pos, new); outputs new.
TEST(ProgramState, Int64MutableBufferStartsFromItsInitialDataAndCounts) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  std::vector<int64_t> init = {5, -7, 1000000};
  std::vector<uint8_t> bytes(init.size() * 8);
  std::memcpy(bytes.data(), init.data(), bytes.size());
  auto pos = p.mutable_tensor(DType::Int64, {3}, bytes);
  auto step = p.tensor(DType::Int64, {3});
  auto next = p.tensor(DType::Int64, {3});
  auto ret = p.tensor(DType::Int64, {3});
  p.input(step);
  p.kernel("aten::add", "out", {pos, step, p.int_(1), next});
  p.kernel_with_return("aten::copy_", "", {pos, next, p.boolean(false)}, ret);
  p.output(next);
  auto model = Model::load_bytes(p.serialize());
  EXPECT_EQ(model->num_state_buffers(), 1u);
  auto step_v = HostTensor::from<int64_t>(DType::Int64, {3}, {1, 2, -3});
  auto r1 = model->run({step_v})[0];
  auto r2 = model->run({step_v})[0];
  auto exp1 = HostTensor::from<int64_t>(DType::Int64, {3}, {6, -5, 999997});
  auto exp2 = HostTensor::from<int64_t>(DType::Int64, {3}, {7, -3, 999994});
  EXPECT_TRUE(Close(r1, exp1));
  EXPECT_TRUE(Close(r2, exp2));
  model->reset_state();
  EXPECT_TRUE(Close(model->run({step_v})[0], exp1));
}

// The exported KV-cache update: u = index_put(cache, [None, None, pos], v); [old = cache * 1];
// copy_(cache, u); outputs u (and old). Without the read of `cache` in between, the merge aliases
// u onto the cache buffer; with it, the read must still see the previous state.
struct KvProgram {
  std::vector<uint8_t> bytes;
};
KvProgram kv_program(bool read_between) {
  ProgramBuilder p;
  std::vector<int64_t> cs = {1, 2, 5, 3};
  auto cache = p.tensor(DType::Float32, cs);
  auto pos = p.tensor(DType::Int64, {1});
  auto v = p.tensor(DType::Float32, {2, 1, 3});
  auto u = p.tensor(DType::Float32, cs);
  auto ret = p.tensor(DType::Float32, cs);
  p.input(pos);
  p.input(v);
  auto list = p.optional_tensor_list({-1, -1, pos});
  p.kernel("aten::index_put", "out", {cache, list, v, p.boolean(false), u});
  ProgramBuilder::Id old = -1;
  if (read_between) {
    old = p.tensor(DType::Float32, cs);
    p.kernel("aten::mul", "Scalar_out", {cache, p.dbl(1.0), old});
  }
  p.kernel_with_return("aten::copy_", "", {cache, u, p.boolean(false)}, ret);
  p.output(u);
  if (read_between) p.output(old);
  return {p.serialize()};
}

TEST(ProgramState, KvCacheIndexPutWriteBackKeepsEveryPositionAcrossRuns) {
  ETW_REQUIRE_GPU();
  for (bool read_between : {false, true}) {
    SCOPED_TRACE(read_between ? "cache read between index_put and copy_ (not aliased)" : "aliased in place");
    auto model = Model::load_bytes(kv_program(read_between).bytes);
    EXPECT_EQ(model->num_state_buffers(), 1u);
    HostTensor state(DType::Float32, {1, 2, 5, 3});  // zeros
    auto ref_state = ref::reshape(state, state.shape);  // zeros, as Float64
    std::vector<int64_t> positions = {0, 3, 1, -1};
    for (size_t k = 0; k < positions.size(); ++k) {
      auto pos = HostTensor::from<int64_t>(DType::Int64, {1}, {positions[k]});
      auto v = random_f32({2, 1, 3}, 600 + k, 1.f, 2.f);
      auto before = ref_state;
      ref_state = ref::index_put(ref_state, {std::nullopt, std::nullopt, pos}, v, false);
      auto out = model->run({pos, v});
      EXPECT_TRUE(Close(out[0], ref_state, 0, 0)) << "run " << k;
      if (read_between) {
        EXPECT_TRUE(Close(out[1], before, 0, 0)) << "run " << k;
      }
    }
    model->reset_state();
    auto pos = HostTensor::from<int64_t>(DType::Int64, {1}, {2});
    auto v = random_f32({2, 1, 3}, 700, 1.f, 2.f);
    auto out = model->run({pos, v});
    EXPECT_TRUE(Close(out[0], ref::index_put(state, {std::nullopt, std::nullopt, pos}, v, false), 0, 0)) << "after reset";
  }
}

// Same, the cache read between index_put and copy_ through a tensor list (cat([cache, cache])): the
// read must see the previous state, so the update must not be done in place on the cache.
TEST(ProgramState, CacheReadThroughATensorListBeforeTheWriteBackSeesThePreviousState) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  std::vector<int64_t> cs = {1, 2, 5, 3};
  auto cache = p.tensor(DType::Float32, cs);
  auto pos = p.tensor(DType::Int64, {1});
  auto v = p.tensor(DType::Float32, {2, 1, 3});
  auto u = p.tensor(DType::Float32, cs);
  auto both = p.tensor(DType::Float32, {2, 2, 5, 3});
  auto ret = p.tensor(DType::Float32, cs);
  p.input(pos);
  p.input(v);
  p.kernel("aten::index_put", "out", {cache, p.optional_tensor_list({-1, -1, pos}), v, p.boolean(false), u});
  p.kernel("aten::cat", "out", {p.tensor_list({cache, cache}), p.int_(0), both});
  p.kernel_with_return("aten::copy_", "", {cache, u, p.boolean(false)}, ret);
  p.output(u);
  p.output(both);
  auto model = Model::load_bytes(p.serialize());
  HostTensor zeros(DType::Float32, cs);
  auto state = ref::reshape(zeros, cs);
  for (int64_t k = 0; k < 3; ++k) {
    auto ix = HostTensor::from<int64_t>(DType::Int64, {1}, {k * 2});
    auto val = random_f32({2, 1, 3}, 900 + k, 1.f, 2.f);
    auto before = state;
    state = ref::index_put(state, {std::nullopt, std::nullopt, ix}, val, false);
    auto out = model->run({ix, val});
    EXPECT_TRUE(Close(out[0], state, 0, 0)) << "run " << k;
    EXPECT_TRUE(Close(out[1], ref::cat({before, before}, 0), 0, 0)) << "run " << k;
  }
}

// An in-place kernel's return entry used later inside a tensor list reads the updated buffer.
TEST(ProgramState, InPlaceReturnEntryUsedInATensorListReadsTheUpdatedBuffer) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  std::vector<float> init = {1, 2, 3, 4};
  auto buf = p.mutable_tensor(DType::Float32, {4}, f32_bytes(init));
  auto idx = p.tensor(DType::Int64, {2});
  auto w = p.tensor(DType::Float32, {2});
  auto ret = p.tensor(DType::Float32, {4});
  auto both = p.tensor(DType::Float32, {8});
  p.input(idx);
  p.input(w);
  p.kernel_with_return("aten::index_put_", "", {buf, p.optional_tensor_list({idx}), w, p.boolean(true)}, ret);
  p.kernel("aten::cat", "out", {p.tensor_list({ret, buf}), p.int_(0), both});
  p.output(both);
  auto model = Model::load_bytes(p.serialize());
  auto ix = HostTensor::from<int64_t>(DType::Int64, {2}, {3, 0});
  auto wv = HostTensor::from<float>(DType::Float32, {2}, {10, 20});
  auto state = ref::index_put(HostTensor::from<float>(DType::Float32, {4}, init), {ix}, wv, true);
  EXPECT_TRUE(Close(model->run({ix, wv})[0], ref::cat({state, state}, 0), 0, 0));
}

// index_put_ (in place, accumulate) on a buffer with initial data: a histogram that grows with
// every run, duplicates within one run summing.
TEST(ProgramState, InPlaceAccumulatingIndexPutOnAMutableBufferGrowsEachRun) {
  ETW_REQUIRE_GPU();
  ProgramBuilder p;
  std::vector<float> init = {1, 2, 3, 4, 5};
  auto hist = p.mutable_tensor(DType::Float32, {5}, f32_bytes(init));
  auto idx = p.tensor(DType::Int64, {4});
  auto ones = p.tensor(DType::Float32, {4});
  auto ret = p.tensor(DType::Float32, {5});
  auto snap = p.tensor(DType::Float32, {5});
  p.input(idx);
  p.input(ones);
  p.kernel_with_return("aten::index_put_", "", {hist, p.optional_tensor_list({idx}), ones, p.boolean(true)}, ret);
  p.kernel("aten::clone", "out", {hist, p.null(), snap});
  p.output(snap);
  auto model = Model::load_bytes(p.serialize());
  EXPECT_EQ(model->num_state_buffers(), 1u);
  HostTensor state = HostTensor::from<float>(DType::Float32, {5}, init);
  HostTensor ref_state = ref::reshape(state, state.shape);  // init, as Float64
  std::vector<std::vector<int64_t>> runs = {{0, 2, 2, -1}, {4, 4, 4, 1}, {3, 0, 2, 2}};
  for (size_t k = 0; k < runs.size(); ++k) {
    auto ix = HostTensor::from<int64_t>(DType::Int64, {4}, runs[k]);
    auto w = random_f32({4}, 800 + k, 0.5f, 1.5f);
    ref_state = ref::index_put(ref_state, {ix}, w, true);
    EXPECT_TRUE(Close(model->run({ix, w})[0], ref_state, 1e-6, 1e-6)) << "run " << k;
  }
  model->reset_state();
  auto ix = HostTensor::from<int64_t>(DType::Int64, {4}, {1, 1, 1, 1});
  auto w = HostTensor::from<float>(DType::Float32, {4}, {1, 1, 1, 1});
  EXPECT_TRUE(Close(model->run({ix, w})[0], ref_tensor({5}, {1, 6, 3, 4, 5}), 0, 0));
}

}  // namespace
