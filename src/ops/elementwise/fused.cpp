// etwebgpu.fused_elementwise: a group of float elementwise calls that graph/fusion.cpp merged at
// load. One generated kernel reads each input once per element (broadcast strides), evaluates
// the terms in f32 with the unfused kernels' math (unary_f32 / binary_f32, elementwise_ops.h) and
// writes the last term. The node is labelled fused[op+op+...] so profiles attribute time to it.
#include <cstring>

#include "graph/fusion.h"
#include "kernel/wgsl.h"
#include "ops/elementwise/elementwise_ops.h"
#include "ops/elementwise/fused_terms.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

// Where a cat part is read: output dim `dim`, coordinates [lo, hi).
struct Place {
  uint32_t dim;
  int64_t lo, hi;
};

// The kernel text for these terms: Params sized for them, then one `let` per input and term. An
// input that is a cat part reads element 0 outside its place, where the cat takes another value.
std::string generate(const std::vector<format::VkExprTerm>& terms, const std::vector<std::optional<Place>>& places) {
  const size_t inputs = places.size();
  std::string s = "struct Params { o: Shape, n: u32, pad: u32, pad1: u32, pad2: u32, s: array<Shape, " +
                  std::to_string(inputs) + ">, c: array<vec4<f32>, " + std::to_string(terms.size()) + "> };\n";
  s += kernel::shader_source("fused_elementwise");
  s += unary_ops_wgsl() + binary_ops_wgsl();
  s += "\noverride WG: u32 = 256u;\n@compute @workgroup_size(WG)\n"
       "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
       "        @builtin(local_invocation_index) lid: u32) {\n"
       "  let i = (wid.x + wid.y * nwg.x) * WG + lid;\n"
       "  if (i >= P.n) { return; }\n";
  for (size_t k = 0; k < inputs; ++k) {
    std::string x = std::to_string(k);
    const auto& p = places[k];
    s += "  let x" + x + " = f32(X" + x + "[" +
         (p ? "part_offset(i, P.s[" + x + "], " + std::to_string(p->dim) + "u, " + std::to_string(p->lo) + "u, " +
                  std::to_string(p->hi) + "u)"
            : "offset_of(i, P.s[" + x + "])") +
         "]);\n";
  }
  s += fused_terms_wgsl(terms, "P.c", "  ");
  s += "  Y[i] = Y_T(t" + std::to_string(terms.size() - 1) + ");\n}\n";
  return s;
}

constexpr size_t kShapeBytes = sizeof(ShapeU);

