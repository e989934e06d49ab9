// Epilogues fused into a conv or GEMM at load (graph/epilogue_fusion.h): the elementwise chain
// that consumed the producer's output is evaluated in the producer's store, one kernel instead of
// two or more. The call then reads
//   [the op's own arguments..., Expr, extra inputs..., output]
// where the expression (format::VkExpr, graph/fusion.h) reads x0 = the producer's value and x<k> = extra
// input k-1. An extra input of the output's element count is read at the same flat index (the
// pass may have reached the consumer across a contiguous view); any other is broadcast to the
// output. Every conv and GEMM shader stores `epilogue(v, i)` (i = the flat output index); with an
// epilogue, the generated `epilogue_terms(v, i)` runs there, with the fused elementwise kernel's
// math (ops/elementwise/fused_terms.h).
#pragma once
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernel/kernel.h"
#include "ops/elementwise/fused_terms.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {

class Epilogue {
 public:
  // The epilogue following the op's `fixed` arguments (output not counted); empty when the call
  // has no more arguments. A malformed one is an Error(Format) naming the op. A non-empty one
  // labels the node fused[producer+term+...]. Operands broadcast to the op's output, or to the
  // tensor `shaped_as` where the output argument is not one tensor (etwebgpu.conv_shuffle).
  static Epilogue read(const OpContext& oc, size_t fixed, const std::string& producer, int32_t shaped_as = -1);
  bool empty() const { return terms_.empty(); }
  size_t inputs() const { return extras_.size(); }  // extra tensor inputs it binds

  // Declares `k`'s uniform: the op's Params from `base` and, with an epilogue, the generated
  // Epilogue member after it (operand shapes, term constants); binds the extra inputs and adds the
  // generated WGSL. Shaders declare `ep: Epilogue` last in Params under `#if EPILOGUE`.
  template <class P>
  void apply(kernel::Kernel& k, std::function<P(const kernel::Live&)> base) const {
    if (empty()) {
      k.params<P>(std::move(base));
      return;
    }
    attach(k, sizeof(P), [base](const kernel::Live& l, uint8_t* dst) {
      P p = base(l);
      std::memcpy(dst, &p, sizeof(P));
    });
  }

 private:
  void attach(kernel::Kernel& k, size_t base_bytes, std::function<void(const kernel::Live&, uint8_t*)> base) const;
  std::vector<format::VkExprTerm> terms_;
  std::vector<int32_t> extras_;
  int32_t out_ = -1;
};

}  // namespace etwebgpu::ops
