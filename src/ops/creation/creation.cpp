// Tensor creation: full / full_like / fill / zeros(_like) / ones(_like) / scalar_tensor / arange,
// inference-mode native_dropout (a copy plus an all-true mask) and et_vk.grid_priors.
// The output dtype is the output tensor's (dtype arguments are serialized as Null). One fill
// kernel (creation_fill.wgsl) writes start + i*step, run every time since the output buffer may
// be shared with other tensors.
#include <array>
#include <cmath>
#include <functional>
#include <limits>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  uint32_t n = 0;
  int32_t i_start = 0, i_step = 0;
  uint32_t pad = 0;
  float f_start = 0.f, f_step = 0.f;
  uint32_t pad2[2] = {0, 0};
};
static_assert(sizeof(Params) == 32);

uint32_t dt_code(const OpContext& oc, int32_t out) {
  VkDType t = oc.g.tensor(out).dtype;
  if (t == VkDType::Float32) return 0;
  if (t == VkDType::Int32 || t == VkDType::Int64) return 1;  // int64 lives as int32 words
  if (t == VkDType::Bool) return 2;
  oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(t) + " (float32, int32/int64 or bool)");
}

float to_f32(double v) {
  if (std::isnan(v)) return std::numeric_limits<float>::quiet_NaN();
  if (v > std::numeric_limits<float>::max()) return std::numeric_limits<float>::infinity();
  if (v < -std::numeric_limits<float>::max()) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

// Converts a value to an int32 word like a torch cast to an integer dtype (toward zero).
int32_t to_i32(const std::string& op, double v, const char* what) {
  if (!std::isfinite(v) || std::trunc(v) < -2147483648.0 || std::trunc(v) > 2147483647.0)
    throw Error(ErrorKind::InvalidArgument, op + ": " + what + " " + std::to_string(v) + " does not fit an int32 tensor");
  return static_cast<int32_t>(std::trunc(v));
}

using DimsFn = std::function<std::vector<int64_t>(const kernel::Live&)>;
using ParamsFn = std::function<Params(const kernel::Live&)>;

// Shared tail: the fill kernel over `out`, whose live dims (checked against its rank here and its
// bound by the graph) and fill parameters come from live values (SymInt sizes / bounds).
void install(OpContext& oc, int32_t out, DimsFn dims, ParamsFn params) {
  uint32_t dt = dt_code(oc, out);
  std::vector<int64_t> bound = oc.g.tensor(out).max_dims;
  oc.output(out, [dims = std::move(dims), bound](const kernel::Live& l) {
    std::vector<int64_t> d = dims(l);
    if (d.size() != bound.size() || numel(d) > numel(bound))
      throw Error(ErrorKind::InvalidArgument, "output " + shape_str(d) + " does not fit the output tensor " + shape_str(bound));
    return d;
  });
  oc.add(kernel::Kernel("creation_fill")
             .constant("DT", dt)
             .output("Y", out)
             .params<Params>([out, params = std::move(params)](const kernel::Live& l) {
               Params q = params(l);
               q.n = kernel::u32(l.numel(out), "element count");
               return q;
             })
             .flat(out));
}

// A fill whose parameters do not change between runs.
ParamsFn constant_params(Params p) {
  return [p](const kernel::Live&) { return p; };
}

// A constant fill value in the output's dtype.
Params fill_params(const OpContext& oc, int32_t out, double v) {
  Params p;
  switch (dt_code(oc, out)) {
    case 0: p.f_start = to_f32(v); break;
    case 1: p.i_start = to_i32(oc.call.name, v, "fill value"); break;
    default: p.i_start = (v != 0 || std::isnan(v)) ? 1 : 0; break;
  }
  return p;
}

// full/zeros/ones: the size list may hold SymInts (ValueList), read live at every resize.
void build_sized_fill(OpContext& oc, std::optional<double> fixed) {
  Graph& g = oc.g;
  int32_t size = oc.arg(0), out = oc.out();
  double v = fixed ? *fixed : g.number(oc.arg(1));
  auto sz = g.int_list(size);
  for (int64_t d : sz)
    if (d < 0) oc.fail(ErrorKind::InvalidArgument, "negative size " + shape_str(sz));
  if (g.kind(size) == format::VkValueKind::IntList && sz != g.tensor(out).max_dims)
    oc.fail(ErrorKind::InvalidArgument, "size " + shape_str(sz) + " differs from the output tensor " +
                                            shape_str(g.tensor(out).max_dims));
  Params p = fill_params(oc, out, v);
  if (g.kind(size) == format::VkValueKind::ValueList) {
    install(oc, out, [ids = g.value_list(size)](const kernel::Live& l) {
      std::vector<int64_t> d;
      for (int32_t id : ids) d.push_back(l.integer(id));
      return d;
    }, constant_params(p));
  } else {
    install(oc, out, [sz](const kernel::Live&) { return sz; }, constant_params(p));
  }
}

// *_like: the output follows the live shape of self.
void build_like_fill(OpContext& oc, std::optional<double> fixed) {
  Graph& g = oc.g;
  int32_t self = oc.arg(0), out = oc.out();
  double v = fixed ? *fixed : g.number(oc.arg(1));
  require_same_numel(oc, self, out);
  Params p = fill_params(oc, out, v);
  install(oc, out, [self](const kernel::Live& l) { return l.dims(self); }, constant_params(p));
}

void build_full(OpContext& oc) { build_sized_fill(oc, std::nullopt); }
void build_zeros(OpContext& oc) { build_sized_fill(oc, 0.0); }
void build_ones(OpContext& oc) { build_sized_fill(oc, 1.0); }
void build_full_like(OpContext& oc) { build_like_fill(oc, std::nullopt); }
void build_zeros_like(OpContext& oc) { build_like_fill(oc, 0.0); }
void build_ones_like(OpContext& oc) { build_like_fill(oc, 1.0); }

// scalar_tensor: [s, dtype, layout, device, pin_memory, out] -> 0-dim tensor.
void build_scalar_tensor(OpContext& oc) {
  int32_t out = oc.out();
  if (oc.g.tensor(out).max_numel() != 1)
    oc.fail(ErrorKind::InvalidArgument, "output " + shape_str(oc.g.tensor(out).max_dims) + " is not a single element");
  std::vector<int64_t> d = oc.g.tensor(out).max_dims;
  Params p = fill_params(oc, out, oc.g.number(oc.arg(0)));
  install(oc, out, [d](const kernel::Live&) { return d; }, constant_params(p));
}

// arange: element count ceil((end - start) / step), computed from live values (SymInts allowed).
int64_t arange_count(const std::string& name, double start, double end, double step) {
  if (!std::isfinite(start) || !std::isfinite(end))
    throw Error(ErrorKind::InvalidArgument, name + ": start and end must be finite");
  if (step == 0 || !std::isfinite(step)) throw Error(ErrorKind::InvalidArgument, name + ": step must be nonzero and finite");
  if ((step > 0 && end < start) || (step < 0 && end > start))
    throw Error(ErrorKind::InvalidArgument, name + ": upper bound and larger bound inconsistent with step sign");
  return static_cast<int64_t>(std::ceil((end - start) / step));
}

void build_arange_impl(OpContext& oc, int32_t a_start, int32_t a_end, int32_t a_step) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  Tensor& to = g.tensor(out);
  if (to.max_dims.size() != 1) oc.fail(ErrorKind::InvalidArgument, "output " + shape_str(to.max_dims) + " is not 1-D");
  uint32_t dt = dt_code(oc, out);
  if (dt == 2) oc.fail(ErrorKind::Unsupported, "arange with a bool output");
  auto val = [&g](int32_t id, double dflt) { return id < 0 ? dflt : g.number(id); };
  bool live = false;  // any SymInt argument: count may change per run
  for (int32_t id : {a_start, a_end, a_step})
    if (id >= 0) {
      if (g.kind(id) == format::VkValueKind::SymInt) live = true;
      else if (!g.is_tensor(id) && g.kind(id) != format::VkValueKind::Int && g.kind(id) != format::VkValueKind::Double)
        oc.fail(ErrorKind::Format, "arange bounds must be numbers");
    }
  double start = val(a_start, 0), end = val(a_end, 0), step = val(a_step, 1);
  int64_t n;
  try {
    n = arange_count(oc.call.name, start, end, step);
  } catch (const Error& e) {
    oc.fail(ErrorKind::InvalidArgument, e.what());
  }
  if (!live && n != to.max_numel())
    oc.fail(ErrorKind::InvalidArgument, "arange(" + std::to_string(start) + ", " + std::to_string(end) + ", " +
                                            std::to_string(step) + ") has " + std::to_string(n) +
                                            " elements but the output holds " + std::to_string(to.max_numel()));
  if (dt == 1) {
    // Integer arange of non-integral bounds is rejected: torch would compute in float then cast.
    for (double v : {start, end, step})
      if (v != std::trunc(v)) oc.fail(ErrorKind::Unsupported, "int arange with a non-integral bound");
  }
  bool int_out = dt == 1;
  std::string name = oc.call.name;
  // Bounds as functions of live values: SymInts re-read at each run, the rest fixed at load.
  struct Bound { int32_t symint; double v; };
  auto bound = [&g, &val](int32_t id, double dflt) {
    return Bound{id >= 0 && g.kind(id) == format::VkValueKind::SymInt ? id : -1, val(id, dflt)};
  };
  auto bounds = [b = std::array<Bound, 3>{bound(a_start, 0), bound(a_end, 0), bound(a_step, 1)}](const kernel::Live& l) {
    std::array<double, 3> v;
    for (size_t k = 0; k < 3; ++k) v[k] = b[k].symint >= 0 ? static_cast<double>(l.integer(b[k].symint)) : b[k].v;
    return v;
  };
  install(oc, out, [bounds, name](const kernel::Live& l) {
    auto [st, en, sp] = bounds(l);
    return std::vector<int64_t>{arange_count(name, st, en, sp)};
  }, [bounds, int_out, name](const kernel::Live& l) {
    auto [st, en, sp] = bounds(l);
    Params p;
    if (int_out) {
      p.i_start = to_i32(name, st, "start");
      p.i_step = to_i32(name, sp, "step");
    } else {
      p.f_start = to_f32(st);
      p.f_step = to_f32(sp);
    }
    return p;
  });
}

