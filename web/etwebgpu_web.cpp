// The WebAssembly entry of etwebgpu: plain extern "C" functions the page calls through
// Module.ccall({async: true}) (any of them may suspend on WebGPU through ASYNCIFY; the page
// calls them one at a time). Results are JSON strings owned here and valid until the next call;
// byte results (an output as .npy) are returned as a pointer with etw_result_size().
#include <emscripten/emscripten.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "etwebgpu/compare.h"
#include "etwebgpu/device.h"
#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/example_model.h"
#include "etwebgpu/generate.h"
#include "etwebgpu/npy.h"
#include "tools/conformance/conformance.h"

using namespace etwebgpu;
using json = nlohmann::json;

// Calls into the page (Module.etwOnProgress / etwOnToken / etwOnPrefill, set by etw.js around
// the call that reports).
EM_JS(void, etw_report_progress, (const char* stage, double done, double total), {
  if (Module.etwOnProgress) Module.etwOnProgress(UTF8ToString(stage), done, total);
});
EM_JS(int, etw_report_token, (double token), { return Module.etwOnToken ? (Module.etwOnToken(token) ? 1 : 0) : 1; });
EM_JS(void, etw_report_prefill, (double done, double total), {
  if (Module.etwOnPrefill) Module.etwOnPrefill(done, total);
});

namespace {

std::string g_result;                   // last JSON result
std::vector<uint8_t> g_bytes;           // last byte result
std::map<int, std::unique_ptr<Model>> g_models;
std::map<int, std::vector<HostTensor>> g_inputs;   // per model: the inputs of the next run
std::map<int, std::vector<HostTensor>> g_outputs;  // per model: the outputs of the last run
int g_next_id = 1;
// Conformance case staging: the steps' inputs and expected outputs, added one by one from the page.
std::vector<ConformanceStep> g_case;

const char* ret(const json& j) {
  g_result = j.dump(-1, ' ', false, json::error_handler_t::replace);  // file strings may be invalid UTF-8
  return g_result.c_str();
}
const char* ret_error(const std::string& msg, const char* kind = "error") {
  return ret(json{{"ok", false}, {"error", msg}, {"kind", kind}});
}

json io_json(const IoInfo& io) {
  return json{{"dtype", dtype_name(io.dtype)}, {"shape", io.sizes}, {"dynamic", io.dynamic}};
}

json tensor_stats(const HostTensor& t, size_t first_n = 8) {
  json j{{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"numel", t.numel()}};
  std::vector<double> v = t.to_f64();
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  int64_t finite = 0, nan = 0;
  for (double x : v) {
    if (std::isnan(x)) { ++nan; continue; }
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    if (std::isfinite(x)) { sum += x; ++finite; }
  }
  j["min"] = v.empty() || nan == (int64_t)v.size() ? json(nullptr) : json(mn);
  j["max"] = v.empty() || nan == (int64_t)v.size() ? json(nullptr) : json(mx);
  j["mean"] = finite ? json(sum / finite) : json(nullptr);
  j["nan"] = nan;
  json first = json::array();
  for (size_t i = 0; i < v.size() && i < first_n; ++i) first.push_back(std::isfinite(v[i]) ? json(v[i]) : json(std::to_string(v[i])));
  j["first"] = first;
  return j;
}

HostTensor random_tensor(const IoInfo& io, uint32_t seed) {
  HostTensor t(io.dtype, io.sizes);
  std::mt19937 rng(seed);
  int64_t n = t.numel();
  switch (io.dtype) {
    case DType::Float32: {
      std::normal_distribution<float> d(0.f, 1.f);
      for (int64_t i = 0; i < n; ++i) t.as<float>()[i] = d(rng);
      break;
    }
    case DType::Float64: {
      std::normal_distribution<double> d(0.0, 1.0);
      for (int64_t i = 0; i < n; ++i) t.as<double>()[i] = d(rng);
      break;
    }
    case DType::Float16: {
      // Uniform in [-1, 1) on the half grid: sign, exponent 0..14 (below 1.0), random mantissa.
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = static_cast<uint16_t>(((rng() & 1u) << 15) | ((1u + rng() % 14u) << 10) | (rng() & 0x3ffu));
        t.as<uint16_t>()[i] = h;
      }
      break;
    }
    case DType::Int32:
      for (int64_t i = 0; i < n; ++i) t.as<int32_t>()[i] = static_cast<int32_t>(rng() % 10);
      break;
    case DType::Int64:
      for (int64_t i = 0; i < n; ++i) t.as<int64_t>()[i] = static_cast<int64_t>(rng() % 10);
      break;
    case DType::Bool:
    case DType::UInt8:
      for (int64_t i = 0; i < n; ++i) t.data[i] = static_cast<uint8_t>(io.dtype == DType::Bool ? rng() % 2 : rng() % 256);
      break;
    case DType::Int8:
      for (int64_t i = 0; i < n; ++i) t.data[i] = static_cast<uint8_t>(static_cast<int8_t>(rng() % 256 - 128));
      break;
  }
  return t;
}

