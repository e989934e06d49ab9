// A non-transposed conv call's argument layout, as the conv load rewrites (conv_prologue.cpp,
// conv_shuffle.cpp, conv_channels_last.cpp, squeeze_excite.cpp) take it
// apart: the call's own arguments (aten.convolution's 9; et_vk.conv_with_clamp's 11, its min and
// max last; etwebgpu.conv_shuffle's 10, its passthrough last), then a prologue's expression and
// its inputs (as many as the expression's views, less x0), then an epilogue's expression and its
// inputs (up to the output), then the output.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "format/ir.h"

namespace etwebgpu::ops {

struct ConvCall {
  enum class Kind { Conv, Clamp, Shuffle };
  Kind kind = Kind::Conv;
  size_t own = 0;                  // the call's own arguments
  int32_t lo = -1, hi = -1;        // Clamp: its bounds' ids
  int32_t pass = -1;               // Shuffle: the passthrough
  int32_t pro = -1, ep = -1;       // the prologue's / epilogue's expression id, or -1
  size_t pro_at = 0, ep_at = 0;    // their positions in args
  size_t pro_inputs = 0, ep_inputs = 0;
};

// The call's layout, or nullopt for another op, a transposed conv, or a call whose arguments do
// not follow the layout above (left to the op's builder, which names the problem).
std::optional<ConvCall> read_conv(const format::VkGraphIR& ir, const format::VkOpCall& c);

}  // namespace etwebgpu::ops
