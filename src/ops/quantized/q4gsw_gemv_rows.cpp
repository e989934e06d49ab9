#include "ops/quantized/q4gsw_gemv_rows.h"

#include <cmath>
#include <cstring>

#include "ops/norm/rms_norm_kernels.h"

namespace etwebgpu::ops::q4 {
namespace {

// Params with the 8da4w fields (q4gsw_weights.wgsl under DQ8CA).
struct DqLinParams {
  LinParams lin;
  uint32_t mode;
  int32_t sym_zp;
  float qmin, qmax, denom, eps;
  uint32_t pad3, pad4;
};
static_assert(sizeof(DqLinParams) == 80);

}  // namespace

int32_t read_input(OpContext& oc, size_t arg, NormIn* norm) {
  Graph& g = oc.g;
  const int32_t a = oc.arg(arg);
  *norm = NormIn{};
  if (g.kind(a) != format::VkValueKind::ValueList) return a;
  const auto ids = g.value_list(a);
  if (ids.size() != 4) oc.fail(ErrorKind::Format, "a folded norm's input list must hold [x, weight, eps, y], got " + std::to_string(ids.size()) + " values");
  norm->x = ids[0];
  norm->y = ids[3];
  require_dtype(oc, norm->x, {VkDType::Float32, VkDType::Float16}, "norm input");
  require_dtype(oc, norm->y, {VkDType::Float32, VkDType::Float16}, "normalized input");
  const auto& tx = g.tensor(norm->x);
  if (tx.rank() < 1 || tx.max_dims != g.tensor(norm->y).max_dims || tx.dtype != g.tensor(norm->y).dtype)
    oc.fail(ErrorKind::Format, "norm input " + shape_str(tx.max_dims) + " and normalized input " + shape_str(g.tensor(norm->y).max_dims) +
                                   " must have one shape and dtype");
  const int64_t K = tx.max_dims.back();
  if (!g.is_null(ids[1])) {
    norm->weight = ids[1];
    require_dtype(oc, norm->weight, {VkDType::Float32, VkDType::Float16}, "norm weight");
    if (g.tensor(norm->weight).max_numel() != K)
      oc.fail(ErrorKind::Format, "norm weight " + shape_str(g.tensor(norm->weight).max_dims) + " must hold K = " + std::to_string(K) + " values");
  }
  const double eps = g.number(ids[2]);
  if (!std::isfinite(eps) || eps < 0) oc.fail(ErrorKind::Format, "norm eps must be finite and not negative, got " + std::to_string(eps));
  norm->eps = static_cast<float>(eps);
  oc.output_like(norm->y, norm->x);
  return norm->y;
}

void add_norm_kernel(OpContext& oc, const NormIn& norm, std::function<bool(const kernel::Live&)> when) {
  add_rms_norm_kernels(oc, norm.x, norm.weight, norm.eps, norm.y, std::move(when));
}

bool gemv_rows_fits(Graph& g, int32_t x, const LinParams& base) {
  const auto& tx = g.tensor(x);
  return base.k % 8 == 0 && base.gs % 8 == 0 && base.wrow % 4 == 0 && base.wrow * 2 >= base.k &&
         g.buffer(x).size() >= 4u * kernel::element_bytes(tx.storage);
}

kernel::Kernel gemv_rows(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                         const LinParams& base, const ActQuant& aq, const Epilogue& ep, const NormIn& norm) {
  Graph& g = oc.g;
  // A chunk of four words when every weight row is whole vec4s and K fills them.
  const bool word4 = base.wrow % 16 == 0 && base.k % 32 == 0;
  const uint32_t chunk_weights = word4 ? 32 : 8;
  // Four outputs per invocation for wide outputs, two otherwise: 8 or 16 outputs per workgroup.
  const uint32_t rpt = base.n >= 8192 ? 4 : 2, kt = 64;
  const uint64_t per = (256 / kt) * rpt;

  kernel::Kernel k("q4gsw_gemv_rows");
  if (word4) k.define("WORD4");
  if (base.gs % chunk_weights == 0) k.define("GS_CHUNK");
  k.constant("RPT", rpt).constant("KT", kt);
  k.input("X", norm.active() ? norm.x : x, true)
      .buffer("W", g.raw_constant_buffer(w), word4 ? "vec4<u32>" : "u32", kernel::Access::Read)
      .input("SC", sc)
      .input("BIAS", bias);
  LinParams lp = base;
  if (norm.active()) {
    k.define("NORM_IN");
    if (norm.weight >= 0) k.define("NORM_W").input("NW", norm.weight, true);
    lp.norm_eps = norm.eps;
  }
  if (aq.source == ActQuant::Source::Tensors) k.define("DQ8CA").input("ISC", aq.scales).input("IZP", aq.zero_points);
  if (aq.source == ActQuant::Source::Self) k.define("DQ8CA").define("DQ8CA_SELF");
  // Reductions (the sums, an 8da4w row's range) by subgroup where the device has subgroups of at
  // most KT invocations.
  if (use_subgroups(oc, kt)) k.define("SUBGROUPS");
  k.output("O", outs[0]);
  if (outs.size() > 1) k.define("MULTI").output("O1", outs[1]);
  if (outs.size() > 2) k.define("MULTI3").output("O2", outs[2]);
  auto rows = [x, K = base.k](const kernel::Live& l) { return static_cast<uint64_t>(l.numel(x) / K); };
  if (aq.source == ActQuant::Source::None) {
    ep.apply<LinParams>(k, [rows, lp](const kernel::Live& l) {
      LinParams p = lp;
      p.m = kernel::u32(rows(l), "rows");
      return p;
    });
  } else {
    DqLinParams dq{};
    dq.lin = lp;
    dq.mode = aq.args.mode;
    dq.sym_zp = aq.args.sym_zp;
    dq.qmin = aq.args.qmin;
    dq.qmax = aq.args.qmax;
    dq.denom = aq.args.denom;
    dq.eps = aq.args.eps;
    ep.apply<DqLinParams>(k, [rows, dq](const kernel::Live& l) {
      DqLinParams p = dq;
      p.lin.m = kernel::u32(rows(l), "rows");
      return p;
    });
  }
  k.groups([rows, n = base.n, per](const kernel::Live& l) { return kernel::Groups::linear(rows(l) * kernel::ceil_div(n, per)); });
  return k;
}

}  // namespace etwebgpu::ops::q4