Model* model_of(int id) {
  auto it = g_models.find(id);
  if (it == g_models.end()) throw Error(ErrorKind::InvalidArgument, "no model with id " + std::to_string(id));
  return it->second.get();
}

json profile_json(const Profile& p) {
  json d = json::array();
  for (auto& x : p.dispatches) d.push_back(json{{"op", x.op}, {"variant", x.variant}, {"gpu_ns", x.gpu_ns}});
  return json{{"has_gpu_times", p.has_gpu_times}, {"dispatches", d}};
}

template <class F>
const char* guarded(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    return ret_error(e.what(), error_kind_name(e.kind()));
  } catch (const std::exception& e) {
    return ret_error(std::string("internal error: ") + e.what(), "Internal");
  }
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

extern "C" {

// Initialises the WebGPU device (once) and returns {"ok", "adapter"}.
EMSCRIPTEN_KEEPALIVE const char* etw_init() {
  return guarded([] { return ret(json{{"ok", true}, {"adapter", device_info().summary}}); });
}

// Loads a .pte from `n` bytes at `bytes` with the load options `options` (a JSON array of
// [name, text] pairs, read by the runtime's option parser); progress goes to
// Module.etwOnProgress(stage, done, total) when the page set it. Returns {"ok", "id", "inputs",
// "outputs", "plan", "gpu_bytes", "precision"}.
EMSCRIPTEN_KEEPALIVE const char* etw_load(const uint8_t* bytes, size_t n, const char* options) {
  return guarded([&] {
    std::vector<std::pair<std::string, std::string>> items;
    json o = json::parse(options ? options : "[]", nullptr, false);
    if (!o.is_array()) throw Error(ErrorKind::InvalidArgument, "load options: not a JSON array of [name, value] pairs");
    for (auto& kv : o) {
      if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string() || !kv[1].is_string())
        throw Error(ErrorKind::InvalidArgument, "load options: " + kv.dump() + " is not a [name, value] pair of strings");
      items.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
    }
    LoadOptions lo = parse_load_options(items);
    lo.on_progress = [](const LoadProgress& p) {
      etw_report_progress(load_stage_name(p.stage), static_cast<double>(p.done), static_cast<double>(p.total));
    };
    std::vector<uint8_t> v(bytes, bytes + n);
    auto m = Model::load_bytes(std::move(v), lo);
    int id = g_next_id++;
    json in = json::array(), out = json::array(), plan = json::array();
    for (auto& io : m->inputs()) in.push_back(io_json(io));
    for (auto& io : m->outputs()) out.push_back(io_json(io));
    for (auto& p : m->plan_summary()) plan.push_back(json{{"kind", p.kind}, {"what", p.what}, {"supported", p.supported}});
    uint64_t gpu_bytes = m->gpu_bytes();
    g_inputs[id].assign(m->inputs().size(), HostTensor{});
    g_models[id] = std::move(m);
    return ret(json{{"ok", true}, {"id", id}, {"inputs", in}, {"outputs", out}, {"plan", plan}, {"gpu_bytes", gpu_bytes},
                    {"precision", precision_name(g_models[id]->precision())}});
  });
}

EMSCRIPTEN_KEEPALIVE void etw_free(int id) {
  g_models.erase(id);
  g_inputs.erase(id);
  g_outputs.erase(id);
}

// Sets input `idx` of model `id` from .npy bytes; returns its statistics.
EMSCRIPTEN_KEEPALIVE const char* etw_set_input_npy(int id, int idx, const uint8_t* bytes, size_t n) {
  return guarded([&] {
    Model* m = model_of(id);
    if (idx < 0 || idx >= (int)m->inputs().size()) throw Error(ErrorKind::InvalidArgument, "no input " + std::to_string(idx));
    HostTensor t = parse_npy(std::span<const uint8_t>(bytes, n));
    json s = tensor_stats(t);
    g_inputs[id][idx] = std::move(t);
    return ret(json{{"ok", true}, {"input", s}});
  });
}

