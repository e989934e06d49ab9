#include "graph/index_check.h"

#include <fmt/format.h>

#include <cstring>

namespace etwebgpu::graph {

IndexCheck::IndexCheck(gpu::Context& ctx)
    : ctx_(ctx), record_buffer_(ctx.create_buffer(kRecordBytes, gpu::BufferKind::Storage, "index_error")) {}

uint32_t IndexCheck::add_site(std::string op, int64_t dim, Negatives negatives) {
  sites_.push_back(Site{std::move(op), dim, negatives});
  return static_cast<uint32_t>(sites_.size() - 1);
}

void IndexCheck::arm(std::vector<gpu::Context::Read>& reads) {
  if (maybe_dirty_) {
    const uint32_t zeros[kRecordBytes / 4] = {};
    ctx_.write(record_buffer_, 0, zeros, sizeof zeros);
  }
  maybe_dirty_ = true;
  reads.push_back({&record_buffer_, 0, kRecordBytes, record_});
}

void IndexCheck::raise_if_reported() {
  if (record_[0] == 0) {
    maybe_dirty_ = false;
    return;
  }
  int32_t index;
  std::memcpy(&index, &record_[2], sizeof index);
  const int64_t size = record_[3];
  if (record_[1] >= sites_.size())
    throw Error(ErrorKind::Internal, fmt::format("an index-reading kernel reported unknown site {}", record_[1]));
  const Site& site = sites_[record_[1]];
  const std::string valid =
      size == 0 ? std::string("the dimension is empty, no index is valid")
                : site.negatives == Negatives::WrapOnce ? fmt::format("valid indices are {}..{}", -size, size - 1)
                                                        : fmt::format("valid indices are 0..{}", size - 1);
  throw Error(ErrorKind::InvalidArgument, fmt::format("{}: index {} is out of bounds for dimension {} with size {} ({})",
                                                      site.op, index, site.dim, size, valid));
}

}  // namespace etwebgpu::graph
