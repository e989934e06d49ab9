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
#include "etwebgpu/etwebgpu.h"
#include "format/npy.h"
#include "gpu/context.h"
#include "gpu/selftest.h"
#include "gpu/surface.h"
#include "models/example_model.h"

using namespace etwebgpu;
using json = nlohmann::json;

// surface_webgpu.js reads and writes these structs at fixed offsets (wasm32 layout).
static_assert(sizeof(void*) == 4, "wasm32 only");
static_assert(offsetof(EwAdapterInfo, backend_type) == 256 && offsetof(EwAdapterInfo, has_shader_f16) == 284 &&
              offsetof(EwAdapterInfo, max_buffer_size) == 288 && offsetof(EwAdapterInfo, max_uniform_buffer_binding_size) == 304 &&
              offsetof(EwAdapterInfo, max_storage_buffers_per_stage) == 312 &&
              offsetof(EwAdapterInfo, min_storage_buffer_offset_alignment) == 340 && sizeof(EwAdapterInfo) == 344,
              "EwAdapterInfo layout changed: update src/gpu/web/surface_webgpu.js");
static_assert(offsetof(EwConstant, value) == 8 && sizeof(EwConstant) == 16, "EwConstant layout");
static_assert(offsetof(EwBinding, offset) == 8 && offsetof(EwBinding, size) == 16 && sizeof(EwBinding) == 24, "EwBinding layout");
static_assert(offsetof(EwCommand, src) == 24 && offsetof(EwCommand, src_offset) == 32 &&
              offsetof(EwCommand, dst_offset) == 40 && offsetof(EwCommand, size) == 48 && sizeof(EwCommand) == 56,
              "EwCommand layout");
static_assert(offsetof(EwRead, offset) == 8 && offsetof(EwRead, size) == 16 && offsetof(EwRead, dst) == 24 &&
              sizeof(EwRead) == 32, "EwRead layout");

namespace {

std::string g_result;                   // last JSON result
std::vector<uint8_t> g_bytes;           // last byte result
std::map<int, std::unique_ptr<Model>> g_models;
std::map<int, std::vector<HostTensor>> g_inputs;   // per model: the inputs of the next run
std::map<int, std::vector<HostTensor>> g_outputs;  // per model: the outputs of the last run
int g_next_id = 1;
// Conformance case staging: inputs and expected outputs added one by one from the page.
std::vector<HostTensor> g_case_inputs, g_case_expected;

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
  return guarded([] { return ret(json{{"ok", true}, {"adapter", Model::device_summary()}}); });
}

