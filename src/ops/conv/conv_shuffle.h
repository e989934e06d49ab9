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
#include <vector>

#include "kernel/kernel.h"
#include "ops/memory/channel_shuffle.h"

namespace etwebgpu::ops {

inline constexpr const char* kConvShuffle = "etwebgpu.conv_shuffle";

// The shuffle store every conv kernel has (store_out in conv_params.wgsl), as etwebgpu.conv_shuffle
// uses it. At run time: the passthrough has the
// conv's live output shape `out`, and the pieces are the slices along dim 1 of the interleave of
// the two (an Error naming what is not).
void check_shuffle_store(const ShufflePieces& pieces, const kernel::Live& l, int32_t passthrough,
                         const std::vector<int64_t>& out);
// Binds the pieces and the passthrough (A) and selects the shuffle store (SHUFFLE).
void bind_shuffle_store(kernel::Kernel& k, const ShufflePieces& pieces, int32_t passthrough);

}  // namespace etwebgpu::ops