void build_arange_start_step(OpContext& oc) { build_arange_impl(oc, oc.arg(0), oc.arg(1), oc.arg(2)); }
void build_arange(OpContext& oc) { build_arange_impl(oc, -1, oc.arg(0), -1); }

// native_dropout [input, p, train, out VL(output, mask)]: only the deterministic cases run —
// inference (train false: identity, all-true mask) and train with p == 0 (the same). Training
// with p > 0 draws random numbers (unsupported; train None means training, as in ATen).
void build_native_dropout(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0);
  double p = g.number(oc.arg(1));
  bool train = g.is_null(oc.arg(2)) || g.boolean(oc.arg(2));
  if (!(p >= 0.0 && p <= 1.0)) oc.fail(ErrorKind::InvalidArgument, "dropout probability has to be between 0 and 1, but got " + std::to_string(p));
  if (train && p != 0.0)
    oc.fail(ErrorKind::Unsupported, "training-mode dropout (train=" + std::string(g.is_null(oc.arg(2)) ? "None" : "True") +
                                        ", p=" + std::to_string(p) + ") needs random numbers; only train=False (or p=0) is supported");
  std::vector<int32_t> outs = g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::InvalidArgument, "expected 2 outputs (output, mask), got " + std::to_string(outs.size()));
  int32_t y = outs[0], mask = outs[1];
  if (graph::host_dtype_of(g.tensor(x).dtype) != graph::host_dtype_of(g.tensor(y).dtype))
    oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(g.tensor(y).dtype) +
                                        " differs from the input's " + format::vk_dtype_name(g.tensor(x).dtype));
  if (g.tensor(mask).dtype != VkDType::Bool)
    oc.fail(ErrorKind::InvalidArgument, std::string("mask must be bool, got ") + format::vk_dtype_name(g.tensor(mask).dtype));
  require_same_numel(oc, x, y);
  require_same_numel(oc, x, mask);
  if (&g.buffer(x) == &g.buffer(y)) oc.fail(ErrorKind::Unsupported, "input and output share one memory object");
  Step copy;
  copy.copy_src = &g.buffer(x);
  copy.copy_dst = &g.buffer(y);
  copy.variant = "copy";
  oc.node.steps.push_back(std::move(copy));
  oc.output_like(y, x);
  install(oc, mask, [x](const kernel::Live& l) { return l.dims(x); }, constant_params(fill_params(oc, mask, 1.0)));
  graph::Node* node = &oc.node;
  oc.node.resize = [&g, y, node] {
    const Tensor& ty = g.tensor(y);  // input and output have one storage type (same host dtype)
    node->steps[0].copy_size = ty.bytes(ty.numel());
  };
}

