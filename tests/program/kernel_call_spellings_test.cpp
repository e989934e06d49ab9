// Every KernelCall spelling `etwebgpu ops` lists loads and runs: for each, a .pte holding that one
// KernelCall in the layout ExecuTorch's emitter writes (out-variant schema arguments, the outs,
// one return entry), compared with the same operator run as a delegate call on the same inputs.
// A listed spelling without a row here, or one that fails to load or run, fails the test by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "etwebgpu/builder.h"
#include "etwebgpu/inspect.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// One call, in tokens separated by spaces. Tensors: a kind letter, dims joined by 'x' ("_": 0-dim),
// optionally ":N" (integers below N). Kinds: f float in [-1, 1], p float in [0.5, 2], w a float
// constant (weights), i int32, l int64, a int64 0, 1, 2, ... (unique indices), b bool, q int8, m a float
// mutable buffer (the self of an in-place kernel). Other arguments: 3 Int, 1.5 Double, T / F Bool,
// N Null, [1,2] IntList, 's' String, <t,t> TensorList, ?<t> optional TensorList.
struct Row {
  const char* kernel;  // "aten::add.out"
  const char* args;    // the out variant's arguments, outs excluded
  const char* outs;    // out tensors (or one <..> list); for in-place kernels, the return entry
  const char* vk = nullptr;     // the functional op's arguments where they differ from `args`
  const char* vk_op = nullptr;  // the op compared against, where not the one `ops` lists (in-place)
  bool values = true;           // false: uninitialized contents (empty.out), shapes only
};

