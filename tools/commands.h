#pragma once
#include <CLI/CLI.hpp>
#include <string>

struct BenchArgs {
  std::string model;
  int warmup = 3, iters = 20;
  std::string trace;
};
CLI::App* add_bench_command(CLI::App& app, BenchArgs& a);
int cmd_bench(const BenchArgs& a);
int cmd_demo();
int cmd_example_write(const std::string& dir);
int cmd_ops(bool markdown);
