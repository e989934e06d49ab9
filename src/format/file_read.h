// Reading a whole file with progress (a multi-GB .pte takes seconds to read).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "format/ir.h"

namespace etwebgpu::format {

// read_file in 64 MiB chunks; `progress(done, total)` follows each chunk.
Bytes read_file(const std::string& path, const std::function<void(uint64_t, uint64_t)>& progress);

}  // namespace etwebgpu::format
