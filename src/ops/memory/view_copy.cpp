// View-like copies and scatters through mem_strided.wgsl: t_copy, transpose_copy, narrow_copy,
// diagonal_copy, unfold_copy, roll, tril, stack, unbind_copy, select_scatter, slice_scatter.
#include <algorithm>
#include <functional>
#include <memory>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::add_single;
using mem::Strided;

// A dim argument for rank r, PyTorch-style (a 0-d tensor accepts 0 and -1).
int64_t dim_of(const OpContext& oc, int32_t id, int64_t r) {
  if (oc.g.is_null(id)) oc.fail(ErrorKind::Format, "dim must not be None");
  return norm_dim(oc, mem::int_arg(oc, id, "dim"), std::max<int64_t>(r, 1));
}

// Output = self with dims d0 and d1 swapped.
void add_transpose(OpContext& oc, int64_t d0, int64_t d1) {
  add_single(oc, mem::kAffine, "transpose", [d0, d1](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    Strided st;
    od = in;
    st.src_strides = contiguous_strides(in);
    if (!in.empty()) {
      std::swap(od[d0], od[d1]);
      std::swap(st.src_strides[d0], st.src_strides[d1]);
    }
    st.it = od;
    return st;
  });
}

// transpose_copy.int [self, dim0, dim1, out].
void build_transpose(OpContext& oc) {
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = oc.g.tensor(oc.arg(0)).rank();
  add_transpose(oc, dim_of(oc, oc.arg(1), r), dim_of(oc, oc.arg(2), r));
}

// t_copy [self, out]: rank <= 2; transposes a matrix, copies 0-d and 1-d tensors.
void build_t(OpContext& oc) {
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = oc.g.tensor(oc.arg(0)).rank();
  if (r > 2) oc.fail(ErrorKind::InvalidArgument, "t() expects a tensor with <= 2 dimensions, but self is " + std::to_string(r) + "D");
  add_transpose(oc, 0, r == 2 ? 1 : 0);
}

// narrow_copy [self, dim, start, length, out]: start may be negative (wraps once).
void build_narrow(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = g.tensor(oc.arg(0)).rank();
  if (r == 0) oc.fail(ErrorKind::InvalidArgument, "narrow() cannot be applied to a 0-dim tensor");
  int64_t d = dim_of(oc, oc.arg(1), r);
  int32_t start_id = oc.arg(2), len_id = oc.arg(3);
  mem::int_arg(oc, start_id, "start");
  mem::int_arg(oc, len_id, "length");
  add_single(oc, mem::kAffine, "narrow", [d, start_id, len_id](const kernel::Live& l, const std::vector<int64_t>& in,
                                                              std::vector<int64_t>& od) {
    int64_t start = l.integer(start_id), len = l.integer(len_id), n = in[d];
    if (start < -n || start > n)
      throw Error(ErrorKind::InvalidArgument, "start " + std::to_string(start) + " out of range for dim " +
                                                  std::to_string(d) + " of size " + std::to_string(n));
    if (start < 0) start += n;
    if (len < 0 || start + len > n)
      throw Error(ErrorKind::InvalidArgument, "start (" + std::to_string(start) + ") + length (" + std::to_string(len) +
                                                  ") exceeds dimension size (" + std::to_string(n) + ")");
    od = in;
    od[d] = len;
    Strided st;
    st.it = od;
    st.src_strides = contiguous_strides(in);
    st.src_base = start * st.src_strides[d];
    return st;
  });
}

// diagonal_copy [self, offset, dim1, dim2, out]: dims dim1, dim2 removed, the diagonal appended.
void build_diagonal(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = g.tensor(oc.arg(0)).rank();
  if (r < 2) oc.fail(ErrorKind::InvalidArgument, "diagonal needs a tensor of at least 2 dims, got " + std::to_string(r));
  int64_t offset = mem::int_arg(oc, oc.arg(1), "offset");
  int64_t d1 = dim_of(oc, oc.arg(2), r), d2 = dim_of(oc, oc.arg(3), r);
  if (d1 == d2) oc.fail(ErrorKind::InvalidArgument, "diagonal dimensions cannot be identical " + std::to_string(d1) + ", " + std::to_string(d2));
  add_single(oc, mem::kAffine, "diagonal", [offset, d1, d2](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    auto cs = contiguous_strides(in);
    int64_t len = offset >= 0 ? std::min(in[d1], in[d2] - offset) : std::min(in[d1] + offset, in[d2]);
    len = std::max<int64_t>(len, 0);
    Strided st;
    for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i)
      if (i != d1 && i != d2) od.push_back(in[i]), st.src_strides.push_back(cs[i]);
    od.push_back(len);
    st.src_strides.push_back(cs[d1] + cs[d2]);
    if (len > 0) st.src_base = offset >= 0 ? offset * cs[d2] : -offset * cs[d1];
    st.it = od;
    return st;
  });
}

