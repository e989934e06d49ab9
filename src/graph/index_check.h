// Out-of-range indices met on the GPU. PyTorch raises on them (embedding, index_select, gather,
// index.Tensor, index_put, scatter); a kernel cannot, so every kernel that reads indices binds
// one small per-graph record (binding kBinding, WGSL `//!include index_error`) and reports the
// first bad index there. The record is read back in the same submit as the outputs; a report becomes Error(InvalidArgument) naming the op, the index and the
// valid range, and the run's outputs are discarded.
//
// Op builders: `uint32_t site = g.index_check().add_site(who, dim, Negatives::Reject);` at load,
// bind `g.index_check().binding()` and pass `site` to the kernel (in its uniform), which calls
// `checked_index(site, word, size, wrap)`; see docs/ADDING_AN_OP.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/context.h"

namespace etwebgpu::graph {

class IndexCheck {
 public:
  static constexpr uint32_t kBinding = 15;  // must match index_error.wgsl
  static constexpr uint64_t kRecordBytes = 16;
  // PyTorch's rule for negative indices of the op: embedding, index_select, gather and scatter
  // reject them; index.Tensor and index_put accept [-size, -1] and wrap them once.
  enum class Negatives { Reject, WrapOnce };

  explicit IndexCheck(gpu::Context& ctx);

  // One index-reading place of an op: `op` names it in errors (e.g. "aten.gather.default (node
  // 3)"), `dim` is the dimension the indices select in. Returns the site id the kernel reports.
  uint32_t add_site(std::string op, int64_t dim, Negatives negatives);
  gpu::Binding binding() const { return {kBinding, &record_buffer_}; }

  // Before a submit: zeroes the record unless the last read found it clean, and adds its read-back
  // to `reads`. (A queue write, not a clear command: commands are paired with profile labels.)
  void arm(std::vector<gpu::Context::Read>& reads);
  // After the submit: throws Error(InvalidArgument) when a kernel reported a bad index.
  void raise_if_reported();

 private:
  struct Site {
    std::string op;
    int64_t dim;
    Negatives negatives;
  };
  gpu::Context& ctx_;
  std::vector<Site> sites_;
  gpu::Buffer record_buffer_;
  bool maybe_dirty_ = false;  // a report was read, or a run failed before its record was read
  uint32_t record_[kRecordBytes / 4] = {};  // flag, site, index (i32 bits), size: as in index_error.wgsl
};

}  // namespace etwebgpu::graph
