// The embedded default model: a small convnet classifier built with GraphBuilder, plus its input
// and a float64 CPU reference of its output. Used by `etwebgpu demo` and `etwebgpu example`.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::models {

struct ExampleModel {
  std::vector<uint8_t> pte;
  HostTensor input;      // float32 [1, 3, 16, 16]
  HostTensor expected;   // float64 [1, 10] softmax probabilities
  double atol = 1e-4, rtol = 1e-3;
  // Weights by name (w1,b1: conv1; w2,b2: conv2; wl,bl: linear) so others can rebuild it (bench/).
  std::vector<std::pair<std::string, HostTensor>> weights;
  const char* description =
      "conv3x3(3->8)+relu -> maxpool2x2 -> conv3x3(8->16)+hardtanh -> mean(H,W) -> linear(16->10) -> softmax";
};

ExampleModel make_example_model();

}  // namespace etwebgpu::models