// unfold_copy [self, dimension, size, step, out]: windows of `size` every `step` along the dim,
// the window appended as a new last dim.
void build_unfold(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = g.tensor(oc.arg(0)).rank();
  int64_t d = dim_of(oc, oc.arg(1), r);
  int64_t size = mem::int_arg(oc, oc.arg(2), "size"), step = mem::int_arg(oc, oc.arg(3), "step");
  if (size < 0) oc.fail(ErrorKind::InvalidArgument, "size is " + std::to_string(size) + " but must be >= 0");
  if (step <= 0) oc.fail(ErrorKind::InvalidArgument, "step is " + std::to_string(step) + " but must be > 0");
  add_single(oc, mem::kAffine, "unfold", [d, size, step](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    // A 0-d tensor unfolds like a 1-element vector whose window dim is dropped.
    std::vector<int64_t> dims = in.empty() ? std::vector<int64_t>{1} : in;
    if (size > dims[d])
      throw Error(ErrorKind::InvalidArgument, "maximum size for tensor at dimension " + std::to_string(d) + " is " +
                                                  std::to_string(dims[d]) + " but size is " + std::to_string(size));
    auto cs = contiguous_strides(dims);
    Strided st;
    od = dims;
    st.src_strides = cs;
    od[d] = (dims[d] - size) / step + 1;
    st.src_strides[d] = cs[d] * step;
    if (in.empty()) od.clear(), st.src_strides.clear();
    od.push_back(size);
    st.src_strides.push_back(cs[d]);
    st.it = od;
    return st;
  });
}

// roll [self, shifts, dims, out]: empty dims rolls the flattened tensor; shifts on a repeated
// dim add up (PyTorch rolls one dim after another).
void build_roll(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = g.tensor(oc.arg(0)).rank();
  std::vector<int64_t> shifts = mem::list_arg(oc, oc.arg(1), "shifts");
  std::vector<int64_t> dims = mem::list_arg(oc, oc.arg(2), "dims");
  if (shifts.empty()) oc.fail(ErrorKind::InvalidArgument, "`shifts` required");
  if (dims.empty() && shifts.size() != 1)
    oc.fail(ErrorKind::InvalidArgument, "shifts " + shape_str(shifts) + " need matching dims when more than one is given");
  if (!dims.empty() && dims.size() != shifts.size())
    oc.fail(ErrorKind::InvalidArgument, "shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
                                            ", dims: " + std::to_string(dims.size()));
  for (auto& d : dims) d = norm_dim(oc, d, std::max<int64_t>(r, 1));
  add_single(oc, mem::kRoll, "roll", [shifts, dims](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    od = in;
    Strided st;
    bool flat = dims.empty() || in.empty();  // a 0-d tensor rolls as one element
    st.it = flat ? std::vector<int64_t>{numel(in)} : in;
    st.src_dims = st.it;
    st.src_strides = contiguous_strides(st.it);
    std::vector<int64_t> total(st.it.size(), 0);
    for (size_t k = 0; k < shifts.size(); ++k) total[flat ? 0 : dims[k]] += shifts[k];
    st.lo.assign(st.it.size(), 0);
    for (size_t d = 0; d < st.it.size(); ++d) {
      int64_t n = st.it[d];
      if (n > 0) st.lo[d] = ((-total[d]) % n + n) % n;  // out[c] = in[(c - shift) mod n]
    }
    return st;
  });
}

// tril [self, diagonal, out]: keeps column - row <= diagonal in the last two dims, zeros the rest.
void build_tril(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  if (g.tensor(oc.arg(0)).rank() < 2)
    oc.fail(ErrorKind::InvalidArgument, "tril: input tensor must have at least 2 dimensions, got " +
                                            shape_str(g.tensor(oc.arg(0)).max_dims));
  int64_t diag = mem::int_arg(oc, oc.arg(1), "diagonal");
  int64_t clamped = std::clamp<int64_t>(diag, INT32_MIN, INT32_MAX);  // beyond any live size either way
  add_single(oc, mem::kTril, "tril", [clamped](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    od = in;
    Strided st;
    st.it = in;
    st.src_strides = contiguous_strides(in);
    st.lo = {clamped};
    st.fill = 0;  // 0.0f, 0 and false are all the zero word
    return st;
  });
}

