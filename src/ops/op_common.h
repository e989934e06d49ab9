// Helpers shared by op families: argument checks, broadcasting, uniform layouts.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/op_registry.h"

namespace etwebgpu::ops {

using graph::Graph;
using graph::OpContext;
using graph::Step;
using graph::Tensor;
using format::VkDType;

constexpr uint32_t kWorkgroupSize = 256;  // flat 1D kernels
constexpr size_t kMaxRank = 8;

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Split-K for a tiled GEMM whose output tiles leave the GPU idle: K summed in `splits` ranges of
// `chunk` (a multiple of 16) by as many workgroups per tile, the partials added by a second kernel.
struct SplitK {
  uint32_t splits = 1, chunk = 0;  // splits 1: none
};
struct SplitPolicy {
  uint64_t below_tiles;  // split only GEMMs of fewer output tiles
  uint64_t target;       // about this many workgroups in all
  uint64_t min_k;        // and K at least this long
  uint64_t max_splits, min_chunk;
};
// The split of a GEMM of `tiles` output tiles over K; `force` splits wherever K allows two ranges
// of 16; `max_splits_by_scratch` bounds it by the partials' room.
SplitK choose_split_k(const SplitPolicy& pol, uint64_t tiles, uint64_t K, bool force, uint64_t max_splits_by_scratch);

// WGSL-side `struct Shape` of ops/tensor_shape.wgsl (//!include tensor_shape): 80 bytes, fits
// uniform layout rules.
struct ShapeU {
  uint32_t rank = 0, numel = 1, pad0 = 0, pad1 = 0;
  uint32_t dims[8] = {0};
  uint32_t strides[8] = {0};
};
static_assert(sizeof(ShapeU) == 80);

// Contiguous row-major strides of `dims`.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims);
// Fills a ShapeU; `strides` default to contiguous; throws Error(Limit) past rank 8 or 2^32 elements.
ShapeU make_shape(const std::vector<int64_t>& dims, const std::vector<int64_t>* strides = nullptr);
// Broadcast shape of a and b (PyTorch rules), or throws naming both shapes.
std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Strides of `in` viewed at the broadcast `out` shape (0 on broadcast dims), right-aligned.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

// Normalizes dim d for rank r (negative counts from the end); throws naming the op.
int64_t norm_dim(const OpContext& oc, int64_t d, int64_t r);
// A select's index along dim d of `size` elements, normalized as aten.select takes it (negative
// counts from the end); at run time, so it throws Error(InvalidArgument) naming index, dim and size.
int64_t select_index(int64_t idx, int64_t d, int64_t size);

bool is_float(VkDType t);
bool is_int(VkDType t);
bool is_boolish(VkDType t);
// The bits of a float32, as a kernel reads them back with bitcast<f32> (infinities and NaN
// included, which an override constant cannot hold).
uint32_t f32_bits(float f);
// A scalar argument as the 32-bit word a kernel stores into a tensor of dtype t, as PyTorch casts
// it to that dtype: float32 bits, 0 / 1 for bool and uint8, else int32 toward zero (a value past
// int32 is an InvalidArgument error: "<what> V does not fit an int32 tensor").
uint32_t scalar_word(const OpContext& oc, double v, VkDType t, const char* what);
// Throws naming the op when the tensor's dtype is not one of `allowed`.
void require_dtype(const OpContext& oc, int32_t id, std::initializer_list<VkDType> allowed, const char* what);
// The route force_route[key] pins ("" when none); a value outside `allowed` is an InvalidArgument
// error naming the op and listing them: force_route KEY must be "a", "b" or "c", got "v".
std::string pinned_route(const OpContext& oc, const char* key, std::initializer_list<const char*> allowed);
// Whether a kernel reduces by subgroup (define SUBGROUPS): the device has subgroups of at most
// `max_size` invocations, unless force_route["reduce"] = "workgroup" (a tree in workgroup memory;
// "subgroup" where they cannot be used is an error naming the device's sizes).
bool use_subgroups(const OpContext& oc, uint32_t max_size);
void require_same_numel(const OpContext& oc, int32_t a, int32_t b);
// Whether the tensor's buffer holds at least one whole vec4 of its storage: a kernel may bind it
// as a vec4 array (WebGPU rejects a binding smaller than one element).
bool holds_vec4(Graph& g, int32_t id);

}  // namespace etwebgpu::ops
