// NumPy .npy files <-> HostTensor: reading format 1.0, 2.0 and 3.0; writing 1.0 (2.0 when the
// header needs it). Supported dtypes: float32, float64, float16, int32, int64, bool, uint8, int8;
// little-endian, C order. Malformed input throws Error(Format); file problems throw Error(Io).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "etwebgpu/tensor.h"

namespace etwebgpu {

HostTensor parse_npy(std::span<const uint8_t> bytes);
HostTensor read_npy(const std::string& path);
std::vector<uint8_t> encode_npy(const HostTensor& t);
void write_npy(const std::string& path, const HostTensor& t);

}  // namespace etwebgpu
