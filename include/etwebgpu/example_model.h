// The example model embedded in the runtime: a small convnet classifier (written with
// GraphBuilder), an input and a float64 CPU reference of its output, so a device can be checked
// end to end without any file (`etwebgpu demo`, `etwebgpu example --write`, the web example page).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu {

struct ExampleModel {
  std::vector<uint8_t> pte;
  HostTensor input;      // float32 [1, 3, 16, 16]
  HostTensor expected;   // float64 [1, 10] softmax probabilities
  double atol = 1e-4, rtol = 1e-3;
  // Weights by name (w1,b1: conv1; w2,b2: conv2; wl,bl: linear), to rebuild it in another form.
  std::vector<std::pair<std::string, HostTensor>> weights;
  const char* description =
      "conv3x3(3->8)+relu -> maxpool2x2 -> conv3x3(8->16)+hardtanh -> mean(H,W) -> linear(16->10) -> softmax";
};

ExampleModel make_example_model();

}  // namespace etwebgpu
