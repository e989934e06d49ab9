// Helpers shared by the memory and indexing families: one generic strided-copy dispatch
// (mem_strided.wgsl), buffer-copy steps, output-shape checks done from resize hooks.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/op_common.h"

namespace etwebgpu::ops::mem {

// WGSL: struct Params { it: Shape, src: Shape, dst: Shape, lo: array<vec4<i32>, 2>,
//                       src_base: u32, dst_base: u32, fill: u32, pad: u32 }
struct StridedParams {
  ShapeU it, src, dst;
  int32_t lo[8] = {0};
  uint32_t src_base = 0, dst_base = 0, fill = 0, pad = 0;
};
static_assert(sizeof(StridedParams) == 288);

// How mem_strided.wgsl maps an iteration coordinate c to a source word.
enum StridedMode : uint32_t {
  kAffine = 0,  // src_base + sum(c[d] * src.strides[d]) (strides may be negative or 0)
  kModulo = 1,  // src_base + sum((c[d] % src.dims[d]) * src.strides[d]) (repeat)
  kPad = 2,     // s = c[d] - lo[d]; outside [0, src.dims[d]) writes `fill` (constant_pad_nd)
  kRoll = 3,    // s = (c[d] + lo[d]) % src.dims[d] (roll; lo >= 0)
  kReflect = 4, // s = c[d] - lo[d] mirrored into [0, src.dims[d]) without repeating the edge
  kReplicate = 5,  // s = c[d] - lo[d] clamped into [0, src.dims[d])
  kTril = 6,    // affine; writes `fill` where (last coord) - (second-to-last coord) > lo[0]
};

// What a resize hook computes for one strided dispatch: iterate over `it`, read the source at
// `src_base + sum(c*src_strides)`, write the destination at `dst_base + sum(c*dst_strides)`
// (dst_strides empty = contiguous over `it`).
struct Strided {
  std::vector<int64_t> it;
  std::vector<int64_t> src_strides, dst_strides;
  std::vector<int64_t> src_dims;  // kModulo / kPad only
  std::vector<int64_t> lo;        // kPad only
  int64_t src_base = 0, dst_base = 0;
  uint32_t fill = 0;
};

// "<op> (node N)": prefix for errors thrown from resize hooks (at load and at run time).
inline std::string who(const OpContext& oc) { return oc.call.name + " (node " + std::to_string(oc.call.node_id) + ")"; }
[[noreturn]] inline void fail_at(const std::string& who, ErrorKind k, const std::string& msg) {
  throw Error(k, who + ": " + msg);
}

// Sets out's live dims after checking rank and capacity against its serialized shape.
inline void set_out(Graph& g, const std::string& w, int32_t out, const std::vector<int64_t>& dims) {
  Tensor& t = g.tensor(out);
  if (dims.size() != t.max_dims.size())
    fail_at(w, ErrorKind::InvalidArgument, "computed output shape " + shape_str(dims) + " has rank " +
                                               std::to_string(dims.size()) + " but the output tensor is " +
                                               shape_str(t.max_dims));
  if (numel(dims) > t.max_numel())
    fail_at(w, ErrorKind::InvalidArgument, "output " + shape_str(dims) + " exceeds its bound " + shape_str(t.max_dims));
  t.dims = dims;
}

// Memory ops move 32-bit words: the input and output must hold the same kind of word.
inline void require_same_words(const OpContext& oc, int32_t a, int32_t b, const char* what) {
  VkDType ta = oc.g.tensor(a).dtype, tb = oc.g.tensor(b).dtype;
  if (graph::host_dtype_of(ta) != graph::host_dtype_of(tb))
    oc.fail(ErrorKind::Unsupported, std::string(what) + " has dtype " + format::vk_dtype_name(ta) + " but the output is " +
                                        format::vk_dtype_name(tb) + " (memory ops do not convert)");
}

// CONVERT code turning `src`'s words into `dst`'s dtype (PyTorch casts: float -> int truncates,
// anything -> bool is != 0); throws naming the op for dtypes without a 32-bit word conversion.
inline uint32_t convert_code(const OpContext& oc, int32_t src, int32_t dst, const char* what) {
  VkDType ts = oc.g.tensor(src).dtype, td = oc.g.tensor(dst).dtype;
  auto cls = [](VkDType t) { return is_float(t) ? 0 : is_int(t) ? 1 : is_boolish(t) ? 2 : 3; };
  int s = cls(ts), d = cls(td);
  if (s == d && s != 3) return 0;
  if (s == 2 && d == 1) return 0;  // bool words 0/1 are valid int32 words
  if (d == 0 && s != 3) return 1;
  if (s == 0 && d == 1) return 2;
  if (s == 0 && d == 2) return 3;
  if (s == 1 && d == 2) return 4;
  oc.fail(ErrorKind::Unsupported, std::string(what) + " has dtype " + format::vk_dtype_name(ts) + "; no conversion to " +
                                      format::vk_dtype_name(td));
}

// Integer / int-list arguments read at load; a malformed one (fractional Double, wrong kind)
// becomes an error naming the op and the argument.
inline int64_t int_arg(const OpContext& oc, int32_t id, const char* what) {
  try {
    return oc.g.integer(id);
  } catch (const Error& e) {
    oc.fail(ErrorKind::Format, std::string(what) + ": " + e.what());
  }
}
inline std::vector<int64_t> list_arg(const OpContext& oc, int32_t id, const char* what) {
  try {
    return oc.g.int_list(id);
  } catch (const Error& e) {
    oc.fail(ErrorKind::Format, std::string(what) + ": " + e.what());
  }
}

inline void require_tensor(const OpContext& oc, int32_t id, const char* what) {
  if (!oc.g.is_tensor(id))
    oc.fail(ErrorKind::Format, std::string(what) + " must be a tensor, got " +
                                   format::vk_value_kind_name(oc.g.kind(id)));
}

// A dispatch cannot read and write one buffer (shared memory object).
inline void require_distinct(const OpContext& oc, int32_t src, int32_t dst) {
  if (&oc.g.buffer(src) == &oc.g.buffer(dst))
    oc.fail(ErrorKind::Unsupported, "input %" + std::to_string(src) + " and output %" + std::to_string(dst) +
                                        " share one memory object");
}

// One mem_strided dispatch reading `src`, writing `dst`; returns its step index in oc.node.
struct StridedStep {
  size_t step = 0;
  std::shared_ptr<Uniform<StridedParams>> u;
};
// `convert`: mem_strided.wgsl's CONVERT code (see convert_code), 0 = words copied as they are.
inline StridedStep add_strided(OpContext& oc, int32_t src, int32_t dst, StridedMode mode, std::string variant,
                               uint32_t convert = 0) {
  Graph& g = oc.g;
  require_distinct(oc, src, dst);
  StridedStep s;
  s.u = std::make_shared<Uniform<StridedParams>>();
  s.u->init(g, oc.call.name);
  const auto& p = g.ctx().pipeline("mem_strided", "main",
                                   {{"MODE", static_cast<double>(mode)}, {"CONVERT", static_cast<double>(convert)}});
  oc.node.steps.push_back(g.make_step(p, {{0, &g.buffer(src)}, {1, &g.buffer(dst)}, {2, s.u->buf}}, 0, std::move(variant)));
  s.step = oc.node.steps.size() - 1;
  return s;
}

inline ShapeU signed_shape(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  ShapeU s = make_shape(dims);
  for (size_t i = 0; i < strides.size() && i < kMaxRank; ++i)
    s.strides[i] = static_cast<uint32_t>(static_cast<int32_t>(strides[i]));  // wraps: WGSL u32 math is modular
  return s;
}

// Writes the uniform and re-targets the grid (0 workgroups when nothing to copy).
inline void write_strided(Graph& g, Step& step, const StridedStep& ss, const Strided& st) {
  StridedParams p;
  p.it = make_shape(st.it);
  p.src = signed_shape(st.src_dims.empty() ? st.it : st.src_dims, st.src_strides);
  p.dst = signed_shape(st.it, st.dst_strides.empty() ? contiguous_strides(st.it) : st.dst_strides);
  for (size_t i = 0; i < st.lo.size() && i < kMaxRank; ++i) p.lo[i] = static_cast<int32_t>(st.lo[i]);
  p.src_base = static_cast<uint32_t>(st.src_base);
  p.dst_base = static_cast<uint32_t>(st.dst_base);
  p.fill = st.fill;
  ss.u->write(g, p);
  set_groups(g, step, groups_for(numel(st.it)));
}

// One strided dispatch arg(0) -> out whose geometry `plan(in_dims, out_dims&)` computes at each resize.
inline void add_single(OpContext& oc, StridedMode mode, const char* variant,
                       std::function<Strided(const std::vector<int64_t>&, std::vector<int64_t>&)> plan) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_tensor(oc, x, "self");
  require_same_words(oc, x, out, "self");
  auto ss = add_strided(oc, x, out, mode, variant);
  graph::Node* node = &oc.node;
  std::string w = who(oc);
  oc.node.resize = [&g, x, out, ss, node, w, plan] {
    std::vector<int64_t> od;
    Strided st = plan(g.tensor(x).dims, od);
    set_out(g, w, out, od);
    write_strided(g, node->steps[ss.step], ss, st);
  };
}

}  // namespace etwebgpu::ops::mem
