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
  // Batch dims of x1 and x2 and their broadcast; throws when they do not broadcast.
  struct Batch { std::vector<int64_t> b1, b2, out; };
  auto batch = [x1, x2](const kernel::Live& l) {
    const auto &d1 = l.dims(x1), &d2 = l.dims(x2);
    if (d2.back() != d1.back())
      throw Error(ErrorKind::InvalidArgument, "x1 " + shape_str(d1) + " and x2 " + shape_str(d2) + " differ in their last dim");
    Batch b{{d1.begin(), d1.end() - 2}, {d2.begin(), d2.end() - 2}, {}};
    try {
      b.out = broadcast_shape(b.b1, b.b2);
    } catch (const Error&) {
      throw Error(ErrorKind::InvalidArgument, "batch dims of x1 " + shape_str(d1) + " and x2 " + shape_str(d2) + " do not broadcast");
    }
    return b;
  };
  oc.output(out, [x1, x2, batch](const kernel::Live& l) {
    std::vector<int64_t> od = batch(l).out;
    od.push_back(l.dims(x1).end()[-2]);
    od.push_back(l.dims(x2).end()[-2]);
    return od;
  });
  oc.add(kernel::Kernel("distance_pairwise", "cdist")
             .constant("MODE", mode)
             .input("X1", x1)
             .input("X2", x2)
             .output("Y", out)
             .params<Params>([x1, x2, out, batch, p](const kernel::Live& l) {
               Batch b = batch(l);
               int64_t rows1 = l.dims(x1).end()[-2], rows2 = l.dims(x2).end()[-2], cols = l.dims(x1).back();
               // Batch strides in elements: a broadcast batch index times the row block of each input.
               auto s1 = broadcast_strides(b.b1, b.out), s2 = broadcast_strides(b.b2, b.out);
               for (auto& v : s1) v *= rows1 * cols;
               for (auto& v : s2) v *= rows2 * cols;
               Params q;
               q.b1 = make_shape(b.out, &s1);
               q.b2 = make_shape(b.out, &s2);
               q.rows1 = kernel::u32(rows1, "x1 rows");
               q.rows2 = kernel::u32(rows2, "x2 rows");
               q.cols = kernel::u32(cols, "columns");
               q.n = kernel::u32(l.numel(out), "output size");
               q.p = static_cast<float>(p);
               return q;
             })
             .flat(out));
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
  oc.output(out, [x](const kernel::Live& l) {
    int64_t n = l.dims(x)[0];
    return std::vector<int64_t>{n < 2 ? 0 : n * (n - 1) / 2};
  });
  // dist() reads X2 only for cdist, but the binding belongs to the pdist entry's layout as well.
  oc.add(kernel::Kernel("distance_pairwise", "pdist")
             .constant("MODE", mode)
             .input("X1", x)
             .input("X2", -1)
             .output("Y", out)
             .params<Params>([x, out, p](const kernel::Live& l) {
               Params q;
               q.rows1 = kernel::u32(l.dims(x)[0], "rows");
               q.cols = kernel::u32(l.dims(x)[1], "columns");
               q.n = kernel::u32(l.numel(out), "output size");
               q.p = static_cast<float>(p);
               return q;
             })
             .flat(out));
}

ETW_REGISTER_OP("aten._cdist_forward.default", build_cdist);
ETW_REGISTER_OP("aten._pdist_forward.default", build_pdist);

}  // namespace
}  // namespace etwebgpu::ops
