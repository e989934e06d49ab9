// What the conv builders share: the uniform every conv shader reads (struct Params in conv_params.wgsl) and the geometry of their arguments.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ops/op_common.h"

namespace etwebgpu::ops {

struct ConvParams {
  uint32_t B, IC, H, W;
  uint32_t OC, OH, OW, KH;
  uint32_t KW, sh, sw, ph;
  uint32_t pw, dh, dw, groups;
  uint32_t icg, ocg, K, N;
  float out_min, out_max;
  uint32_t total, pad;
  uint32_t splits, kchunk;  // split-K: K ranges of kchunk, summed by the reduce kernel
  uint32_t spare0, spare1;  // the fused epilogue that follows starts at a 16-byte boundary
};
static_assert(sizeof(ConvParams) == 112);

// Output extent of a non-transposed conv along one dim, or 0 when the effective kernel is larger
// than the padded input (integer division would truncate toward zero there).
inline int64_t conv_extent(int64_t in, int64_t pad, int64_t dil, int64_t k, int64_t stride) {
  if (in + 2 * pad < dil * (k - 1) + 1) return 0;
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

// Reads a stride/padding/dilation list: 1 element broadcasts, else one per spatial dim (first:
// -1 for a 1-D conv).
inline std::pair<int64_t, int64_t> conv_pair(const OpContext& oc, int32_t id, bool conv1d, const char* what) {
  auto v = oc.g.int_list(id);
  size_t sp = conv1d ? 1 : 2;
  if (v.size() != 1 && v.size() != sp)
    oc.fail(ErrorKind::InvalidArgument, std::string(what) + " must have 1 or " + std::to_string(sp) + " elements, got " +
                                            std::to_string(v.size()));
  if (conv1d) return {-1, v[0]};
  return {v[0], v.size() == 1 ? v[0] : v[1]};
}

// A clamp bound (et_vk.conv_with_clamp's min or max) as float32: nullopt for Null; DBL_MAX and
// friends become +-inf; NaN is a load error.
inline std::optional<float> conv_clamp_bound(const OpContext& oc, int32_t id) {
  std::optional<float> v;
  if (auto d = oc.g.opt_number(id)) v = static_cast<float>(*d);
  if (v && std::isnan(*v)) oc.fail(ErrorKind::InvalidArgument, "clamp bound is NaN");
  return v;
}

}  // namespace etwebgpu::ops
