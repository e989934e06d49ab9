// fp64 references for the matmul family, written from PyTorch's documented semantics.
#pragma once
#include <optional>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

// torch.matmul: 1-D/2-D/batched with broadcast batch dims; 1-D operands are promoted and the
// added dim removed from the result.
HostTensor matmul(const HostTensor& a, const HostTensor& b);
// torch.nn.functional.linear: x @ w^T + bias, w [N, K], bias [N] or none.
HostTensor linear(const HostTensor& x, const HostTensor& w, const HostTensor* bias);
// torch.addmm: beta * bias + alpha * (m1 @ m2); bias broadcast to [M, N]; beta == 0 ignores bias.
HostTensor addmm(const HostTensor& bias, const HostTensor& m1, const HostTensor& m2, double beta, double alpha);

}  // namespace etwebgpu::ref
