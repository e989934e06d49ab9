// Helpers shared by the memory and indexing families: one generic strided-copy kernel
// (mem_strided.wgsl) planned from live shapes, argument readers and load-time checks.
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

// What a node computes before each run for one strided dispatch: iterate over `it`, read the source at
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

// "<op> (node N)": prefix for errors thrown from host hooks (Graph prefixes kernels' functions).
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

// Memory ops move elements: the input and output must hold the same dtype class.
inline void require_same_words(const OpContext& oc, int32_t a, int32_t b, const char* what) {
  VkDType ta = oc.g.tensor(a).dtype, tb = oc.g.tensor(b).dtype;
  if (graph::host_dtype_of(ta) != graph::host_dtype_of(tb))
    oc.fail(ErrorKind::Unsupported, std::string(what) + " has dtype " + format::vk_dtype_name(ta) + " but the output is " +
                                        format::vk_dtype_name(tb) + " (memory ops do not convert)");
}

// Conversion code from `src`'s dtype to `dst`'s (PyTorch casts: float -> int truncates, anything
// -> bool is != 0): 0 none, 1 int -> float, 2 float -> int, 3 float -> bool, 4 int -> bool (3 and 4
// are a != 0 test in mem_strided.wgsl, the others a WGSL conversion); throws naming the op for
// dtypes without a conversion.
inline uint32_t convert_code(const OpContext& oc, int32_t src, int32_t dst, const char* what) {
  VkDType ts = oc.g.tensor(src).dtype, td = oc.g.tensor(dst).dtype;
  auto cls = [](VkDType t) { return is_float(t) ? 0 : is_int(t) ? 1 : is_boolish(t) ? 2 : 3; };
  int s = cls(ts), d = cls(td);
  if (s == d && s != 3) return 0;
  if (s == 2 && d == 1) return 0;  // bool bytes 0/1 read as u32 convert to int32
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

// A node's live geometry for one mem_strided dispatch: written by the node's prepare function,
// read by the kernel's params and grid functions (which run after it, see graph::Node).
using StridedPlan = std::shared_ptr<Strided>;

inline ShapeU signed_shape(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  ShapeU s = make_shape(dims);
  for (size_t i = 0; i < strides.size() && i < kMaxRank; ++i)
    s.strides[i] = static_cast<uint32_t>(static_cast<int32_t>(strides[i]));  // wraps: WGSL u32 math is modular
  return s;
}

inline StridedParams strided_params(const Strided& st) {
  StridedParams p;
  p.it = make_shape(st.it);
  p.src = signed_shape(st.src_dims.empty() ? st.it : st.src_dims, st.src_strides);
  p.dst = signed_shape(st.it, st.dst_strides.empty() ? contiguous_strides(st.it) : st.dst_strides);
  for (size_t i = 0; i < st.lo.size() && i < kMaxRank; ++i) p.lo[i] = static_cast<int32_t>(st.lo[i]);
  p.src_base = kernel::u32(st.src_base, "source offset");
  p.dst_base = kernel::u32(st.dst_base, "destination offset");
  p.fill = st.fill;
  return p;
}

// One mem_strided dispatch reading `src`, writing `dst` over `plan->it` (no dispatch when empty).
// `convert`: convert_code's code (0 = elements copied as they are).
inline void add_strided(OpContext& oc, int32_t src, int32_t dst, StridedMode mode, std::string variant,
                        const StridedPlan& plan, uint32_t convert = 0) {
  require_distinct(oc, src, dst);
  oc.add(kernel::Kernel("mem_strided")
             .constant("MODE", mode)
             .constant("TO_BOOL", convert >= 3 ? 1 : 0)
             .constant("WG", kWorkgroupSize)
             .input("SRC", src)
             .output("DST", dst)
             .params<StridedParams>([plan](const kernel::Live&) { return strided_params(*plan); })
             .groups([plan](const kernel::Live&) {
               return kernel::Groups::linear(kernel::ceil_div(static_cast<uint64_t>(numel(plan->it)), kWorkgroupSize));
             })
             .variant(std::move(variant)));
}

// `dims` after checking they have the rank of the output's serialized shape `bound` (an output
// dims function's result; Graph checks the element count).
inline std::vector<int64_t> ranked(std::vector<int64_t> dims, const std::vector<int64_t>& bound) {
  if (dims.size() != bound.size())
    throw Error(ErrorKind::InvalidArgument, "computed output shape " + shape_str(dims) + " has rank " +
                                                std::to_string(dims.size()) + " but the output tensor is " + shape_str(bound));
  return dims;
}

// An int-list argument read live: an IntList, or a ValueList whose SymInt entries change between
// runs. Malformed lists fail at load naming the op.
class LiveInts {
 public:
  LiveInts(const OpContext& oc, int32_t id, const char* what) {
    fixed_ = list_arg(oc, id, what);
    if (oc.g.kind(id) == format::VkValueKind::ValueList) ids_ = oc.g.value_list(id);
  }
  std::vector<int64_t> operator()(const kernel::Live& l) const {
    if (ids_.empty()) return fixed_;
    std::vector<int64_t> v;
    for (int32_t e : ids_) v.push_back(l.integer(e));
    return v;
  }

 private:
  std::vector<int64_t> fixed_;
  std::vector<int32_t> ids_;
};

// One strided dispatch arg(0) -> out whose geometry `plan(live, in_dims, out_dims&)` computes
// before each run.
using SinglePlan = std::function<Strided(const kernel::Live&, const std::vector<int64_t>&, std::vector<int64_t>&)>;
inline void add_single(OpContext& oc, StridedMode mode, const char* variant, SinglePlan plan) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_tensor(oc, x, "self");
  require_same_words(oc, x, out, "self");
  auto st = std::make_shared<Strided>();
  auto od = std::make_shared<std::vector<int64_t>>();
  oc.prepare([x, st, od, plan](const kernel::Live& l) {
    od->clear();
    *st = plan(l, l.dims(x), *od);
  });
  std::vector<int64_t> bound = g.tensor(out).max_dims;
  oc.output(out, [od, bound](const kernel::Live&) { return ranked(*od, bound); });
  add_strided(oc, x, out, mode, variant, st);
}
// Plans that read only the input's live dims.
inline void add_single(OpContext& oc, StridedMode mode, const char* variant,
                       std::function<Strided(const std::vector<int64_t>&, std::vector<int64_t>&)> plan) {
  add_single(oc, mode, variant, [plan](const kernel::Live&, const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    return plan(in, od);
  });
}

}  // namespace etwebgpu::ops::mem
