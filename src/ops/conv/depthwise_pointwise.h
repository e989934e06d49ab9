// etwebgpu.depthwise_pointwise: a depthwise conv and the 1x1 conv that reads its output, in one
// dispatch (depthwise_pointwise.wgsl). A workgroup owns 64 output channels of 16 output pixels;
// for each 32 channels it computes the depthwise outputs of its pixels once into workgroup memory,
// then adds their products with the pointwise weight. The depthwise output never reaches memory,
// and the pair's second dispatch goes: ShuffleNetV2's branches, MobileNetV2's and MobileNetV3's
// blocks without squeeze-excite.
//
// Arguments: the depthwise conv's input [N, C, H, W], weight [C, 1, KH, KW], bias (or Null),
// stride, padding, dilation; its clamp's min and max (numbers or Null: et_vk.conv_with_clamp's);
// the pointwise conv's weight [OC, C, 1, 1], bias (or Null), clamp min and max; a passthrough
// (Null, or etwebgpu.conv_shuffle's: the pointwise output stored as the odd channels of a channel
// shuffle); then a prologue (ops/conv/conv_prologue.h: applied to each depthwise output, the
// depthwise conv's epilogue or the pointwise conv's prologue), an epilogue (ops/epilogue.h) of
// the pointwise conv, each if any; then the output (the pieces, with a passthrough).
//
// The load rewrite `depthwise_pointwise` (depthwise_pointwise.cpp, phase ConvPairs) makes it where
// the depthwise output has no other reader, the pointwise conv is 1x1 with stride 1 and no
// padding over few enough tiles to take the small or direct routes, and the depthwise input is
// unchanged between the two. force_route "depthwise_pointwise" = "split" keeps the two convs.
#pragma once

namespace etwebgpu::ops {

inline constexpr const char* kDepthwisePointwise = "etwebgpu.depthwise_pointwise";

}  // namespace etwebgpu::ops
