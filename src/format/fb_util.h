// Safe reads of flatbuffer vectors. The Verifier only checks that a vector's length prefix is
// 4-byte aligned, so 8-byte elements of a hostile buffer can be misaligned: read them by memcpy.
#pragma once
#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <vector>

namespace etwebgpu::format::fbutil {

template <class T>
std::vector<T> copy_vec(const flatbuffers::Vector<T>* v) {
  std::vector<T> out;
  if (!v || v->size() == 0) return out;
  out.resize(v->size());
  std::memcpy(out.data(), v->Data(), v->size() * sizeof(T));
  return out;
}

template <class T>
T vec_at(const flatbuffers::Vector<T>* v, uint32_t i) {
  T x;
  std::memcpy(&x, v->Data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return x;
}

}  // namespace etwebgpu::format::fbutil
