// etwebgpu.squeeze_excite: the squeeze-excite gate of MobileNetV3-style blocks, found at load
//   s1 = mean(x, [2, 3], keepdim) | adaptive_avg_pool2d(x, 1)   [B, C, 1, 1]
//   h  = conv1x1(s1, W1, b1) + epilogue (act)                    [B, S, 1, 1]
//   g  = conv1x1(h, W2, b2) + epilogue (hardsigmoid chain)       [B, C, 1, 1]
// (after graph/epilogue_fusion.h gave each conv its activation) and run as two kernels
// (squeeze_excite.wgsl): the pooling spread over the GPU, then the two small matrix-vector
// products, a workgroup per 64 output channels (each recomputes the squeezed vector, which keeps
// every loop short); the gate's multiply with x stays the next dispatch. A wide gate (each
// workgroup's W1 @ pooled more than kSplitRounds dependent rounds of loads: MobileNetV3-large's
// 960 x 240) takes three: the squeezed vector once, spread over workgroups (FC1), then the gate
// reading it. force_route "squeeze_excite" = "fused" | "split" pins one. The call reads
// [x, W1, b1, e1, W2, b2, e2, out] with e1 / e2 an expression over x0 (ops/epilogue.h form, no
// extra inputs) or Null.
#include <algorithm>
#include <cstring>
#include <set>

#include "graph/fusion.h"
#include "graph/rewrite_pipeline.h"
#include "kernel/wgsl.h"
#include "ops/conv/conv_call.h"
#include "ops/elementwise/elementwise_ops.h"
#include "ops/elementwise/fused_terms.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

constexpr const char* kSqueezeExcite = "etwebgpu.squeeze_excite";
constexpr int64_t kMaxSqueeze = 1024;  // squeeze_excite.wgsl's workgroup array `hidden`
// Dependent load rounds of the gate's own W1 @ pooled (passes of 256 / R rows, each C / (4 R)
// vec4 steps) above which FC1 runs as a kernel of its own.
constexpr uint64_t kSplitRounds = 128;

// Threads per row of W1 in the gate: about 64 of its C columns per thread and pass (fewer passes,
// each with a log2(R) tree).
uint32_t gate_threads(uint64_t C) {
  uint32_t r = 1;
  while (r < 256 && r * 64 < C) r *= 2;
  return r;
}

struct Params {
  uint32_t B, C, S, HW, G, R, pad, p2;  // pad: 0 (unary_math builds NaN from it)
};

// Pooling threads per channel: a power of two up to 64 covering H*W.
uint32_t pool_threads(int64_t hw) {
  uint32_t t = 1;
  while (t < 64 && t < hw) t *= 2;
  return t;
}

std::string act_fn(const char* name, const char* member, const std::vector<format::VkExprTerm>& terms) {
  std::string s = "fn " + std::string(name) + "(x0: f32) -> f32 {\n";
  if (terms.empty()) return s + "  return x0;\n}\n";
  s += fused_terms_wgsl(terms, std::string("P.") + member, "  ");
  return s + "  return t" + std::to_string(terms.size() - 1) + ";\n}\n";
}