// et_vk.grid_priors [self, stride, offset, out]: [H * W, 2] anchor centres of self's last two dims
// (its values are not read).
void build_grid_priors(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  if (g.tensor(x).rank() < 2)
    oc.fail(ErrorKind::InvalidArgument, "input " + shape_str(g.tensor(x).max_dims) + " needs at least 2 dims (H, W)");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16}, "output");
  const double stride = g.number(oc.arg(1)), offset = g.number(oc.arg(2));
  if (!std::isfinite(stride) || !std::isfinite(offset))
    oc.fail(ErrorKind::InvalidArgument, "stride " + std::to_string(stride) + " and offset " + std::to_string(offset) +
                                            " must be finite");
  const auto& od = g.tensor(out).max_dims;
  if (od.size() != 2 || od[1] != 2)
    oc.fail(ErrorKind::InvalidArgument, "output " + shape_str(od) + " is not [H * W, 2]");
  struct Params { uint32_t n, w; float stride, offset; };
  oc.output(out, [x](const kernel::Live& l) {
    const auto& d = l.dims(x);
    return std::vector<int64_t>{d[d.size() - 2] * d.back(), 2};
  });
  oc.add(kernel::Kernel("creation_grid_priors")
             .output("Y", out)
             .params<Params>([x, s = static_cast<float>(stride), o = static_cast<float>(offset)](const kernel::Live& l) {
               const auto& d = l.dims(x);
               return Params{kernel::u32(d[d.size() - 2] * d.back(), "cell count"), kernel::u32(d.back(), "width"), s, o};
             })
             .flat(out, 2));  // one invocation per cell
}

ETW_REGISTER_OP("aten.full.default", build_full);
ETW_REGISTER_OP("aten.full_like.default", build_full_like);
ETW_REGISTER_OP("aten.fill.Scalar", build_full_like);  // [self, value, out]: full_like's leading args
ETW_REGISTER_OP("aten.native_dropout.default", build_native_dropout);
ETW_REGISTER_OP("aten.zeros.default", build_zeros);
ETW_REGISTER_OP("aten.zeros_like.default", build_zeros_like);
ETW_REGISTER_OP("aten.ones.default", build_ones);
ETW_REGISTER_OP("aten.ones_like.default", build_ones_like);
ETW_REGISTER_OP("aten.scalar_tensor.default", build_scalar_tensor);
ETW_REGISTER_OP("aten.arange.start_step", build_arange_start_step);
ETW_REGISTER_OP("et_vk.grid_priors.default", build_grid_priors);
ETW_REGISTER_OP("aten.arange.default", build_arange);

}  // namespace
}  // namespace etwebgpu::ops
