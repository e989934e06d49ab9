// `etwebgpu generate`: text generation over a decoder .pte (see include/etwebgpu/generate.h).
#include <chrono>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/generate.h"
#include "etwebgpu/tokenizer.h"
#include "tools/commands.h"
#include "tools/load_flags.h"

using namespace etwebgpu;

namespace {

std::vector<int64_t> parse_ids(const std::string& s, const char* what) {
  std::vector<int64_t> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long x = 0;
    try {
      x = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size())
      throw Error(ErrorKind::InvalidArgument, std::string(what) + ": '" + item + "' is not an integer token id");
    v.push_back(x);
  }
  return v;
}

}  // namespace

CLI::App* add_generate_command(CLI::App& app, GenerateArgs& a) {
  auto* g = app.add_subcommand("generate", "generate tokens with a decoder .pte (KV cache on the GPU, sampling on the GPU)");
  g->add_option("model", a.model, "path to .pte")->required();
  g->add_option("--prompt-tokens", a.prompt_tokens, "prompt as token ids, e.g. 1,2,3");
  g->add_option("--prompt", a.prompt, "prompt text (needs --tokenizer)");
  g->add_option("--tokenizer", a.tokenizer, "SentencePiece .model or Hugging Face tokenizer.json");
  g->add_flag("--bos", a.bos, "put the tokenizer's BOS token before the prompt");
  g->add_option("--max-new-tokens", a.opts.max_new_tokens, "tokens to generate");
  g->add_option("--temperature", a.opts.temperature, "0 = greedy");
  g->add_option("--top-k", a.opts.top_k, "sample among the k most likely (0 = all)");
  g->add_option("--top-p", a.opts.top_p, "nucleus sampling mass");
  g->add_option("--seed", a.opts.seed, "sampling seed");
  g->add_option("--stop-tokens", a.stop_tokens, "comma-separated token ids that end generation (default: the tokenizer's EOS)");
  g->add_option("--context", a.opts.context_length, "context length when the model's KV cache does not tell it");
  g->add_flag("--json", a.json, "print one JSON object instead of streaming");
  return g;
}

int cmd_generate(GenerateArgs a, const LoadOptions& lo) {
  std::unique_ptr<Tokenizer> tok;
  if (!a.tokenizer.empty()) tok = Tokenizer::load(a.tokenizer);
  std::vector<int64_t> prompt;
  if (!a.prompt_tokens.empty() == !a.prompt.empty())
    throw Error(ErrorKind::InvalidArgument, "give exactly one of --prompt-tokens and --prompt");
  if (!a.prompt.empty()) {
    if (!tok) throw Error(ErrorKind::InvalidArgument, "--prompt needs --tokenizer");
    prompt = tok->encode(a.prompt);
  } else {
    prompt = parse_ids(a.prompt_tokens, "--prompt-tokens");
  }
  if (a.bos) {
    if (!tok || !tok->bos()) throw Error(ErrorKind::InvalidArgument, "--bos needs a tokenizer that has a BOS token");
    prompt.insert(prompt.begin(), *tok->bos());
  }
  if (!a.stop_tokens.empty()) a.opts.stop_tokens = parse_ids(a.stop_tokens, "--stop-tokens");
  else if (tok && tok->eos()) a.opts.stop_tokens = {*tok->eos()};

  const auto load_start = std::chrono::steady_clock::now();
  auto model = Model::load(a.model, lo);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  // On a terminal: a bar while the prompt runs (and, with --json, while tokens come), cleared
  // before streamed text.
  ProgressBar bar(static_cast<bool>(lo.on_progress));  // no bar with --quiet
  a.opts.on_prefill = [&bar](int64_t done, int64_t total) { bar.update("prefill", done, total, "tokens"); };
  uint64_t n_json = 0;
  std::vector<int64_t> so_far;
  std::string printed;
  auto on_token = [&](int64_t t) {
    if (a.json) {
      bar.update("generate", ++n_json, a.opts.max_new_tokens, "tokens");
      return true;
    }
    bar.done();
    if (tok) {
      so_far.push_back(t);
      std::string text = tok->decode(so_far);
      // Print what is new; hold back a trailing partial UTF-8 sequence until it completes.
      size_t end = text.size();
      while (end > 0 && (static_cast<unsigned char>(text[end - 1]) & 0xC0) == 0x80) --end;
      if (end > 0 && static_cast<unsigned char>(text[end - 1]) >= 0xC0) --end;
      else end = text.size();
      if (end > printed.size() && text.compare(0, printed.size(), printed) == 0) {
        std::fwrite(text.data() + printed.size(), 1, end - printed.size(), stdout);
        printed = text.substr(0, end);
      }
    } else {
      std::printf("%lld ", static_cast<long long>(t));
    }
    std::fflush(stdout);
    return true;
  };
  auto r = generate(*model, prompt, a.opts, on_token);
  bar.done();
  if (a.json) {
    nlohmann::json j;
    j["tokens"] = r.tokens;
    j["text"] = tok ? nlohmann::json(tok->decode(r.tokens)) : nlohmann::json(nullptr);
    j["prompt_tokens"] = prompt.size();
    j["stop_reason"] = r.stop_reason;
    j["context_length"] = r.context_length;
    j["prefill_tok_s"] = r.prefill_tok_s;
    j["decode_tok_s"] = r.decode_tok_s;
    j["load_s"] = load_s;  // the model's load (read, upload, compile): what the GPU idles through before the prompt
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("\n");
  if (r.stop_reason == "context_full")
    std::printf("stopped: the context is full (%lld positions)\n", static_cast<long long>(r.context_length));
  std::printf("prompt %zu tokens, %.1f tok/s prefill; generated %zu tokens, %.1f tok/s decode (%s)\n", prompt.size(),
              r.prefill_tok_s, r.tokens.size(), r.decode_tok_s, r.stop_reason.c_str());
  return 0;
}
