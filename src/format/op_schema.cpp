#include "format/op_schema.h"

#include <algorithm>

#include "etwebgpu/error.h"

namespace etwebgpu::format {
namespace {

// Argument names follow PyTorch's schemas (native_functions.yaml) and, for et_vk.*, ExecuTorch's
// Vulkan custom ops. Out variants are listed where the generic rule ("ns::name.X_out" ->
// "ns.name.X", "ns::name.out" -> "ns.name.default", same arguments, one out tensor) does not hold:
// other arguments, another name, or several out tensors.
std::vector<OpSchema> table() {
  const std::vector<std::string> factory = {"dtype", "layout", "device", "pin_memory"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  return {
      {"aten._native_batch_norm_legit.default",
       {"input", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps"},
       {{"aten::_native_batch_norm_legit.out", {}, 3}}},
      {"aten._native_batch_norm_legit.no_stats",
       {"input", "weight", "bias", "training", "momentum", "eps"},
       {{"aten::_native_batch_norm_legit.no_stats_out", {}, 3}}},
      {"aten._native_batch_norm_legit_no_training.default",
       {"input", "weight", "bias", "running_mean", "running_var", "momentum", "eps"},
       {{"aten::_native_batch_norm_legit_no_training.out", {}, 3}}},
      {"aten._softmax.default", {"self", "dim", "half_to_float"}, {{"aten::_softmax.out"}}},
      {"aten._to_copy.default", with({"self"}, with(factory, {"non_blocking", "memory_format"})),
       {{"aten::_to_copy.out", {"self", "non_blocking", "memory_format"}}}},
      {"aten.add.Tensor", {"self", "other", "alpha"}, {{"aten::add.out"}}},
      {"aten.all.dim", {"self", "dim", "keepdim"}, {{"aten::all.out"}}},
      {"aten.any.default", {"self"}, {{"aten::any.all_out"}}},
      {"aten.any.dim", {"self", "dim", "keepdim"}, {{"aten::any.out"}}},
      {"aten.arange.default", with({"end"}, factory), {{"aten::arange.out", {"end"}}}},
      {"aten.arange.start_step", with({"start", "end", "step"}, factory),
       {{"aten::arange.start_out", {"start", "end", "step"}}}},
      {"aten.avg_pool2d.default",
       {"self", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"}},
      {"aten.bmm.default", {"self", "mat2"}, {{"aten::bmm.out"}}},
      {"aten.cat.default", {"tensors", "dim"}},
      {"aten.clamp.default", {"self", "min", "max"}},
      {"aten.clone.default", {"self", "memory_format"}, {{"aten::clone.out"}}},
      {"aten.constant_pad_nd.default", {"self", "pad", "value"}},
      {"aten.convolution.default",
       {"input", "weight", "bias", "stride", "padding", "dilation", "transposed", "output_padding", "groups"}},
      {"aten.copy_.default", {"self", "src", "non_blocking"}, {{"aten::copy_", {}, 1, true}}},
      {"aten.div.Tensor", {"self", "other"}, {{"aten::div.out"}}},
      {"aten.div.Tensor_mode", {"self", "other", "rounding_mode"}, {{"aten::div.out_mode"}}},
      {"aten.embedding.default", {"weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse"}},
      {"aten.empty.memory_format", with({"size"}, with(factory, {"memory_format"})),
       {{"aten::empty.out", {"size", "memory_format"}}}},
      {"aten.eq.Scalar", {"self", "other"}},
      {"aten.expand_copy.default", {"self", "size", "implicit"}},
      {"aten.full.default", with({"size", "fill_value"}, factory), {{"aten::full.out", {"size", "fill_value"}}}},
      {"aten.full_like.default", with({"self", "fill_value"}, with(factory, {"memory_format"})),
       {{"aten::full_like.out", {"self", "fill_value", "memory_format"}}}},
      {"aten.gelu.default", {"self", "approximate"}},
      {"aten.index_put.default", {"self", "indices", "values", "accumulate"}, {{"aten::index_put_", {}, 1, true}}},
      {"aten.le.Scalar", {"self", "other"}},
      {"aten.leaky_relu.default", {"self", "negative_slope"}},
      {"aten.linear.default", {"input", "weight", "bias"}},
      {"aten.max.default", {"self"}, {{"aten::max.unary_out"}}},
      {"aten.max.dim", {"self", "dim", "keepdim"}, {{"aten::max.dim_max", {}, 2}}},
      {"aten.max_pool2d_with_indices.default", {"self", "kernel_size", "stride", "padding", "dilation", "ceil_mode"},
       {{"aten::max_pool2d_with_indices.out", {}, 2}}},
      {"aten.mean.default", {"self", "dtype"}, {{"aten::mean.dtype_out"}}},
      {"aten.mean.dim", {"self", "dim", "keepdim", "dtype"}, {{"aten::mean.out"}}},
      {"aten.min.default", {"self"}, {{"aten::min.unary_out"}}},
      {"aten.min.dim", {"self", "dim", "keepdim"}, {{"aten::min.dim_min", {}, 2}}},
      {"aten.mm.default", {"self", "mat2"}, {{"aten::mm.out"}}},
      {"aten.mul.Tensor", {"self", "other"}, {{"aten::mul.out"}}},
      {"aten.native_dropout.default", {"input", "p", "train"}, {{"aten::native_dropout.out", {}, 2}}},
      {"aten.native_group_norm.default", {"input", "weight", "bias", "N", "C", "HxW", "group", "eps"},
       {{"aten::native_group_norm.out", {}, 3}}},
      {"aten.native_layer_norm.default", {"input", "normalized_shape", "weight", "bias", "eps"},
       {{"aten::native_layer_norm.out", {}, 3}}},
      {"aten.ne.Scalar", {"self", "other"}},
      {"aten.ones.default", with({"size"}, factory), {{"aten::ones.out", {"size"}}}},
      {"aten.ones_like.default", with({"self"}, with(factory, {"memory_format"})),
       {{"aten::ones_like.out", {"self", "memory_format"}}}},
      {"aten.permute_copy.default", {"self", "dims"}},
      {"aten.pow.Tensor_Scalar", {"self", "exponent"}},
      {"aten.prod.dim_int", {"self", "dim", "keepdim", "dtype"}, {{"aten::prod.int_out"}}},
      {"aten.scalar_tensor.default", with({"s"}, factory), {{"aten::scalar_tensor.out", {"s"}}}},
      {"aten.select_copy.int", {"self", "dim", "index"}},
      {"aten.slice_copy.Tensor", {"self", "dim", "start", "end", "step"}},
      {"aten.split_with_sizes_copy.default", {"self", "split_sizes", "dim"}},
      {"aten.squeeze_copy.dims", {"self", "dim"}},
      {"aten.sub.Tensor", {"self", "other", "alpha"}, {{"aten::sub.out"}}},
      {"aten.sum.dim_IntList", {"self", "dim", "keepdim", "dtype"}, {{"aten::sum.IntList_out"}}},
      {"aten.topk.default", {"self", "k", "dim", "largest", "sorted"}, {{"aten::topk.values", {}, 2}}},
      {"aten.unsqueeze_copy.default", {"self", "dim"}},
      {"aten.upsample_bilinear2d.vec", {"input", "output_size", "align_corners", "scale_factors"}},
      {"aten.upsample_nearest2d.vec", {"input", "output_size", "scale_factors"}},
      {"aten.var.dim", {"self", "dim", "unbiased", "keepdim"}, {{"aten::var.out"}}},
      {"aten.var_mean.correction", {"self", "dim", "correction", "keepdim"}, {{"aten::var_mean.correction_out", {}, 2}}},
      {"aten.view_copy.default", {"self", "size"}},
      {"aten.where.self", {"condition", "self", "other"}, {{"aten::where.self_out"}}},
      {"aten.zeros.default", with({"size"}, factory), {{"aten::zeros.out", {"size"}}}},
      {"aten.zeros_like.default", with({"self"}, with(factory, {"memory_format"})),
       {{"aten::zeros_like.out", {"self", "memory_format"}}}},
      {"dim_order_ops._to_dim_order_copy.default",
       with({"self"}, with(factory, {"non_blocking", "dim_order"})),
       {{"dim_order_ops::_to_dim_order_copy.out", {"self", "non_blocking", "dim_order"}}}},
      {"et_vk.apply_rotary_emb.default", {"xq", "xk", "freqs_cos", "freqs_sin"}},
      {"et_vk.apply_rotary_emb_hf.default", {"xq", "xk", "freqs_cos", "freqs_sin", "start_pos"}},
      {"et_vk.conv_with_clamp.default",
       {"input", "weight", "bias", "stride", "padding", "dilation", "transposed", "output_padding", "groups",
        "output_min", "output_max"}},
      {"et_vk.linear_dq8ca_q4gsw.default",
       {"input", "input_scales", "input_zp", "weights", "weight_sums", "weight_scales", "group_size", "bias"}},
      {"et_vk.linear_q8ta_q8csw.default",
       {"x", "input_scale", "input_zero_point", "weights", "weight_sums", "weight_scales", "bias"}},
      {"et_vk.q8ta_linear.default",
       {"x", "input_scale", "input_zero_point", "weights", "weight_sums", "weight_scales", "output_scale",
        "output_zero_point", "bias", "activation"}},
      {"et_vk.q8ta_linear_gemv.default",
       {"x", "input_scale", "input_zero_point", "weights", "weight_sums", "weight_scales", "output_scale",
        "output_zero_point", "bias", "activation"}},
      {"et_vk.rms_norm.default", {"input", "weight", "eps"}},
      {"et_vk.sdpa.default", {"q", "k", "v", "attn_mask", "scale"}},
      {"sym_size.int", {"self", "dim"}},
      {"torchao.choose_qparams_affine.default",
       {"input", "mapping_type", "block_size", "target_dtype", "quant_min", "quant_max", "eps", "scale_dtype",
        "zero_point_dtype", "keepdim"},
       {{"torchao::choose_qparams_affine.out", {}, 2}}},
  };
}

// Fills each out variant's layout from its argument names; a name the operator lacks is a bug
// in the table above.
void derive_layout(const OpSchema& op, OutVariant& v) {
  const std::vector<std::string>& args = v.args.empty() ? op.args : v.args;
  v.layout.clear();
  for (const std::string& a : v.args) {
    if (std::find(op.args.begin(), op.args.end(), a) == op.args.end())
      throw Error(ErrorKind::Internal, v.kernel + " names argument '" + a + "', which " + op.name + " lacks");
  }
  for (const std::string& a : op.args) {
    auto it = std::find(args.begin(), args.end(), a);
    v.layout.push_back(it == args.end() ? -1 : static_cast<int>(it - args.begin()));
  }
  if (v.in_place) v.layout.push_back(0);  // the output is self, the first argument
  else if (v.outputs == 1) v.layout.push_back(static_cast<int>(args.size()));
}

}  // namespace

const std::vector<OpSchema>& op_schemas() {
  static const std::vector<OpSchema> schemas = [] {
    std::vector<OpSchema> t = table();
    std::sort(t.begin(), t.end(), [](const OpSchema& a, const OpSchema& b) { return a.name < b.name; });
    for (size_t i = 0; i < t.size(); ++i) {
      if (i && t[i].name == t[i - 1].name) throw Error(ErrorKind::Internal, "op schema listed twice: " + t[i].name);
      for (OutVariant& v : t[i].out_variants) derive_layout(t[i], v);
    }
    return t;
  }();
  return schemas;
}

const OpSchema* find_op_schema(std::string_view op) {
  const auto& t = op_schemas();
  auto it = std::lower_bound(t.begin(), t.end(), op, [](const OpSchema& s, std::string_view n) { return s.name < n; });
  return it != t.end() && it->name == op ? &*it : nullptr;
}

OutVariantMatch find_out_variant(std::string_view kernel) {
  for (const OpSchema& s : op_schemas())
    for (const OutVariant& v : s.out_variants)
      if (v.kernel == kernel) return {&s, &v};
  return {};
}

int arg_index(std::string_view op, std::string_view arg) {
  const OpSchema* s = find_op_schema(op);
  if (!s) return -1;
  auto it = std::find(s->args.begin(), s->args.end(), arg);
  return it == s->args.end() ? -1 : static_cast<int>(it - s->args.begin());
}

}  // namespace etwebgpu::format