// Loads a .pte from `n` bytes at `bytes`; returns {"ok", "id", "inputs", "outputs", "plan", "gpu_bytes"}.
EMSCRIPTEN_KEEPALIVE const char* etw_load(const uint8_t* bytes, size_t n) {
  return guarded([&] {
    std::vector<uint8_t> v(bytes, bytes + n);
    auto m = Model::load_bytes(std::move(v));
    int id = g_next_id++;
    json in = json::array(), out = json::array(), plan = json::array();
    for (auto& io : m->inputs()) in.push_back(io_json(io));
    for (auto& io : m->outputs()) out.push_back(io_json(io));
    for (auto& p : m->plan_summary()) plan.push_back(json{{"kind", p.kind}, {"what", p.what}, {"supported", p.supported}});
    uint64_t gpu_bytes = m->gpu_bytes();
    g_inputs[id].assign(m->inputs().size(), HostTensor{});
    g_models[id] = std::move(m);
    return ret(json{{"ok", true}, {"id", id}, {"inputs", in}, {"outputs", out}, {"plan", plan}, {"gpu_bytes", gpu_bytes}});
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
    HostTensor t = format::parse_npy(std::span<const uint8_t>(bytes, n));
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

// Output `idx` of the last run of model `id` as .npy bytes (size: etw_result_size()); NULL if none.
EMSCRIPTEN_KEEPALIVE const uint8_t* etw_output_npy(int id, int idx) {
  auto it = g_outputs.find(id);
  if (it == g_outputs.end() || idx < 0 || idx >= (int)it->second.size()) return nullptr;
  try {
    g_bytes = format::encode_npy(it->second[idx]);
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
    auto em = models::make_example_model();
    std::string adapter = Model::device_summary();
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
// expected output as .npy bytes in manifest order, then etw_case_run with the .pte and the
// manifest's tolerances. Same statuses and messages as the native runner (graph/conformance.cpp).
EMSCRIPTEN_KEEPALIVE void etw_case_begin() {
  g_case_inputs.clear();
  g_case_expected.clear();
}
EMSCRIPTEN_KEEPALIVE const char* etw_case_add(int expected, const uint8_t* bytes, size_t n) {
  return guarded([&] {
    HostTensor t = format::parse_npy(std::span<const uint8_t>(bytes, n));
    (expected ? g_case_expected : g_case_inputs).push_back(std::move(t));
    return ret(json{{"ok", true}});
  });
}
EMSCRIPTEN_KEEPALIVE const char* etw_case_run(const uint8_t* pte, size_t n, double atol, double rtol) {
  std::string status = "failed", message;
  double t0 = now_ms();
  try {
    auto model = Model::load_bytes(std::vector<uint8_t>(pte, pte + n));
    auto outs = model->run(g_case_inputs);
    if (outs.size() != g_case_expected.size()) {
      message = "model produced " + std::to_string(outs.size()) + " outputs, expected " +
                std::to_string(g_case_expected.size());
    } else {
      bool ok = true;
      for (size_t i = 0; i < outs.size(); ++i) {
        auto cr = compare_tensors(outs[i], g_case_expected[i], atol, rtol);
        ok = ok && cr.ok;
        message += (i ? "; " : "") + std::string("out") + std::to_string(i) + " " + cr.message;
      }
      status = ok ? "passed" : "failed";
    }
  } catch (const Error& e) {
    status = e.kind() == ErrorKind::Unsupported ? "unsupported" : "failed";
    message = e.what();
  } catch (const std::exception& e) {
    message = std::string("internal error: ") + e.what();
  }
  double t1 = now_ms();
  g_case_inputs.clear();
  g_case_expected.clear();
  return ret(json{{"ok", true}, {"status", status}, {"message", message}, {"ms", t1 - t0}});
}

// Checks of the WebGPU surface itself (src/gpu/web/surface_webgpu.js) through gpu::Context:
// compute, copies, clears, read-back in the submit, timestamps, and that device errors come
// back as messages. Returns {"ok", "checks": [{"name", "pass", "message"}]}.
EMSCRIPTEN_KEEPALIVE const char* etw_gpu_checks() {
  return guarded([] {
    using namespace etwebgpu::gpu;
    auto ctx = Context::get();
    json checks = json::array();
    auto check = [&](const char* name, auto&& body) {
      std::string msg;
      bool pass = false;
      try {
        msg = body();
        pass = true;
      } catch (const std::exception& e) {
        msg = e.what();
      }
      checks.push_back(json{{"name", name}, {"pass", pass}, {"message", msg}});
    };
    check("vector add (64 Ki floats, 2 workgroup sizes)", [&] {
      return self_test(*ctx, 1 << 16, 64) + "; " + self_test(*ctx, 1000, 256);
    });
    check("copy + clear + read-back in the submit", [&] {
      std::vector<uint32_t> a(256), got(256), got2(64);
      for (uint32_t i = 0; i < 256; ++i) a[i] = i * 2654435761u;
      Buffer x = ctx->create_buffer(1024, BufferKind::Storage, "check.x");
      Buffer y = ctx->create_buffer(1024, BufferKind::Storage, "check.y");
      ctx->write(x, 0, a.data(), 1024);
      ctx->submit({Context::copy(x, 0, y, 0, 1024), Context::clear(y, 256, 512), Context::copy(x, 512, y, 768, 256)},
                  nullptr, {{&y, 0, 1024, got.data()}, {&x, 768, 256, got2.data()}});
      for (uint32_t i = 0; i < 256; ++i) {
        uint32_t want = i < 64 ? a[i] : i < 192 ? 0u : a[i - 192 + 128];
        if (got[i] != want)
          throw Error(ErrorKind::Gpu, "word " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
                                          std::to_string(want));
      }
      for (uint32_t i = 0; i < 64; ++i)
        if (got2[i] != a[192 + i]) throw Error(ErrorKind::Gpu, "second read-back region differs at " + std::to_string(i));
      std::vector<uint32_t> r(3);
      ctx->read(x, 4, r.data(), 12);
      if (r[0] != a[1] || r[2] != a[3]) throw Error(ErrorKind::Gpu, "ewgpu_buffer_read at an offset differs");
      return std::string("ok");
    });
    check("timestamps per dispatch", [&] {
      Buffer a = ctx->create_buffer(4096, BufferKind::Storage, "ts.a");
      Buffer o = ctx->create_buffer(4096, BufferKind::Storage, "ts.o");
      Buffer n = ctx->create_buffer(16, BufferKind::Uniform, "ts.n");
      uint32_t nv[4] = {1024, 0, 0, 0};
      ctx->write(n, 0, nv, 16);
      const Pipeline& p = ctx->pipeline("selftest", "main", {{"WG", 64}});
      BindGroup bg = ctx->bind_group(p, {{0, &a}, {1, &a}, {2, &o}, {3, &n}});
      std::vector<uint64_t> d;
      ctx->submit({ctx->dispatch(p, bg, ctx->grid(16)), Context::clear(a, 0, 64), ctx->dispatch(p, bg, ctx->grid(16))}, &d);
      if (d.size() != 3) throw Error(ErrorKind::Internal, "expected 3 durations");
      if (!ctx->info().timestamp_query) return std::string("device has no timestamp-query: durations are 0");
      if (d[1] != 0) throw Error(ErrorKind::Internal, "a clear got a duration");
      return "dispatch times " + std::to_string(d[0]) + " ns, " + std::to_string(d[2]) + " ns";
    });
    check("invalid WGSL is reported with the compiler's message", [&] {
      try {
        ctx->pipeline_from_source("@compute @workgroup_size(1) fn main() { let x: f32 = undefined_thing; }", "main", {},
                                  "web_check_bad_wgsl");
      } catch (const Error& e) {
        std::string m = e.what();
        if (e.kind() != ErrorKind::Gpu || m.find("undefined_thing") == std::string::npos)
          throw Error(ErrorKind::Internal, "unexpected message: " + m);
        return m.substr(0, 200);
      }
      throw Error(ErrorKind::Internal, "invalid WGSL compiled");
    });
    check("a bad bind group is reported", [&] {
      const Pipeline& p = ctx->pipeline("selftest", "main", {{"WG", 64}});
      Buffer u = ctx->create_buffer(16, BufferKind::Uniform, "check.u");
      try {
        ctx->bind_group(p, {{0, &u}});  // a uniform buffer where storage is expected, bindings missing
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Gpu) throw;
        return std::string(e.what()).substr(0, 200);
      }
      throw Error(ErrorKind::Internal, "invalid bind group accepted");
    });
    check("a buffer over maxBufferSize is refused by the device", [&] {
      char err[1024] = {0};
      uint64_t size = ctx->info().max_buffer_size + (uint64_t(1) << 20);
      uint32_t h = ewgpu_buffer_create(size, EW_BUFFER_STORAGE, "check.too_big", err, sizeof err);
      if (h) {
        ewgpu_buffer_destroy(h);
        throw Error(ErrorKind::Internal, "buffer of " + std::to_string(size) + " bytes was created");
      }
      if (!err[0]) throw Error(ErrorKind::Internal, "refused without a message");
      // The device must still work afterwards.
      self_test(*ctx, 256, 64);
      return std::string(err).substr(0, 200);
    });
    bool all = true;
    for (auto& c : checks) all = all && c["pass"].get<bool>();
    return ret(json{{"ok", true}, {"pass", all}, {"checks", checks}, {"adapter", ctx->info().summary()}});
  });
}

// Device loss: destroys the page's device (as a driver reset would) and checks that a model run
// then fails with an error naming the loss. The device stays lost: the page must be reloaded.
EMSCRIPTEN_KEEPALIVE const char* etw_device_loss_check() {
  return guarded([] {
    auto em = models::make_example_model();
    auto model = Model::load_bytes(em.pte);
    model->run({em.input});
    gpu::Context::get()->debug_lose_device();
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
