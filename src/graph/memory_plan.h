// graph::plan_memory: which tensors of a graph share one storage buffer.
//
// A tensor the graph computes lives from the first node that names it to the last (a tensor in a
// ValueList argument counts as named). Tensors of one mem_obj_id whose lives meet are one unit
// (the delegate aliased them), live over the union of their intervals; those whose lives do not
// meet are planned like any other tensor (the delegate only packed them; this redoes it over the
// whole program). Units whose lives never meet at a node are packed into one buffer, largest
// first, each into the smallest buffer whose occupants are all dead before it starts or born after
// it ends, so no node ever reads and writes one buffer through two different tensors.
//
// Copy-free views: the output of a contiguous reinterpretation (view_copy, squeeze, clone, a
// permute that only moves dims of size 1, a select from a dim of size 1 ...) is put in its input's unit when neither tensor is
// written anywhere else, so both name the same words and the view needs no copy.
//
// Graph inputs, outputs, program state, weights written at load (et_vk.prepack) and tensors read
// before any node writes them keep a buffer of their own (shared only with their own unit).
// Constants are not planned. Pure function of the IR: no GPU needed.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/ir.h"

namespace etwebgpu::graph {

struct MemoryPlanOptions {
  // Pack units with disjoint lives into shared buffers. Off: a buffer per tensor or memory object.
  bool reuse = true;
  bool alias_views = true;  // copy-free views
};

struct MemoryPlan {
  static constexpr int32_t kNone = -1;
  // By value id: the buffer holding the tensor, kNone for constants, non-tensors and tensors no
  // node names that are not graph inputs or outputs.
  std::vector<int32_t> buffer_of;
  // By value id: the first and last chain index naming the tensor (kNone when none).
  std::vector<int32_t> first, last;
  // By value id: the unit (a representative value id) the tensor belongs to, kNone when unplanned.
  std::vector<int32_t> unit_of;
  // By chain index: true when the node is a view whose output shares its input's storage.
  std::vector<bool> aliased_view;
  struct Buffer {
    uint64_t bytes = 0;
    // Every tensor in it is written by a node before anything reads it (no input, state, weight
    // written at load, or tensor read before it is written): its initial contents never matter.
    bool computed = true;
    int units = 0;          // units sharing it over time (1 for a buffer of its own)
  };
  std::vector<Buffer> buffers;
  uint64_t total_bytes() const;
};

// Operators that write an argument other than their output, in place: argument positions.
const std::map<std::string, std::vector<size_t>>& in_place_args();

// True when permute(self, dims) moves only dims of at most one element (by serialized dims): the
// output keeps the input's word order, so the memory plan treats it as a copy-free view.
bool permute_keeps_order(const format::VkGraphIR& ir, int32_t self, int32_t dims);
// True when select(self, dim, index) picks from a dim of one element (by serialized dims): also a
// copy-free view (the only valid index, 0 or -1, is still checked each run).
bool select_keeps_order(const format::VkGraphIR& ir, int32_t self, int32_t dim);
// A call whose output holds its input's words in the same order (a view or reshape copy): only
// the live dims differ. Also used by graph/epilogue_fusion.h.
bool is_contiguous_view(const format::VkGraphIR& ir, const format::VkOpCall& c);

// Gives each group of a delegate memory object's tensors whose lives meet (graph inputs live from
// the start, outputs and state to the end) a memory object of its own: tensors the delegate only
// packed no longer look aliased, so load rewrites that move a read later (fusion) are blocked
// by real aliasing only. plan_memory packs such tensors by itself anyway. Returns the number of
// memory objects added.
size_t split_packed_memory_objects(format::VkGraphIR& ir);

// `tensor_bytes[v]`: storage bytes of value v (ignored for non-tensors).
MemoryPlan plan_memory(const format::VkGraphIR& ir, const std::vector<uint64_t>& tensor_bytes,
                       const MemoryPlanOptions& opts = {});

}  // namespace etwebgpu::graph
