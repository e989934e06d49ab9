// slice_copy, select_copy, split_with_sizes_copy, split_copy, cat: strided gathers/scatters
// through mem_strided.wgsl, one dispatch per output (split) or per input (cat).
#include <algorithm>
#include <functional>
#include <optional>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::fail_at;
using mem::set_out;
using mem::Strided;

// PyTorch slice bounds: negative wraps once, then clamp to [0, size]; end < start is empty.
struct SliceRange { int64_t start, len; };
SliceRange slice_range(std::optional<int64_t> start, std::optional<int64_t> end, int64_t step, int64_t size) {
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, 0, size);
  int64_t len = e > s ? (e - s + step - 1) / step : 0;
  return {s, len};
}

// A dim argument: Int, or integral Double (0.0 interned before the dim); normalized for rank r.
int64_t dim_arg(const OpContext& oc, int32_t id, int64_t r) {
  if (oc.g.is_null(id)) oc.fail(ErrorKind::Format, "dim must not be None");
  return norm_dim(oc, mem::int_arg(oc, id, "dim"), r);
}

// slice_copy.Tensor [self, dim, start, end, step, out].
void build_slice(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "self");
  mem::require_same_words(oc, x, out, "self");
  int64_t r = g.tensor(x).rank();
  if (r == 0) oc.fail(ErrorKind::InvalidArgument, "cannot slice a 0-d tensor");
  int64_t d = dim_arg(oc, oc.arg(1), r);
  int32_t start_id = oc.arg(2), end_id = oc.arg(3), step_id = oc.arg(4);
  int64_t step = g.is_null(step_id) ? 1 : mem::int_arg(oc, step_id, "step");
  if (step < 1) oc.fail(ErrorKind::InvalidArgument, "slice step must be positive, got " + std::to_string(step));
  // Read once at load so a malformed start/end (fractional Double, wrong kind) fails here.
  if (!g.is_null(start_id)) mem::int_arg(oc, start_id, "start");
  if (!g.is_null(end_id)) mem::int_arg(oc, end_id, "end");
  auto ss = mem::add_strided(oc, x, out, mem::kAffine, "slice");
  graph::Node* node = &oc.node;
  std::string w = mem::who(oc);
  oc.node.resize = [&g, x, out, d, start_id, end_id, step, ss, node, w] {
    const auto& in = g.tensor(x).dims;
    auto opt = [&](int32_t id) { return g.is_null(id) ? std::optional<int64_t>{} : std::optional<int64_t>{g.integer(id)}; };
    SliceRange sr = slice_range(opt(start_id), opt(end_id), step, in[d]);
    std::vector<int64_t> od = in;
    od[d] = sr.len;
    set_out(g, w, out, od);
    auto cs = contiguous_strides(in);
    Strided st;
    st.it = od;
    st.src_strides = cs;
    st.src_strides[d] *= step;
    st.src_base = sr.start * cs[d];
    mem::write_strided(g, node->steps[ss.step], ss, st);
  };
}

// select_copy.int [self, dim, index, out]: the dim disappears.
void build_select(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "self");
  mem::require_same_words(oc, x, out, "self");
  int64_t r = g.tensor(x).rank();
  if (r == 0) oc.fail(ErrorKind::InvalidArgument, "select() cannot be applied to a 0-d tensor");
  int64_t d = dim_arg(oc, oc.arg(1), r);
  int32_t index_id = oc.arg(2);
  mem::int_arg(oc, index_id, "index");
  auto ss = mem::add_strided(oc, x, out, mem::kAffine, "select");
  graph::Node* node = &oc.node;
  std::string w = mem::who(oc);
  oc.node.resize = [&g, x, out, d, index_id, ss, node, w] {
    const auto& in = g.tensor(x).dims;
    int64_t idx = g.integer(index_id);
    if (idx < -in[d] || idx >= in[d])
      fail_at(w, ErrorKind::InvalidArgument, "index " + std::to_string(idx) + " out of range for dim " +
                                                 std::to_string(d) + " of size " + std::to_string(in[d]));
    if (idx < 0) idx += in[d];
    auto cs = contiguous_strides(in);
    std::vector<int64_t> od, sst;
    for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i)
      if (i != d) od.push_back(in[i]), sst.push_back(cs[i]);
    set_out(g, w, out, od);
    Strided st;
    st.it = od;
    st.src_strides = sst;
    st.src_base = idx * cs[d];
    mem::write_strided(g, node->steps[ss.step], ss, st);
  };
}

// Shared by split_with_sizes_copy and split_copy: `sizes_of(dim_size)` gives each piece's length.
void build_split_impl(OpContext& oc, int32_t dim_id, std::function<std::vector<int64_t>(int64_t)> sizes_of) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0);
  mem::require_tensor(oc, x, "self");
  int64_t r = g.tensor(x).rank();
  if (r == 0) oc.fail(ErrorKind::InvalidArgument, "cannot split a 0-d tensor");
  int64_t d = dim_arg(oc, dim_id, r);
  std::vector<int32_t> outs = g.value_list(oc.out());
  size_t expect = sizes_of(g.tensor(x).dims[d]).size();
  if (outs.size() != expect)
    oc.fail(ErrorKind::InvalidArgument, "splitting " + shape_str(g.tensor(x).dims) + " gives " + std::to_string(expect) +
                                            " pieces but the output list has " + std::to_string(outs.size()));
  std::vector<mem::StridedStep> steps;
  for (int32_t o : outs) {
    mem::require_tensor(oc, o, "each output");
    mem::require_same_words(oc, x, o, "self");
    steps.push_back(mem::add_strided(oc, x, o, mem::kAffine, "split"));
  }
  graph::Node* node = &oc.node;
  std::string w = mem::who(oc);
  oc.node.resize = [&g, x, d, outs, steps, node, w, sizes_of] {
    const auto& in = g.tensor(x).dims;
    std::vector<int64_t> sizes = sizes_of(in[d]);
    if (sizes.size() != outs.size())
      fail_at(w, ErrorKind::InvalidArgument, "dim size " + std::to_string(in[d]) + " splits into " +
                                                 std::to_string(sizes.size()) + " pieces, the op has " +
                                                 std::to_string(outs.size()) + " outputs");
    auto cs = contiguous_strides(in);
    int64_t off = 0;
    for (size_t j = 0; j < outs.size(); ++j) {
      std::vector<int64_t> od = in;
      od[d] = sizes[j];
      set_out(g, w, outs[j], od);
      Strided st;
      st.it = od;
      st.src_strides = cs;
      st.src_base = off * cs[d];
      mem::write_strided(g, node->steps[steps[j].step], steps[j], st);
      off += sizes[j];
    }
  };
}

