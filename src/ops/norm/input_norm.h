// An RMSNorm taken into the one-row GEMV that reads it. A decode step's RMSNorm is a dispatch of
// its own (about 10 us on an H100, two per Llama layer) over a row its reader, a 4-bit GEMV
// (q4gsw_gemv_rows.wgsl, NORM_IN), reads whole in every workgroup anyway: that GEMV normalizes the
// row itself, summing its squares in the same order as norm_row.wgsl, so the products are the
// same bits.
//
// The load rewrite `input_norms` (input_norm.cpp) takes an et_vk.rms_norm.default whose output y
// only one input-norm host reads, as its input (argument 0). The host gets the norm's group
//   ["rms_norm", x, weight (or Null), eps]
// at the argument its builder registered (ETW_REGISTER_INPUT_NORM_HOST), before any epilogue; the
// norm call becomes etwebgpu.rms_norm_deferred, which writes y only on inputs of more than one row
// (where the host's other routes read y). Both sides decide with input_norm_inline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "ops/op_common.h"

namespace etwebgpu::ops {

inline constexpr const char* kDeferredRmsNorm = "etwebgpu.rms_norm_deferred";

// Whether the host normalizes its input itself (and the deferred norm writes nothing) at this
// live row count.
inline bool input_norm_inline(uint64_t rows) { return rows == 1; }

struct InputNorm {
  static constexpr size_t kArgs = 4;  // the group's arguments
  int32_t x = -1, weight = -1;        // the norm's input and weight (-1: none)
  float eps = 0;
  bool active() const { return x >= 0; }
  size_t args() const { return active() ? kArgs : 0; }
  // The group at argument `at` of a host: inactive when that argument is not the String
  // "rms_norm". A malformed group (x not of the host's input's shape, a weight not one value per
  // input feature, a non-finite eps) is an Error(Format) naming the op. `input` is the host's
  // input, y.
  static InputNorm read(const OpContext& oc, size_t at, int32_t input);
};

// The hosts: the argument each reads its group at, and whether a call of it takes the GEMV that
// normalizes (its weights and group size fit it: else the pass leaves the norm alone).
class InputNormHosts {
 public:
  using Fits = bool (*)(const format::VkGraphIR&, const format::VkOpCall&);
  struct Host {
    std::string name;
    size_t at;
    Fits fits;
  };
  static InputNormHosts& global();
  void add(const char* name, size_t at, Fits fits) { hosts_.push_back(Host{name, at, fits}); }
  const Host* find(const std::string& name) const;  // nullptr for an op that is no host

 private:
  std::vector<Host> hosts_;
};

struct InputNormHostRegistration {
  InputNormHostRegistration(const char* name, size_t at, InputNormHosts::Fits fits) { InputNormHosts::global().add(name, at, fits); }
};
#define ETW_REGISTER_INPUT_NORM_HOST(name, at, fits) \
  static ::etwebgpu::ops::InputNormHostRegistration ETW_CONCAT(etw_norm_host_reg_, __COUNTER__)(name, at, fits)

}  // namespace etwebgpu::ops
