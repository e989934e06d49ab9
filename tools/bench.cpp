// `etwebgpu bench`: wall time per run and GPU time per op / kernel variant (timestamp queries).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "etwebgpu/device.h"
#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/npy.h"
#include "tools/commands.h"

using namespace etwebgpu;

CLI::App* add_bench_command(CLI::App& app, BenchArgs& a) {
  auto* b = app.add_subcommand("bench", "time a model: wall time per run and GPU time per op and kernel variant");
  b->add_option("model", a.model, "path to .pte")->required();
  b->add_option("--warmup", a.warmup, "untimed runs first");
  b->add_option("--iters", a.iters, "timed runs");
  b->add_option("--trace", a.trace, "write a Chrome trace (JSON) of one profiled run");
  b->add_option("-i,--input", a.inputs,
                 "input .npy files in order (default: random values of the declared sizes, the upper bound of a dynamic "
                 "dim); e.g. one decode step of a dynamic-length LLM");
  b->add_flag("--json", a.json, "print one JSON object: wall_ms_median, gpu_ms, dispatches, gpu_bytes");
  return b;
}

static HostTensor random_input(const IoInfo& io, std::mt19937& rng) {
  HostTensor t(io.dtype, io.sizes);
  std::uniform_real_distribution<float> uf(-1.f, 1.f);
  std::uniform_int_distribution<int32_t> ui(0, 3);
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (io.dtype) {
      case DType::Float32: t.as<float>()[i] = uf(rng); break;
      case DType::Int32: t.as<int32_t>()[i] = ui(rng); break;
      case DType::Int64: t.as<int64_t>()[i] = ui(rng); break;
      case DType::Bool: case DType::UInt8: t.data[i] = static_cast<uint8_t>(ui(rng) & 1); break;
      default: break;
    }
  }
  return t;
}

int cmd_bench(const BenchArgs& a, const LoadOptions& lo) {
  auto model = Model::load(a.model, lo);
  std::mt19937 rng(1234);
  std::vector<HostTensor> inputs;
  if (a.inputs.empty())
    for (auto& io : model->inputs()) inputs.push_back(random_input(io, rng));
  for (auto& p : a.inputs) inputs.push_back(read_npy(p));
  if (!a.json) std::printf("adapter: %s\n", device_info().summary.c_str());
  std::vector<HostTensor> outputs;  // reused: timed runs read back into the same host memory
  for (int i = 0; i < a.warmup; ++i) model->run_into(inputs, outputs);
  std::vector<double> ms;
  for (int i = 0; i < a.iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    model->run_into(inputs, outputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  if (a.json) {
    // Wall time: upload + run + read back of one run. GPU time: the sum of the dispatches' timestamps
    // of one profiled run (null without timestamp queries).
    Profile prof;
    model->run(inputs, &prof);
    uint64_t ns = 0;
    for (auto& d : prof.dispatches) ns += d.gpu_ns;
    nlohmann::json j;
    j["wall_ms_median"] = ms.empty() ? nlohmann::json(nullptr) : nlohmann::json(ms[ms.size() / 2]);
    j["gpu_ms"] = prof.has_gpu_times ? nlohmann::json(ns / 1e6) : nlohmann::json(nullptr);
    j["dispatches"] = prof.dispatches.size();
    j["gpu_bytes"] = model->gpu_bytes();
    j["precision"] = precision_name(model->precision());
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  if (!ms.empty())
    std::printf("wall per run: median %.3f ms  min %.3f ms  max %.3f ms  (%d runs, %d warmup)\n", ms[ms.size() / 2],
                ms.front(), ms.back(), a.iters, a.warmup);
  Profile prof;
  model->run(inputs, &prof);
  if (!prof.has_gpu_times) {
    std::printf("GPU times: this device has no timestamp queries\n");
    return 0;
  }
  struct Agg { uint64_t ns = 0; int count = 0; };
  std::map<std::string, Agg> by_op, by_variant;
  uint64_t total = 0;
  for (auto& d : prof.dispatches) {
    by_op[d.op].ns += d.gpu_ns, by_op[d.op].count++;
    auto& v = by_variant[d.op + (d.variant.empty() ? "" : " [" + d.variant + "]")];
    v.ns += d.gpu_ns, v.count++;
    total += d.gpu_ns;
  }
  auto print = [&](const char* title, std::map<std::string, Agg>& m) {
    std::vector<std::pair<std::string, Agg>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end(), [](auto& x, auto& y) { return x.second.ns > y.second.ns; });
    std::printf("\n%-60s %8s %12s %7s\n", title, "calls", "GPU us", "share");
    for (auto& [k, g] : v)
      std::printf("%-60s %8d %12.1f %6.1f%%\n", k.c_str(), g.count, g.ns / 1e3, total ? 100.0 * g.ns / total : 0.0);
  };
  print("op", by_op);
  print("op [kernel variant]", by_variant);
  std::printf("\nGPU total: %.1f us over %zu dispatches\n", total / 1e3, prof.dispatches.size());
  if (!a.trace.empty()) {
    // Dispatches laid end to end by their GPU durations (one queue, one submit).
    nlohmann::json ev = nlohmann::json::array();
    double t = 0;
    for (auto& d : prof.dispatches) {
      ev.push_back({{"name", d.op}, {"cat", d.variant.empty() ? "kernel" : d.variant}, {"ph", "X"}, {"ts", t},
                    {"dur", d.gpu_ns / 1e3}, {"pid", 1}, {"tid", 1}, {"args", {{"variant", d.variant}}}});
      t += d.gpu_ns / 1e3;
    }
    std::ofstream f(a.trace);
    f << nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}}.dump(1);
    std::printf("trace: %s (open in https://ui.perfetto.dev)\n", a.trace.c_str());
  }
  return 0;
}