// split_with_sizes_copy [self, split_sizes, dim, out ValueList].
void build_split_with_sizes(OpContext& oc) {
  std::vector<int64_t> sizes = mem::list_arg(oc, oc.arg(1), "split_sizes");
  for (int64_t s : sizes)
    if (s < 0) oc.fail(ErrorKind::InvalidArgument, "split size " + std::to_string(s) + " is negative");
  std::string w = mem::who(oc);
  build_split_impl(oc, oc.arg(2), [sizes, w](int64_t n) {
    int64_t sum = 0;
    for (int64_t s : sizes) sum += s;
    if (sum != n)
      fail_at(w, ErrorKind::InvalidArgument, "split sizes " + shape_str(sizes) + " sum to " + std::to_string(sum) +
                                                 " but the dim has size " + std::to_string(n));
    return sizes;
  });
}

// split_copy.Tensor [self, split_size, dim, out ValueList]: equal pieces, the last one shorter.
void build_split(OpContext& oc) {
  int64_t ss = mem::int_arg(oc, oc.arg(1), "split_size");
  if (ss <= 0) oc.fail(ErrorKind::InvalidArgument, "split_size must be positive, got " + std::to_string(ss));
  build_split_impl(oc, oc.arg(2), [ss](int64_t n) {
    int64_t k = std::max<int64_t>((n + ss - 1) / ss, 1);
    std::vector<int64_t> sizes(static_cast<size_t>(k), ss);
    sizes.back() = n - ss * (k - 1);
    return sizes;
  });
}

// cat [tensors ValueList (ids may repeat), dim, out]: one dispatch per input writes its slab.
void build_cat(OpContext& oc) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  std::vector<int32_t> ins = g.value_list(oc.arg(0));
  if (ins.empty()) oc.fail(ErrorKind::InvalidArgument, "expected a non-empty list of tensors");
  int64_t r = g.tensor(out).rank();
  std::vector<int32_t> used;
  for (int32_t t : ins) {
    mem::require_tensor(oc, t, "each input");
    mem::require_same_words(oc, t, out, "an input");
    const Tensor& tt = g.tensor(t);
    // PyTorch's legacy rule: 1-D empty tensors are skipped whatever the other ranks.
    if (tt.max_dims == std::vector<int64_t>{0} && r != 1) continue;
    if (tt.rank() != r)
      oc.fail(ErrorKind::InvalidArgument, "input %" + std::to_string(t) + " " + shape_str(tt.max_dims) +
                                              " does not have the output's rank " + std::to_string(r));
    used.push_back(t);
  }
  if (r == 0) oc.fail(ErrorKind::InvalidArgument, "zero-dimensional tensors cannot be concatenated");
  if (used.empty()) oc.fail(ErrorKind::InvalidArgument, "every input is a skipped 1-D empty tensor");
  int64_t d = dim_arg(oc, oc.arg(1), r);
  std::vector<mem::StridedStep> steps;
  for (int32_t t : used) steps.push_back(mem::add_strided(oc, t, out, mem::kAffine, "cat"));
  graph::Node* node = &oc.node;
  std::string w = mem::who(oc);
  oc.node.resize = [&g, out, d, used, steps, node, w] {
    std::vector<int64_t> od = g.tensor(used[0]).dims;
    od[d] = 0;
    for (int32_t t : used) {
      const auto& td = g.tensor(t).dims;
      for (size_t i = 0; i < td.size(); ++i)
        if (static_cast<int64_t>(i) != d && td[i] != od[i])
          fail_at(w, ErrorKind::InvalidArgument, "sizes of tensors must match except in dim " + std::to_string(d) +
                                                     ": " + shape_str(g.tensor(used[0]).dims) + " vs " + shape_str(td));
      od[d] += td[d];
    }
    set_out(g, w, out, od);
    auto ocs = contiguous_strides(od);
    int64_t off = 0;
    for (size_t j = 0; j < used.size(); ++j) {
      const auto& td = g.tensor(used[j]).dims;
      Strided st;
      st.it = td;
      st.src_strides = contiguous_strides(td);
      st.dst_strides = ocs;
      st.dst_base = off * ocs[d];
      mem::write_strided(g, node->steps[steps[j].step], steps[j], st);
      off += td[d];
    }
  };
}

ETW_REGISTER_OP("aten.slice_copy.Tensor", build_slice);
ETW_REGISTER_OP("aten.select_copy.int", build_select);
ETW_REGISTER_OP("aten.split_with_sizes_copy.default", build_split_with_sizes);
ETW_REGISTER_OP("aten.split_copy.Tensor", build_split);
ETW_REGISTER_OP("aten.cat.default", build_cat);

}  // namespace
}  // namespace etwebgpu::ops
