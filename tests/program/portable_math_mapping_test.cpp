// Every portable-library out variant of the math / reduction / norm / topk / distance part maps
// (program_graph.cpp's map_kernel_call) to an operator the registry has, with one return entry
// per output dropped for the multi-output ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "program/program_graph.h"

namespace {

using etwebgpu::graph::kernel_call_outputs;
using etwebgpu::graph::map_kernel_call;
using etwebgpu::graph::OpRegistry;

struct Expect {
  const char* out_variant;
  const char* op;
  int outputs;
};

TEST(PortableMathMapping, EveryOutVariantMapsToARegisteredOperator) {
  const Expect cases[] = {
      {"aten::acos.out", "aten.acos.default", 1}, {"aten::acosh.out", "aten.acosh.default", 1},
      {"aten::asin.out", "aten.asin.default", 1}, {"aten::asinh.out", "aten.asinh.default", 1},
      {"aten::atan.out", "aten.atan.default", 1}, {"aten::atanh.out", "aten.atanh.default", 1},
      {"aten::atan2.out", "aten.atan2.default", 1}, {"aten::cosh.out", "aten.cosh.default", 1},
      {"aten::sinh.out", "aten.sinh.default", 1}, {"aten::tan.out", "aten.tan.default", 1},
      {"aten::erf.out", "aten.erf.default", 1}, {"aten::expm1.out", "aten.expm1.default", 1},
      {"aten::log10.out", "aten.log10.default", 1}, {"aten::log1p.out", "aten.log1p.default", 1},
      {"aten::log2.out", "aten.log2.default", 1}, {"aten::logit.out", "aten.logit.default", 1},
      {"aten::sign.out", "aten.sign.default", 1}, {"aten::isinf.out", "aten.isinf.default", 1},
      {"aten::isnan.out", "aten.isnan.default", 1}, {"aten::_conj_physical.out", "aten._conj_physical.default", 1},
      {"aten::fmod.Tensor_out", "aten.fmod.Tensor", 1}, {"aten::fmod.Scalar_out", "aten.fmod.Scalar", 1},
      {"aten::remainder.Tensor_out", "aten.remainder.Tensor", 1}, {"aten::remainder.Scalar_out", "aten.remainder.Scalar", 1},
      {"aten::floor_divide.out", "aten.floor_divide.default", 1}, {"aten::div.Scalar_mode_out", "aten.div.Scalar_mode", 1},
      {"aten::pow.Scalar_out", "aten.pow.Scalar", 1}, {"aten::rsub.Scalar_out", "aten.rsub.Scalar", 1},
      {"aten::clamp.Tensor_out", "aten.clamp.Tensor", 1}, {"aten::elu.out", "aten.elu.default", 1},
      {"aten::glu.out", "aten.glu.default", 1}, {"aten::bitwise_and.Scalar_out", "aten.bitwise_and.Scalar", 1},
      {"aten::bitwise_or.Scalar_out", "aten.bitwise_or.Scalar", 1}, {"aten::bitwise_xor.Scalar_out", "aten.bitwise_xor.Scalar", 1},
      {"aten::var.correction_out", "aten.var.correction", 1}, {"aten::var.out", "aten.var.dim", 1},
      {"aten::var_mean.correction_out", "aten.var_mean.correction", 2}, {"aten::prod.out", "aten.prod.default", 1},
      {"aten::prod.int_out", "aten.prod.dim_int", 1}, {"aten::max.dim_max", "aten.max.dim", 2},
      {"aten::min.dim_min", "aten.min.dim", 2}, {"aten::max.unary_out", "aten.max.default", 1},
      {"aten::min.unary_out", "aten.min.default", 1}, {"aten::mean.dtype_out", "aten.mean.default", 1},
      {"aten::any.dims_out", "aten.any.dims", 1},
      {"aten::_native_batch_norm_legit.out", "aten._native_batch_norm_legit.default", 3},
      {"aten::_native_batch_norm_legit.no_stats_out", "aten._native_batch_norm_legit.no_stats", 3},
      {"aten::topk.values", "aten.topk.default", 2}, {"aten::_cdist_forward.out", "aten._cdist_forward.default", 1},
      {"aten::_pdist_forward.out", "aten._pdist_forward.default", 1},
  };
  for (const auto& c : cases) {
    etwebgpu::format::VkGraphIR ir;
    ir.values.resize(16);
    std::vector<int32_t> args;
    for (int32_t i = 0; i < 12; ++i) args.push_back(i);
    std::string op;
    EXPECT_EQ(kernel_call_outputs(c.out_variant), c.outputs) << c.out_variant;
    ASSERT_TRUE(map_kernel_call(c.out_variant, args, op, ir)) << c.out_variant;
    EXPECT_EQ(op, c.op) << c.out_variant;
    EXPECT_TRUE(OpRegistry::global().has(op)) << c.out_variant << " -> " << op << " is not registered";
    if (c.outputs > 1) {
      // The outs (the last `outputs` of the args given) arrive as one ValueList, last.
      const auto& list = ir.values[args.back()];
      ASSERT_EQ(list.kind, etwebgpu::format::VkValueKind::ValueList) << c.out_variant;
      std::vector<int32_t> want;
      for (int k = c.outputs; k > 0; --k) want.push_back(12 - k);
      EXPECT_EQ(list.ids, want) << c.out_variant;
    }
  }
}

}  // namespace
