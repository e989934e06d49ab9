// Reductions (sum, mean, prod, amax, amin, argmax, argmin, any, all, var, var_mean, max/min with
// indices) over any set of dims, and cumsum.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

enum RedOp : uint32_t {
  kSum = 0, kMean = 1, kAmax = 2, kAmin = 3, kArgmax = 4, kArgmin = 5, kAny = 6, kAll = 7, kProd = 8,
};

struct Params {
  ShapeU o, r;
  float inv_count = 0.f;
  float var_denom = 0.f;  // var: max(0, N - correction)
  uint32_t pad[2] = {0, 0};
};
static_assert(sizeof(Params) == 176);

// Reductions at least this long use a workgroup per output; shorter ones a thread per output.
constexpr int64_t kGroupRouteMin = 64, kGroupRouteFewMin = 16, kFewOutputs = 16384;

const char* op_label(RedOp op) {
  static const char* n[] = {"sum", "mean", "amax", "amin", "argmax", "argmin", "any", "all", "prod"};
  return n[op];
}

// Kept (K) and reduced (R) views of the live input for the reduce shaders, and the output dims.
struct ReduceView {
  std::vector<int64_t> kd, ks, rd, rs, od;
};
ReduceView reduce_view(const std::vector<int64_t>& in, const std::vector<bool>& red, bool keepdim) {
  ReduceView v;
  auto is = contiguous_strides(in);
  for (size_t d = 0; d < in.size(); ++d) {
    if (red[d]) {
      v.rd.push_back(in[d]);
      v.rs.push_back(is[d]);
      if (keepdim) v.od.push_back(1);
    } else {
      v.kd.push_back(in[d]);
      v.ks.push_back(is[d]);
      v.od.push_back(in[d]);
    }
  }
  return v;
}

// dims -> per-dim mask; dims: normalized reduced dims (empty = nothing reduced).
std::vector<bool> reduce_mask(const OpContext& oc, int64_t rank, const std::vector<int64_t>& dims) {
  std::vector<bool> red(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (red[d]) oc.fail(ErrorKind::InvalidArgument, "dim " + std::to_string(d) + " appears more than once");
    red[d] = true;
  }
  return red;
}

// Kernel params of a reduce view (the uniform of both routes).
Params view_params(const ReduceView& v) {
  Params p;
  p.o = make_shape(v.kd, &v.ks);
  p.r = make_shape(v.rd, &v.rs);
  int64_t count = numel(v.rd);
  p.inv_count = count ? static_cast<float>(1.0 / static_cast<double>(count)) : NAN;
  return p;
}

// Adds the per_group / per_thread kernel pair (`make(entry)` binds them): a workgroup per output
// for reductions of at least kGroupRouteMin elements, or of kGroupRouteFewMin when there are
// fewer than kFewOutputs outputs (a thread per output would then leave most of the GPU idle
// while each walks its row: the 7x7 global pools of convnets); a thread per output otherwise.
void add_routes(OpContext& oc, const std::function<kernel::Kernel(const char*)>& make, const std::string& prefix,
                std::shared_ptr<Params> p) {
  auto params = [p](const kernel::Live&) { return *p; };
  static constexpr auto per_group = [](const Params& q) {
    return q.r.numel >= kGroupRouteMin || (q.r.numel >= kGroupRouteFewMin && q.o.numel < kFewOutputs);
  };
  oc.add(make((prefix + "per_group").c_str())
             .params<Params>(params)
             .groups([p](const kernel::Live&) {
               return kernel::Groups::linear(per_group(*p) ? p->o.numel : 0);
             })
             .variant("per_group"));
  oc.add(make((prefix + "per_thread").c_str())
             .params<Params>(params)
             .groups([p](const kernel::Live&) {
               return kernel::Groups::linear(per_group(*p) ? 0 : kernel::ceil_div(p->o.numel, kWorkgroupSize));
             })
             .variant("per_thread"));
}

