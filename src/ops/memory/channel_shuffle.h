// The pieces a channel interleave [N, 2C, ...] is split into along dim 1 (one or two tensors), as
// etwebgpu.channel_shuffle and etwebgpu.conv_shuffle write them through
// channel_shuffle_store.wgsl: both builders read, check and bind them here.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {

class ShufflePieces {
 public:
  // The pieces in the ValueList `list`: one or two float tensors with channels along dim 1; a
  // load error naming `writer` ("a channel shuffle") otherwise.
  static ShufflePieces read(const OpContext& oc, int32_t list, const std::string& writer);
  // A load error unless their channels sum to twice `channels`, which `what` names ("the conv's
  // 4 output channels").
  void check_channels(const OpContext& oc, int64_t channels, const std::string& what) const;
  // Why they are not the slices along dim 1 of `whole`; nullopt when they are.
  std::optional<std::string> not_slices_of(const std::vector<int64_t>& whole) const;
  int32_t first() const { return ids_.front(); }
  // Declares each piece's dims (its dims at load: static shapes).
  void declare(const OpContext& oc) const;
  // Binds O (and O1) and the split point channel_shuffle_store.wgsl reads.
  void bind(kernel::Kernel& k) const;

 private:
  std::vector<int32_t> ids_;
  std::vector<std::vector<int64_t>> dims_;
};

}  // namespace etwebgpu::ops
