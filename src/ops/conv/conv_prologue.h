// Prologues of a conv: an elementwise expression over each input element x0 and per-channel
// operands (one value per input channel, or one value), evaluated as the conv reads its input,
// before zero padding. The load rewrite `conv_prologues` (conv_prologue.cpp) makes them from the
// elementwise call whose output only a conv reads: squeeze-excite's x * gate before the
// projection (MobileNetV3, EfficientNet, RegNetY), DenseNet's BatchNorm and relu before each
// layer's first conv. The call then reads
//   [the conv's own arguments..., Expr (on_input), per-channel inputs..., epilogue..., output]
// and the shaders read the input through x_in(i, c) (conv_params.wgsl).
#pragma once
#include <string>
#include <vector>

#include "kernel/kernel.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {

// Input operands of one prologue besides x0: with X, the weight, the bias, the output and the
// epilogue's inputs, within 8 storage buffers.
inline constexpr size_t kMaxPrologueInputs = 2;

class ConvPrologue {
 public:
  // The prologue at argument `at` of a conv over `channels` input channels: empty when that
  // argument is not an expression marked on_input. A malformed one (operands that are not one
  // value per channel or one value, more than kMaxPrologueInputs, layouts) is an Error(Format)
  // naming the op.
  static ConvPrologue read(const graph::OpContext& oc, size_t at, int64_t channels);
  bool empty() const { return terms_.empty(); }
  // The arguments it takes: the expression and its inputs (0 when empty).
  size_t args() const { return empty() ? 0 : 1 + inputs_.size(); }
  size_t inputs() const { return inputs_.size(); }
  std::string label() const;  // "mul", "mul+add+relu"
  // Binds its inputs PR0, PR1 ..., defines PROLOGUE and adds prologue_terms(x0, c). `library`:
  // also the op switches the terms call (false where the kernel's epilogue already adds them).
  void attach(kernel::Kernel& k, bool library) const;

 private:
  std::vector<format::VkExprTerm> terms_;
  std::vector<int32_t> inputs_;
  std::vector<bool> scalar_;  // per input: one value (else one per channel)
};

}  // namespace etwebgpu::ops