// Adds the kernels reducing `x` into `out` with `op`; returns their params. A second reduction of
// the same view in one node (max.dim's indices) passes `shared`: the node's prepare fills it.
std::shared_ptr<Params> add_reduce(OpContext& oc, RedOp op, int32_t x, int32_t out, const std::vector<int64_t>& dims,
                                   bool keepdim, std::shared_ptr<Params> shared = nullptr) {
  Graph& g = oc.g;
  Tensor& tx = g.tensor(x);
  Tensor& to = g.tensor(out);
  std::vector<bool> red = reduce_mask(oc, tx.rank(), dims);
  bool in_float = is_float(tx.dtype);
  bool in_intish = is_int(tx.dtype) || is_boolish(tx.dtype);
  if (!in_float && !in_intish) oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(tx.dtype));
  double ct = 0;
  switch (op) {
    case kSum:
    case kMean:
    case kProd:
      if (is_float(to.dtype)) {
        ct = 0;
      } else if (is_int(to.dtype) && op != kMean) {
        if (in_float) oc.fail(ErrorKind::Unsupported, std::string(op_label(op)) + " of a float input into an integer output");
        ct = 1;
      } else {
        oc.fail(ErrorKind::Unsupported, std::string(op_label(op)) + " into output dtype " + format::vk_dtype_name(to.dtype) +
                                            (op == kMean ? " (mean needs a float output)" : ""));
      }
      break;
    case kAmax:
    case kAmin:
      if (in_float != is_float(to.dtype) || is_boolish(to.dtype) != is_boolish(tx.dtype))
        oc.fail(ErrorKind::Unsupported, "output dtype must match the input's");
      ct = in_float ? 0 : 1;
      break;
    case kArgmax:
    case kArgmin:
      if (!is_int(to.dtype)) oc.fail(ErrorKind::Unsupported, "arg reductions produce integer indices");
      ct = in_float ? 0 : 1;
      break;
    case kAny:
    case kAll:
      if (!is_boolish(to.dtype)) oc.fail(ErrorKind::Unsupported, "any/all produce a bool output");
      ct = 1;
      break;
  }
  auto p = shared ? shared : std::make_shared<Params>();
  if (!shared)
    oc.prepare([x, p, red, keepdim, op](const kernel::Live& l) {
      const auto& in = l.dims(x);
      ReduceView v = reduce_view(in, red, keepdim);
      if (numel(v.rd) == 0 && op != kSum && op != kMean && op != kAny && op != kAll && op != kProd)
        throw Error(ErrorKind::InvalidArgument, std::string(op_label(op)) + " over an empty dimension of " + shape_str(in));
      *p = view_params(v);
    });
  oc.output(out, [x, red, keepdim](const kernel::Live& l) { return reduce_view(l.dims(x), red, keepdim).od; });
  add_routes(oc, [&](const char* entry) {
    return kernel::Kernel("reduce", entry).constant("OP", op).constant("CT", ct).input("X", x).output("O", out);
  }, "", p);
  return p;
}

// dims: normalized, sorted, unique reduced dims (empty + all_dims = reduce everything).
void build_reduce(OpContext& oc, RedOp op, std::vector<int64_t> dims, bool keepdim) {
  add_reduce(oc, op, oc.arg(0), oc.out(), dims, keepdim);
}

// Normalized, sorted reduced dims from an IntList/Null argument; empty or Null = all dims.
std::vector<int64_t> dims_arg(OpContext& oc, int32_t id) {
  int64_t rank = oc.g.tensor(oc.arg(0)).rank();
  std::vector<int64_t> dims;
  if (!oc.g.is_null(id)) {
    for (int64_t d : oc.g.int_list(id)) dims.push_back(norm_dim(oc, d, rank));
  }
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  // 0-dim input: a reduced dim 0 means "nothing".
  if (rank == 0) dims.clear();
  std::sort(dims.begin(), dims.end());
  return dims;
}

void build_dim_list(OpContext& oc, RedOp op) {
  // sum/mean: [self, dim, keepdim, dtype, out]; amax/amin: [self, dim, keepdim, out]
  std::vector<int64_t> dims = dims_arg(oc, oc.arg(1));
  build_reduce(oc, op, dims, oc.g.boolean(oc.arg(2)));
}

// argmax/argmin [self, dim Int|Null, keepdim, out]; any.dim/all.dim [self, dim Int, keepdim, out].
void build_one_dim(OpContext& oc, RedOp op) {
  Graph& g = oc.g;
  int64_t rank = g.tensor(oc.arg(0)).rank();
  bool keepdim = g.boolean(oc.arg(2));
  std::vector<int64_t> dims;
  if (g.is_null(oc.arg(1))) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  } else {
    int64_t d = norm_dim(oc, g.integer(oc.arg(1)), rank);
    if (rank > 0) dims.push_back(d);
  }
  build_reduce(oc, op, dims, keepdim);
}

std::vector<int64_t> all_dims(const OpContext& oc) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < oc.g.tensor(oc.arg(0)).rank(); ++d) dims.push_back(d);
  return dims;
}

