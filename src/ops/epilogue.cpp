#include "ops/epilogue.h"

#include "graph/epilogue_fusion.h"
#include "kernel/wgsl.h"
#include "ops/elementwise/elementwise_ops.h"

namespace etwebgpu::ops {
namespace {

constexpr size_t kShapeBytes = sizeof(ShapeU);

// epilogue.wgsl, the op switches its terms call (elementwise_ops.h), and the Epilogue struct and
// epilogue_terms for these terms over `extras` extra inputs EP0, EP1, ...
std::string generate(const std::vector<format::VkExprTerm>& terms, size_t extras) {
  std::string s(kernel::shader_source("epilogue"));
  s += unary_ops_wgsl() + binary_ops_wgsl();
  s += "\nstruct Epilogue { ";
  if (extras) s += "s: array<Shape, " + std::to_string(extras) + ">, ";
  s += "c: array<vec4<f32>, " + std::to_string(terms.size()) + "> };\n";
  s += "fn epilogue_terms(x0: f32, i: u32) -> f32 {\n";
  for (size_t k = 0; k < extras; ++k) {
    std::string e = std::to_string(k);
    s += "  let x" + std::to_string(k + 1) + " = f32(EP" + e + "[epilogue_offset(i, P.ep.s[" + e + "])]);\n";
  }
  s += fused_terms_wgsl(terms, "P.ep.c", "  ");
  s += "  return t" + std::to_string(terms.size() - 1) + ";\n}\n";
  return s;
}

}  // namespace

Epilogue Epilogue::read(const OpContext& oc, size_t fixed, const std::string& producer, int32_t shaped_as) {
  Epilogue e;
  if (oc.nargs() <= fixed + 1) return e;
  const int32_t expr = oc.arg(fixed);
  e.extras_.assign(oc.call.args.begin() + static_cast<std::ptrdiff_t>(fixed) + 1, oc.call.args.end() - 1);
  // A host's own limit; calls a later pass made from a host (8da4w's qparams linear) keep the default.
  const auto& hosts = graph::EpilogueHosts::global();
  const size_t most = hosts.has(oc.call.name) ? hosts.max_inputs(oc.call.name) : graph::kMaxEpilogueInputs;
  if (e.extras_.size() > most)
    oc.fail(ErrorKind::Limit, std::to_string(e.extras_.size()) + " epilogue inputs; at most " + std::to_string(most));
  for (int32_t x : e.extras_)
    require_dtype(oc, x, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "epilogue input");
  e.terms_ = fused_expr_arg(oc, expr, "argument " + std::to_string(fixed) + " after the operator's own (an epilogue expression)",
                            e.extras_.size() + 1, false)
                 .terms;
  e.out_ = shaped_as >= 0 ? shaped_as : oc.out();
  oc.node.op = "fused[" + producer + "+" + fused_terms_label(e.terms_) + "]";
  return e;
}

void Epilogue::attach(kernel::Kernel& k, size_t base_bytes,
                      std::function<void(const kernel::Live&, uint8_t*)> base) const {
  for (size_t i = 0; i < extras_.size(); ++i) k.input("EP" + std::to_string(i), extras_[i]);
  k.define("EPILOGUE").prelude(generate(terms_, extras_.size()));
  std::vector<uint32_t> consts = fused_term_constants(terms_);
  size_t shapes = base_bytes, cbytes = base_bytes + extras_.size() * kShapeBytes;
  size_t bytes = cbytes + consts.size() * 4;
  std::vector<int32_t> extras = extras_;
  int32_t out = out_;
  k.params_bytes(bytes, [=](const kernel::Live& l, std::vector<uint8_t>& p) {
    p.assign(bytes, 0);
    base(l, p.data());
    const auto& od = l.dims(out);
    for (size_t i = 0; i < extras.size(); ++i) {
      const auto& d = l.dims(extras[i]);
      ShapeU s{};
      if (numel(d) == numel(od)) {
        // Read at the output's flat index: the output's shape up to leading 1s, or the shape of
        // the consumer the pass reached across a contiguous view.
        s.pad0 = 1;
      } else if (numel(d) == 1) {
        // One element, of any rank (across a view the consumer's operand may have more dims than
        // the producer's output): read at 0 everywhere.
        std::vector<int64_t> zero(od.size(), 0);
        s = make_shape(od, &zero);
      } else {
        // The producer writes the output's elements only: an operand may not widen it.
        bool fits = d.size() <= od.size();
        for (size_t k = 0; fits && k < d.size(); ++k) {
          int64_t o = od[od.size() - d.size() + k];
          fits = d[k] == o || d[k] == 1;
        }
        if (!fits)
          throw Error(ErrorKind::InvalidArgument, "epilogue input " + shape_str(d) + " does not broadcast to the output " +
                                                      shape_str(od));
        auto st = broadcast_strides(d, od);
        s = make_shape(od, &st);
      }
      std::memcpy(p.data() + shapes + i * kShapeBytes, &s, kShapeBytes);
    }
    std::memcpy(p.data() + cbytes, consts.data(), consts.size() * 4);
  });
}

}  // namespace etwebgpu::ops
