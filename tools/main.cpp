// etwebgpu command-line tool: info, inspect, run, demo, example, bench, conformance, ops.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <filesystem>

#include "etwebgpu/compare.h"
#include "etwebgpu/device.h"
#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/example_model.h"
#include "etwebgpu/inspect.h"
#include "etwebgpu/npy.h"
#include "tools/commands.h"
#include "tools/conformance/conformance.h"
#include "tools/load_flags.h"

using namespace etwebgpu;

namespace {

// Where compiled pipelines persist between processes and what this process did with them.
std::string pipeline_cache_line() {
  DeviceInfo d = device_info();
  if (d.pipeline_cache_dir.empty()) return "pipeline cache: off";
  return "pipeline cache: " + d.pipeline_cache_dir + ": " + std::to_string(d.pipeline_cache_hits) + " hits, " +
         std::to_string(d.pipeline_cache_misses) + " misses, " + std::to_string(d.pipeline_cache_stores) +
         " stores, " + std::to_string(d.pipeline_cache_rejected) + " rejected";
}

// Prints the adapter and every self-test check; non-zero when one fails.
int cmd_info(bool lose_device) {
  std::printf("adapter: %s\n", device_info().summary.c_str());
  int failed = 0;
  for (const auto& c : self_test()) {
    std::string first_line = c.message.substr(0, c.message.find('\n'));
    std::printf("self-test: %-4s %s: %s\n", c.pass ? "ok" : "FAIL", c.name.c_str(), first_line.c_str());
    failed += !c.pass;
  }
  if (lose_device) {
    // Device loss is an error, not a crash: a model loaded before the loss fails to run, and
    // loading it again gets a fresh device.
    const auto em = make_example_model();
    auto before = Model::load_bytes(em.pte);
    simulate_device_loss();
    std::printf("device destroyed; a model loaded before must fail cleanly\n");
    try {
      before->run({em.input});
      std::printf("error: a run on the lost device returned\n");
      return 1;
    } catch (const Error& e) {
      std::printf("run after the loss: %s\n", e.what());
    }
    std::printf("loading the model again:\n");
    std::fflush(stdout);
    int rc = cmd_demo();
    return failed ? 1 : rc;
  }
  std::printf("%s\n", pipeline_cache_line().c_str());
  std::printf("operators: %zu supported\n", supported_operators().size());
  return failed ? 1 : 0;
}

int cmd_inspect(const std::string& path, bool gpu_plan, const LoadOptions& lo) {
  std::printf("%s", inspect_file(path, lo.method).text().c_str());
  if (!gpu_plan) return 0;
  auto model = Model::load(path, lo);
  auto nodes = model->gpu_plan();
  size_t steps = 0;
  for (auto& n : nodes) steps += n.variants.size();
  std::printf("\nGPU plan as loaded (%s): %zu nodes, %zu kernel routes\n",
              lo.fuse ? "after fusion at load" : "no fusion", nodes.size(), steps);
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string v;
    for (auto& s : nodes[i].variants) v += (v.empty() ? "" : " | ") + s;
    std::printf("  [%zu] %s%s\n", i, nodes[i].op.c_str(), v.empty() ? "" : (" [" + v + "]").c_str());
  }
  return 0;
}

// One run of `etwebgpu run`: the first group of -i/-e/-o, then one per `--then`.
struct RunStep {
  std::vector<std::string> inputs, expects;
  std::string out_dir;
};

