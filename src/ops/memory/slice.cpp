// slice_copy, select_copy, split_with_sizes_copy, split_copy, cat: strided gathers/scatters
// through mem_strided.wgsl, one dispatch per output (split) or per input (cat), planned once per
// run by the node's prepare function.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

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
  bool has_start = !g.is_null(start_id), has_end = !g.is_null(end_id);
  auto st = std::make_shared<Strided>();
  oc.prepare([x, d, start_id, end_id, has_start, has_end, step, st](const kernel::Live& l) {
    const auto& in = l.dims(x);
    auto opt = [&](bool has, int32_t id) { return has ? std::optional<int64_t>{l.integer(id)} : std::optional<int64_t>{}; };
    SliceRange sr = slice_range(opt(has_start, start_id), opt(has_end, end_id), step, in[d]);
    auto cs = contiguous_strides(in);
    st->it = in;
    st->it[d] = sr.len;
    st->src_strides = cs;
    st->src_strides[d] *= step;
    st->src_base = sr.start * cs[d];
  });
  oc.output(out, [st](const kernel::Live&) { return st->it; });
  mem::add_strided(oc, x, out, mem::kAffine, "slice", st);
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
  auto st = std::make_shared<Strided>();
  oc.prepare([x, d, index_id, st](const kernel::Live& l) {
    const auto& in = l.dims(x);
    const int64_t idx = select_index(l.integer(index_id), d, in[d]);
    auto cs = contiguous_strides(in);
    *st = Strided{};
    for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i)
      if (i != d) st->it.push_back(in[i]), st->src_strides.push_back(cs[i]);
    st->src_base = idx * cs[d];
  });
  oc.output(out, [st, bound = g.tensor(out).max_dims](const kernel::Live&) { return mem::ranked(st->it, bound); });
  // The plan gave a select from a size-1 dim its input's buffer: the words are already in place.
  if (graph::select_keeps_order(g.ir(), x, oc.arg(1)) && &g.buffer(x) == &g.buffer(out)) return;
  mem::add_strided(oc, x, out, mem::kAffine, "select", st);
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
  std::vector<mem::StridedPlan> plans;
  for (size_t j = 0; j < outs.size(); ++j) plans.push_back(std::make_shared<Strided>());
  size_t n_out = outs.size();
  oc.prepare([x, d, n_out, plans, sizes_of](const kernel::Live& l) {
    const auto& in = l.dims(x);
    std::vector<int64_t> sizes = sizes_of(in[d]);
    if (sizes.size() != n_out)
      throw Error(ErrorKind::InvalidArgument, "dim size " + std::to_string(in[d]) + " splits into " +
                                                  std::to_string(sizes.size()) + " pieces, the op has " +
                                                  std::to_string(n_out) + " outputs");
    auto cs = contiguous_strides(in);
    int64_t off = 0;
    for (size_t j = 0; j < n_out; ++j) {
      Strided& st = *plans[j];
      st.it = in;
      st.it[d] = sizes[j];
      st.src_strides = cs;
      st.src_base = off * cs[d];
      off += sizes[j];
    }
  });
  for (size_t j = 0; j < outs.size(); ++j) {
    mem::require_tensor(oc, outs[j], "each output");
    mem::require_same_words(oc, x, outs[j], "self");
    oc.output(outs[j], [st = plans[j]](const kernel::Live&) { return st->it; });
    mem::add_strided(oc, x, outs[j], mem::kAffine, "split", plans[j]);
  }
}

// split_with_sizes_copy [self, split_sizes, dim, out ValueList].
void build_split_with_sizes(OpContext& oc) {
  std::vector<int64_t> sizes = mem::list_arg(oc, oc.arg(1), "split_sizes");
  for (int64_t s : sizes)
    if (s < 0) oc.fail(ErrorKind::InvalidArgument, "split size " + std::to_string(s) + " is negative");
  build_split_impl(oc, oc.arg(2), [sizes](int64_t n) {
    int64_t sum = 0;
    for (int64_t s : sizes) sum += s;
    if (sum != n)
      throw Error(ErrorKind::InvalidArgument, "split sizes " + shape_str(sizes) + " sum to " + std::to_string(sum) +
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
  std::vector<mem::StridedPlan> plans;
  for (size_t j = 0; j < used.size(); ++j) plans.push_back(std::make_shared<Strided>());
  auto od = std::make_shared<std::vector<int64_t>>();
  oc.prepare([d, used, plans, od](const kernel::Live& l) {
    *od = l.dims(used[0]);
    (*od)[d] = 0;
    for (int32_t t : used) {
      const auto& td = l.dims(t);
      for (size_t i = 0; i < td.size(); ++i)
        if (static_cast<int64_t>(i) != d && td[i] != (*od)[i])
          throw Error(ErrorKind::InvalidArgument, "sizes of tensors must match except in dim " + std::to_string(d) +
                                                      ": " + shape_str(l.dims(used[0])) + " vs " + shape_str(td));
      (*od)[d] += td[d];
    }
    auto ocs = contiguous_strides(*od);
    int64_t off = 0;
    for (size_t j = 0; j < used.size(); ++j) {
      const auto& td = l.dims(used[j]);
      Strided& st = *plans[j];
      st.it = td;
      st.src_strides = contiguous_strides(td);
      st.dst_strides = ocs;
      st.dst_base = off * ocs[d];
      off += td[d];
    }
  });
  oc.output(out, [od](const kernel::Live&) { return *od; });
  for (size_t j = 0; j < used.size(); ++j) mem::add_strided(oc, used[j], out, mem::kAffine, "cat", plans[j]);
}

ETW_REGISTER_OP("aten.slice_copy.Tensor", build_slice);
ETW_REGISTER_OP("aten.select_copy.int", build_select);
ETW_REGISTER_OP("aten.split_with_sizes_copy.default", build_split_with_sizes);
ETW_REGISTER_OP("aten.split_copy.Tensor", build_split);
ETW_REGISTER_OP("aten.cat.default", build_cat);

}  // namespace
}  // namespace etwebgpu::ops
