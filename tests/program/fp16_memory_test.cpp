// Device memory at fp16 (issue 32): with LoadOptions::precision = FP16 every float tensor, weight,
// KV cache and float scratch buffer (split-K partials, attention scores) is 16-bit. What stays
// 32-bit by design does not depend on the precision: uniforms, integer and bool tensors, packed
// 4-bit weights (already below 16 bits an element). On every conformance program of more than 5
// operators the rest of gpu_bytes holds at most 0.55x its fp32 size, and the outputs match the
// golden within the fp16 tolerance.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <set>

#include "etwebgpu/inspect.h"
#include "etwebgpu/npy.h"
#include "gpu/context.h"
#include "program/model_internal.h"
#include "support/op_harness.h"
#include "tools/conformance/conformance.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

constexpr double kMaxRatio = 0.55;
constexpr size_t kMinOps = 6;  // "more than 5 operators"

struct Bytes {
  uint64_t total = 0;  // gpu_bytes
  uint64_t fixed = 0;  // of which 32-bit (or packed) at any precision
};

// Device bytes of `m` after a run (buffers are made on first use) and their precision-independent
// part: uniforms, integer and bool tensors (of a planned buffer shared with float tensors, as much
// as its largest such tensor needs), raw packed constants.
Bytes measure(Model& m) {
  graph::Graph& g = detail::ModelAccess::graph(m);
  Bytes b{m.gpu_bytes(), 0};
  for (const auto& n : g.nodes())
    for (const auto& k : n.kernels)
      if (k.uniform) b.fixed += k.uniform->size();
  const auto& plan = g.memory_plan();
  std::set<int32_t> named;
  for (const auto& call : g.ir().chain) named.insert(call.args.begin(), call.args.end());
  std::vector<uint64_t> size(plan.buffers.size(), 0), fixed(plan.buffers.size(), 0);
  for (size_t id = 0; id < g.ir().values.size(); ++id) {
    if (g.ir().values[id].kind != format::VkValueKind::Tensor) continue;
    graph::Tensor& t = g.tensor(static_cast<int32_t>(id));
    bool is_float = kernel::is_float(t.storage);
    int bi = plan.buffer_of[id];
    if (bi != graph::MemoryPlan::kNone) {
      if (!is_float) fixed[bi] = std::max(fixed[bi], t.bytes(t.max_numel()));
      if (t.buffer_index >= 0) size[bi] = g.buffer(static_cast<int32_t>(id)).size();
    } else if (t.buffer_index >= 0) {
      if (!is_float) b.fixed += g.buffer(static_cast<int32_t>(id)).size();
    } else if (t.constant_id >= 0 && !is_float && named.count(static_cast<int32_t>(id))) {
      b.fixed += (g.constant_bytes(static_cast<int32_t>(id)).size() + 3) & ~size_t(3);  // bound raw (packed weights)
    }
  }
  for (size_t bi = 0; bi < plan.buffers.size(); ++bi) b.fixed += std::min(size[bi], fixed[bi]);
  return b;
}

Bytes load_run_measure(const std::string& dir, Precision p) {
  LoadOptions o;
  o.precision = p;
  auto m = Model::load(dir + "/model.pte", o);
  std::vector<HostTensor> in;
  for (int k = 0; std::filesystem::exists(dir + "/input_" + std::to_string(k) + ".npy"); ++k)
    in.push_back(read_npy(dir + "/input_" + std::to_string(k) + ".npy"));
  m->run(in);
  return measure(*m);
}

TEST(Fp16Memory, FloatStorageOfEveryConformanceProgramOfMoreThanFiveOpsIsAtMost055xAtFp16AndMatchesGolden) {
  auto dir = conformance_dir();
  ETW_REQUIRE_FIXTURE(std::filesystem::exists(dir + "/manifest.json"), dir);
  ETW_REQUIRE_GPU();
  if (!gpu::Context::get()->info().shader_f16) GTEST_SKIP() << "adapter without shader-f16: no fp16 storage to measure";
  LoadOptions fp16;
  fp16.precision = Precision::FP16;
  size_t measured = 0;
  for (const auto& name : conformance_case_names(dir)) {
    std::string cdir = dir + "/" + name;
    size_t ops = inspect_file(cdir + "/model.pte").gpu_ops;
    if (ops < kMinOps) continue;
    ++measured;
    Bytes b32 = load_run_measure(cdir, Precision::FP32), b16 = load_run_measure(cdir, Precision::FP16);
    EXPECT_EQ(b16.fixed, b32.fixed) << name << ": the 32-bit part depends on the precision";
    double total = double(b16.total) / double(b32.total);
    double floats = double(b16.total - b16.fixed) / double(b32.total - b32.fixed);
    std::cout << std::left << std::setw(28) << name << " ops " << std::setw(4) << ops << " fp32 " << std::setw(8)
              << b32.total << " fp16 " << std::setw(8) << b16.total << " ratio " << std::fixed << std::setprecision(3)
              << total << "  32-bit part " << std::setw(7) << b32.fixed << " float part ratio " << floats << "\n";
    EXPECT_LE(floats, kMaxRatio) << name << ": float storage " << b16.total - b16.fixed << " bytes at fp16, "
                                 << b32.total - b32.fixed << " at fp32";
    auto r = run_conformance_case(dir, name, fp16);
    EXPECT_EQ(r.status, ConformanceResult::Status::Passed) << name << " at fp16: " << r.message;
  }
  EXPECT_GT(measured, 0u) << "no conformance case in " << dir << " has more than 5 operators";
}

}  // namespace
