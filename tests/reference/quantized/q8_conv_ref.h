// fp64 reference and weight packers for ExecuTorch Vulkan's static-int8 convolutions
// (et_vk.q8ta_conv2d / _pw / _dw), written from PyTorch's semantics as custom_ops_lib.py states them:
// dequantize x and the per-channel weights, conv2d in real arithmetic, relu, then
// quantize_per_tensor (round half to even, + zero point, clamp to [-128, 127]).
#pragma once
#include <cstdint>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu::ref {

struct Q8Conv {
  double iscale = 1, oscale = 1;
  int64_t izp = 0, ozp = 0;
  std::vector<int8_t> w;         // PyTorch layout [OC, IC/groups, KH, KW], values in [-127, 127]
  std::vector<float> wscale;     // [OC]
  std::vector<float> bias;       // [OC] or empty
  int64_t OC = 0, ICg = 0, KH = 1, KW = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  bool relu = false;
};

// Result: the int8 output and, per element, the value rounding acted on (out / output_scale),
// so a test can tell an exact-half tie from a real disagreement.
struct Q8ConvResult {
  HostTensor q;                  // int8 [B, OC, OH, OW]
  std::vector<double> scaled;
};
Q8ConvResult q8ta_conv2d(const HostTensor& x_int8, const Q8Conv& c);

// Packers as ExecuTorch's quantized_convolution pattern writes the weights:
// general / pw: [OC, K_pad], k = (kh * KW + kw) * ICg + ic, rows zero-padded to a multiple of 4;
// dw: [KH, KW, OC]. Sums per output channel, padded with zeros to OC rounded up to 4.
std::vector<int8_t> pack_q8_conv_weights(const Q8Conv& c);
std::vector<int8_t> pack_q8_dw_weights(const Q8Conv& c);
std::vector<int32_t> q8_weight_sums(const Q8Conv& c);

}  // namespace etwebgpu::ref
