// torchao.choose_qparams_affine as ExecuTorch's 8da4w export emits it (per-token activation
// parameters): [input, mapping_type, block_size, target_dtype, quant_min, quant_max, eps,
// scale_dtype, zero_point_dtype, keepdim, out = ValueList[scale, zero_point]].
// Only per-row blocks (block_size [1, ..., 1, K], K > 1); torchao's _choose_qparams_affine math in
// f32 (choose_qparams_affine.wgsl): ASYMMETRIC and SYMMETRIC mappings, eps defaulting to
// torch.finfo(float32).eps. scale: float; zero_point: int8 or int32 (dtypes from the outputs).
#include <cfloat>

#include "ops/quantized/choose_qparams.h"

#include "ops/quantized/q8_common.h"

namespace etwebgpu::ops {

q8::RowQparams q8::row_qparams_args(const OpContext& oc, int32_t x, VkDType zp_dtype) {
  Graph& g = oc.g;
  RowQparams a;
  const std::string mapping = g.string(oc.arg(1));
  if (mapping == "ASYMMETRIC") a.mode = 0;
  else if (mapping == "SYMMETRIC") a.mode = 1;
  else if (mapping == "SYMMETRIC_NO_CLIPPING_ERR") oc.fail(ErrorKind::Unsupported, "mapping_type SYMMETRIC_NO_CLIPPING_ERR is not supported");
  else oc.fail(ErrorKind::Format, "unknown mapping_type \"" + mapping + "\"");
  const auto& tx = g.tensor(x);
  const auto block = g.int_list(oc.arg(2));
  const int64_t r = tx.rank();
  bool per_row = r >= 1 && static_cast<int64_t>(block.size()) == r && block.back() == tx.max_dims.back() && block.back() > 1;
  for (int64_t i = 0; per_row && i + 1 < r; ++i) per_row = block[i] == 1;
  if (!per_row)
    oc.fail(ErrorKind::Unsupported, "block_size " + shape_str(block) + " for input " + shape_str(tx.max_dims) +
                                        ": only per-row blocks [1, ..., 1, K] with K > 1 are supported");
  const int64_t qmin = g.integer(oc.arg(4)), qmax = g.integer(oc.arg(5));
  if (qmin >= qmax) oc.fail(ErrorKind::Format, "quant_min " + std::to_string(qmin) + " must be below quant_max " + std::to_string(qmax));
  const int64_t zlo = zp_dtype == VkDType::Int8 ? -128 : INT32_MIN, zhi = zp_dtype == VkDType::Int8 ? 127 : INT32_MAX;
  if (qmin < zlo || qmax > zhi)
    oc.fail(ErrorKind::Format, "[quant_min, quant_max] = [" + std::to_string(qmin) + ", " + std::to_string(qmax) +
                                   "] does not fit the zero_point dtype");
  double eps = FLT_EPSILON;  // torch.finfo(torch.float32).eps
  if (auto e = g.opt_number(oc.arg(6))) {
    eps = *e;
    if (!std::isfinite(eps) || eps < 0) oc.fail(ErrorKind::Format, "eps must be finite and non-negative, got " + num_str(eps));
  }
  a.keepdim = g.is_null(oc.arg(9)) ? false : g.boolean(oc.arg(9));
  // Python's int((quant_max + quant_min + 1) / 2): true division, truncated toward zero.
  a.sym_zp = static_cast<int32_t>(std::trunc(static_cast<double>(qmax + qmin + 1) / 2.0));
  a.denom = static_cast<float>(a.mode == 0 ? static_cast<double>(qmax - qmin) : static_cast<double>(qmax - qmin) / 2.0);
  a.qmin = static_cast<float>(qmin);
  a.qmax = static_cast<float>(qmax);
  a.eps = static_cast<float>(eps);
  return a;
}

namespace {

struct CqParams {
  uint32_t rows, k, groups, mode;
  float qmin, qmax, denom, eps;
  int32_t sym_zp;
  uint32_t pad0, pad1, pad2;
};
static_assert(sizeof(CqParams) == 48);

void build_choose_qparams_affine(OpContext& oc) {
  Graph& g = oc.g;
  if (oc.nargs() != 11) oc.fail(ErrorKind::Format, "expects 11 arguments, got " + std::to_string(oc.nargs()));
  int32_t x = oc.arg(0);
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16}, "input");
  const auto outs = g.value_list(oc.out());
  if (outs.size() != 2) oc.fail(ErrorKind::Format, "expects 2 outputs (scale, zero_point), got " + std::to_string(outs.size()));
  int32_t sc = outs[0], zp = outs[1];
  require_dtype(oc, sc, {VkDType::Float32, VkDType::Float16}, "scale");
  require_dtype(oc, zp, {VkDType::Int8, VkDType::Int32}, "zero_point");
  const q8::RowQparams a = q8::row_qparams_args(oc, x, g.tensor(zp).dtype);
  const int64_t K = g.tensor(x).max_dims.back();
  CqParams base{0, static_cast<uint32_t>(K), 0, a.mode, a.qmin, a.qmax, a.denom, a.eps, a.sym_zp, 0, 0, 0};
  auto dims = [x, keepdim = a.keepdim](const kernel::Live& l) {
    std::vector<int64_t> d = l.dims(x);
    if (keepdim) d.back() = 1;
    else d.pop_back();
    return d;
  };
  oc.output(sc, dims);
  oc.output(zp, dims);
  oc.add(kernel::Kernel("choose_qparams_affine")
             .input("X", x)
             .output("SC", sc)
             .output("ZP", zp)
             .params<CqParams>([x, base](const kernel::Live& l) {
               CqParams p = base;
               if (l.dims(x).back() != base.k)
                 throw Error(ErrorKind::InvalidArgument, "input " + shape_str(l.dims(x)) + " must end in K = " + std::to_string(base.k));
               p.rows = kernel::u32(l.numel(x) / base.k, "rows");
               p.groups = static_cast<uint32_t>(ceil_div(p.rows, 4));
               return p;
             })
             .groups([x, K](const kernel::Live& l) { return kernel::Groups::linear(ceil_div(static_cast<uint64_t>(l.numel(x) / K), 4)); })
             .variant("rows"));
}

ETW_REGISTER_OP("torchao.choose_qparams_affine.default", build_choose_qparams_affine);

}  // namespace
}  // namespace etwebgpu::ops
