// Pairwise p-norm distances: aten._cdist_forward (two sets of rows, batch dims broadcast) and
// aten._pdist_forward (all pairs i < j of one set), one invocation per output distance.
#include <cmath>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

struct Params {
  ShapeU b1, b2;
  uint32_t rows1 = 0, rows2 = 0, cols = 0, n = 0;
  float p = 2.f;
  uint32_t pad[3] = {0, 0, 0};
};

double mode_for(const OpContext& oc, double p) {
  if (std::isnan(p) || p < 0) oc.fail(ErrorKind::InvalidArgument, "p " + std::to_string(p) + " (only non-negative p values)");
  if (p == 0) return 0;
  if (p == 1) return 1;
  if (p == 2) return 2;
  if (std::isinf(p)) return 3;
  return 4;
}

void require_float(const OpContext& oc, int32_t id, const char* what) {
  if (!is_float(oc.g.tensor(id).dtype))
    oc.fail(ErrorKind::Unsupported, std::string(what) + " dtype " + format::vk_dtype_name(oc.g.tensor(id).dtype) + " (float only)");
}

void set_out(const format::VkOpCall& call, Tensor& to, const std::vector<int64_t>& od) {
  if (numel(od) > to.max_numel()) fail_call(call, ErrorKind::InvalidArgument, "output " + shape_str(od) + " exceeds its bound " + shape_str(to.max_dims));
  to.dims = od;
}

// [x1, x2, p, compute_mode, out]. compute_mode only picks CPU/CUDA algorithms (matmul or direct)
// for p = 2; the kernel always computes directly.
void build_cdist(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x1 = oc.arg(0), x2 = oc.arg(1), out = oc.out();
  for (auto [id, what] : {std::pair{x1, "x1"}, std::pair{x2, "x2"}, std::pair{out, "out"}}) require_float(oc, id, what);
  if (g.tensor(x1).rank() < 2 || g.tensor(x2).rank() < 2)
    oc.fail(ErrorKind::InvalidArgument, "x1 " + shape_str(g.tensor(x1).max_dims) + " and x2 " + shape_str(g.tensor(x2).max_dims) +
                                            " must have at least 2 dims");
  double p = g.number(oc.arg(2));
  double mode = mode_for(oc, p);
  const auto& pipe = g.ctx().pipeline("distance_pairwise", "cdist", {{"MODE", mode}});
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(x1)}, {1, &g.buffer(x2)}, {2, &g.buffer(out)}, {3, u->buf}}, 0));
  Step* s = &oc.node.steps.back();
  oc.node.resize = [&g, x1, x2, out, u, s, p, &call = oc.call] {
    const auto &d1 = g.tensor(x1).dims, &d2 = g.tensor(x2).dims;
    int64_t rows1 = d1[d1.size() - 2], rows2 = d2[d2.size() - 2], cols = d1.back();
    if (d2.back() != cols)
      fail_call(call, ErrorKind::InvalidArgument, "x1 " + shape_str(d1) + " and x2 " + shape_str(d2) + " differ in their last dim");
    std::vector<int64_t> bd1(d1.begin(), d1.end() - 2), bd2(d2.begin(), d2.end() - 2), ob;
    try {
      ob = broadcast_shape(bd1, bd2);
    } catch (const Error&) {
      fail_call(call, ErrorKind::InvalidArgument, "batch dims of x1 " + shape_str(d1) + " and x2 " + shape_str(d2) + " do not broadcast");
    }
    std::vector<int64_t> od = ob;
    od.push_back(rows1);
    od.push_back(rows2);
    set_out(call, g.tensor(out), od);
    // Batch strides in elements: a broadcast batch index times the row block of each input.
    auto s1 = broadcast_strides(bd1, ob), s2 = broadcast_strides(bd2, ob);
    for (auto& v : s1) v *= rows1 * cols;
    for (auto& v : s2) v *= rows2 * cols;
    Params q;
    q.b1 = make_shape(ob, &s1);
    q.b2 = make_shape(ob, &s2);
    q.rows1 = static_cast<uint32_t>(rows1);
    q.rows2 = static_cast<uint32_t>(rows2);
    q.cols = static_cast<uint32_t>(cols);
    q.n = static_cast<uint32_t>(numel(od));
    q.p = static_cast<float>(p);
    u->write(g, q);
    set_groups(g, *s, groups_for(numel(od)));
  };
}

// [self, p, out]: self [N, M] -> out [N (N - 1) / 2].
void build_pdist(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_float(oc, x, "self");
  require_float(oc, out, "out");
  if (g.tensor(x).rank() != 2) oc.fail(ErrorKind::InvalidArgument, "self " + shape_str(g.tensor(x).max_dims) + " must be 2-D");
  double p = g.number(oc.arg(1));
  double mode = mode_for(oc, p);
  const auto& pipe = g.ctx().pipeline("distance_pairwise", "pdist", {{"MODE", mode}});
  auto u = std::make_shared<Uniform<Params>>();
  u->init(g, oc.call.name);
  // dist() reads X2 only for cdist, but the binding belongs to the pdist entry's layout as well.
  oc.node.steps.push_back(g.make_step(pipe, {{0, &g.buffer(x)}, {1, &g.dummy_buffer()}, {2, &g.buffer(out)}, {3, u->buf}}, 0));
  Step* s = &oc.node.steps.back();
  oc.node.resize = [&g, x, out, u, s, p, &call = oc.call] {
    const auto& d = g.tensor(x).dims;
    int64_t n = d[0] * (d[0] - 1) / 2;
    if (d[0] < 2) n = 0;
    set_out(call, g.tensor(out), {n});
    Params q;
    q.rows1 = static_cast<uint32_t>(d[0]);
    q.cols = static_cast<uint32_t>(d[1]);
    q.n = static_cast<uint32_t>(n);
    q.p = static_cast<float>(p);
    u->write(g, q);
    set_groups(g, *s, groups_for(static_cast<uint64_t>(n)));
  };
}

ETW_REGISTER_OP("aten._cdist_forward.default", build_cdist);
ETW_REGISTER_OP("aten._pdist_forward.default", build_pdist);

}  // namespace
}  // namespace etwebgpu::ops
