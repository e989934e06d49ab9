// Reductions (sum, mean, amax, amin, argmax, argmin, any, all) over any set of dims, and cumsum.
#include <algorithm>
#include <cmath>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

enum RedOp : uint32_t { kSum = 0, kMean = 1, kAmax = 2, kAmin = 3, kArgmax = 4, kArgmin = 5, kAny = 6, kAll = 7 };

struct Params {
  ShapeU o, r;
  float inv_count = 0.f;
  uint32_t pad[3] = {0, 0, 0};
};
static_assert(sizeof(Params) == 176);

// Reductions at least this long use a workgroup per output; shorter ones a thread per output.
constexpr int64_t kGroupRouteMin = 64;

const char* op_label(RedOp op) {
  static const char* n[] = {"sum", "mean", "amax", "amin", "argmax", "argmin", "any", "all"};
  return n[op];
}

// dims: normalized, sorted, unique reduced dims (empty + all_dims = reduce everything).
void build_reduce(OpContext& oc, RedOp op, std::vector<int64_t> dims, bool keepdim) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  Tensor& tx = g.tensor(x);
  Tensor& to = g.tensor(out);
  int64_t rank = tx.rank();
  std::vector<bool> red(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (red[d]) oc.fail(ErrorKind::InvalidArgument, "dim " + std::to_string(d) + " appears more than once");
    red[d] = true;
  }
  bool in_float = is_float(tx.dtype);
  bool in_intish = is_int(tx.dtype) || is_boolish(tx.dtype);
  if (!in_float && !in_intish) oc.fail(ErrorKind::Unsupported, std::string("input dtype ") + format::vk_dtype_name(tx.dtype));
  double ct = 0, in_int = 0;
  switch (op) {
    case kSum:
    case kMean:
      if (is_float(to.dtype)) {
        in_int = in_float ? 0 : 1;
      } else if (is_int(to.dtype) && op == kSum) {
        if (in_float) oc.fail(ErrorKind::Unsupported, "sum of a float input into an integer output");
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
  gpu::Constants c{{"OP", op}, {"CT", ct}, {"IN_INT", in_int}, {"IN_FLOAT", in_float ? 1.0 : 0.0}};
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  std::vector<gpu::Binding> b{{0, &g.buffer(x)}, {1, &g.buffer(out)}, {2, u->buf}};
  oc.node.steps.push_back(g.make_step(g.ctx().pipeline("reduce", "per_group", c), b, 0, "per_group"));
  oc.node.steps.push_back(g.make_step(g.ctx().pipeline("reduce", "per_thread", c), b, 0, "per_thread"));
  Step* sg = &oc.node.steps[oc.node.steps.size() - 2];
  Step* st = &oc.node.steps.back();
  oc.node.resize = [&g, x, out, u, sg, st, red, keepdim, op, &call = oc.call] {
    auto& in = g.tensor(x).dims;
    auto is = contiguous_strides(in);
    std::vector<int64_t> kd, ks, rd, rs, od;
    for (size_t d = 0; d < in.size(); ++d) {
      if (red[d]) {
        rd.push_back(in[d]);
        rs.push_back(is[d]);
        if (keepdim) od.push_back(1);
      } else {
        kd.push_back(in[d]);
        ks.push_back(is[d]);
        od.push_back(in[d]);
      }
    }
    int64_t count = numel(rd);
    if (count == 0 && op != kSum && op != kMean && op != kAny && op != kAll)
      fail_call(call, ErrorKind::InvalidArgument, std::string(op_label(op)) + " over an empty dimension of " + shape_str(in));
    Tensor& to = g.tensor(out);
    if (numel(od) > to.max_numel()) fail_call(call, ErrorKind::InvalidArgument, "output " + shape_str(od) + " exceeds its bound " + shape_str(to.max_dims));
    to.dims = od;
    Params p;
    p.o = make_shape(kd, &ks);
    p.r = make_shape(rd, &rs);
    p.inv_count = count ? static_cast<float>(1.0 / static_cast<double>(count)) : NAN;
    u->write(g, p);
    int64_t n = numel(kd);
    bool grouped = count >= kGroupRouteMin;
    set_groups(g, *sg, grouped ? n : 0);
    set_groups(g, *st, grouped ? 0 : groups_for(n));
  };
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

void build_all_dims(OpContext& oc, RedOp op) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < oc.g.tensor(oc.arg(0)).rank(); ++d) dims.push_back(d);
  build_reduce(oc, op, dims, false);
}

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
  const auto& pipe = g.ctx().pipeline("reduction_cumsum", "main", {{"IN_DT", in_float ? 0.0 : 1.0}, {"OUT_F", out_float ? 1.0 : 0.0}});
  auto u = std::make_shared<Uniform<CumParams>>();
  u->init(g, oc.call.name);
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(x)}, {1, &g.buffer(out)}, {2, u->buf}}, 0));
  Step* s = &oc.node.steps.back();
  oc.node.resize = [&g, x, out, u, s, dim, &call = oc.call] {
    auto& in = g.tensor(x).dims;
    Tensor& to = g.tensor(out);
    if (numel(in) > to.max_numel()) fail_call(call, ErrorKind::InvalidArgument, "output " + shape_str(in) + " exceeds its bound " + shape_str(to.max_dims));
    to.dims = in;
    CumParams p;
    int64_t len = in.empty() ? 1 : in[dim], inner = 1;
    for (size_t d = static_cast<size_t>(dim) + 1; d < in.size(); ++d) inner *= in[d];
    p.len = static_cast<uint32_t>(len);
    p.inner = static_cast<uint32_t>(inner);
    p.lines = len ? static_cast<uint32_t>(numel(in) / len) : 0;
    u->write(g, p);
    set_groups(g, *s, groups_for(p.lines));
  };
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

}  // namespace
}  // namespace etwebgpu::ops