void build_all_dims(OpContext& oc, RedOp op) { build_reduce(oc, op, all_dims(oc), false); }

// max.dim / min.dim: [self, dim, keepdim, ValueList(values, indices)]; the values are amax/amin and
// the indices argmax/argmin over the same dim (first occurrence on ties, NaN wins: as PyTorch).
void build_value_index(OpContext& oc, RedOp value_op, RedOp index_op) {
  Graph& g = oc.g;
  const auto& outs = g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::InvalidArgument, "expects 2 outputs (values, indices), got " + std::to_string(outs.size()));
  int64_t rank = g.tensor(oc.arg(0)).rank();
  int64_t d = norm_dim(oc, g.integer(oc.arg(1)), rank);
  std::vector<int64_t> dims;
  if (rank > 0) dims.push_back(d);
  bool keepdim = g.boolean(oc.arg(2));
  auto p = add_reduce(oc, value_op, oc.arg(0), outs[0], dims, keepdim);
  add_reduce(oc, index_op, oc.arg(0), outs[1], dims, keepdim, p);
}

// var / var_mean: sum((x - mean)^2) / max(0, N - correction), two passes over the data (mean
// first) in reduce.wgsl's var entries. `mean_out` < 0: no mean output.
void build_var(OpContext& oc, const std::vector<int64_t>& dims, double correction, bool keepdim, int32_t var_out,
               int32_t mean_out) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0);
  Tensor& tx = g.tensor(x);
  if (!is_float(tx.dtype))
    oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(tx.dtype) + " (var needs a float input)");
  for (int32_t o : {var_out, mean_out})
    if (o >= 0 && !is_float(g.tensor(o).dtype))
      oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(g.tensor(o).dtype) + " (float only)");
  std::vector<bool> red = reduce_mask(oc, tx.rank(), dims);
  auto p = std::make_shared<Params>();
  oc.prepare([x, p, red, keepdim, correction](const kernel::Live& l) {
    ReduceView v = reduce_view(l.dims(x), red, keepdim);
    *p = view_params(v);
    p->var_denom = static_cast<float>(std::max(0.0, static_cast<double>(numel(v.rd)) - correction));
  });
  auto od = [x, red, keepdim](const kernel::Live& l) { return reduce_view(l.dims(x), red, keepdim).od; };
  oc.output(var_out, od);
  if (mean_out >= 0) oc.output(mean_out, od);
  add_routes(oc, [&](const char* entry) {
    kernel::Kernel k("reduce", entry);
    k.input("X", x).output("O", var_out);
    if (mean_out >= 0) k.output("M", mean_out).define("WRITE_MEAN");
    return k;
  }, "var_", p);
}

// correction: Null = 1 (Bessel), like PyTorch.
double correction_arg(const OpContext& oc, int32_t id) { return oc.g.opt_number(id).value_or(1.0); }

struct CumParams {
  uint32_t lines = 0, len = 0, inner = 1, pad = 0;
};

void build_cumsum(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  Tensor& tx = g.tensor(x);
  Tensor& to = g.tensor(out);
  int64_t dim = norm_dim(oc, g.integer(oc.arg(1)), tx.rank());
  bool in_float = is_float(tx.dtype);
  if (!in_float && !is_int(tx.dtype) && !is_boolish(tx.dtype))
    oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(tx.dtype));
  bool out_float = is_float(to.dtype);
  if (!out_float && !is_int(to.dtype)) oc.fail(ErrorKind::Unsupported, std::string("output dtype ") + format::vk_dtype_name(to.dtype));
  if (in_float && !out_float) oc.fail(ErrorKind::Unsupported, "cumsum of a float input into an integer output");
  if (tx.max_numel() != to.max_numel())
    oc.fail(ErrorKind::InvalidArgument, "output " + shape_str(to.max_dims) + " does not match input " + shape_str(tx.max_dims));
  oc.output_like(out, x);
  oc.add(kernel::Kernel("reduction_cumsum")
             .constant("OUT_F", out_float ? 1.0 : 0.0)
             .input("X", x)
             .output("O", out)
             .params<CumParams>([x, dim](const kernel::Live& l) {
               const auto& in = l.dims(x);
               int64_t len = in.empty() ? 1 : in[dim], inner = 1;
               for (size_t d = static_cast<size_t>(dim) + 1; d < in.size(); ++d) inner *= in[d];
               CumParams p;
               p.len = kernel::u32(len, "scan length");
               p.inner = kernel::u32(inner, "inner size");
               p.lines = len ? kernel::u32(numel(in) / len, "line count") : 0;
               return p;
             })
             .groups([x, dim](const kernel::Live& l) {
               const auto& in = l.dims(x);
               int64_t len = in.empty() ? 1 : in[dim];
               return kernel::Groups::linear(len ? kernel::ceil_div(numel(in) / len, kWorkgroupSize) : 0);
             }));
}