const Row kRows[] = {
    {"aten::_adaptive_avg_pool2d.out", "f1x2x4x4 [2,2]", "f1x2x2x2"},
    {"aten::_cdist_forward.out", "f2x3x4 f2x5x4 2.0 N", "f2x3x5"},
    {"aten::_conj_physical.out", "f2x3", "f2x3"},
    {"aten::_log_softmax.out", "f2x3 1 F", "f2x3"},
    {"aten::_native_batch_norm_legit.out", "f2x3x4 w3 w3 p3 p3 F 0.1 1e-5", "f2x3x4 f0 f0"},
    {"aten::_native_batch_norm_legit.no_stats_out", "f2x3x4 w3 w3 T 0.1 1e-5", "f2x3x4 f3 f3"},
    {"aten::_native_batch_norm_legit_no_training.out", "f2x3x4 w3 w3 p3 p3 0.1 1e-5", "f2x3x4 f0 f0"},
    {"aten::_pdist_forward.out", "f4x3 2.0", "f6"},
    {"aten::_softmax.out", "f2x3 1 F", "f2x3"},
    {"aten::_to_copy.out", "f2x3 F N", "f2x3", "f2x3 N N N N F N"},
    {"aten::_unsafe_view.out", "f2x3 [3,2]", "f3x2"},
    {"aten::_upsample_bilinear2d_aa.out", "f1x1x4x4 [2,2] F N N", "f1x1x2x2"},
    {"aten::_upsample_bilinear2d_aa.vec_out", "f1x1x4x4 [2,2] F N", "f1x1x2x2"},
    {"aten::abs.out", "f2x3", "f2x3"},
    {"aten::acos.out", "f2x3", "f2x3"},
    {"aten::acosh.out", "p2x3", "f2x3"},
    {"aten::adaptive_avg_pool2d.out", "f1x2x4x4 [2,2]", "f1x2x2x2"},
    {"aten::add.Scalar_out", "f2x3 1.5 1", "f2x3"},
    {"aten::add.out", "f2x3 f2x3 1", "f2x3"},
    {"aten::addmm.out", "f3 f2x4 w4x3 1 1", "f2x3"},
    {"aten::alias_copy.out", "f2x3", "f2x3"},
    {"aten::all.out", "b2x3 1 F", "b2"},
    {"aten::amax.out", "f2x3 [1] F", "f2"},
    {"aten::amin.out", "f2x3 [1] F", "f2"},
    {"aten::any.all_out", "b2x3", "b_"},
    {"aten::any.out", "b2x3 1 F", "b2"},
    {"aten::any.dims_out", "b2x3 [1] F", "b2"},
    {"aten::arange.out", "5", "f5", "5 N N N N"},
    {"aten::arange.start_out", "1 7 2", "f3", "1 7 2 N N N N"},
    {"aten::argmax.out", "f2x3 1 F", "l2"},
    {"aten::argmin.out", "f2x3 1 F", "l2"},
    {"aten::as_strided_copy.out", "f2x3 [3,2] [1,3] N", "f3x2"},
    {"aten::asin.out", "f2x3", "f2x3"},
    {"aten::asinh.out", "f2x3", "f2x3"},
    {"aten::atan.out", "f2x3", "f2x3"},
    {"aten::atan2.out", "f2x3 f2x3", "f2x3"},
    {"aten::atanh.out", "f2x3", "f2x3"},
    {"aten::avg_pool2d.out", "f1x1x4x4 [2,2] [2,2] [0,0] F T N", "f1x1x2x2"},
    {"aten::bitwise_and.Scalar_out", "i2x3:8 3", "i2x3"},
    {"aten::bitwise_and.Tensor_out", "i2x3:8 i2x3:8", "i2x3"},
    {"aten::bitwise_not.out", "b2x3", "b2x3"},
    {"aten::bitwise_or.Scalar_out", "i2x3:8 3", "i2x3"},
    {"aten::bitwise_or.Tensor_out", "i2x3:8 i2x3:8", "i2x3"},
    {"aten::bitwise_xor.Scalar_out", "i2x3:8 3", "i2x3"},
    {"aten::bitwise_xor.Tensor_out", "i2x3:8 i2x3:8", "i2x3"},
    {"aten::bmm.out", "f2x3x4 f2x4x5", "f2x3x5"},
    {"aten::cat.out", "<f2x3,f1x3> 0", "f3x3"},
    {"aten::ceil.out", "f2x3", "f2x3"},
    {"aten::clamp.Tensor_out", "f2x3 f2x3 N", "f2x3"},
    {"aten::clamp.out", "f2x3 -0.5 0.5", "f2x3"},
    {"aten::clone.out", "f2x3 N", "f2x3"},
    {"aten::constant_pad_nd.out", "f2x3 [1,1] 0.5", "f2x5"},
    {"aten::convolution.out", "f1x2x5x5 w3x2x3x3 w3 [1,1] [1,1] [1,1] F [0,0] 1", "f1x3x5x5"},
    {"aten::copy.out", "f2x3 f1x3 F", "f2x3"},
    {"aten::copy_", "m2x3 f1x3 F", "f2x3", nullptr, "aten.copy.default"},
    {"aten::cos.out", "f2x3", "f2x3"},
    {"aten::cosh.out", "f2x3", "f2x3"},
    {"aten::cumsum.out", "f2x3 1 N", "f2x3"},
    {"aten::detach_copy.out", "f2x3", "f2x3"},
    {"aten::diagonal_copy.out", "f3x3 0 0 1", "f3"},
    {"aten::div.Scalar_out", "f2x3 2.0", "f2x3"},
    {"aten::div.Scalar_mode_out", "f2x3 0.3 'floor'", "f2x3"},
    {"aten::div.out", "f2x3 p2x3", "f2x3"},
    {"aten::div.out_mode", "f2x3 p2x3 'trunc'", "f2x3"},
    {"aten::elu.out", "f2x3 1.0 1.0 1.0", "f2x3"},
    {"aten::embedding.out", "w5x3 l2x2:5 -1 F F", "f2x2x3"},
    {"aten::empty.out", "[2,3] N", "f2x3", "[2,3] N N N N N", nullptr, false},
    {"aten::eq.Scalar_out", "i2x3:3 1", "b2x3"},
    {"aten::eq.Tensor_out", "i2x3:3 i2x3:3", "b2x3"},
    {"aten::erf.out", "f2x3", "f2x3"},
    {"aten::exp.out", "f2x3", "f2x3"},
    {"aten::expand_copy.out", "f1x3 [2,3] F", "f2x3"},
    {"aten::expm1.out", "f2x3", "f2x3"},
    {"aten::fill.Scalar_out", "f2x3 1.5", "f2x3"},
    {"aten::fill.Tensor_out", "f2x3 f_", "f2x3"},
    {"aten::flip.out", "f2x3 [1]", "f2x3"},
    {"aten::floor.out", "f2x3", "f2x3"},
    {"aten::floor_divide.out", "f2x3 p2x3", "f2x3"},
    {"aten::fmod.Scalar_out", "f2x3 0.3", "f2x3"},
    {"aten::fmod.Tensor_out", "f2x3 p2x3", "f2x3"},
    {"aten::full.out", "[2,3] 1.5", "f2x3", "[2,3] 1.5 N N N N"},
    {"aten::full_like.out", "f2x3 1.5 N", "f2x3", "f2x3 1.5 N N N N N"},
    {"aten::gather.out", "f2x3 1 l2x2:3 F", "f2x2"},
    {"aten::ge.Scalar_out", "i2x3:3 1", "b2x3"},
    {"aten::ge.Tensor_out", "i2x3:3 i2x3:3", "b2x3"},
    {"aten::gelu.out", "f2x3 'tanh'", "f2x3"},
    {"aten::glu.out", "f2x4 1", "f2x2"},
    {"aten::grid_sampler_2d.out", "f1x1x3x3 f1x2x2x2 0 0 F", "f1x1x2x2"},
    {"aten::gt.Scalar_out", "i2x3:3 1", "b2x3"},
    {"aten::gt.Tensor_out", "i2x3:3 i2x3:3", "b2x3"},
    {"aten::hardswish.out", "f2x3", "f2x3"},
    {"aten::hardtanh.out", "f2x3 -0.5 0.5", "f2x3"},
    {"aten::index.Tensor_out", "f3x4 ?<l2:3>", "f2x4"},
    {"aten::index_put_", "m3x4 ?<a2> f2x4 F", "f3x4", nullptr, "aten.index_put.default"},
    {"aten::index_put.out", "f3x4 ?<a2> f2x4 F", "f3x4"},
    {"aten::index_select.out", "f3x4 0 l2:3", "f2x4"},
    {"aten::isinf.out", "f2x3", "b2x3"},
    {"aten::isnan.out", "f2x3", "b2x3"},
    {"aten::le.Scalar_out", "i2x3:3 1", "b2x3"},
    {"aten::le.Tensor_out", "i2x3:3 i2x3:3", "b2x3"},
    {"aten::leaky_relu.out", "f2x3 0.1", "f2x3"},
    {"aten::lift_fresh_copy.out", "f2x3", "f2x3"},
    {"aten::linear.out", "f2x4 w3x4 w3", "f2x3"},
    {"aten::log.out", "p2x3", "f2x3"},
    {"aten::log10.out", "p2x3", "f2x3"},
    {"aten::log1p.out", "p2x3", "f2x3"},
    {"aten::log2.out", "p2x3", "f2x3"},
    {"aten::logical_and.out", "b2x3 b2x3", "b2x3"},
    {"aten::logical_not.out", "b2x3", "b2x3"},
    {"aten::logical_or.out", "b2x3 b2x3", "b2x3"},
    {"aten::logical_xor.out", "b2x3 b2x3", "b2x3"},
    {"aten::logit.out", "f2x3 N", "f2x3"},
    {"aten::lt.Scalar_out", "i2x3:3 1", "b2x3"},
    {"aten::lt.Tensor_out", "i2x3:3 i2x3:3", "b2x3"},
    {"aten::masked_fill.Scalar_out", "f2x3 b2x3 0.5", "f2x3"},
    {"aten::masked_scatter.out", "f2x3 b2x3 f2x3", "f2x3"},
    {"aten::masked_select.out", "f2x3 b2x3", "f6"},
    {"aten::matmul.out", "f2x3 f3x4", "f2x4"},
    {"aten::max.unary_out", "f2x3", "f_"},
    {"aten::max.dim_max", "f2x3 1 F", "f2 l2"},
    {"aten::max_pool2d.out", "f1x1x4x4 [2,2] [2,2] [0,0] [1,1] F", "f1x1x2x2"},
    {"aten::max_pool2d_with_indices.out", "f1x1x4x4 [2,2] [2,2] [0,0] [1,1] F", "f1x1x2x2 l1x1x2x2"},
    {"aten::maximum.out", "f2x3 f2x3", "f2x3"},
    {"aten::mean.dtype_out", "f2x3 N", "f_"},
    {"aten::mean.out", "f2x3 [1] F N", "f2"},
    {"aten::min.unary_out", "f2x3", "f_"},
    {"aten::min.dim_min", "f2x3 1 F", "f2 l2"},
    {"aten::minimum.out", "f2x3 f2x3", "f2x3"},
    {"aten::mm.out", "f2x3 f3x4", "f2x4"},
    {"aten::mul.Scalar_out", "f2x3 1.5", "f2x3"},
    {"aten::mul.out", "f2x3 f2x3", "f2x3"},
    {"aten::narrow_copy.out", "f4x3 0 1 2", "f2x3"},
    {"aten::native_dropout.out", "f2x3 0.25 F", "f2x3 b2x3"},
    {"aten::native_group_norm.out", "f2x4x3 w4 w4 2 4 3 2 1e-5", "f2x4x3 f2x2 f2x2"},
    {"aten::native_layer_norm.out", "f2x3 [3] w3 w3 1e-5", "f2x3 f2x1 f2x1"},
    {"aten::ne.Scalar_out", "i2x3:3 1", "b2x3"},
    {"aten::ne.Tensor_out", "i2x3:3 i2x3:3", "b2x3"},
    {"aten::neg.out", "f2x3", "f2x3"},
    {"aten::nonzero.out", "b2x3", "l6x2"},
    {"aten::ones.out", "[2,3]", "f2x3", "[2,3] N N N N"},
    {"aten::ones_like.out", "f2x3 N", "f2x3", "f2x3 N N N N N"},
    {"aten::permute.out", "f2x3 [1,0]", "f3x2"},
    {"aten::permute_copy.out", "f2x3 [1,0]", "f3x2"},
    {"aten::pixel_shuffle.out", "f1x4x2x2 2", "f1x1x4x4"},
    {"aten::pixel_unshuffle.out", "f1x1x4x4 2", "f1x4x2x2"},
    {"aten::pow.Scalar_out", "2.0 f2x3", "f2x3"},
    {"aten::pow.Tensor_Scalar_out", "f2x3 2.0", "f2x3"},
    {"aten::pow.Tensor_Tensor_out", "p2x3 f2x3", "f2x3"},
    {"aten::prod.out", "f2x3 N", "f_"},
    {"aten::prod.int_out", "f2x3 1 F N", "f2"},
    {"aten::reciprocal.out", "p2x3", "f2x3"},
    {"aten::reflection_pad1d.out", "f1x2x4 [1,1]", "f1x2x6"},
    {"aten::reflection_pad2d.out", "f1x1x3x3 [1,1,1,1]", "f1x1x5x5"},
    {"aten::reflection_pad3d.out", "f1x1x3x3x3 [1,1,1,1,1,1]", "f1x1x5x5x5"},
    {"aten::relu.out", "f2x3", "f2x3"},
    {"aten::remainder.Scalar_out", "f2x3 0.3", "f2x3"},
    {"aten::remainder.Tensor_out", "f2x3 p2x3", "f2x3"},
    {"aten::repeat.out", "f2x3 [2,1]", "f4x3"},
    {"aten::repeat_interleave.Tensor_out", "a3 3", "l3"},
    {"aten::replication_pad1d.out", "f1x2x4 [1,1]", "f1x2x6"},
    {"aten::replication_pad2d.out", "f1x1x3x3 [1,1,1,1]", "f1x1x5x5"},
    {"aten::replication_pad3d.out", "f1x1x3x3x3 [1,1,1,1,1,1]", "f1x1x5x5x5"},
    {"aten::roll.out", "f2x3 [1] [1]", "f2x3"},
    {"aten::round.out", "f2x3", "f2x3"},
    {"aten::rsqrt.out", "p2x3", "f2x3"},
    {"aten::rsub.Scalar_out", "f2x3 1.5 1", "f2x3"},
    {"aten::scalar_tensor.out", "1.5", "f_", "1.5 N N N N"},
    {"aten::scatter.src_out", "f3x4 0 l1x4:3 f1x4", "f3x4"},
    {"aten::scatter.value_out", "f3x4 0 l1x4:3 1.5", "f3x4"},
    {"aten::scatter_add.out", "f3x4 0 l2x4:3 f2x4", "f3x4"},
    {"aten::select_copy.int_out", "f2x3 1 1", "f2"},
    {"aten::select_scatter.out", "f2x3 f2 1 1", "f2x3"},
    {"aten::sigmoid.out", "f2x3", "f2x3"},
    {"aten::sign.out", "f2x3", "f2x3"},
    {"aten::silu.out", "f2x3", "f2x3"},
    {"aten::sin.out", "f2x3", "f2x3"},
    {"aten::sinh.out", "f2x3", "f2x3"},
    {"aten::slice_copy.Tensor_out", "f4x3 0 1 3 1", "f2x3"},
    {"aten::slice_scatter.out", "f4x3 f2x3 0 1 3 1", "f4x3"},
    {"aten::split_copy.Tensor_out", "f4x3 2 0", "<f2x3,f2x3>"},
    {"aten::split_with_sizes_copy.out", "f4x3 [1,3] 0", "<f1x3,f3x3>"},
    {"aten::sqrt.out", "p2x3", "f2x3"},
    {"aten::squeeze_copy.out", "f1x3", "f3"},
    {"aten::squeeze_copy.dim_out", "f1x3 0", "f3"},
    {"aten::squeeze_copy.dims_out", "f1x3 [0]", "f3"},
    {"aten::stack.out", "<f2x3,f2x3> 0", "f2x2x3"},
    {"aten::sub.Scalar_out", "f2x3 1.5 1", "f2x3"},
    {"aten::sub.out", "f2x3 f2x3 1", "f2x3"},
    {"aten::sum.IntList_out", "f2x3 [1] F N", "f2"},
    {"aten::t_copy.out", "f2x3", "f3x2"},
    {"aten::tan.out", "f2x3", "f2x3"},
    {"aten::tanh.out", "f2x3", "f2x3"},
    {"aten::topk.values", "f2x5 2 -1 T T", "f2x2 l2x2"},
    {"aten::transpose_copy.int_out", "f2x3 0 1", "f3x2"},
    {"aten::tril.out", "f3x3 0", "f3x3"},
    {"aten::trunc.out", "f2x3", "f2x3"},
    {"aten::unbind_copy.int_out", "f2x3 0", "<f3,f3>"},
    {"aten::unfold_copy.out", "f5 0 2 1", "f4x2"},
    {"aten::unsqueeze_copy.out", "f2x3 0", "f1x2x3"},
    {"aten::upsample_bilinear2d.vec_out", "f1x1x2x2 [4,4] F N", "f1x1x4x4"},
    {"aten::upsample_nearest2d.vec_out", "f1x1x2x2 [4,4] N", "f1x1x4x4"},
    {"aten::var.correction_out", "f2x3 [1] 1 F", "f2"},
    {"aten::var.out", "f2x3 [1] T F", "f2"},
    {"aten::var_mean.correction_out", "f2x3 [1] 1 F", "f2 f2"},
    {"aten::view_copy.out", "f2x3 [3,2]", "f3x2"},
    {"aten::where.self_out", "b2x3 f2x3 f2x3", "f2x3"},
    {"aten::zeros.out", "[2,3]", "f2x3", "[2,3] N N N N"},
    {"aten::zeros_like.out", "f2x3 N", "f2x3", "f2x3 N N N N N"},
    {"dim_order_ops::_clone_dim_order.out", "f2x3 F N", "f2x3"},
    {"dim_order_ops::_to_dim_order_copy.out", "f2x3 F N", "f2x3", "f2x3 N N N N F N"},
    {"quantized_decomposed::dequantize_per_channel.out", "q3x4 p3 i3:4 0 -128 127 1 N", "f3x4"},
    {"quantized_decomposed::dequantize_per_tensor.out", "q2x9 0.05 3 -128 127 1 N", "f2x9"},
    {"quantized_decomposed::dequantize_per_tensor.tensor_out", "q2x9 p1 i1:4 -128 127 1 N", "f2x9"},
    {"quantized_decomposed::quantize_per_channel.out", "f3x4 p3 i3:4 0 -128 127 1", "q3x4"},
    {"quantized_decomposed::quantize_per_tensor.out", "f2x9 0.05 3 -128 127 1", "q2x9"},
    {"quantized_decomposed::quantize_per_tensor.tensor_out", "f2x9 p1 i1:4 -128 127 1", "q2x9"},
    {"torchao::choose_qparams_affine.out", "f3x8 'ASYMMETRIC' [1,8] N -128 127 N N N F", "f3 q3"},
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    depth += (c == '<' || c == '[') - (c == '>' || c == ']');
    if (c == sep && depth == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<int64_t> ints(const std::string& s, char sep) {
  std::vector<int64_t> v;
  for (const auto& t : split(s, sep)) v.push_back(std::stoll(t));
  return v;
}

bool is_tensor(const std::string& t) { return t.size() > 1 && std::string("fpwilabmq").find(t[0]) != std::string::npos && (std::isdigit(t[1]) || t[1] == '_'); }

struct TensorTok {
  char kind;
  std::vector<int64_t> dims;
  int64_t below = 3;
  DType dtype() const {
    switch (kind) {
      case 'i': return DType::Int32;
      case 'l': case 'a': return DType::Int64;
      case 'b': return DType::Bool;
      case 'q': return DType::Int8;
      default: return DType::Float32;
    }
  }
};

TensorTok tensor_tok(const std::string& t) {
  TensorTok k{t[0], {}};
  auto colon = t.find(':');
  std::string dims = t.substr(1, colon == std::string::npos ? std::string::npos : colon - 1);
  if (dims != "_") k.dims = ints(dims, 'x');
  if (colon != std::string::npos) k.below = std::stoll(t.substr(colon + 1));
  return k;
}

// The k-th tensor of a row gets the same data in the KernelCall and the delegate call.
HostTensor data_for(const TensorTok& k, uint64_t seed) {
  switch (k.kind) {
    case 'p': return random_f32(k.dims, seed, 0.5f, 2.f);
    case 'i': return random_i32(k.dims, seed, 0, static_cast<int32_t>(k.below - 1));
    case 'b': return random_bool(k.dims, seed);
    case 'q': {
      auto r = random_i32(k.dims, seed, -128, 127);
      std::vector<int8_t> v(r.numel());
      for (size_t j = 0; j < v.size(); ++j) v[j] = static_cast<int8_t>(r.as<int32_t>()[j]);
      return HostTensor::from(DType::Int8, k.dims, v);
    }
    case 'l': case 'a': {
      auto r = random_i32(k.dims, seed, 0, static_cast<int32_t>(k.below - 1));
      std::vector<int64_t> v(r.numel());
      for (size_t j = 0; j < v.size(); ++j) v[j] = k.kind == 'a' ? static_cast<int64_t>(j) : r.as<int32_t>()[j];
      return HostTensor::from(DType::Int64, k.dims, v);
    }
    default: return random_f32(k.dims, seed);
  }
}

// Builds a row's arguments into either builder; `tensor(tok, data)` makes each tensor argument.
template <class B, class MakeTensor>
std::vector<int32_t> build_args(B& b, const std::string& spec, int& seed, MakeTensor&& tensor) {
  std::vector<int32_t> ids;
  for (const auto& t : split(spec, ' ')) {
    if (is_tensor(t)) {
      auto k = tensor_tok(t);
      ids.push_back(tensor(k, data_for(k, 100 + seed++)));
    } else if (t[0] == '<' || t[0] == '?') {
      std::vector<int32_t> items;
      for (const auto& it : split(t.substr(t[0] == '?' ? 2 : 1, t.size() - (t[0] == '?' ? 3 : 2)), ',')) {
        auto k = tensor_tok(it);
        items.push_back(tensor(k, data_for(k, 100 + seed++)));
      }
      if constexpr (std::is_same_v<B, ProgramBuilder>)
        ids.push_back(t[0] == '?' ? b.optional_tensor_list(items) : b.tensor_list(items));
      else
        ids.push_back(b.value_list(items));
    } else if (t[0] == '[') {
      ids.push_back(b.int_list(ints(t.substr(1, t.size() - 2), ',')));
    } else if (t[0] == '\'') {
      ids.push_back(b.str(t.substr(1, t.size() - 2)));
    } else if (t == "N") {
      ids.push_back(b.null());
    } else if (t == "T" || t == "F") {
      ids.push_back(b.boolean(t == "T"));
    } else if (t.find_first_of(".e") != std::string::npos) {
      ids.push_back(b.dbl(std::stod(t)));
    } else {
      ids.push_back(b.int_(std::stoll(t)));
    }
  }
  return ids;
}

// The delegate call's outputs: each out tensor, in order (list items included).
std::vector<HostTensor> run_as_delegate(const Row& r, const std::string& op) {
  OpGraph g;
  int seed = 0;
  auto args = build_args(g.gb, r.vk ? r.vk : r.args, seed, [&](const TensorTok& k, const HostTensor& d) {
    return k.kind == 'w' ? g.constant(d) : g.input(d);
  });
  std::vector<Id> outs;
  for (const auto& t : split(r.outs, ' ')) {
    if (t[0] == '<') {
      std::vector<Id> items;
      for (const auto& it : split(t.substr(1, t.size() - 2), ','))
        items.push_back(g.output(tensor_tok(it).dtype(), tensor_tok(it).dims));
      outs.push_back(g.gb.value_list(items));
    } else {
      outs.push_back(g.output(tensor_tok(t).dtype(), tensor_tok(t).dims));
    }
  }
  args.push_back(outs.size() == 1 ? outs[0] : g.gb.value_list(outs));
  g.gb.op(op, args);
  return g.run();
}

std::vector<HostTensor> run_as_kernel_call(const Row& r) {
  ProgramBuilder p;
  std::vector<HostTensor> inputs;
  int seed = 0;
  auto args = build_args(p, r.args, seed, [&](const TensorTok& k, const HostTensor& d) {
    if (k.kind == 'w') return p.constant_tensor(d.dtype, d.shape, d.data);
    if (k.kind == 'm') return p.mutable_tensor(d.dtype, d.shape, d.data);
    auto id = p.tensor(d.dtype, d.shape);
    p.input(id);
    inputs.push_back(d);
    return id;
  });
  std::vector<int32_t> outs;
  for (const auto& t : split(r.outs, ' ')) {
    if (t[0] == '<') {
      std::vector<int32_t> items;
      for (const auto& it : split(t.substr(1, t.size() - 2), ','))
        items.push_back(p.tensor(tensor_tok(it).dtype(), tensor_tok(it).dims));
      for (auto id : items) p.output(id);
      outs.push_back(p.tensor_list(items));
    } else {
      outs.push_back(p.tensor(tensor_tok(t).dtype(), tensor_tok(t).dims));
      p.output(outs.back());
    }
  }
  std::string k = r.kernel;
  auto dot = k.find('.', k.find("::"));
  std::string name = k.substr(0, dot), overload = dot == std::string::npos ? "" : k.substr(dot + 1);
  if (k.back() == '_') {
    p.kernel_with_return(name, overload, args, outs[0]);
  } else {
    args.insert(args.end(), outs.begin(), outs.end());
    p.kernel(name, overload, args, static_cast<int>(outs.size()));
  }
  auto model = Model::load_bytes(p.serialize());
  for (const auto& ins : model->plan_summary())
    if (ins.kind != "gpu-kernel") throw Error(ErrorKind::Unsupported, "instruction runs as " + ins.kind + ": " + ins.what);
  return model->run(inputs);
}

TEST(KernelCallSpellings, EveryListedSpellingLoadsAndRunsAsItsOperator) {
  ETW_REQUIRE_GPU();
  std::map<std::string, const Row*> rows;
  for (const Row& r : kRows) EXPECT_TRUE(rows.emplace(r.kernel, &r).second) << r.kernel << " has two rows";
  size_t tested = 0;
  const auto library = library_op_names();  // the test binary also registers test-only operators
  for (const auto& op : supported_operators()) {
    if (std::find(library.begin(), library.end(), op.name) == library.end()) continue;
    for (const auto& k : op.kernel_calls) {
      auto it = rows.find(k);
      if (it == rows.end()) {
        ADD_FAILURE() << k << " (" << op.name << ") is listed but has no row in kRows";
        continue;
      }
      const Row& r = *it->second;
      rows.erase(it);
      std::vector<HostTensor> got, want;
      try {
        got = run_as_kernel_call(r);
      } catch (const Error& e) {
        ADD_FAILURE() << k << " as a KernelCall: " << e.what();
        continue;
      }
      want = run_as_delegate(r, r.vk_op ? r.vk_op : op.name);
      ++tested;
      ASSERT_EQ(got.size(), want.size()) << k;
      for (size_t j = 0; j < got.size(); ++j) {
        EXPECT_EQ(got[j].shape, want[j].shape) << k << " output " << j;
        if (r.values) {
          EXPECT_TRUE(CloseNan(got[j], want[j], 0, 0)) << k << " output " << j;
        }
      }
    }
  }
  for (const auto& [k, r] : rows) ADD_FAILURE() << k << " has a row but `etwebgpu ops` does not list it";
  std::printf("KernelCall spellings tested: %zu\n", tested);
}

// A multi-output call laid out otherwise than ExecuTorch's emitter does (one return entry per out)
// is refused naming the spelling and the fault, not as an operator etwebgpu lacks.
TEST(KernelCallSpellings, AMisLaidMultiOutputCallNamesItsLayoutFault) {
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, {2, 5});
  auto v = p.tensor(DType::Float32, {2, 2}), i = p.tensor(DType::Int64, {2, 2});
  p.input(x);
  p.kernel_with_return("aten::topk", "values", {x, p.int_(2), p.int_(-1), p.boolean(true), p.boolean(true), v, i}, i);
  p.output(v);
  std::string e = load_error([&] { Model::load_bytes(p.serialize()); });
  EXPECT_TRUE(has(e, "aten::topk.values") && has(e, "TensorList return entry")) << e;
  EXPECT_FALSE(has(e, "does not implement")) << e;
}

}  // namespace
