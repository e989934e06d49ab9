// One index of the IR for the load-time rewrites (graph/rewrite_pipeline.h, docs/REWRITES.md): for
// each value the calls naming it and the calls writing it, and the values a rewrite must leave as
// the export writes them. The pipeline builds it before each pass; the legality checks every pass
// makes (one reader, nothing writing in between, nothing pinned) are its methods, so each pass
// only matches its pattern.
#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "format/ir.h"

namespace etwebgpu::graph {

// A pure function of its arguments: draws no random numbers and writes no argument in place
// (in_place_args).
bool pure_op(const std::string& op);

class UseDef {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);

  // Indexes `ir` as it is now and keeps a reference to it. A pass may append values and edit
  // values' descriptions while it uses the index (values appended since are unknown to it), but
  // checks against the chain it was built over: a pass that rewrites in rounds builds a new one.
  explicit UseDef(const format::VkGraphIR& ir);

  const format::VkGraphIR& ir() const { return ir_; }
  // A tensor value the index knows (values appended since are not).
  bool tensor(int32_t v) const;
  // Calls f on every tensor the argument `a` names: itself, or a ValueList's tensors.
  template <class F>
  void each_tensor(int32_t a, F&& f) const {
    if (tensor(a)) f(a);
    else if (a >= 0 && static_cast<size_t>(a) < mentions_.size() && ir_.values[a].kind == format::VkValueKind::ValueList)
      for (int32_t e : ir_.values[a].ids)
        if (tensor(e)) f(e);
  }

  // Chain indices of the calls naming tensor v (any argument, ValueList members, outputs
  // included), ascending, each once. Empty for a non-tensor.
  const std::vector<size_t>& mentions(int32_t v) const;
  // Calls writing v, ascending: as output (the last argument, or a member of an output
  // ValueList) or in place (in_place_args).
  const std::vector<size_t>& writers(int32_t v) const;
  // The one call writing v as its output; npos when none, several, or v is also written in place.
  size_t producer(int32_t v) const;
  // Graph inputs, outputs and state, and tensors written in place: a rewrite leaves them where and
  // as the export writes them.
  bool pinned(int32_t v) const;
  // The delegate's memory object of v (-1: constant or storage of its own).
  int32_t memory(int32_t v) const;
  // a and b are in one delegate memory object.
  bool share_memory(int32_t a, int32_t b) const { return memory(a) >= 0 && memory(a) == memory(b); }
  // Another tensor of t's memory object lives while t does (from the first call naming it to the
  // last): the two are one storage, so a write to either is seen by the other, and no rewrite may
  // drop or move t's writes or reads (sole_reader, internal and unused refuse it).
  bool aliased(int32_t t) const;
  // Calls reading tensor v (naming it in an argument other than the last), ascending, each once.
  const std::vector<size_t>& readers(int32_t v) const;
  // The call producing tensor t when it is `op` with `nargs` arguments; nullptr otherwise.
  const format::VkOpCall* made_by(int32_t t, const char* op, size_t nargs) const;
  const std::vector<int64_t>& dims(int32_t t) const { return ir_.values[t].tensor.dims; }
  format::VkDType dtype(int32_t t) const { return ir_.values[t].tensor.dtype; }

  // --- the legality checks ---
  // An intermediate t that only one call reads: t not pinned, written by one call (`writer`, or
  // any when writer is npos) and named by exactly one other call after it, which is returned; npos
  // otherwise.
  size_t sole_reader(int32_t t, size_t writer = npos) const;
  // t written once, not pinned, and named by no call but its writer and `members` (ascending
  // or not): it can disappear with them.
  bool internal(int32_t t, const std::vector<size_t>& members) const;
  // t written once and named by no other call, not pinned: an output nobody reads.
  bool unused(int32_t t) const;
  // Whether call i writes v or a tensor sharing v's memory object.
  bool writes(size_t i, int32_t v) const;
  // v holds at hi the value it held at lo: no call strictly between them (`except` aside) writes
  // it or storage it shares.
  bool unchanged_between(int32_t v, size_t lo, size_t hi, const std::vector<size_t>& except = {}) const;

  // The check of a rewrite that replaces the calls `members` by one call at the last of them,
  // reading `inputs`: every tensor a member but the last writes disappears with them (internal),
  // and each input holds at the last member the value it held at the first member reading it.
  bool can_replace(const std::set<size_t>& members, const std::vector<int32_t>& inputs) const;
  // Its second half: each input holds at the last member what it held at the first reading it.
  bool reads_unchanged(const std::set<size_t>& members, const std::vector<int32_t>& inputs) const;

  // The tensor a call writes through its output argument `out`: `out` itself when it is a tensor,
  // else the first member of a ValueList whose other members nothing reads (a norm's statistics);
  // -1 otherwise.
  int32_t main_output(int32_t out) const;

  // The tensor a contiguous clone (aten.clone, memory_format None) copies into t, with that call's
  // index in *at; t itself when no such call writes it.
  int32_t clone_source(int32_t t, size_t* at) const;

 private:
  const format::VkGraphIR& ir_;
  std::vector<std::vector<size_t>> mentions_, writers_, readers_;
  std::vector<char> pinned_, in_place_;
  std::vector<std::vector<int32_t>> sharing_;  // per memory object id: the tensors in it
};

}  // namespace etwebgpu::graph
