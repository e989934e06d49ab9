// etwebgpu.conv_channels_last: a convolution that reads its input, stores its output, or both, in
// another order than N, C, H, W: channels-last (N, H, W, C; N, L, C for a 1-D conv), or any order
// a constant map gives. Arguments: aten.convolution's (input, weight, bias, stride, padding,
// dilation, transposed = false, output_padding, groups), then `layout` (an Int of the k* bits
// below; at most one per side), then, with kInputMapped, the conv's [N, C, H, W] view of its input
// (an IntList) and the input map, with kOutputMapped the output map, then out; no prologue or
// epilogue. A channels-last input is [N, H, W, C]; a channels-last output [N, H, W, C] or
// [N, H * W, C]. A map is an Int32 constant with an element per element of the conv's N, C, H, W
// view: the input's gives the flat index of the input tensor each is read from, the output's
// where in the output tensor each is stored (every place once). The conv kernels read input
// element (n, c, h, w) at its place (x_in in conv_params.wgsl) and store output element (n, c, h,
// w) at its (out_at); the routes are aten.convolution's.
//
// MobileViT's unfold (the feature map to patches, [B, C, H, W] -> [B * P, N, C]) and fold after
// its transformer are such orders: layout_chains gathers them by a constant table, which the 1x1
// convs beside them apply instead (6 dispatches of mobilevit_xs's 100).
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
inline constexpr int64_t kInputChannelsLast = 1, kOutputChannelsLast = 2, kInputMapped = 4, kOutputMapped = 8;

}  // namespace etwebgpu::ops
