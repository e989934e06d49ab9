#include "support/op_harness.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "format/ir.h"
#include "gpu/context.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "program/program_graph.h"

namespace etwebgpu::testing {

HostTensor random_f32(std::vector<int64_t> shape, uint64_t seed, float lo, float hi) {
  HostTensor t(DType::Float32, std::move(shape));
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.as<float>()[i] = lo + (hi - lo) * static_cast<float>((rng() >> 11) * (1.0 / 9007199254740992.0));
  return t;
}

HostTensor random_i32(std::vector<int64_t> shape, uint64_t seed, int32_t lo, int32_t hi) {
  HostTensor t(DType::Int32, std::move(shape));
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<int32_t>()[i] = static_cast<int32_t>(lo + static_cast<int64_t>(rng() % uint64_t(int64_t(hi) - lo + 1)));
  return t;
}

HostTensor random_bool(std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t(DType::Bool, std::move(shape));
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data[i] = static_cast<uint8_t>(rng() & 1);
  return t;
}

std::vector<double> f64(const HostTensor& t) { return t.to_f64(); }

Id OpGraph::input(const HostTensor& data, std::vector<int64_t> max_dims, bool dynamic) {
  inputs.push_back(data);
  return gb.input(data.dtype == DType::Int64 ? DType::Int32 : data.dtype, max_dims.empty() ? data.shape : max_dims,
                  dynamic, -1, data.dtype, true);
}

Id OpGraph::constant(const HostTensor& data) { return gb.constant(data.dtype, data.shape, data.data); }

Id OpGraph::output(DType t, std::vector<int64_t> dims) {
  Id id = gb.tensor(t, std::move(dims));
  gb.output(id);
  return id;
}

// ETWEBGPU_TEST_PRECISION=fp16 runs every op test with f16 storage (Close/CloseNan widen their
// tolerances to match): a developer's check that each kernel's f16 variant is right.
bool test_fp16() {
  const char* p = std::getenv("ETWEBGPU_TEST_PRECISION");
  return p && std::string(p) == "fp16";
}

std::vector<HostTensor> OpGraph::run(const LoadOptions& opts) {
  auto bytes = gb.serialize();
  if (coverage_logging()) op_names_ = program_op_names(bytes);
  LoadOptions o = opts;
  if (test_fp16() && o.precision == Precision::FP32) o.precision = Precision::FP16;
  model_ = Model::load_bytes(std::move(bytes), o);
  return run_logged(inputs);
}

std::vector<HostTensor> OpGraph::rerun(const std::vector<HostTensor>& in) { return run_logged(in); }

std::vector<HostTensor> OpGraph::run_logged(const std::vector<HostTensor>& in) {
  if (!coverage_logging()) return model_->run(in);
  Profile p;
  auto out = model_->run(in, &p);
  log_coverage(op_names_, p);
  return out;
}

std::vector<std::string> library_op_names() {
  std::vector<std::string> v;
  const auto& reg = graph::OpRegistry::global();
  for (const auto& n : reg.names())
    if (reg.where(n).find("src/ops/") != std::string::npos) v.push_back(n);
  return v;
}

bool coverage_logging() {
  const char* d = std::getenv("ETWEBGPU_COVERAGE_DIR");
  return d && *d;
}

std::vector<std::string> program_op_names(const std::vector<uint8_t>& pte) {
  auto program = format::read_program(std::make_shared<const format::Bytes>(pte));
  auto merged = graph::merge_program(program, program.plan("forward"));
  std::vector<std::string> names;
  for (const auto& c : merged.ir.chain) names.push_back(c.name);
  return names;
}

void log_coverage(const std::vector<std::string>& op_names, const Profile& profile) {
  if (!coverage_logging()) return;
  std::string path = std::string(std::getenv("ETWEBGPU_COVERAGE_DIR")) + "/ops-" + std::to_string(getpid()) + ".log";
  std::ofstream f(path, std::ios::app);
  if (!f) throw std::runtime_error("cannot append to coverage log " + path);
  for (const auto& n : op_names) f << "op " << n << "\n";
  for (const auto& d : profile.dispatches) {
    // Fused groups are labelled by what they fused (fused[mul+add]): an elementwise group is one
    // route, a squeeze-excite gate another, and a conv / GEMM with a fused epilogue (ops/epilogue.h)
    // counts as the route "etwebgpu.epilogue VARIANT" of the producer's kernel variant.
    std::string op = d.op;
    if (op.rfind("fused[", 0) == 0)
      op = d.variant.empty() ? "etwebgpu.fused_elementwise"
           : d.variant.rfind("squeeze_excite", 0) == 0 ? "etwebgpu.squeeze_excite"
                                           : "etwebgpu.epilogue";
    f << "route " << op << " " << (d.variant.empty() ? "-" : d.variant) << "\n";
  }
}

std::vector<HostTensor> run_ir(const format::VkGraphIR& ir, const std::vector<HostTensor>& inputs) {
  graph::GraphOptions opts;
  opts.fuse = false;
  graph::Graph g(gpu::Context::get(), ir, opts);
  for (size_t i = 0; i < inputs.size(); ++i) g.set_input(i, inputs[i]);
  std::vector<DType> dts;
  for (auto o : g.output_ids()) dts.push_back(graph::host_dtype_of(g.tensor(static_cast<int32_t>(o)).dtype));
  std::vector<HostTensor> out;
  g.execute_and_read(dts, out);
  std::vector<std::string> names;  // what it ran, for the coverage check (no file names these ops)
  for (const auto& c : ir.chain) names.push_back(c.name);
  log_coverage(names, Profile{});
  return out;
}

HostTensor ref_tensor(std::vector<int64_t> shape, std::vector<double> values) {
  return HostTensor::from<double>(DType::Float64, std::move(shape), values);
}

namespace {
// fp16 storage: the conformance tolerance of issue 14 (rtol 2e-2, atol 2e-2 x max|expected|).
void widen_for_fp16(const HostTensor& ref, double& atol, double& rtol) {
  if (!test_fp16() || (ref.dtype != DType::Float32 && ref.dtype != DType::Float64)) return;
  double mx = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double v = ref.dtype == DType::Float64 ? ref.as<double>()[i] : ref.as<float>()[i];
    if (std::isfinite(v)) mx = std::max(mx, std::fabs(v));
  }
  atol = std::max(atol, 2e-2 * mx);
  rtol = std::max(rtol, 2e-2);
}
}  // namespace