// Runs each step on one loaded model (state such as a KV cache carries over); non-zero on any
// mismatch.
int cmd_run(const std::string& path, const std::vector<RunStep>& steps, double atol, double rtol, const LoadOptions& lo,
            bool cache_stats) {
  auto t0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  auto model = Model::load(path, lo);
  // CPU time too: on a CPU adapter the compile is CPU work, and wall time moves with other load.
  if (cache_stats)
    std::printf("load: %.1f ms (CPU %.1f ms); %s\n",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                1000.0 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC, pipeline_cache_line().c_str());
  int rc = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    const RunStep& st = steps[k];
    std::string tag = steps.size() > 1 ? "step " + std::to_string(k) + " " : "";
    std::vector<HostTensor> in;
    for (auto& p : st.inputs) in.push_back(read_npy(p));
    auto outs = model->run(in);
    if (!st.out_dir.empty()) {
      std::filesystem::create_directories(st.out_dir);
      for (size_t i = 0; i < outs.size(); ++i)
        write_npy(st.out_dir + "/output_" + std::to_string(i) + ".npy", outs[i]);
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      std::printf("%soutput %zu: %s %s", tag.c_str(), i, dtype_name(outs[i].dtype), shape_str(outs[i].shape).c_str());
      if (i < st.expects.size()) {
        auto exp = read_npy(st.expects[i]);
        auto r = compare_tensors(outs[i], exp, atol, rtol);
        std::printf("  %s", r.message.c_str());
        if (!r.ok) rc = 1;
      }
      std::printf("\n");
    }
    if (st.expects.size() > outs.size()) {
      std::printf("error: %s%zu expected outputs given, the model has %zu\n", tag.c_str(), st.expects.size(), outs.size());
      rc = 1;
    }
  }
  return rc;
}

// Splits `run ... --then -i x.npy -e y.npy --then ...` into the part CLI11 parses and the later steps.
std::vector<RunStep> split_then(int& argc, char** argv) {
  std::vector<RunStep> steps;
  int first = argc;
  for (int a = 1; a < argc; ++a)
    if (std::string(argv[a]) == "--then") {
      first = a;
      break;
    }
  for (int a = first; a < argc;) {
    ++a;  // past --then
    RunStep st;
    for (; a < argc && std::string(argv[a]) != "--then"; ++a) {
      std::string f = argv[a];
      std::vector<std::string>* dst = f == "-i" || f == "--input" ? &st.inputs : f == "-e" || f == "--expect" ? &st.expects : nullptr;
      if ((dst || f == "-o" || f == "--output-dir") && a + 1 < argc) {
        ++a;
        if (dst) dst->push_back(argv[a]);
        else st.out_dir = argv[a];
        // -i a.npy b.npy: later words up to the next flag belong to the same option.
        while (dst && a + 1 < argc && argv[a + 1][0] != '-') dst->push_back(argv[++a]);
      } else {
        throw Error(ErrorKind::InvalidArgument, "after --then only -i/--input, -e/--expect and -o/--output-dir are "
                                                "accepted, got '" + f + "'");
      }
    }
    steps.push_back(std::move(st));
  }
  argc = first;
  return steps;
}

