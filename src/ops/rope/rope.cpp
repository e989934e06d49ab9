// et_vk.apply_rotary_emb (interleaved, Llama) and et_vk.apply_rotary_emb_hf (rotate-half, HF).
// xq [..., S, Hq, D], xk [..., S, Hk, D]; one flat dispatch per output (2D-folded grid).
#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

using graph::Node;

struct Params {
  uint32_t pairs, d, h, s, start, width, pad0, pad1;
};

struct Half {
  int32_t x, out;
  std::shared_ptr<Uniform<Params>> u;
  size_t step;
};

void build_rope(OpContext& oc, bool hf) {
  Graph& g = oc.g;
  int32_t xq = oc.arg(0), xk = oc.arg(1), fc = oc.arg(2), fs = oc.arg(3);
  int32_t start_id = hf ? oc.arg(4) : -1;
  auto outs = g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::Format, "expects a ValueList of 2 outputs, got " + std::to_string(outs.size()));
  for (int32_t id : {xq, xk, fc, fs, outs[0], outs[1]}) require_dtype(oc, id, {VkDType::Float32, VkDType::Float16}, "tensor");
  for (int32_t id : {xq, xk})
    if (g.tensor(id).rank() < 3) oc.fail(ErrorKind::Unsupported, "xq/xk must be [..., S, H, D], got " + shape_str(g.tensor(id).max_dims));
  for (int32_t id : {fc, fs})
    if (g.tensor(id).rank() != 2) oc.fail(ErrorKind::Unsupported, "freqs must be 2-D, got " + shape_str(g.tensor(id).max_dims));
  int64_t d = g.tensor(xq).max_dims.back();
  if (g.tensor(xk).max_dims.back() != d) oc.fail(ErrorKind::InvalidArgument, "xq and xk head dims differ");
  if (d % 2) oc.fail(ErrorKind::InvalidArgument, "head_dim " + std::to_string(d) + " must be even");
  int64_t width = g.tensor(fc).max_dims[1];
  if (g.tensor(fs).max_dims != g.tensor(fc).max_dims) oc.fail(ErrorKind::InvalidArgument, "freqs_cos and freqs_sin shapes differ");
  if (hf && width != d)
    oc.fail(ErrorKind::Unsupported, "partial rotary embedding (rotary_dim " + std::to_string(width) + " != head_dim " +
                                        std::to_string(d) + ") is not supported");
  if (!hf && width * 2 != d)
    oc.fail(ErrorKind::InvalidArgument, "freqs width " + std::to_string(width) + " must be head_dim/2 = " + std::to_string(d / 2));
  if (hf) {
    auto k = g.kind(start_id);
    if (k != format::VkValueKind::Int && k != format::VkValueKind::SymInt && k != format::VkValueKind::Double)
      oc.fail(ErrorKind::Format, "start_pos must be an Int or SymInt");
    g.integer(start_id);
  }
  for (int i = 0; i < 2; ++i)
    if (g.tensor(outs[i]).max_numel() < g.tensor(i ? xk : xq).max_numel())
      oc.fail(ErrorKind::InvalidArgument, "output " + std::to_string(i) + " is smaller than its input");

  const auto& pipe = g.ctx().pipeline("rope_rotary", "main", {{"HF", hf ? 1.0 : 0.0}});
  std::vector<Half> halves;
  for (int i = 0; i < 2; ++i) {
    Half h{i ? xk : xq, outs[i], std::make_shared<Uniform<Params>>(), oc.node.steps.size()};
    h.u->init(g, oc.call.name + (i ? ".k" : ".q"));
    oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(h.x)}, {1, &g.buffer(fc)}, {2, &g.buffer(fs)},
                                               {3, &g.buffer(h.out)}, {4, h.u->buf}}, 0, hf ? "hf" : "interleaved"));
    halves.push_back(h);
  }
  Node* node = &oc.node;
  std::string name = oc.call.name + " (node " + std::to_string(oc.call.node_id) + ")";
  oc.node.resize = [&g, node, halves, fc, fs, start_id, hf, name] {
    const Tensor& tc = g.tensor(fc);
    if (g.tensor(fs).dims != tc.dims)
      throw Error(ErrorKind::InvalidArgument, name + ": freqs_cos " + shape_str(tc.dims) + " and freqs_sin " +
                                                  shape_str(g.tensor(fs).dims) + " differ");
    int64_t start = hf ? g.integer(start_id) : 0;
    int64_t seq = -1;
    for (const Half& h : halves) {
      const Tensor& tx = g.tensor(h.x);
      int64_t s = tx.dim(-3), hh = tx.dim(-2), d = tx.dim(-1);
      if (seq >= 0 && s != seq)
        throw Error(ErrorKind::InvalidArgument, name + ": xq and xk sequence lengths differ");
      seq = s;
      if (hf && (start < 0 || start + s > tc.dims[0]))
        throw Error(ErrorKind::InvalidArgument, name + ": rows start_pos " + std::to_string(start) + " + S " +
                                                    std::to_string(s) + " exceed the freqs table of " +
                                                    std::to_string(tc.dims[0]) + " rows");
      if (!hf && tc.dims[0] != s)
        throw Error(ErrorKind::InvalidArgument, name + ": freqs have " + std::to_string(tc.dims[0]) +
                                                    " rows but the sequence length is " + std::to_string(s));
      Tensor& to = g.tensor(h.out);
      if (tx.numel() > to.max_numel())
        throw Error(ErrorKind::InvalidArgument, name + ": output exceeds its bound " + shape_str(to.max_dims));
      to.dims = tx.dims;
      Params p{static_cast<uint32_t>(tx.numel() / 2), static_cast<uint32_t>(d), static_cast<uint32_t>(hh),
               static_cast<uint32_t>(s), static_cast<uint32_t>(start), static_cast<uint32_t>(tc.dims[1]), 0, 0};
      h.u->write(g, p);
      set_groups(g, node->steps[h.step], groups_for(p.pairs));
    }
  };
}

void build_interleaved(OpContext& oc) { build_rope(oc, false); }
void build_hf(OpContext& oc) { build_rope(oc, true); }

ETW_REGISTER_OP("et_vk.apply_rotary_emb.default", build_interleaved);
ETW_REGISTER_OP("et_vk.apply_rotary_emb_hf.default", build_hf);

}  // namespace
}  // namespace etwebgpu::ops
