// etwebgpu.conv_channels_last: a convolution that reads its input, stores its output, or both, in
// the channels-last order N, H, W, C (N, L, C for a 1-D conv). Arguments: aten.convolution's
// (input, weight, bias, stride, padding, dilation, transposed = false, output_padding, groups),
// then `layout` (an Int: kInputChannelsLast | kOutputChannelsLast), then out; no prologue or
// epilogue. A channels-last input is [N, H, W, C]; a channels-last output [N, H, W, C] or
// [N, H * W, C]. The conv kernels read input element (n, c, h, w) at its channels-last place
// (x_in in conv_params.wgsl) and store output element (n, c, h, w) at its (out_at); the routes are
// aten.convolution's.
//
// The load rewrite in conv_channels_last.cpp makes it from an aten.convolution whose input is
// such a tensor seen through layout calls only the conv reads (ConvNeXt's LayerNorm, then
// x.permute(0, 3, 1, 2), before its downsampling convs), or whose output only layout calls read,
// one after another, ending in that order (ConvNeXt's depthwise conv before its LayerNorm:
// x.permute(0, 2, 3, 1), 18 copy dispatches of its 113; a patch embedding's
// flatten(2).transpose(1, 2)). Only with static shapes (the orders are traced at load).
#pragma once
#include <cstdint>

namespace etwebgpu::ops {

inline constexpr const char* kConvChannelsLast = "etwebgpu.conv_channels_last";
inline constexpr int64_t kInputChannelsLast = 1, kOutputChannelsLast = 2;

}  // namespace etwebgpu::ops