void build_squeeze_excite(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() != 8) oc.fail(ErrorKind::Format, "expects [x, W1, b1, e1, W2, b2, e2, out], got " +
                                                      std::to_string(oc.nargs()) + " arguments");
  int32_t x = oc.arg(0), w1 = oc.arg(1), b1 = oc.arg(2), w2 = oc.arg(4), b2 = oc.arg(5), out = oc.out();
  for (int32_t id : {x, w1, w2, out})
    require_dtype(oc, id, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "tensor");
  const auto& xd = g.tensor(x).dims;
  const auto& d1 = g.tensor(w1).dims;
  const auto& d2 = g.tensor(w2).dims;
  if (xd.size() != 4) oc.fail(ErrorKind::InvalidArgument, "input " + shape_str(xd) + " must be [B, C, H, W]");
  int64_t C = xd[1], S = d1.empty() ? 0 : d1[0];
  if (d1 != std::vector<int64_t>{S, C, 1, 1} || d2 != std::vector<int64_t>{C, S, 1, 1})
    oc.fail(ErrorKind::InvalidArgument, "weights " + shape_str(d1) + " and " + shape_str(d2) + " must be [S, " +
                                            std::to_string(C) + ", 1, 1] and [" + std::to_string(C) + ", S, 1, 1]");
  if (S > kMaxSqueeze || S < 1 || C < 1)
    oc.fail(ErrorKind::Limit, "channels " + std::to_string(C) + " / squeeze " + std::to_string(S) + ": squeeze 1 to " +
                                  std::to_string(kMaxSqueeze) + " supported");
  for (auto [b, n] : {std::pair{b1, S}, std::pair{b2, C}})
    if (!g.is_null(b)) {
      require_dtype(oc, b, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "bias");
      if (g.tensor(b).dims != std::vector<int64_t>{n})
        oc.fail(ErrorKind::InvalidArgument, "bias " + shape_str(g.tensor(b).dims) + " must be [" + std::to_string(n) + "]");
    }
  auto terms = [&](int32_t id) {
    if (g.is_null(id)) return std::vector<format::VkExprTerm>{};
    return fused_expr_arg(oc, id, "an epilogue", 1, false).terms;
  };
  auto t1 = terms(oc.arg(3)), t2 = terms(oc.arg(6));
  oc.node.op = "fused[mean+convolution" + (t1.empty() ? "" : "+" + fused_terms_label(t1)) + "+convolution" +
               (t2.empty() ? "" : "+" + fused_terms_label(t2)) + "]";

  std::string text = "struct Params { B: u32, C: u32, S: u32, HW: u32, G: u32, R: u32, pad: u32, p2: u32";
  if (!t1.empty()) text += ", c1: array<vec4<f32>, " + std::to_string(t1.size()) + ">";
  if (!t2.empty()) text += ", c2: array<vec4<f32>, " + std::to_string(t2.size()) + ">";
  text += " };\n";
  text += std::string(kernel::shader_source("epilogue")) + unary_ops_wgsl() + binary_ops_wgsl();
  text += act_fn("act1", "c1", t1) + act_fn("act2", "c2", t2);
  text += kernel::shader_source("squeeze_excite");
  std::vector<uint32_t> consts = fused_term_constants(t1), c2 = fused_term_constants(t2);
  consts.insert(consts.end(), c2.begin(), c2.end());
  size_t bytes = sizeof(Params) + consts.size() * 4;

  oc.output(out, [x, C](const kernel::Live& l) {
    const auto& d = l.dims(x);
    if (d.size() != 4 || d[1] != C)
      throw Error(ErrorKind::InvalidArgument, "squeeze-excite input " + shape_str(d) + " must have " +
                                                  std::to_string(C) + " channels");
    return std::vector<int64_t>{d[0], C, 1, 1};
  });
  auto params = [x, C, S, consts, bytes](const kernel::Live& l, std::vector<uint8_t>& p) {
    const auto& d = l.dims(x);
    Params q{};
    q.B = kernel::u32(d[0], "batch");
    q.C = static_cast<uint32_t>(C);
    q.S = static_cast<uint32_t>(S);
    q.HW = kernel::u32(d[2] * d[3], "H*W");
    kernel::u32(numel(d), "input numel");
    q.G = pool_threads(q.HW);
    q.R = gate_threads(q.C);
    p.assign(bytes, 0);
    std::memcpy(p.data(), &q, sizeof q);
    if (!consts.empty()) std::memcpy(p.data() + sizeof q, consts.data(), consts.size() * 4);
  };
  // pooled[b, c] between the two kernels.
  const gpu::Buffer& pooled = g.make_scratch(g.float_bytes(static_cast<uint64_t>(std::max<int64_t>(g.tensor(x).max_dims[0], 1)) * C),
                                             oc.node.op + " pooled");
  auto pool = kernel::Kernel::generated("squeeze_excite_pool", text);
  pool.define("POOL").input("X", x).buffer("POOLED", pooled, g.float_storage(), kernel::Access::ReadWrite)
      .params_bytes(bytes, params)
      .groups([x](const kernel::Live& l) {
        const auto& d = l.dims(x);
        return kernel::Groups::grid(kernel::ceil_div(static_cast<uint64_t>(d[1]), 256 / pool_threads(d[2] * d[3])),
                                    static_cast<uint64_t>(d[0]));
      });
  oc.add(pool.variant("squeeze_excite_pool"));
  const std::string route = pinned_route(oc, "squeeze_excite", {"fused", "split"});
  const uint64_t R = gate_threads(static_cast<uint64_t>(C));
  const uint64_t rounds = kernel::ceil_div(static_cast<uint64_t>(S), 256 / R) * kernel::ceil_div(static_cast<uint64_t>(C), 4 * R);
  const bool split = route == "split" || (route.empty() && rounds > kSplitRounds);
  auto batch = [x](const kernel::Live& l) { return static_cast<uint64_t>(l.dims(x)[0]); };
  const gpu::Buffer* hidden = nullptr;
  if (split) {
    // hidden[b, j] between FC1 and the gate.
    hidden = &g.make_scratch(g.float_bytes(static_cast<uint64_t>(std::max<int64_t>(g.tensor(x).max_dims[0], 1)) * S),
                             oc.node.op + " hidden");
    auto fc1 = kernel::Kernel::generated("squeeze_excite_fc1", text);
    fc1.define("FC1").constant("HAS_B1", g.is_null(b1) ? 0.0 : 1.0)
        .buffer("POOLED", pooled, g.float_storage(), kernel::Access::Read).input("W1", w1).input("B1", g.is_null(b1) ? -1 : b1)
        .buffer("HIDDEN", *hidden, g.float_storage(), kernel::Access::ReadWrite)
        .params_bytes(bytes, params)
        .groups([batch, S](const kernel::Live& l) { return kernel::Groups::grid(kernel::ceil_div(static_cast<uint64_t>(S), 8), batch(l)); });
    oc.add(fc1.variant("squeeze_excite_fc1"));
  }
  auto gate = kernel::Kernel::generated("squeeze_excite", text);
  gate.constant("HAS_B2", g.is_null(b2) ? 0.0 : 1.0);
  if (split) {
    gate.define("HIDDEN_IN").buffer("HIDDEN", *hidden, g.float_storage(), kernel::Access::Read);
  } else {
    gate.constant("HAS_B1", g.is_null(b1) ? 0.0 : 1.0).buffer("POOLED", pooled, g.float_storage(), kernel::Access::Read)
        .input("W1", w1).input("B1", g.is_null(b1) ? -1 : b1);
  }
  gate.input("W2", w2).input("B2", g.is_null(b2) ? -1 : b2).output("O", out)
      .params_bytes(bytes, params)
      .groups([batch, C](const kernel::Live& l) { return kernel::Groups::grid(kernel::ceil_div(static_cast<uint64_t>(C), 64), batch(l)); });
  oc.add(gate.variant("squeeze_excite"));
}