ETW_REGISTER_OP("aten.sum.dim_IntList", [](OpContext& oc) { build_dim_list(oc, kSum); });
ETW_REGISTER_OP("aten.mean.dim", [](OpContext& oc) { build_dim_list(oc, kMean); });
ETW_REGISTER_OP("aten.amax.default", [](OpContext& oc) { build_dim_list(oc, kAmax); });
ETW_REGISTER_OP("aten.amin.default", [](OpContext& oc) { build_dim_list(oc, kAmin); });
ETW_REGISTER_OP("aten.argmax.default", [](OpContext& oc) { build_one_dim(oc, kArgmax); });
ETW_REGISTER_OP("aten.argmin.default", [](OpContext& oc) { build_one_dim(oc, kArgmin); });
ETW_REGISTER_OP("aten.any.dim", [](OpContext& oc) { build_one_dim(oc, kAny); });
ETW_REGISTER_OP("aten.all.dim", [](OpContext& oc) { build_one_dim(oc, kAll); });
ETW_REGISTER_OP("aten.any.default", [](OpContext& oc) { build_all_dims(oc, kAny); });
ETW_REGISTER_OP("aten.all.default", [](OpContext& oc) { build_all_dims(oc, kAll); });
ETW_REGISTER_OP("aten.cumsum.default", build_cumsum);
ETW_REGISTER_OP("aten.any.dims", [](OpContext& oc) { build_dim_list(oc, kAny); });
// mean.default / prod.default: [self, dtype, out] over every dim.
ETW_REGISTER_OP("aten.mean.default", [](OpContext& oc) { build_all_dims(oc, kMean); });
ETW_REGISTER_OP("aten.prod.default", [](OpContext& oc) { build_all_dims(oc, kProd); });
// prod.dim_int: [self, dim, keepdim, dtype, out].
ETW_REGISTER_OP("aten.prod.dim_int", [](OpContext& oc) { build_one_dim(oc, kProd); });
ETW_REGISTER_OP("aten.max.default", [](OpContext& oc) { build_all_dims(oc, kAmax); });
ETW_REGISTER_OP("aten.min.default", [](OpContext& oc) { build_all_dims(oc, kAmin); });
ETW_REGISTER_OP("aten.max.dim", [](OpContext& oc) { build_value_index(oc, kAmax, kArgmax); });
ETW_REGISTER_OP("aten.min.dim", [](OpContext& oc) { build_value_index(oc, kAmin, kArgmin); });
// var.correction: [self, dim, correction, keepdim, out].
ETW_REGISTER_OP("aten.var.correction", [](OpContext& oc) {
  build_var(oc, dims_arg(oc, oc.arg(1)), correction_arg(oc, oc.arg(2)), oc.g.boolean(oc.arg(3)), oc.out(), -1);
});
// var.dim: [self, dim, unbiased, keepdim, out]; var.default: [self, unbiased, out].
ETW_REGISTER_OP("aten.var.dim", [](OpContext& oc) {
  build_var(oc, dims_arg(oc, oc.arg(1)), oc.g.boolean(oc.arg(2)) ? 1.0 : 0.0, oc.g.boolean(oc.arg(3)), oc.out(), -1);
});
ETW_REGISTER_OP("aten.var.default", [](OpContext& oc) {
  build_var(oc, all_dims(oc), oc.g.boolean(oc.arg(1)) ? 1.0 : 0.0, false, oc.out(), -1);
});
// var_mean.correction: [self, dim, correction, keepdim, ValueList(var, mean)].
ETW_REGISTER_OP("aten.var_mean.correction", [](OpContext& oc) {
  const auto& outs = oc.g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::InvalidArgument, "expects 2 outputs (var, mean), got " + std::to_string(outs.size()));
  build_var(oc, dims_arg(oc, oc.arg(1)), correction_arg(oc, oc.arg(2)), oc.g.boolean(oc.arg(3)), outs[0], outs[1]);
});

}  // namespace
}  // namespace etwebgpu::ops