void build_fused(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() < 3) oc.fail(ErrorKind::Format, "expects inputs, a fused expression and an output");
  std::vector<int32_t> inputs(oc.call.args.begin(), oc.call.args.end() - 2);
  int32_t out = oc.out();
  if (inputs.size() > graph::kMaxFusedInputs)
    oc.fail(ErrorKind::Limit, std::to_string(inputs.size()) + " inputs; at most " +
                                  std::to_string(graph::kMaxFusedInputs) + " per fused kernel");
  for (int32_t x : inputs) require_dtype(oc, x, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "output");
  const format::VkExpr& expr = fused_expr_arg(oc, oc.arg(inputs.size()), "the argument after the inputs", inputs.size(), true);
  const std::vector<format::VkExprTerm>& terms = expr.terms;
  std::vector<std::optional<format::VkExprView>> views = expr.views;
  views.resize(inputs.size());
  // Views and cat terms are fixed at load (static shapes), against the output's rank.
  const size_t rank = g.tensor(out).max_dims.size();
  std::string layouts;
  std::vector<std::optional<Place>> places(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!views[k]) continue;
    // A view must stay inside its input's storage.
    const format::VkExprView& v = *views[k];
    int64_t lo = v.offset, hi = v.offset;
    for (size_t d = 0; d < v.dims.size(); ++d) (v.strides[d] < 0 ? lo : hi) += (v.dims[d] - 1) * v.strides[d];
    if (numel(v.dims) > 0 && (lo < 0 || hi >= g.tensor(inputs[k]).max_numel()))
      oc.fail(ErrorKind::Internal, "the view of input " + std::to_string(k) + " reads elements " + std::to_string(lo) +
                                       " to " + std::to_string(hi) + " of " + shape_str(g.tensor(inputs[k]).max_dims));
    if (v.part) {
      if (v.dims.size() > rank) oc.fail(ErrorKind::Internal, "a cat part of higher rank than the output");
      const int64_t start = v.part->start;
      places[k] = Place{static_cast<uint32_t>(rank - v.dims.size() + v.part->dim), start, start + v.dims[v.part->dim]};
    }
    if (!v.label.empty()) layouts += v.label + "+";  // none: a cat part read as stored
  }
  for (const auto& t : terms)
    if (t.split && t.split->dim >= rank) oc.fail(ErrorKind::Internal, "a cat term along dim " + std::to_string(t.split->dim) +
                                                                          " of a rank " + std::to_string(rank) + " output");
  oc.node.op = "fused[" + layouts + fused_terms_label(terms) + "]";

  // Input k as the kernel reads it: its live dims, or its view's.
  std::vector<std::vector<int64_t>> stored;
  for (int32_t x : inputs) stored.push_back(g.tensor(x).max_dims);
  auto read_dims = [inputs, views, stored](const kernel::Live& l, size_t k) {
    if (!views[k]) return l.dims(inputs[k]);
    if (l.dims(inputs[k]) != stored[k])  // the fusion makes views at static shapes only
      throw Error(ErrorKind::Internal, "input " + std::to_string(k) + " read through a view is " +
                                           shape_str(l.dims(inputs[k])) + ", not " + shape_str(stored[k]));
    std::vector<int64_t> d = views[k]->dims;
    if (const auto& part = views[k]->part) d[part->dim] = part->extent;  // a cat part spans its cat
    return d;
  };
  oc.output(out, [inputs, read_dims](const kernel::Live& l) {
    std::vector<int64_t> d = read_dims(l, 0);
    for (size_t k = 1; k < inputs.size(); ++k) d = broadcast_shape(d, read_dims(l, k));
    return d;
  });
  std::vector<uint32_t> consts = fused_term_constants(terms);
  size_t bytes = kShapeBytes + 16 + inputs.size() * kShapeBytes + consts.size() * 4;
  auto k = kernel::Kernel::generated("fused_elementwise", generate(terms, places));
  for (size_t i = 0; i < inputs.size(); ++i) k.input("X" + std::to_string(i), inputs[i]);
  k.output("Y", out)
      .params_bytes(bytes,
                    [inputs, views, read_dims, out, consts, bytes](const kernel::Live& l, std::vector<uint8_t>& p) {
                      p.assign(bytes, 0);
                      const auto& od = l.dims(out);
                      ShapeU o = make_shape(od);
                      std::memcpy(p.data(), &o, kShapeBytes);
                      uint32_t n = o.numel;
                      std::memcpy(p.data() + kShapeBytes, &n, 4);
                      for (size_t i = 0; i < inputs.size(); ++i) {
                        // Strides over the output's dims (0 where the input broadcasts), the view's
                        // own in place of the stored input's; pad.x = 1 when they are the output's
                        // own (read at i), pad.y the element that coordinates 0 would read. A cat
                        // part's lies before its first element and wraps: u32 arithmetic brings
                        // the reads inside the part's place back into range.
                        std::vector<int64_t> d = read_dims(l, i);
                        std::vector<int64_t> own = views[i] ? views[i]->strides : contiguous_strides(d);
                        std::vector<int64_t> st(od.size(), 0);
                        const size_t off = od.size() - d.size();
                        for (size_t j = 0; j < d.size(); ++j) st[off + j] = d[j] == 1 ? 0 : own[j];
                        int64_t base = views[i] ? views[i]->offset : 0;
                        if (views[i] && views[i]->part) base -= views[i]->part->start * own[views[i]->part->dim];
                        ShapeU s = make_shape(od, &st);
                        s.pad0 = base == 0 && st == broadcast_strides(od, od) ? 1u : 0u;
                        s.pad1 = static_cast<uint32_t>(base);
                        std::memcpy(p.data() + kShapeBytes + 16 + i * kShapeBytes, &s, kShapeBytes);
                      }
                      std::memcpy(p.data() + kShapeBytes + 16 + inputs.size() * kShapeBytes, consts.data(),
                                  consts.size() * 4);
                    })
      .flat(out);
  oc.add(k);
}

ETW_REGISTER_OP(graph::kFusedOp, build_fused);

}  // namespace
}  // namespace etwebgpu::ops