ETW_REGISTER_OP(kSqueezeExcite, build_squeeze_excite);

// --- the load rewrite

// A 1x1, stride-free, unpadded, ungrouped conv on a [B, C, 1, 1] input (any fused epilogue
// without extra inputs): its weight, bias and epilogue (or -1). A conv_with_clamp (without an
// epilogue) yields its clamp as the epilogue's expression, `clamp`, for the caller to store.
struct Conv1x1 {
  int32_t w = -1, b = -1, epi = -1, out = -1;
  std::shared_ptr<format::VkExpr> clamp;
};

std::optional<Conv1x1> conv1x1(Graph& g, const format::VkGraphIR& ir, const format::VkOpCall& c, int32_t in) {
  // A conv or conv_with_clamp of `in`, without a prologue; its epilogue (a conv_with_clamp has
  // none) without inputs.
  const auto cc = read_conv(ir, c);
  if (!cc || cc->kind == ConvCall::Kind::Shuffle || cc->pro >= 0 || c.args[0] != in) return std::nullopt;
  if (cc->ep >= 0 && (cc->kind == ConvCall::Kind::Clamp || cc->ep_inputs != 0)) return std::nullopt;
  try {
    auto zeros = [&](int32_t id) {
      auto v = g.int_list(id);
      return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 0; });
    };
    if (!zeros(c.args[4]) || g.integer(c.args[8]) != 1) return std::nullopt;
    Conv1x1 r;
    r.w = c.args[1];
    r.b = g.is_null(c.args[2]) ? -1 : c.args[2];
    r.epi = cc->ep;
    r.out = c.args.back();
    const auto& wd = ir.values[r.w].tensor.dims;
    if (ir.values[r.w].kind != format::VkValueKind::Tensor || wd.size() != 4 || wd[2] != 1 || wd[3] != 1)
      return std::nullopt;
    if (cc->kind == ConvCall::Kind::Clamp) {
      format::VkOpCall clamp{c.node_id, "aten.clamp.default", {r.out, cc->lo, cc->hi, r.out}};
      auto t = graph::fusable_term(g, ir, clamp);
      if (!t) return std::nullopt;
      r.clamp = std::make_shared<format::VkExpr>(graph::expression({*t}, {-1}, {r.out}));
    }
    return r;
  } catch (const Error&) {
    return std::nullopt;  // left to the conv builder, which reports it
  }
}

