#include "ops/quantized/q4gsw_gemv_rows.h"

#include <cmath>
#include <cstring>

#include "format/escape.h"
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

namespace {

struct SwigluParams {
  uint32_t n, pad0, pad1, pad2;
};

void read_norm(OpContext& oc, const std::vector<int32_t>& ids, FoldedInput* f) {
  Graph& g = oc.g;
  f->kind = FoldedInput::Kind::Norm;
  f->x = ids[0];
  f->y = ids[3];
  require_dtype(oc, f->x, {VkDType::Float32, VkDType::Float16}, "norm input");
  require_dtype(oc, f->y, {VkDType::Float32, VkDType::Float16}, "normalized input");
  const auto& tx = g.tensor(f->x);
  if (tx.rank() < 1 || tx.max_dims != g.tensor(f->y).max_dims || tx.dtype != g.tensor(f->y).dtype)
    oc.fail(ErrorKind::Format, "norm input " + shape_str(tx.max_dims) + " and normalized input " + shape_str(g.tensor(f->y).max_dims) +
                                   " must have one shape and dtype");
  const int64_t K = tx.max_dims.back();
  if (!g.is_null(ids[1])) {
    f->weight = ids[1];
    require_dtype(oc, f->weight, {VkDType::Float32, VkDType::Float16}, "norm weight");
    if (g.tensor(f->weight).max_numel() != K)
      oc.fail(ErrorKind::Format, "norm weight " + shape_str(g.tensor(f->weight).max_dims) + " must hold K = " + std::to_string(K) + " values");
  }
  const double eps = g.number(ids[2]);
  if (!std::isfinite(eps) || eps < 0) oc.fail(ErrorKind::Format, "norm eps must be finite and not negative, got " + std::to_string(eps));
  f->eps = static_cast<float>(eps);
}

void read_swiglu(OpContext& oc, const std::vector<int32_t>& ids, FoldedInput* f) {
  Graph& g = oc.g;
  f->kind = FoldedInput::Kind::Swiglu;
  f->x = ids[0];
  f->up = ids[1];
  f->y = ids[2];
  const std::string form = g.string(ids[3]);
  if (form != "silu" && form != "sigmoid")
    oc.fail(ErrorKind::Format, "a folded SwiGLU's form must be \"silu\" or \"sigmoid\", got \"" + format::escape_untrusted(form) + "\"");
  f->sigmoid = form == "sigmoid";
  const char* what[3] = {"SwiGLU gate", "SwiGLU up", "SwiGLU output"};
  for (int i = 0; i < 3; ++i) {
    require_dtype(oc, ids[i], {VkDType::Float32, VkDType::Float16}, what[i]);
    if (g.tensor(ids[i]).rank() < 1 || g.tensor(ids[i]).max_dims != g.tensor(f->x).max_dims || g.tensor(ids[i]).dtype != g.tensor(f->x).dtype)
      oc.fail(ErrorKind::Format, std::string(what[i]) + " " + shape_str(g.tensor(ids[i]).max_dims) + " must have the gate's shape " +
                                     shape_str(g.tensor(f->x).max_dims) + " and dtype");
  }
}

}  // namespace

bool takes_folded_input(const std::string& name) {
  return name == "et_vk.linear_q4gsw.default" || name == "etwebgpu.linear_q4gsw_multi" ||
         name == "etwebgpu.linear_dq8ca_q4gsw_qparams" || name == "etwebgpu.linear_dq8ca_q4gsw_qparams_multi";
}

int32_t read_input(OpContext& oc, size_t arg, FoldedInput* fold) {
  Graph& g = oc.g;
  const int32_t a = oc.arg(arg);
  *fold = FoldedInput{};
  if (g.kind(a) != format::VkValueKind::ValueList) return a;
  const auto ids = g.value_list(a);
  if (ids.size() == 4 && g.kind(ids[3]) == format::VkValueKind::String) read_swiglu(oc, ids, fold);
  else if (ids.size() == 4) read_norm(oc, ids, fold);
  else
    oc.fail(ErrorKind::Format, "a folded input list must hold [x, weight, eps, y] (an RMSNorm) or [gate, up, y, form] (SwiGLU), got " +
                                   std::to_string(ids.size()) + " values");
  oc.output_like(fold->y, fold->x);
  return fold->y;
}

void add_fold_kernel(OpContext& oc, const FoldedInput& fold, std::function<bool(const kernel::Live&)> when) {
  if (fold.kind == FoldedInput::Kind::Norm) {
    add_rms_norm_kernels(oc, fold.x, fold.weight, fold.eps, fold.y, std::move(when));
    return;
  }
  kernel::Kernel k("q4gsw_swiglu_input");
  if (fold.sigmoid) k.define("SIGMOID_FORM");
  oc.add(k.input("G", fold.x)
             .input("U", fold.up)
             .output("Y", fold.y)
             .params<SwigluParams>([y = fold.y](const kernel::Live& l) { return SwigluParams{kernel::u32(l.numel(y), "SwiGLU elements"), 0, 0, 0}; })
             .flat(fold.y)
             .when(std::move(when))
             .variant("swiglu"));
}

bool gemv_rows_fits(Graph& g, int32_t x, const LinParams& base) {
  const auto& tx = g.tensor(x);
  return base.k % 8 == 0 && base.gs % 8 == 0 && base.wrow % 4 == 0 && base.wrow * 2 >= base.k &&
         g.buffer(x).size() >= 4u * kernel::element_bytes(tx.storage);
}

kernel::Kernel gemv_rows(OpContext& oc, int32_t x, int32_t w, int32_t sc, int32_t bias, const std::vector<int32_t>& outs,
                         const LinParams& base, const ActQuant& aq, const Epilogue& ep, const FoldedInput& fold) {
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
  k.input("X", fold.active() ? fold.x : x, true)
      .buffer("W", g.raw_constant_buffer(w), word4 ? "vec4<u32>" : "u32", kernel::Access::Read)
      .input("SC", sc)
      .input("BIAS", bias);
  LinParams lp = base;
  if (fold.kind == FoldedInput::Kind::Norm) {
    k.define("NORM_IN");
    if (fold.weight >= 0) k.define("NORM_W").input("NW", fold.weight, true);
    lp.norm_eps = fold.eps;
  }
  if (fold.kind == FoldedInput::Kind::Swiglu) {
    k.define("SWIGLU_IN").input("UP", fold.up, true);
    if (fold.sigmoid) k.define("SIGMOID_FORM");
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