::testing::AssertionResult Close(const HostTensor& got, const HostTensor& ref, double atol, double rtol) {
  widen_for_fp16(ref, atol, rtol);
  auto r = compare_tensors(got, ref, atol, rtol);
  if (r.ok) return ::testing::AssertionSuccess() << r.message;
  return ::testing::AssertionFailure() << r.message;
}

::testing::AssertionResult SameAsUnfused(const HostTensor& fused, const HostTensor& plain, double half_tol) {
  const char* p = std::getenv("ETWEBGPU_TEST_PRECISION");
  if (p && std::string(p) == "fp16") return Close(fused, plain, half_tol, half_tol);
  if (fused.shape != plain.shape) return ::testing::AssertionFailure() << "shapes differ";
  if (fused.data != plain.data) return ::testing::AssertionFailure() << "fused and unfused results differ";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult CloseNan(const HostTensor& got, const HostTensor& ref, double atol, double rtol) {
  widen_for_fp16(ref, atol, rtol);
  auto r = compare_tensors(got, ref, atol, rtol, NanPolicy::MatchExpectedNan);
  if (r.ok) return ::testing::AssertionSuccess() << r.message;
  return ::testing::AssertionFailure() << r.message;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "1";
}

bool gpu_available(std::string* why) {
  static int state = -1;
  static std::string reason;
  if (state < 0) {
    try {
      gpu::Context::get();
      state = 1;
    } catch (const std::exception& e) {
      state = 0;
      reason = e.what();
    }
  }
  if (why) *why = reason;
  return state == 1;
}

const char* const kExpectedStatusFile = ETWEBGPU_SOURCE_DIR "/tests/conformance/expected_status.txt";

std::map<std::string, std::string> expected_conformance_status() {
  std::map<std::string, std::string> m;
  // $ETWEBGPU_EXPECTED_STATUS replaces the file (the no-silent-skip tests use it).
  const char* over = std::getenv("ETWEBGPU_EXPECTED_STATUS");
  std::ifstream f(over ? over : kExpectedStatusFile);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line.substr(0, line.find('#')));
    std::string name, status;
    if (ls >> name >> status) m[name] = status;
  }
  return m;
}

std::string conformance_dir() {
  if (const char* e = std::getenv("ETWEBGPU_CONFORMANCE_DIR")) return e;
  return std::string(ETWEBGPU_SOURCE_DIR) + "/../shared/conformance";
}

std::string cli_path() {
  const char* env = std::getenv("ETWEBGPU_CLI");
  return env ? env : ETWEBGPU_CLI_PATH;
}

int run_cli(const std::string& args, std::string* out) { return run_shell(cli_path() + " " + args, out); }

int run_shell(const std::string& command, std::string* out) {
  std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[1024];
  out->clear();
  while (p && fgets(buf, sizeof buf, p)) *out += buf;
  int st = p ? pclose(p) : -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

std::vector<std::string> OpGraph::variants() {
  Profile p;
  model_->run(inputs, &p);
  std::vector<std::string> v;
  for (auto& d : p.dispatches) v.push_back(d.variant);
  return v;
}

LoadedGraph load_graph(const std::function<void(OpGraph&)>& build, bool fuse,
                       std::map<std::string, std::string> routes) {
  LoadedGraph r;
  r.g = std::make_unique<OpGraph>();
  build(*r.g);
  LoadOptions o;
  o.fuse = fuse;
  o.force_route = std::move(routes);
  r.out = r.g->run(o);
  Profile p;
  r.g->model()->run(r.g->inputs, &p);
  for (auto& d : p.dispatches) {
    r.ops.push_back(d.op);
    r.variants.push_back(d.variant);
  }
  return r;
}

HostTensor run1(const std::string& op, const HostTensor& a, const std::vector<int64_t>& out_dims,
                const std::function<std::vector<Id>(OpGraph&)>& mid) {
  OpGraph g;
  Id x = g.input(a);
  Id o = g.output(a.dtype, out_dims);
  std::vector<Id> args{x};
  for (Id m : mid(g)) args.push_back(m);
  args.push_back(o);
  g.gb.op(op, args);
  return g.run()[0];
}

}  // namespace etwebgpu::testing
