// etwebgpu.conv_channels_last: a convolution whose output is stored channels-last, N, H, W, C
// (N, L, C for a 1-D conv), as [N, H, W, C] or [N, H * W, C]. Arguments: aten.convolution's
// (input, weight, bias, stride, padding, dilation, transposed = false, output_padding, groups,
// out); no prologue or epilogue. The conv kernels store output element (n, c, h, w) at its
// channels-last place (out_at in conv_params.wgsl); the routes are aten.convolution's.
//
// The load rewrite in conv_channels_last.cpp makes it from an aten.convolution whose output only
// layout calls read, one after another, ending in that order: ConvNeXt's depthwise conv before its
// LayerNorm (x.permute(0, 2, 3, 1): 18 copy dispatches of its 113), a patch embedding's
// flatten(2).transpose(1, 2). Only with static shapes (the order is checked at load).
#pragma once

namespace etwebgpu::ops {

inline constexpr const char* kConvChannelsLast = "etwebgpu.conv_channels_last";

}  // namespace etwebgpu::ops
