// etwebgpu command-line tool: info, inspect, run, demo, example, bench.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "etwebgpu/compare.h"
#include "etwebgpu/etwebgpu.h"
#include "format/describe.h"
#include "format/ir.h"
#include "format/npy.h"
#include "gpu/context.h"
#include "gpu/selftest.h"
#include "graph/op_registry.h"
#include "tools/commands.h"

using namespace etwebgpu;

namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::Io, "cannot open '" + path + "'");
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int cmd_info() {
  auto ctx = gpu::Context::get();
  std::printf("adapter: %s\n", ctx->info().summary().c_str());
  std::printf("self-test: %s\n", gpu::self_test(*ctx).c_str());
  std::printf("operators: %zu registered\n", graph::OpRegistry::global().names().size());
  return 0;
}

int cmd_inspect(const std::string& path, const std::string& method) {
  auto program = format::read_program(std::make_shared<const format::Bytes>(read_all(path)));
  std::printf("%s", format::describe_program(program).c_str());
  const auto& plan = program.plan(method);
  std::set<std::string> missing;
  // Where each instruction runs.
  std::printf("\nexecution of '%s':\n", method.c_str());
  size_t k = 0;
  for (const auto& chain : plan.chains)
    for (const auto& ins : chain) {
      std::string where, what;
      if (ins.kind == format::InstrKind::DelegateCall) {
        where = "delegate";
        what = "VulkanBackend #" + std::to_string(ins.index);
      } else if (ins.kind == format::InstrKind::KernelCall) {
        what = plan.operators.at(ins.index).key();
        where = "not supported";
        missing.insert(what);
      } else {
        where = "not supported";
        what = format::instr_kind_name(ins.kind);
        missing.insert(what);
      }
      std::printf("  [%zu] %-14s %s\n", k++, where.c_str(), what.c_str());
    }
  for (size_t d = 0; d < plan.delegates.size(); ++d) {
    if (plan.delegates[d].id != "VulkanBackend") {
      missing.insert("backend " + plan.delegates[d].id);
      continue;
    }
    auto ir = format::read_vkgraph(plan.delegates[d].blob, program);
    std::printf("\ndelegate %zu (VulkanBackend):\n%s", d, format::describe_vkgraph(ir).c_str());
    for (auto& m : graph::OpRegistry::global().missing(ir)) missing.insert(m);
  }
  if (missing.empty()) {
    std::printf("\nall operators supported\n");
  } else {
    std::printf("\nmissing operators (%zu):\n", missing.size());
    for (auto& m : missing) std::printf("  %s\n", m.c_str());
  }
  return 0;
}

int cmd_run(const std::string& path, const std::vector<std::string>& inputs, const std::string& out_dir,
            const std::vector<std::string>& expects, double atol, double rtol, const LoadOptions& lo) {
  auto model = Model::load(path, lo);
  std::vector<HostTensor> in;
  for (auto& p : inputs) in.push_back(format::read_npy(p));
  auto outs = model->run(in);
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    for (size_t i = 0; i < outs.size(); ++i)
      format::write_npy(out_dir + "/output_" + std::to_string(i) + ".npy", outs[i]);
  }
  int rc = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    std::printf("output %zu: %s %s", i, dtype_name(outs[i].dtype), shape_str(outs[i].shape).c_str());
    if (i < expects.size()) {
      auto exp = format::read_npy(expects[i]);
      auto r = compare_tensors(outs[i], exp, atol, rtol);
      std::printf("  %s", r.message.c_str());
      if (!r.ok) rc = 1;
    }
    std::printf("\n");
  }
  if (expects.size() > outs.size()) {
    std::printf("error: %zu expected outputs given, the model has %zu\n", expects.size(), outs.size());
    rc = 1;
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"etwebgpu: run ExecuTorch VulkanPartitioner .pte files on WebGPU"};
  app.require_subcommand(1);
  std::string model_path, method = "forward", out_dir, dir;
  std::vector<std::string> inputs, expects;
  double atol = 1e-4, rtol = 1e-3;
  LoadOptions lo;

  auto* info = app.add_subcommand("info", "print the WebGPU adapter and run a verified device self-test");
  auto* inspect = app.add_subcommand("inspect", "decode a .pte: inputs, outputs, instructions, delegate graphs");
  inspect->add_option("model", model_path, "path to .pte")->required();
  inspect->add_option("--method", method, "method name");
  auto* run = app.add_subcommand("run", "run a .pte on .npy inputs");
  run->add_option("model", model_path, "path to .pte")->required();
  run->add_option("--input,-i", inputs, "input .npy files, in order");
  run->add_option("--output-dir,-o", out_dir, "write outputs as output_K.npy here");
  run->add_option("--expect,-e", expects, "expected output .npy files, in order");
  run->add_option("--atol", atol, "absolute tolerance");
  run->add_option("--rtol", rtol, "relative tolerance");
  run->add_option("--method", lo.method, "method name");
  auto* demo = app.add_subcommand("demo", "run the embedded example model and check it against a CPU reference");
  auto* example = app.add_subcommand("example", "write the embedded example model");
  example->add_option("--write", dir, "folder for model.pte, input_0.npy and expected_0.npy")->required();
  BenchArgs bench_args;
  auto* bench = add_bench_command(app, bench_args);

  CLI11_PARSE(app, argc, argv);
  try {
    if (*info) return cmd_info();
    if (*inspect) return cmd_inspect(model_path, method);
    if (*run) return cmd_run(model_path, inputs, out_dir, expects, atol, rtol, lo);
    if (*demo) return cmd_demo();
    if (*example) return cmd_example_write(dir);
    if (*bench) return cmd_bench(bench_args);
  } catch (const Error& e) {
    std::fprintf(stderr, "etwebgpu: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "etwebgpu: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
