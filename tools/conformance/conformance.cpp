#include "tools/conformance/conformance.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "etwebgpu/compare.h"
#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/npy.h"

namespace etwebgpu {

namespace {

nlohmann::json read_manifest(const std::string& dir) {
  std::ifstream f(dir + "/manifest.json");
  if (!f) throw Error(ErrorKind::Io, "no manifest.json in '" + dir + "'");
  try {
    return nlohmann::json::parse(f);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Format, std::string("manifest.json: ") + e.what());
  }
}

// Runs `body`, turning what it throws into the result's status and message.
template <class F>
ConformanceResult guarded(const std::string& name, F&& body) {
  ConformanceResult r;
  r.name = name;
  try {
    body(r);
  } catch (const Error& e) {
    r.status = e.kind() == ErrorKind::Unsupported ? ConformanceResult::Status::Unsupported
                                                  : ConformanceResult::Status::Failed;
    r.message = e.what();
  } catch (const std::exception& e) {
    r.status = ConformanceResult::Status::Failed;
    r.message = std::string("internal error: ") + e.what();
  }
  return r;
}

double max_abs(const HostTensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.dtype == DType::Float64 ? t.as<double>()[i] : t.dtype == DType::Float32 ? t.as<float>()[i] : 0.0;
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  }
  return m;
}

// Runs steps 0..n-1 on `model`, comparing outputs; `step(k)` gives the k-th (valid until the
// next call), so fixture files are read when their step is due.
void run_steps(ConformanceResult& r, Model& model, size_t n,
               const std::function<const ConformanceStep&(size_t)>& step, double atol, double rtol) {
  const bool fp16 = model.precision() == Precision::FP16;
  bool ok = true;
  for (size_t k = 0; k < n; ++k) {
    const ConformanceStep& st = step(k);
    auto outs = model.run(st.inputs);
    std::string tag = n > 1 ? "step" + std::to_string(k) + " " : "";
    if (outs.size() != st.expected.size()) {
      r.message = tag + "model produced " + std::to_string(outs.size()) + " outputs, expected " +
                  std::to_string(st.expected.size());
      return;
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      double a = atol, rt = rtol;
      if (fp16) {
        // f16 storage: rtol 2e-2 and atol 2e-2 x max|expected| (issue 14's fp16 tolerance).
        a = std::max(a, 2e-2 * max_abs(st.expected[i]));
        rt = std::max(rt, 2e-2);
      }
      auto cr = compare_tensors(outs[i], st.expected[i], a, rt);
      ok = ok && cr.ok;
      // Later steps report only their failures, so a long stateful case stays one line.
      if (k == 0 || !cr.ok) r.message += (r.message.empty() ? "" : "; ") + tag + "out" + std::to_string(i) + " " + cr.message;
    }
  }
  if (n > 1 && ok) r.message += "; " + std::to_string(n - 1) + " steps ok";
  r.status = ok ? ConformanceResult::Status::Passed : ConformanceResult::Status::Failed;
}

}  // namespace

const char* conformance_status_name(ConformanceResult::Status s) {
  switch (s) {
    case ConformanceResult::Status::Passed: return "passed";
    case ConformanceResult::Status::Failed: return "failed";
    case ConformanceResult::Status::Unsupported: return "unsupported";
  }
  return "failed";
}

std::string ConformanceSummary::line() const {
  return "conformance: " + std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " +
         std::to_string(unsupported) + " unsupported (" + std::to_string(cases.size()) + " cases)";
}

ConformanceResult run_conformance_case(const std::string& name, std::vector<uint8_t> pte,
                                       const std::vector<ConformanceStep>& steps, double atol, double rtol,
                                       const LoadOptions& opts) {
  return guarded(name, [&](ConformanceResult& r) {
    auto model = Model::load_bytes(std::move(pte), opts);
    run_steps(r, *model, steps.size(), [&](size_t k) -> const ConformanceStep& { return steps[k]; }, atol, rtol);
  });
}

std::vector<std::string> conformance_case_names(const std::string& dir) {
  std::vector<std::string> v;
  auto manifest = read_manifest(dir);  // keep alive: items() refers into it
  for (auto& [k, _] : manifest.at("cases").items()) v.push_back(k);
  return v;
}

ConformanceResult run_conformance_case(const std::string& dir, const std::string& name, const LoadOptions& opts) {
  return guarded(name, [&](ConformanceResult& r) {
    auto manifest = read_manifest(dir);
    const auto& c = manifest.at("cases").at(name);
    const std::string base = dir + "/" + name + "/";
    auto model = Model::load(base + "model.pte", opts);
    // The top-level run, then each of the case's "steps".
    std::vector<const nlohmann::json*> runs = {&c};
    if (c.contains("steps"))
      for (auto& st : c.at("steps")) runs.push_back(&st);
    ConformanceStep current;
    auto step = [&](size_t k) -> const ConformanceStep& {
      current = {};
      for (auto& in : runs[k]->at("inputs")) current.inputs.push_back(read_npy(base + in.at("file").get<std::string>()));
      for (auto& out : runs[k]->at("outputs"))
        current.expected.push_back(read_npy(base + out.at("file").get<std::string>()));
      return current;
    };
    run_steps(r, *model, runs.size(), step, c.at("atol").get<double>(), c.at("rtol").get<double>());
  });
}

ConformanceSummary run_conformance(const std::string& dir, const std::string& filter,
                                   const std::function<void(const ConformanceResult&)>& on_case,
                                   const LoadOptions& opts) {
  ConformanceSummary s;
  for (auto& name : conformance_case_names(dir)) {
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    auto r = run_conformance_case(dir, name, opts);
    if (r.status == ConformanceResult::Status::Passed) ++s.passed;
    else if (r.status == ConformanceResult::Status::Unsupported) ++s.unsupported;
    else ++s.failed;
    if (on_case) on_case(r);
    s.cases.push_back(std::move(r));
  }
  return s;
}

}  // namespace etwebgpu
