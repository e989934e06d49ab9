// How a tensor's elements are stored on the GPU. One place decides it (graph::Graph::build, from the
// VkGraph dtype and LoadOptions::precision); kernels see it as WGSL types in their generated preamble.
#pragma once
#include <cstdint>

namespace etwebgpu::kernel {

enum class Storage : uint8_t {
  F32,  // float tensors (FLOAT32/FLOAT64, and FLOAT16 at fp32 precision)
  F16,  // float tensors at fp16 precision (needs the adapter's shader-f16)
  I32,  // INT32/INT64 (int64 values must fit int32)
  U8,   // BOOL/UINT8: one byte per element, 4 to a 32-bit word (element i is byte i % 4 of word i / 4)
  I8,   // INT8: bytes packed like U8, two's complement; kernels see them as i32
};
inline bool is_bytes(Storage s) { return s == Storage::U8 || s == Storage::I8; }

inline uint32_t element_bytes(Storage s) {
  switch (s) {
    case Storage::F16: return 2;
    case Storage::U8: case Storage::I8: return 1;
    default: return 4;
  }
}
// Bytes of `n` elements, rounded up to the 4 bytes buffer copies and bindings need.
inline uint64_t storage_bytes(Storage s, uint64_t n) { return (n * element_bytes(s) + 3) & ~uint64_t(3); }
inline bool is_float(Storage s) { return s == Storage::F32 || s == Storage::F16; }
// The WGSL type a kernel computes an element's value in (NAME_T): unsigned bytes are read and
// written as u32, signed ones as i32.
inline const char* wgsl_scalar(Storage s) {
  switch (s) {
    case Storage::F32: return "f32";
    case Storage::F16: return "f16";
    case Storage::I32: case Storage::I8: return "i32";
    case Storage::U8: return "u32";
  }
  return "u32";
}
inline const char* storage_name(Storage s) {
  switch (s) {
    case Storage::F32: return "f32";
    case Storage::F16: return "f16";
    case Storage::I32: return "i32";
    case Storage::U8: return "u8";
    case Storage::I8: return "i8";
  }
  return "?";
}

}  // namespace etwebgpu::kernel
