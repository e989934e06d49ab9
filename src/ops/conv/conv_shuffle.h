// etwebgpu.conv_shuffle: a convolution that stores its output as the odd channels of a channel
// shuffle (graph/cat_folding.h) and copies the shuffle's other part, the passthrough, into the
// even ones. Arguments: aten.convolution's (input, weight, bias, stride, padding, dilation,
// transposed = false, output_padding, groups), then the passthrough (a tensor of the conv's output
// shape [N, C, ...]), then an epilogue if any, then the pieces (a ValueList of one or two tensors:
// the interleave [N, 2C, ...] split along dim 1). Output element (n, c, p) of the conv becomes
// channel 2c + 1, the passthrough's element (n, c, p) channel 2c (store_out in
// conv_params.wgsl); the routes are aten.convolution's.
//
// The load rewrite in conv_shuffle.cpp makes it from an etwebgpu.channel_shuffle whose second
// part a non-transposed conv without a prologue makes and only the shuffle reads: ShuffleNetV2's
// branch ends in a 1x1 conv (relu as its epilogue) whose output is interleaved with the block's
// passthrough half (or, in a downsampling block, with the other branch's output). The shuffle's
// dispatch goes, and so do both copies of each element. The passthrough is then read at the conv:
// it must be written before the conv and unchanged until the shuffle. Static shapes only.
#pragma once

namespace etwebgpu::ops {

inline constexpr const char* kConvShuffle = "etwebgpu.conv_shuffle";

}  // namespace etwebgpu::ops