// stack [tensors ValueList, dim, out]: every input has one shape; a new dim of their count.
void build_stack(OpContext& oc) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  std::vector<int32_t> ins = g.value_list(oc.arg(0));
  if (ins.empty()) oc.fail(ErrorKind::InvalidArgument, "stack expects a non-empty TensorList");
  for (int32_t t : ins) {
    mem::require_tensor(oc, t, "each input");
    mem::require_same_words(oc, t, out, "an input");
  }
  int64_t r = g.tensor(ins[0]).rank();
  int64_t d = norm_dim(oc, mem::int_arg(oc, oc.arg(1), "dim"), r + 1);
  std::vector<mem::StridedPlan> plans;
  for (size_t j = 0; j < ins.size(); ++j) plans.push_back(std::make_shared<Strided>());
  auto od = std::make_shared<std::vector<int64_t>>();
  oc.prepare([d, ins, plans, od](const kernel::Live& l) {
    const std::vector<int64_t>& in = l.dims(ins[0]);
    for (int32_t t : ins)
      if (l.dims(t) != in)
        throw Error(ErrorKind::InvalidArgument, "stack expects each tensor to be equal size, but got " + shape_str(in) +
                                                    " and " + shape_str(l.dims(t)));
    *od = in;
    od->insert(od->begin() + d, static_cast<int64_t>(ins.size()));
    auto ocs = contiguous_strides(*od);
    std::vector<int64_t> dst = ocs;
    dst.erase(dst.begin() + d);
    for (size_t j = 0; j < ins.size(); ++j) {
      Strided& st = *plans[j];
      st.it = in;
      st.src_strides = contiguous_strides(in);
      st.dst_strides = dst;
      st.dst_base = static_cast<int64_t>(j) * ocs[d];
    }
  });
  oc.output(out, [od, bound = g.tensor(out).max_dims](const kernel::Live&) { return mem::ranked(*od, bound); });
  for (size_t j = 0; j < ins.size(); ++j) mem::add_strided(oc, ins[j], out, mem::kAffine, "stack", plans[j]);
}

// unbind_copy.int [self, dim, out ValueList]: output j = self.select(dim, j).
void build_unbind(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0);
  mem::require_tensor(oc, x, "self");
  int64_t r = g.tensor(x).rank();
  if (r == 0) oc.fail(ErrorKind::InvalidArgument, "Dimension specified as 0 but tensor has no dimensions");
  int64_t d = dim_of(oc, oc.arg(1), r);
  std::vector<int32_t> outs = g.value_list(oc.out());
  if (static_cast<int64_t>(outs.size()) != g.tensor(x).max_dims[d])
    oc.fail(ErrorKind::InvalidArgument, "unbinding dim " + std::to_string(d) + " of " + shape_str(g.tensor(x).max_dims) +
                                            " gives " + std::to_string(g.tensor(x).max_dims[d]) + " tensors but the output list has " +
                                            std::to_string(outs.size()));
  std::vector<mem::StridedPlan> plans;
  for (size_t j = 0; j < outs.size(); ++j) plans.push_back(std::make_shared<Strided>());
  size_t n_out = outs.size();
  oc.prepare([x, d, n_out, plans](const kernel::Live& l) {
    const auto& in = l.dims(x);
    if (in[d] != static_cast<int64_t>(n_out))
      throw Error(ErrorKind::InvalidArgument, "dim " + std::to_string(d) + " of " + shape_str(in) + " is not " +
                                                  std::to_string(n_out) + " long (one per output)");
    auto cs = contiguous_strides(in);
    std::vector<int64_t> od = in, sst = cs;
    od.erase(od.begin() + d);
    sst.erase(sst.begin() + d);
    for (size_t j = 0; j < n_out; ++j) {
      Strided& st = *plans[j];
      st.it = od;
      st.src_strides = sst;
      st.src_base = static_cast<int64_t>(j) * cs[d];
    }
  });
  for (size_t j = 0; j < outs.size(); ++j) {
    mem::require_tensor(oc, outs[j], "each output");
    mem::require_same_words(oc, x, outs[j], "self");
    oc.output(outs[j], [st = plans[j], bound = g.tensor(outs[j]).max_dims](const kernel::Live&) {
      return mem::ranked(st->it, bound);
    });
    mem::add_strided(oc, x, outs[j], mem::kAffine, "unbind", plans[j]);
  }
}