// A global average pool of a 4-D float tensor to [B, C, 1, 1]: its input, or -1.
int32_t global_mean(Graph& g, const format::VkGraphIR& ir, const format::VkOpCall& c) {
  try {
    int32_t x = c.args.at(0);
    if (ir.values[x].kind != format::VkValueKind::Tensor || ir.values[x].tensor.dims.size() != 4) return -1;
    if (c.name == "aten.mean.dim" && (c.args.size() == 4 || c.args.size() == 5)) {
      auto d = g.int_list(c.args[1]);
      for (auto& v : d) v = v < 0 ? v + 4 : v;
      std::sort(d.begin(), d.end());
      if (d != std::vector<int64_t>{2, 3} || !g.boolean(c.args[2])) return -1;
      if (c.args.size() == 5 && !g.is_null(c.args[3])) return -1;
      return x;
    }
    if ((c.name == "aten.adaptive_avg_pool2d.default" || c.name == "aten._adaptive_avg_pool2d.default") &&
        c.args.size() == 3) {
      auto o = g.int_list(c.args[1]);
      return o == std::vector<int64_t>{1, 1} || o == std::vector<int64_t>{1} ? x : -1;
    }
  } catch (const Error&) {
  }
  return -1;
}

size_t fuse_squeeze_excite(Graph& g, format::VkGraphIR& ir, const graph::UseDef& ix) {
  const size_t n = ir.chain.size();
  // The single later call reading tensor t (an intermediate), or n.
  auto consumer = [&](int32_t t, size_t at) -> size_t {
    const size_t c = ix.sole_reader(t, at);
    return c == graph::UseDef::npos ? n : c;
  };

  std::vector<bool> removed(n, false);
  std::vector<std::optional<format::VkOpCall>> replacement(n);
  size_t fused = 0;
  int32_t null_id = -1;
  for (size_t i = 0; i < n; ++i) {
    if (removed[i] || replacement[i]) continue;
    int32_t x = global_mean(g, ir, ir.chain[i]);
    if (x < 0 || !graph::float_tensor(ir, x)) continue;
    int32_t s1 = ir.chain[i].args.back();
    size_t j1 = consumer(s1, i);
    if (j1 >= n || removed[j1] || replacement[j1]) continue;
    auto c1 = conv1x1(g, ir, ir.chain[j1], s1);
    if (!c1) continue;
    size_t j2 = consumer(c1->out, j1);
    if (j2 >= n || removed[j2] || replacement[j2]) continue;
    auto c2 = conv1x1(g, ir, ir.chain[j2], c1->out);
    if (!c2) continue;
    int32_t out = c2->out;
    const auto& xd = ir.values[x].tensor.dims;
    int64_t C = xd[1], S = ir.values[c1->w].tensor.dims[0];
    if (S > kMaxSqueeze || ir.values[out].tensor.dims != std::vector<int64_t>{xd[0], C, 1, 1} ||
        ir.values[c2->w].tensor.dims != std::vector<int64_t>{C, S, 1, 1} || !graph::float_tensor(ir, out) ||
        ir.values[out].tensor.dtype != ir.values[x].tensor.dtype)
      continue;
    // Runs at j2: the tensors read earlier (x, weights, biases) must keep their values until
    // then, and not share the output's storage.
    std::vector<int32_t> reads{x, c1->w, c2->w};
    if (c1->b >= 0) reads.push_back(c1->b);
    if (c2->b >= 0) reads.push_back(c2->b);
    bool safe = ix.can_replace({i, j1, j2}, reads);
    for (int32_t r : reads) safe = safe && r != out && !ix.share_memory(out, r);
    if (!safe) continue;
    if (null_id < 0) {
      format::VkValue nv;
      nv.kind = format::VkValueKind::Null;
      ir.values.push_back(nv);
      null_id = static_cast<int32_t>(ir.values.size() - 1);
    }
    for (Conv1x1* c : {&*c1, &*c2})
      if (c->clamp) c->epi = graph::add_expr(ir, *c->clamp);
    auto opt = [&](int32_t id) { return id < 0 ? null_id : id; };
    format::VkOpCall call;
    call.node_id = ir.chain[j2].node_id;
    call.name = kSqueezeExcite;
    call.args = {x, c1->w, opt(c1->b), opt(c1->epi), c2->w, opt(c2->b), opt(c2->epi), out};
    removed[i] = removed[j1] = true;
    replacement[j2] = std::move(call);
    ++fused;
  }
  if (fused) graph::splice_calls(ir, removed, replacement);
  return fused;
}

ETW_REGISTER_LOAD_REWRITE(fuse_squeeze_excite, Patterns);

}  // namespace
}  // namespace etwebgpu::ops