int cmd_conformance(std::string dir, const std::string& filter, const LoadOptions& lo) {
  if (dir.empty()) {
    const char* e = std::getenv("ETWEBGPU_CONFORMANCE_DIR");
    dir = e ? e : "../shared/conformance";
  }
  if (!std::filesystem::exists(dir + "/manifest.json")) {
    std::printf("conformance: no fixtures at %s (set ETWEBGPU_CONFORMANCE_DIR); skipped\n", dir.c_str());
    return 0;
  }
  auto s = run_conformance(dir, filter, [](const ConformanceResult& r) {
    const char* st = r.status == ConformanceResult::Status::Passed ? "PASS" :
                     r.status == ConformanceResult::Status::Unsupported ? "UNSUPPORTED" : "FAIL";
    std::printf("%-12s %-28s %s\n", st, r.name.c_str(), r.message.c_str());
    std::fflush(stdout);
  }, lo);
  std::printf("%s\n", s.line().c_str());
  return s.failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"etwebgpu: run ExecuTorch VulkanPartitioner .pte files on WebGPU"};
  app.require_subcommand(1);
  std::string model_path, out_dir, dir;
  std::vector<std::string> inputs, expects;
  double atol = 1e-4, rtol = 1e-3;
  LoadFlags load_flags;  // one set: only one subcommand runs

  auto* info = app.add_subcommand("info", "print the WebGPU adapter and run a verified device self-test");
  bool lose_device = false;
  info->add_flag("--simulate-device-loss", lose_device,
                 "destroy the device under a loaded model: show the error its run gets, then load it again");
  auto* inspect = app.add_subcommand("inspect", "decode a .pte: inputs, outputs, instructions, delegate graphs");
  inspect->add_option("model", model_path, "path to .pte")->required();
  bool gpu_plan = false;
  inspect->add_flag("--gpu-plan", gpu_plan,
                    "also load the model on the device and list its GPU nodes after fusion (fused[...] groups)");
  add_load_flags(inspect, load_flags);
  auto* run = app.add_subcommand("run", "run a .pte on .npy inputs");
  run->add_option("model", model_path, "path to .pte")->required();
  run->add_option("--input,-i", inputs, "input .npy files, in order");
  run->add_option("--output-dir,-o", out_dir, "write outputs as output_K.npy here");
  run->add_option("--expect,-e", expects, "expected output .npy files, in order");
  run->add_option("--atol", atol, "absolute tolerance");
  run->add_option("--rtol", rtol, "relative tolerance");
  add_load_flags(run, load_flags);
  bool cache_stats = false;
  run->add_flag("--cache-stats", cache_stats,
                "print the load time and the persistent pipeline cache's hits, misses and stores for the load");
  run->footer("Several steps on one loaded model (state such as a KV cache carries over):\n"
              "  etwebgpu run m.pte -i a.npy -e a_out.npy --then -i b.npy -e b_out.npy [--then ...]");
  auto* demo = app.add_subcommand("demo", "run the embedded example model and check it against a CPU reference");
  auto* example = app.add_subcommand("example", "write the embedded example model");
  example->add_option("--write", dir, "folder for model.pte, input_0.npy and expected_0.npy")->required();
  std::string conf_filter;
  auto* conf = app.add_subcommand("conformance", "run the conformance fixtures and print passed/failed/unsupported");
  conf->add_option("dir", dir, "fixture folder (default $ETWEBGPU_CONFORMANCE_DIR or ../shared/conformance)");
  conf->add_option("--filter", conf_filter, "only cases whose name contains this");
  add_load_flags(conf, load_flags);
  conf->footer("At --precision fp16 tolerances widen to rtol 2e-2, atol 2e-2 x max|expected|.");
  bool ops_markdown = false;
  auto* ops = app.add_subcommand("ops", "list every supported operator: VkGraph name, then its KernelCall name(s)");
  ops->add_flag("--markdown", ops_markdown, "print docs/OPS.md's generated operator table");
  BenchArgs bench_args;
  auto* bench = add_bench_command(app, bench_args);
  add_load_flags(bench, load_flags);
  GenerateArgs gen_args;
  auto* gen = add_generate_command(app, gen_args);
  add_load_flags(gen, load_flags);

  std::vector<RunStep> later_steps;
  try {
    later_steps = split_then(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "etwebgpu: %s\n", e.what());
    return 2;
  }
  CLI11_PARSE(app, argc, argv);
  try {
    if (!later_steps.empty() && !*run) throw Error(ErrorKind::InvalidArgument, "--then is only accepted by 'run'");
    // conformance loads many models: a bar per load would only flicker.
    if (*conf || *ops) load_flags.quiet = true;
    LoadOptions lo = load_options_of(load_flags);
    if (*info) return cmd_info(lose_device);
    if (*inspect) return cmd_inspect(model_path, gpu_plan, lo);
    if (*run) {
      std::vector<RunStep> steps = {RunStep{inputs, expects, out_dir}};
      steps.insert(steps.end(), later_steps.begin(), later_steps.end());
      return cmd_run(model_path, steps, atol, rtol, lo, cache_stats);
    }
    if (*demo) return cmd_demo();
    if (*example) return cmd_example_write(dir);
    if (*bench) return cmd_bench(bench_args, lo);
    if (*gen) return cmd_generate(gen_args, lo);
    if (*conf) return cmd_conformance(dir, conf_filter, lo);
    if (*ops) return cmd_ops(ops_markdown);
  } catch (const Error& e) {
    std::fprintf(stderr, "etwebgpu: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "etwebgpu: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
