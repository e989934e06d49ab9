// etwebgpu_q4_llama: builds the Llama-3.2-1B-shape decoder with 4-bit weights in memory
// (q4_llama_model.h), loads it with Model::load_bytes, reports the device memory it holds, then
// times one-token decode steps as a user sees them (upload of token and position, the run, the
// read-back of the logits) and checks every step's logits are finite. Uses public headers only.
//
//   etwebgpu_q4_llama [--precision fp32|fp16|auto] [--steps 8] [--context 1024] [--layers 16]
//                     [--dim 2048] [--vocab 128256] [--heads 32] [--kv-heads 8] [--ffn 8192] [--json]
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "etwebgpu/device.h"
#include "etwebgpu/etwebgpu.h"
#include "llm/q4_llama_model.h"

using namespace etwebgpu;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Weights of the decoder (embedding, projections, MLP, head), as the 4-bit values count them.
int64_t parameter_count(const bench::Q4LlamaConfig& c) {
  int64_t hd = c.head_dim();
  int64_t layer = c.dim * (c.heads * hd) * 2 + c.dim * (c.kv_heads * hd) * 2 + 3 * c.dim * c.ffn + 2 * c.dim;
  return 2 * c.vocab * c.dim + c.layers * layer + c.dim;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  bench::Q4LlamaConfig c;
  std::string precision = "fp32";
  int64_t steps = 8;
  bool json = false;
  CLI::App app{"Llama-3.2-1B-shape decoder with 4-bit weights: gpu_bytes and decode step time"};
  app.add_option("--precision", precision, "fp32 | fp16 | auto")->check(CLI::IsMember({"fp32", "fp16", "auto"}));
  app.add_option("--steps", steps, "decode steps to time (0: load only)")->check(CLI::NonNegativeNumber);
  app.add_option("--context", c.context, "KV cache positions");
  app.add_option("--layers", c.layers, "decoder layers");
  app.add_option("--dim", c.dim, "model dim");
  app.add_option("--vocab", c.vocab, "vocabulary size");
  app.add_option("--heads", c.heads, "query heads");
  app.add_option("--kv-heads", c.kv_heads, "key/value heads");
  app.add_option("--ffn", c.ffn, "MLP hidden size");
  app.add_option("--seed", c.seed, "weight seed");
  app.add_flag("--json", json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);

  try {
    bench::validate(c);
    if (steps > c.context)
      throw Error(ErrorKind::InvalidArgument, "--steps " + std::to_string(steps) + " exceeds --context " + std::to_string(c.context));
    auto t0 = Clock::now();
    auto weights = bench::make_q4_llama_weights(c);
    double weights_s = seconds_since(t0);
    t0 = Clock::now();
    auto pte = bench::build_q4_llama_pte(c, std::move(weights));
    double build_s = seconds_since(t0);
    const uint64_t pte_bytes = pte.size();
    LoadOptions opts;
    opts.precision = parse_precision(precision);
    t0 = Clock::now();
    auto model = Model::load_bytes(std::move(pte), opts);
    double load_s = seconds_since(t0);

    std::vector<double> ms;
    for (int64_t i = 0; i < steps; ++i) {
      auto tok = HostTensor::from<int64_t>(DType::Int64, {1, 1}, {(1 + 7919 * i) % c.vocab});
      auto pos = HostTensor::from<int64_t>(DType::Int64, {1}, {i});
      auto s0 = Clock::now();
      auto out = model->run({tok, pos});
      ms.push_back(seconds_since(s0) * 1e3);
      const HostTensor& logits = out.at(0);
      if (logits.dtype != DType::Float32 || logits.numel() != c.vocab)
        throw Error(ErrorKind::Internal, "step " + std::to_string(i) + ": logits are " + dtype_name(logits.dtype) +
                                             shape_str(logits.shape) + ", expected float32 [1, " + std::to_string(c.vocab) + "]");
      for (int64_t j = 0; j < logits.numel(); ++j)
        if (!std::isfinite(logits.as<float>()[j]))
          throw Error(ErrorKind::Internal, "step " + std::to_string(i) + ": logit " + std::to_string(j) + " is " +
                                               std::to_string(logits.as<float>()[j]));
    }
    double med = ms.empty() ? 0.0 : median(ms);

    nlohmann::json r = {
        {"config", {{"vocab", c.vocab}, {"dim", c.dim}, {"layers", c.layers}, {"heads", c.heads},
                    {"kv_heads", c.kv_heads}, {"ffn", c.ffn}, {"context", c.context}, {"group", c.group}}},
        {"parameters", parameter_count(c)},
        {"precision", precision_name(model->precision())},
        {"device", device_info().summary},
        {"pte_bytes", pte_bytes},
        {"gpu_bytes", model->gpu_bytes()},
        {"weights_s", weights_s},
        {"build_s", build_s},
        {"load_s", load_s},
        {"steps", steps},
    };
    if (steps > 0) {
      r["ms_per_step_median"] = med;
      r["tokens_per_s"] = 1e3 / med;
      r["logits_finite"] = true;
    }
    if (json) {
      std::cout << r.dump() << "\n";
      return 0;
    }
    std::printf("config: vocab %lld, dim %lld, %lld layers, %lld/%lld heads, ffn %lld, context %lld, group %lld (%.3f B parameters)\n",
                (long long)c.vocab, (long long)c.dim, (long long)c.layers, (long long)c.heads, (long long)c.kv_heads,
                (long long)c.ffn, (long long)c.context, (long long)c.group, parameter_count(c) / 1e9);
    std::printf("device: %s\n", device_info().summary.c_str());
    std::printf("precision %s: .pte %.1f MiB (weights drawn in %.2f s, file built in %.2f s), gpu_bytes %llu (%.1f MiB), loaded in %.2f s\n",
                precision_name(model->precision()), pte_bytes / 1048576.0, weights_s, build_s, (unsigned long long)model->gpu_bytes(),
                model->gpu_bytes() / 1048576.0, load_s);
    if (steps > 0)
      std::printf("%lld decode steps: median %.3f ms/step, %.2f tokens/s (upload + run + logits read-back); logits finite\n",
                  (long long)steps, med, 1e3 / med);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "etwebgpu_q4_llama: %s\n", e.what());
    return 1;
  }
}