// Sets input `idx` of model `id` to seeded random values of its exported dtype and shape.
EMSCRIPTEN_KEEPALIVE const char* etw_set_input_random(int id, int idx, uint32_t seed) {
  return guarded([&] {
    Model* m = model_of(id);
    if (idx < 0 || idx >= (int)m->inputs().size()) throw Error(ErrorKind::InvalidArgument, "no input " + std::to_string(idx));
    HostTensor t = random_tensor(m->inputs()[idx], seed);
    json s = tensor_stats(t);
    g_inputs[id][idx] = std::move(t);
    return ret(json{{"ok", true}, {"input", s}});
  });
}

// Runs model `id` on the inputs set before; returns output statistics, wall time and (with
// `profile`) the per-dispatch GPU times.
EMSCRIPTEN_KEEPALIVE const char* etw_run(int id, int profile) {
  return guarded([&] {
    Model* m = model_of(id);
    auto& ins = g_inputs[id];
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i].data.empty() && ins[i].shape.empty())
        throw Error(ErrorKind::InvalidArgument, "input " + std::to_string(i) + " was not set");
    Profile p;
    double t0 = now_ms();
    auto outs = m->run(ins, profile ? &p : nullptr);
    double t1 = now_ms();
    json o = json::array();
    for (auto& t : outs) o.push_back(tensor_stats(t));
    g_outputs[id] = std::move(outs);
    json r{{"ok", true}, {"outputs", o}, {"wall_ms", t1 - t0}};
    if (profile) r["profile"] = profile_json(p);
    return ret(r);
  });
}

// Text generation on model `id` (etwebgpu::generate): `request` is JSON {"prompt": [ids],
// "max_new_tokens", "temperature", "top_k", "top_p", "seed", "stop_tokens", "context_length"}
// (absent keys keep GenerateOptions' defaults). Each token goes to Module.etwOnToken(token), whose
// false return stops the generation; prefill progress to Module.etwOnPrefill(done, total). The
// wasm suspends on every step's read-back, so the page sees tokens as they come. Returns {"ok",
// "tokens", "stop_reason", "context_length", "prefill_tok_s", "decode_tok_s"}.
EMSCRIPTEN_KEEPALIVE const char* etw_generate(int id, const char* request) {
  return guarded([&] {
    Model* m = model_of(id);
    json q = json::parse(request ? request : "", nullptr, false);
    if (!q.is_object() || !q.contains("prompt") || !q["prompt"].is_array())
      throw Error(ErrorKind::InvalidArgument, "generate: the request needs a prompt (an array of token ids)");
    GenerateOptions o;
    try {
      std::vector<int64_t> prompt = q["prompt"].get<std::vector<int64_t>>();
      o.max_new_tokens = q.value("max_new_tokens", o.max_new_tokens);
      o.temperature = q.value("temperature", o.temperature);
      o.top_k = q.value("top_k", o.top_k);
      o.top_p = q.value("top_p", o.top_p);
      o.seed = q.value("seed", o.seed);
      o.stop_tokens = q.value("stop_tokens", o.stop_tokens);
      o.context_length = q.value("context_length", o.context_length);
      o.on_prefill = [](int64_t done, int64_t total) {
        etw_report_prefill(static_cast<double>(done), static_cast<double>(total));
      };
      GenerateResult r = generate(*m, prompt, o, [](int64_t t) { return etw_report_token(static_cast<double>(t)) != 0; });
      return ret(json{{"ok", true}, {"tokens", r.tokens}, {"stop_reason", r.stop_reason},
                      {"context_length", r.context_length}, {"prefill_tok_s", r.prefill_tok_s},
                      {"decode_tok_s", r.decode_tok_s}});
    } catch (const json::exception& e) {
      throw Error(ErrorKind::InvalidArgument, std::string("generate: bad request: ") + e.what());
    }
  });
}

// Output `idx` of the last run of model `id` as .npy bytes (size: etw_result_size()); NULL if none.
EMSCRIPTEN_KEEPALIVE const uint8_t* etw_output_npy(int id, int idx) {
  auto it = g_outputs.find(id);
  if (it == g_outputs.end() || idx < 0 || idx >= (int)it->second.size()) return nullptr;
  try {
    g_bytes = encode_npy(it->second[idx]);
  } catch (...) {
    return nullptr;
  }
  return g_bytes.data();
}
EMSCRIPTEN_KEEPALIVE size_t etw_result_size() { return g_bytes.size(); }

