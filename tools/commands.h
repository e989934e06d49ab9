#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "etwebgpu/generate.h"

struct BenchArgs {
  std::string model;
  int warmup = 3, iters = 20;
  std::string trace;
  std::vector<std::string> inputs;  // .npy files; random inputs of the declared sizes when empty
  bool json = false;
};
CLI::App* add_bench_command(CLI::App& app, BenchArgs& a);
int cmd_bench(const BenchArgs& a, const etwebgpu::LoadOptions& lo);
int cmd_demo();
int cmd_example_write(const std::string& dir);

struct GenerateArgs {
  std::string model, prompt_tokens, prompt, tokenizer, stop_tokens;
  bool bos = false, json = false;
  etwebgpu::GenerateOptions opts;
};
CLI::App* add_generate_command(CLI::App& app, GenerateArgs& a);
int cmd_generate(GenerateArgs a, const etwebgpu::LoadOptions& lo);
int cmd_ops(bool markdown);
