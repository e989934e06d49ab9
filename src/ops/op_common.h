// Helpers shared by op families: argument checks, broadcasting, uniform layouts.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
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

// WGSL-side `struct Shape { rank: u32, numel: u32, _pad: vec2<u32>, dims: array<vec4<u32>, 2>,
// strides: array<vec4<u32>, 2> }` (see ADDING_AN_OP.md): 80 bytes, fits uniform layout rules.
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
// Throws Error(k) naming the op and node. For resize hooks, which outlive their OpContext.
[[noreturn]] void fail_call(const format::VkOpCall& call, ErrorKind k, const std::string& msg);

// Normalizes dim d for rank r (negative counts from the end); throws naming the op.
int64_t norm_dim(const OpContext& oc, int64_t d, int64_t r);

bool is_float(VkDType t);
bool is_int(VkDType t);
bool is_boolish(VkDType t);
// Throws naming the op when the tensor's dtype is not one of `allowed`.
void require_dtype(const OpContext& oc, int32_t id, std::initializer_list<VkDType> allowed, const char* what);
void require_same_numel(const OpContext& oc, int32_t a, int32_t b);

// A uniform buffer that a node rewrites from its resize hook.
// Writes only when the bytes changed: resize hooks run before every run, and most uniforms (all of
// them for static shapes) stay the same; each skipped queue write saves a staging copy.
template <class T>
struct Uniform {
  gpu::Buffer* buf = nullptr;
  void init(Graph& g, const std::string& label) { buf = &g.make_uniform(sizeof(T), label); }
  void write(Graph& g, const T& v) {
    if (written_ && std::memcmp(&last_, &v, sizeof(T)) == 0) return;
    std::memcpy(&last_, &v, sizeof(T));
    written_ = true;
    g.write_uniform(*buf, &v, sizeof(T));
  }

 private:
  T last_{};
  bool written_ = false;
};

// Grid for `n` invocations at `wg` per workgroup (the shader bounds-checks the flat index).
inline uint64_t groups_for(uint64_t n, uint32_t wg = kWorkgroupSize) { return ceil_div(n, wg); }
// Re-targets a step's grid (0 workgroups makes it inactive for this run).
inline void set_groups(Graph& g, Step& s, uint64_t workgroups) { s.grid = g.ctx().grid(workgroups); }

}  // namespace etwebgpu::ops
