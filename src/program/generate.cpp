// The text-generation loop over a decoder .pte: prefill, then one run per token, the next token
// picked on the GPU (token_sampler.wgsl) in the same submit as the run.
#include "etwebgpu/generate.h"

#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <random>

#include "program/model_internal.h"
#include "program/token_sampler.h"

namespace etwebgpu {

namespace {

using Clock = std::chrono::steady_clock;

bool is_index_dtype(DType t) { return t == DType::Int64 || t == DType::Int32; }

HostTensor ints(DType t, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  HostTensor h(t, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::Int64) h.as<int64_t>()[i] = v[i];
    else h.as<int32_t>()[i] = static_cast<int32_t>(v[i]);
  }
  return h;
}

// Positions the KV cache holds: the cache dim that index_put / index_copy write at input_pos in a
// mutable buffer, or dim 1 of the caches update_cache / sdpa_with_kv_cache write (ExecuTorch's LLM
// recipe: caches [B, S_max, H, D], delegate constants the op updates in place); the smallest.
int64_t cache_length(graph::Graph& g) {
  const auto& ir = g.ir();
  int64_t len = 0;
  auto note = [&len](int64_t n) { len = len == 0 ? n : std::min(len, n); };
  auto cache_rows = [&](int32_t id) {
    const auto& d = ir.values[id].tensor.dims;
    if (ir.values[id].kind == format::VkValueKind::Tensor && d.size() == 4) note(d[1]);
  };
  for (const auto& c : ir.chain) {
    if (c.name == "update_cache.default" && c.args.size() == 4) cache_rows(c.args[1]);
    if (c.name == "sdpa_with_kv_cache.default" && c.args.size() >= 5) {
      cache_rows(c.args[3]);
      cache_rows(c.args[4]);
    }
  }
  for (const auto& st : ir.state) {
    const auto& dims = ir.values[st.value_id].tensor.dims;
    for (const auto& c : ir.chain) {
      if (c.args.empty() || c.args[0] != st.value_id) continue;
      if (c.name == "aten.index_put.default" && c.args.size() == 5 && ir.values[c.args[1]].kind == format::VkValueKind::ValueList) {
        const auto& ids = ir.values[c.args[1]].ids;
        for (size_t k = 0; k < ids.size() && k < dims.size(); ++k)
          if (ir.values[ids[k]].kind != format::VkValueKind::Null) {
            note(dims[k]);
            break;
          }
      } else if (c.name == "aten.index_copy.default" && c.args.size() == 5) {
        int64_t d = g.integer(c.args[1]);
        if (d < 0) d += static_cast<int64_t>(dims.size());
        if (d >= 0 && d < static_cast<int64_t>(dims.size())) note(dims[d]);
      }
    }
  }
  return len;
}

}  // namespace

