#include "graph/conformance.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "etwebgpu/compare.h"
#include "etwebgpu/etwebgpu.h"
#include "format/npy.h"

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
}  // namespace

std::string ConformanceSummary::line() const {
  return "conformance: " + std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " +
         std::to_string(unsupported) + " unsupported (" + std::to_string(cases.size()) + " cases)";
}

std::vector<std::string> conformance_case_names(const std::string& dir) {
  std::vector<std::string> v;
  auto manifest = read_manifest(dir);  // keep alive: items() refers into it
  for (auto& [k, _] : manifest.at("cases").items()) v.push_back(k);
  return v;
}

namespace {
double max_abs(const HostTensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.dtype == DType::Float64 ? t.as<double>()[i] : t.dtype == DType::Float32 ? t.as<float>()[i] : 0.0;
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  }
  return m;
}
}  // namespace

ConformanceResult run_conformance_case(const std::string& dir, const std::string& name, const LoadOptions& opts) {
  ConformanceResult r;
  r.name = name;
  try {
    auto manifest = read_manifest(dir);
    auto c = manifest.at("cases").at(name);
    double atol = c.at("atol").get<double>(), rtol = c.at("rtol").get<double>();
    std::string base = dir + "/" + name + "/";
    auto model = Model::load(base + "model.pte", opts);
    bool fp16 = model->precision() == Precision::FP16;
    // The top-level run, then each step on the same loaded model (stateful programs).
    std::vector<const nlohmann::json*> runs = {&c};
    if (c.contains("steps"))
      for (auto& st : c.at("steps")) runs.push_back(&st);
    bool ok = true;
    for (size_t k = 0; k < runs.size(); ++k) {
      std::vector<HostTensor> inputs;
      for (auto& in : runs[k]->at("inputs")) inputs.push_back(format::read_npy(base + in.at("file").get<std::string>()));
      auto outs = model->run(inputs);
      const auto& exp = runs[k]->at("outputs");
      std::string tag = runs.size() > 1 ? "step" + std::to_string(k) + " " : "";
      if (outs.size() != exp.size()) {
        r.message = tag + "model produced " + std::to_string(outs.size()) + " outputs, expected " + std::to_string(exp.size());
        return r;
      }
      for (size_t i = 0; i < outs.size(); ++i) {
        auto e = format::read_npy(base + exp[i].at("file").get<std::string>());
        double a = atol, rt = rtol;
        if (fp16) {
          // f16 storage: rtol 2e-2 and atol 2e-2 x max|expected| (issue 14's fp16 tolerance).
          a = std::max(a, 2e-2 * max_abs(e));
          rt = std::max(rt, 2e-2);
        }
        auto cr = compare_tensors(outs[i], e, a, rt);
        ok = ok && cr.ok;
        // Steps report only their failures, so a long stateful case stays one line.
        if (k == 0 || !cr.ok)
          r.message += (r.message.empty() ? "" : "; ") + tag + "out" + std::to_string(i) + " " + cr.message;
      }
    }
    if (runs.size() > 1 && ok) r.message += "; " + std::to_string(runs.size() - 1) + " steps ok";
    r.status = ok ? ConformanceResult::Status::Passed : ConformanceResult::Status::Failed;
  } catch (const Error& e) {
    r.status = e.kind() == ErrorKind::Unsupported ? ConformanceResult::Status::Unsupported
                                                  : ConformanceResult::Status::Failed;
    r.message = e.what();
  } catch (const std::exception& e) {
    r.message = std::string("internal error: ") + e.what();
  }
  return r;
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
