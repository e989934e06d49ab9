// SHA-256 (FIPS 180-4). The builder names named-data constants by the lowercase hex digest of
// their bytes, as ExecuTorch's Vulkan serializer does.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace etwebgpu::format {

std::array<uint8_t, 32> sha256(std::span<const uint8_t> data);
std::string sha256_hex(std::span<const uint8_t> data);  // 64 lowercase hex chars

}  // namespace etwebgpu::format