GenerateResult generate(Model& model, const std::vector<int64_t>& prompt, const GenerateOptions& o,
                        const std::function<bool(int64_t)>& on_token) {
  if (prompt.empty()) throw Error(ErrorKind::InvalidArgument, "generate: the prompt is empty");
  if (o.max_new_tokens < 0) throw Error(ErrorKind::InvalidArgument, "generate: max_new_tokens must be >= 0");
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
    throw Error(ErrorKind::InvalidArgument, "generate: temperature must be a finite number >= 0");
  if (o.top_k < 0) throw Error(ErrorKind::InvalidArgument, "generate: top_k must be >= 0");
  if (!(o.top_p > 0 && o.top_p <= 1)) throw Error(ErrorKind::InvalidArgument, "generate: top_p must be in (0, 1]");

  const auto& ins = model.inputs();
  const auto& outs = model.outputs();
  const std::string shape_rule =
      "generate needs a decoder with inputs (tokens int64/int32 [1, T], input_pos int64/int32 [1] or [T]) and logits "
      "float32 [1, V] or [1, T, V] as its first output";
  if (ins.size() != 2 || outs.empty() || !is_index_dtype(ins[0].dtype) || !is_index_dtype(ins[1].dtype) ||
      ins[0].sizes.size() != 2 || ins[0].sizes[0] != 1 || ins[1].sizes.size() != 1 || outs[0].dtype != DType::Float32 ||
      outs[0].sizes.size() < 2 || outs[0].sizes.size() > 3)
    throw Error(ErrorKind::Unsupported, shape_rule);
  const int64_t t_max = ins[0].sizes[1];
  if (t_max < 1 || (!ins[0].dynamic && t_max != 1))
    throw Error(ErrorKind::Unsupported, shape_rule + "; this model's token input is a static " + shape_str(ins[0].sizes) +
                                            " (only T = 1 or a dynamic T can be fed token by token)");
  const bool pos_per_token = ins[1].sizes[0] != 1 || ins[1].dynamic;
  const int64_t vocab = outs[0].sizes.back();
  if (vocab < 1 || vocab > INT32_MAX) throw Error(ErrorKind::Unsupported, shape_rule);

  graph::Graph& g = detail::ModelAccess::graph(model);
  int64_t ctx_len = o.context_length > 0 ? o.context_length : cache_length(g);
  if (ctx_len <= 0)
    throw Error(ErrorKind::Unsupported, "generate: cannot tell the model's context length (no KV-cache update found); "
                                        "pass it in GenerateOptions::context_length / --context");
  if (static_cast<int64_t>(prompt.size()) > ctx_len)
    throw Error(ErrorKind::InvalidArgument, "generate: the prompt has " + std::to_string(prompt.size()) +
                                                " tokens, the model's context holds " + std::to_string(ctx_len));
  for (int64_t t : prompt)
    if (t < 0 || t >= vocab)
      throw Error(ErrorKind::InvalidArgument, "generate: prompt token " + std::to_string(t) + " is outside the vocabulary [0, " +
                                                  std::to_string(vocab) + ")");

  // The whole loop holds the model's run lock: its runs overlap (below), and another thread's
  // Model::run in between would see a half-fed model.
  auto lock = detail::ModelAccess::lock_runs(model);
  const int32_t logits_id = static_cast<int32_t>(g.output_ids()[0]);
  const int32_t tokens_id = static_cast<int32_t>(g.input_ids()[0]);
  if (g.tensor(tokens_id).storage != kernel::Storage::I32)
    throw Error(ErrorKind::Internal, "generate: the token input is not stored as 32-bit words");
  graph::TokenSampler sampler(g.ctx(), g.buffer(logits_id), g.tensor(logits_id).storage, static_cast<uint32_t>(vocab));
  std::mt19937_64 rng(o.seed);
  graph::SamplerParams sp;
  sp.n = static_cast<uint32_t>(vocab);
  sp.sample = o.temperature > 0 ? 1 : 0;
  sp.top_k = static_cast<uint32_t>(std::min<int64_t>(o.top_k, vocab));
  sp.inv_temp = o.temperature > 0 ? static_cast<float>(1.0 / o.temperature) : 1.f;
  sp.top_p = static_cast<float>(o.top_p);
  sampler.prepare(sp);  // compiled before the prefill's clock starts

  // Runs queued and not yet finished, oldest first. A run with a pick ends by reading the token
  // back into `token` and by copying it into the token input, where the next run takes it: so a
  // decode run is queued before the one ahead of it has finished, and the host records it while
  // the GPU runs (H100, 1B recipe: a step was 2.9 ms in generate against 2.47 ms of GPU time).
  struct Queued {
    gpu::Context::Ticket ticket;
    std::unique_ptr<uint32_t> token;
  };
  std::deque<Queued> queued;
  // Queues one run over `tokens` (empty: one token, the one the previous run's pick left in the
  // token input) at `pos`; with `pick`, the next token is sampled from its last row.
  auto queue = [&](const std::vector<int64_t>& tokens, int64_t pos, bool pick) {
    const bool fed = tokens.empty();
    const int64_t n = fed ? 1 : static_cast<int64_t>(tokens.size());
    std::vector<int64_t> positions;
    for (int64_t k = 0; k < (pos_per_token ? n : 1); ++k) positions.push_back(pos + k);
    std::vector<HostTensor> in = {ints(ins[0].dtype, {1, n}, fed ? std::vector<int64_t>{0} : tokens),
                                  ints(ins[1].dtype, {static_cast<int64_t>(positions.size())}, positions)};
    sp.u = static_cast<float>(static_cast<double>(rng() >> 40) * 0x1.0p-24);
    auto token = std::make_unique<uint32_t>(0);
    uint32_t* dst = token.get();
    gpu::Context::Ticket t = detail::ModelAccess::queue_run(
        model, in, {fed, false}, [&](std::vector<gpu::Command>& cmds, std::vector<gpu::Context::Read>& reads) {
          if (!pick) return;
          const auto& d = g.tensor(logits_id).dims;
          if (d.empty() || d.back() != vocab)
            throw Error(ErrorKind::Unsupported, "generate: the logits output is " + shape_str(d) + ", expected its last dim " +
                                                    std::to_string(vocab));
          int64_t rows = numel(d) / vocab;
          sp.offset = static_cast<uint32_t>((rows - 1) * vocab);
          sampler.commands(sp, cmds);
          reads.push_back(sampler.read(dst));
          cmds.push_back(gpu::Context::copy(sampler.result(), 0, g.buffer(tokens_id), 0, 4));
        });
    queued.push_back({t, std::move(token)});
  };
  auto finish_oldest = [&]() -> int64_t {
    Queued q = std::move(queued.front());
    queued.pop_front();
    g.finish(q.ticket);
    return static_cast<int64_t>(*q.token);
  };
  // Every queued run is finished before generate returns or throws: their reads land in `queued`.
  struct Drain {
    std::deque<Queued>& q;
    graph::Graph& g;
    ~Drain() {
      for (; !q.empty(); q.pop_front()) try {
          g.finish(q.front().ticket);
        } catch (const std::exception&) {  // the error that unwinds (or the one reported first) is the one to see
        }
    }
  } drain{queued, g};

  g.reset_state();
  GenerateResult r;
  r.context_length = ctx_len;
  auto t0 = Clock::now();
  int64_t next = -1;
  const int64_t chunk = ins[0].dynamic ? t_max : 1;
  for (size_t b = 0; b < prompt.size(); b += static_cast<size_t>(chunk)) {
    size_t e = std::min(prompt.size(), b + static_cast<size_t>(chunk));
    queue(std::vector<int64_t>(prompt.begin() + b, prompt.begin() + e), static_cast<int64_t>(b), e == prompt.size());
    next = finish_oldest();
    if (o.on_prefill) o.on_prefill(static_cast<int64_t>(e), static_cast<int64_t>(prompt.size()));
  }
  auto t1 = Clock::now();
  r.prefill_tok_s = static_cast<double>(prompt.size()) / std::chrono::duration<double>(t1 - t0).count();
  r.stop_reason = "max_new_tokens";
  const int64_t max_new = o.max_new_tokens;
  while (static_cast<int64_t>(r.tokens.size()) < max_new) {
    r.tokens.push_back(next);
    bool go_on = !on_token || on_token(next);
    bool stop = std::find(o.stop_tokens.begin(), o.stop_tokens.end(), next) != o.stop_tokens.end();
    if (stop) {
      r.stop_reason = "stop_token";
      break;
    }
    if (!go_on) {
      r.stop_reason = "stopped";
      break;
    }
    const int64_t made = static_cast<int64_t>(r.tokens.size());
    if (made == max_new) break;
    // The run that takes the token just made, and its position.
    const int64_t pos = static_cast<int64_t>(prompt.size()) + made - 1;
    if (pos >= ctx_len) {
      r.stop_reason = "context_full";
      break;
    }
    if (queued.empty()) queue({}, pos, true);
    // The run after it, queued before this one finishes: needed unless the token it takes stops
    // generation (then it is finished and dropped: its cache row lies past the sequence's end).
    if (made + 1 < max_new && pos + 1 < ctx_len) queue({}, pos + 1, true);
    next = finish_oldest();
  }
  auto t2 = Clock::now();
  if (r.tokens.size() > 1)
    r.decode_tok_s = static_cast<double>(r.tokens.size() - 1) / std::chrono::duration<double>(t2 - t1).count();
  return r;
}

}  // namespace etwebgpu