// The embedded example model: loads it, runs it (profiled) and checks it against its float64
// CPU reference with its tolerances.
EMSCRIPTEN_KEEPALIVE const char* etw_example() {
  return guarded([] {
    auto em = make_example_model();
    std::string adapter = device_info().summary;
    double t0 = now_ms();
    auto model = Model::load_bytes(em.pte);
    double t1 = now_ms();
    Profile p;
    auto out = model->run({em.input}, &p);
    double t2 = now_ms();
    auto cr = compare_tensors(out.at(0), em.expected, em.atol, em.rtol);
    json probs = json::array();
    int best = 0;
    for (int64_t i = 0; i < out[0].numel(); ++i) {
      probs.push_back(out[0].as<float>()[i]);
      if (out[0].as<float>()[i] > out[0].as<float>()[best]) best = static_cast<int>(i);
    }
    json expected = json::array();
    for (double x : em.expected.to_f64()) expected.push_back(x);
    return ret(json{{"ok", true}, {"adapter", adapter}, {"description", em.description},
                    {"pte_bytes", em.pte.size()}, {"output", tensor_stats(out[0], 16)}, {"probs", probs},
                    {"expected", expected}, {"class", best}, {"pass", cr.ok}, {"check", cr.message},
                    {"max_abs_err", cr.max_abs_err}, {"atol", em.atol}, {"rtol", em.rtol},
                    {"load_ms", t1 - t0}, {"run_ms", t2 - t1}, {"profile", profile_json(p)}});
  });
}

// Conformance cases from bytes fetched by the page: etw_case_begin, then each input and each
// expected output as .npy bytes in manifest order (etw_case_step before each further step of a
// stateful case), then etw_case_run with the .pte and the manifest's tolerances. The native
// runner's code (tools/conformance/), so the same statuses and messages.
EMSCRIPTEN_KEEPALIVE void etw_case_begin() { g_case.assign(1, {}); }
EMSCRIPTEN_KEEPALIVE void etw_case_step() { g_case.emplace_back(); }
EMSCRIPTEN_KEEPALIVE const char* etw_case_add(int expected, const uint8_t* bytes, size_t n) {
  return guarded([&] {
    if (g_case.empty()) throw Error(ErrorKind::InvalidArgument, "etw_case_add before etw_case_begin");
    HostTensor t = parse_npy(std::span<const uint8_t>(bytes, n));
    (expected ? g_case.back().expected : g_case.back().inputs).push_back(std::move(t));
    return ret(json{{"ok", true}});
  });
}
EMSCRIPTEN_KEEPALIVE const char* etw_case_run(const uint8_t* pte, size_t n, double atol, double rtol) {
  double t0 = now_ms();
  ConformanceResult r = run_conformance_case("page", std::vector<uint8_t>(pte, pte + n), g_case, atol, rtol);
  double t1 = now_ms();
  g_case = {};
  return ret(json{{"ok", true}, {"status", conformance_status_name(r.status)}, {"message", r.message}, {"ms", t1 - t0}});
}

// The device self-test (etwebgpu::self_test) on the page's WebGPU, which exercises
// src/gpu/web/surface_webgpu.js: compute, copies, clears, read-back in the submit, timestamps,
// and that device errors come back as messages. Returns {"ok", "pass", "checks": [{"name",
// "pass", "message"}], "adapter"}.
EMSCRIPTEN_KEEPALIVE const char* etw_gpu_checks() {
  return guarded([] {
    json checks = json::array();
    bool all = true;
    for (const auto& c : self_test()) {
      checks.push_back(json{{"name", c.name}, {"pass", c.pass}, {"message", c.message}});
      all = all && c.pass;
    }
    return ret(json{{"ok", true}, {"pass", all}, {"checks", checks}, {"adapter", device_info().summary}});
  });
}

// Device loss: destroys the page's device (as a driver reset would) and checks that a model run
// then fails with an error naming the loss. The device stays lost: the page must be reloaded.
EMSCRIPTEN_KEEPALIVE const char* etw_device_loss_check() {
  return guarded([] {
    auto em = make_example_model();
    auto model = Model::load_bytes(em.pte);
    model->run({em.input});
    simulate_device_loss();
    try {
      model->run({em.input});
    } catch (const Error& e) {
      std::string m = e.what();
      bool pass = m.find("lost") != std::string::npos;
      return ret(json{{"ok", true}, {"pass", pass}, {"message", m}});
    }
    return ret(json{{"ok", true}, {"pass", false}, {"message", "a run after device loss succeeded"}});
  });
}

}  // extern "C"
