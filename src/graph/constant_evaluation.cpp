#include "graph/constant_evaluation.h"

#include <memory>
#include <vector>

#include "graph/fusion.h"
#include "graph/graph.h"
#include "graph/memory_plan.h"

namespace etwebgpu::graph {

namespace {

using format::VkDType;
using format::VkValueKind;

// The host dtype whose bytes are `dtype`'s serialized form: from_gpu_words widens the device's
// 32-bit words of int64 and float64 exactly.
DType serialized_host_dtype(VkDType dtype) {
  if (dtype == VkDType::Int64) return DType::Int64;
  if (dtype == VkDType::Float64) return DType::Float64;
  return host_dtype_of(dtype);
}

}  // namespace

size_t evaluate_constant_calls(Graph& g, format::VkGraphIR& ir, const UseDef& ix) {
  const size_t n = ir.chain.size(), nv = ir.values.size();
  std::vector<char> fixed(nv, 0);  // holds the same data on every run
  for (size_t v = 0; v < nv; ++v)
    fixed[v] = ix.tensor(static_cast<int32_t>(v)) && ir.values[v].tensor.is_constant() &&
               static_cast<size_t>(ir.values[v].tensor.constant_id) < ir.constants.size();
  // A result that a copy-free view hands to the graph's outputs stays computed: the view aliases
  // planned storage, and would copy from a constant.
  auto read_by_kept_view = [&](int32_t o) {
    for (size_t r : ix.readers(o))
      if (is_contiguous_view(ir, ir.chain[r]) && ir.chain[r].args.front() == o && ix.pinned(ir.chain[r].args.back()))
        return true;
    return false;
  };
  std::vector<char> eval(n, 0);
  size_t count = 0;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& c = ir.chain[i];
    if (c.args.empty()) continue;
    bool reads_fixed = true;
    for (size_t a = 0; a + 1 < c.args.size(); ++a) {
      const auto& v = ir.values[c.args[a]];
      if (v.kind == VkValueKind::SymInt) reads_fixed = false;
      if (v.kind == VkValueKind::ValueList)
        for (int32_t e : v.ids) reads_fixed = reads_fixed && !(e >= 0 && ir.values[e].kind == VkValueKind::SymInt);
      ix.each_tensor(c.args[a], [&](int32_t t) { reads_fixed = reads_fixed && fixed[t]; });
    }
    if (!reads_fixed) continue;
    std::vector<int32_t> outs;
    ix.each_tensor(c.args.back(), [&](int32_t t) { outs.push_back(t); });
    if (c.name == "et_vk.prepack.default") {  // written once at load already: its output is data
      for (int32_t o : outs) fixed[o] = ix.producer(o) == i && !ix.pinned(o);
      continue;
    }
    if (!pure_op(c.name) || outs.empty() || (ir.values[c.args.back()].kind != VkValueKind::Tensor &&
                                             ir.values[c.args.back()].kind != VkValueKind::ValueList))
      continue;
    bool ok = true;
    uint64_t bytes = 0;
    for (int32_t o : outs) {
      const auto& t = ir.values[o].tensor;
      // Float16 results are held as f32 words unless the model runs at fp16: a constant of them
      // would round what the kernel computed.
      ok = ok && ix.producer(o) == i && !ix.pinned(o) && !ix.aliased(o) && !read_by_kept_view(o) &&
           t.dtype != VkDType::Float16 && t.dtype != VkDType::Unset;
      if (!ok) break;
      const uint64_t b = static_cast<uint64_t>(numel(t.dims)) * format::vk_dtype_size(t.dtype);
      ok = b <= kMaxEvaluatedBytes;
      bytes += b;
    }
    if (!ok || total + bytes > kMaxEvaluatedTotalBytes) continue;
    total += bytes;
    eval[i] = 1;
    ++count;
    for (int32_t o : outs) fixed[o] = 1;
  }
  if (!count) return 0;

  // The results read by calls that stay; the other results go with their calls.
  std::vector<int32_t> results;
  for (size_t i = 0; i < n; ++i) {
    if (!eval[i]) continue;
    ix.each_tensor(ir.chain[i].args.back(), [&](int32_t o) {
      for (size_t r : ix.readers(o))
        if (!eval[r]) {
          results.push_back(o);
          return;
        }
    });
  }
  // The sub-graph also runs the prepacks whose outputs the evaluated calls read (they write at
  // load; without them those tensors would hold nothing there).
  std::vector<char> feeds(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (eval[i])
      for (size_t a = 0; a + 1 < ir.chain[i].args.size(); ++a)
        ix.each_tensor(ir.chain[i].args[a], [&](int32_t t) {
          const size_t p = ix.producer(t);
          if (p != UseDef::npos && !eval[p] && ir.chain[p].name == "et_vk.prepack.default") feeds[p] = 1;
        });
  format::VkGraphIR sub = ir;
  sub.chain.clear();
  for (size_t i = 0; i < n; ++i)
    if (eval[i] || feeds[i]) sub.chain.push_back(ir.chain[i]);
  sub.input_ids.clear();
  sub.state.clear();
  sub.output_ids.assign(results.begin(), results.end());
  std::vector<HostTensor> out;
  if (!results.empty()) {
    GraphOptions opts = g.options();
    opts.fuse = false;
    opts.progress = nullptr;
    opts.poison_storage = false;
    std::vector<DType> dtypes;
    for (int32_t o : results) dtypes.push_back(serialized_host_dtype(ir.values[o].tensor.dtype));
    try {
      Graph once(g.shared_context(), sub, opts);
      once.execute_and_read(dtypes, out);
    } catch (const Error&) {
      return 0;  // left to the calls' own builders and runs, which report it
    }
    for (size_t k = 0; k < results.size(); ++k)
      if (out[k].shape != ir.values[results[k]].tensor.dims) return 0;  // a data-dependent shape
  }
  for (size_t k = 0; k < results.size(); ++k)
    make_constant(ir, results[k], std::make_shared<const std::vector<uint8_t>>(std::move(out[k].data)));
  std::vector<bool> removed(eval.begin(), eval.end());
  drop_calls(ir, removed);
  return count;
}

}  // namespace etwebgpu::graph