// select_scatter / slice_scatter: out = self, then src written into a strided region of out.
// `region(live, self_dims, it&, dst_strides&, dst_base&)` gives the region; src must have shape `it`.
void build_region_scatter(OpContext& oc, int32_t self, int32_t src,
                          std::function<void(const kernel::Live&, const std::vector<int64_t>&, std::vector<int64_t>&,
                                             std::vector<int64_t>&, int64_t&)> region) {
  Graph& g = oc.g;
  int32_t out = oc.out();
  mem::require_tensor(oc, self, "self");
  mem::require_tensor(oc, src, "src");
  mem::require_same_words(oc, self, out, "self");
  mem::require_same_words(oc, src, out, "src");
  mem::require_distinct(oc, self, out);
  Step copy;
  copy.copy_src = &g.buffer(self);
  copy.copy_dst = &g.buffer(out);
  copy.variant = "copy";
  oc.node.steps.push_back(std::move(copy));
  auto st = std::make_shared<Strided>();
  oc.prepare([self, src, region, st](const kernel::Live& l) {
    *st = Strided{};
    region(l, l.dims(self), st->it, st->dst_strides, st->dst_base);
    if (l.dims(src) != st->it)
      throw Error(ErrorKind::InvalidArgument, "expected src to have a size equal to the slice of self. src size = " +
                                                  shape_str(l.dims(src)) + ", slice size = " + shape_str(st->it));
    st->src_strides = contiguous_strides(st->it);
  });
  oc.output_like(out, self);
  mem::add_strided(oc, src, out, mem::kAffine, "scatter", st);
  // The copy of self is host-side: its byte count follows the live output.
  graph::Node* node = &oc.node;
  oc.node.resize = [&g, node, out] {
    const Tensor& t = g.tensor(out);
    node->steps[0].copy_size = t.bytes(t.numel());
  };
}

// select_scatter [self, src, dim, index, out].
void build_select_scatter(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = g.tensor(oc.arg(0)).rank();
  if (r == 0) oc.fail(ErrorKind::InvalidArgument, "select_scatter cannot be applied to a 0-dim self");
  int64_t d = dim_of(oc, oc.arg(2), r);
  int32_t index_id = oc.arg(3);
  mem::int_arg(oc, index_id, "index");
  build_region_scatter(oc, oc.arg(0), oc.arg(1), [d, index_id](const kernel::Live& l, const std::vector<int64_t>& in,
                                                                std::vector<int64_t>& it, std::vector<int64_t>& dst, int64_t& base) {
    const int64_t idx = select_index(l.integer(index_id), d, in[d]);
    auto cs = contiguous_strides(in);
    it = in, dst = cs;
    it.erase(it.begin() + d);
    dst.erase(dst.begin() + d);
    base = idx * cs[d];
  });
}

// slice_scatter [self, src, dim, start, end, step, out]: slice bounds as in slice_copy.
void build_slice_scatter(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = g.tensor(oc.arg(0)).rank();
  if (r == 0) oc.fail(ErrorKind::InvalidArgument, "slice_scatter cannot be applied to a 0-dim self");
  int64_t d = dim_of(oc, oc.arg(2), r);
  int32_t start_id = oc.arg(3), end_id = oc.arg(4), step_id = oc.arg(5);
  int64_t step = g.is_null(step_id) ? 1 : mem::int_arg(oc, step_id, "step");
  if (step < 1) oc.fail(ErrorKind::InvalidArgument, "slice step must be positive, got " + std::to_string(step));
  if (!g.is_null(start_id)) mem::int_arg(oc, start_id, "start");
  if (!g.is_null(end_id)) mem::int_arg(oc, end_id, "end");
  bool has_start = !g.is_null(start_id), has_end = !g.is_null(end_id);
  build_region_scatter(oc, oc.arg(0), oc.arg(1), [d, start_id, end_id, has_start, has_end, step](
                                                     const kernel::Live& l, const std::vector<int64_t>& in,
                                                     std::vector<int64_t>& it, std::vector<int64_t>& dst, int64_t& base) {
    int64_t n = in[d];
    int64_t s = has_start ? l.integer(start_id) : 0, e = has_end ? l.integer(end_id) : n;
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, s, n);  // end before start is an empty slice
    auto cs = contiguous_strides(in);
    it = in, dst = cs;
    it[d] = (e - s + step - 1) / step;
    dst[d] *= step;
    base = s * cs[d];
  });
}

ETW_REGISTER_OP("aten.t_copy.default", build_t);
ETW_REGISTER_OP("aten.transpose_copy.int", build_transpose);
ETW_REGISTER_OP("aten.narrow_copy.default", build_narrow);
ETW_REGISTER_OP("aten.diagonal_copy.default", build_diagonal);
ETW_REGISTER_OP("aten.unfold_copy.default", build_unfold);
ETW_REGISTER_OP("aten.roll.default", build_roll);
ETW_REGISTER_OP("aten.tril.default", build_tril);
ETW_REGISTER_OP("aten.stack.default", build_stack);
ETW_REGISTER_OP("aten.unbind_copy.int", build_unbind);
ETW_REGISTER_OP("aten.select_scatter.default", build_select_scatter);
ETW_REGISTER_OP("aten.slice_scatter.default", build_slice_scatter);

}  // namespace
}  // namespace etwebgpu::ops
