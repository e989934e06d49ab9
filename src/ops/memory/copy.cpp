// Contiguous reshapes (view_copy, _unsafe_view, alias_copy, lift_fresh_copy, detach_copy, clone,
// squeeze_copy, unsqueeze_copy): the words do not move, so each is one buffer-to-buffer copy of
// the live element count, or nothing when input and output share a memory object.
#include <algorithm>
#include <functional>
#include <set>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::fail_at;
using mem::set_out;

// Pushes the copy step and its resize hook; `out_dims` computes the output's live dims.
void add_copy(OpContext& oc, int32_t x, int32_t out, std::function<std::vector<int64_t>()> out_dims) {
  Graph& g = oc.g;
  mem::require_tensor(oc, x, "self");
  mem::require_same_words(oc, x, out, "self");
  const gpu::Buffer& bx = g.buffer(x);
  const gpu::Buffer& bo = g.buffer(out);
  bool same = &bx == &bo;  // WebGPU rejects a copy within one buffer; the words are already there
  Step s;
  s.copy_src = &bx;
  s.copy_dst = &bo;
  s.variant = same ? "alias" : "copy";
  oc.node.steps.push_back(std::move(s));
  size_t si = oc.node.steps.size() - 1;
  graph::Node* node = &oc.node;
  std::string w = mem::who(oc);
  oc.node.resize = [&g, x, out, node, si, same, w, out_dims = std::move(out_dims)] {
    std::vector<int64_t> od = out_dims();
    if (numel(od) != g.tensor(x).numel())
      fail_at(w, ErrorKind::InvalidArgument, "shape " + shape_str(od) + " is invalid for input of shape " +
                                                 shape_str(g.tensor(x).dims));
    set_out(g, w, out, od);
    node->steps[si].copy_size = same ? 0 : static_cast<uint64_t>(numel(od)) * 4;
  };
}

// view_copy / _unsafe_view: [self, size (IntList | ValueList of Int/SymInt), out].
void build_view(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), size = oc.arg(1), out = oc.out();
  std::string w = mem::who(oc);
  mem::list_arg(oc, size, "size");  // kind check at load
  add_copy(oc, x, out, [&g, x, size, w] {
    std::vector<int64_t> s = g.int_list(size);  // live: SymInt entries change between runs
    int64_t n = g.tensor(x).numel(), known = 1;
    int infer = -1;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == -1) {
        if (infer >= 0) fail_at(w, ErrorKind::InvalidArgument, "only one dimension can be inferred (-1)");
        infer = static_cast<int>(i);
      } else if (s[i] < 0) {
        fail_at(w, ErrorKind::InvalidArgument, "invalid size " + std::to_string(s[i]) + " in " + shape_str(s));
      } else {
        known *= s[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || n % known != 0)
        fail_at(w, ErrorKind::InvalidArgument, "shape " + shape_str(s) + " is invalid for input of shape " +
                                                   shape_str(g.tensor(x).dims));
      s[infer] = n / known;
    }
    return s;
  });
}

// alias_copy [self, out] and clone [self, memory_format, out]: same shape.
void build_same_shape(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "self");
  require_same_numel(oc, x, out);
  add_copy(oc, x, out, [&g, x] { return g.tensor(x).dims; });
}

void build_clone(OpContext& oc) {
  int32_t mf = oc.arg(1);
  if (!oc.g.is_null(mf)) oc.fail(ErrorKind::Unsupported, "memory_format must be None (contiguous output)");
  build_same_shape(oc);
}

// squeeze: which dims go is decided from the serialized (max) shape, as at export: a dim is
// removed when it is listed (or, for .default, any dim) and has size 1.
void build_squeeze_impl(OpContext& oc, std::vector<int64_t> listed, bool all) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "self");
  const Tensor& tx = g.tensor(x);
  int64_t r = tx.rank();
  std::set<int64_t> drop;
  if (all) {
    for (int64_t d = 0; d < r; ++d)
      if (tx.max_dims[d] == 1) drop.insert(d);
  } else {
    for (int64_t d : listed) {
      int64_t k = norm_dim(oc, d, r);
      if (r > 0 && tx.max_dims[k] == 1) drop.insert(k);
    }
  }
  int64_t want = r - static_cast<int64_t>(drop.size());
  if (static_cast<int64_t>(g.tensor(out).max_dims.size()) != want)
    oc.fail(ErrorKind::InvalidArgument, "squeezing " + shape_str(tx.max_dims) + " gives rank " + std::to_string(want) +
                                            " but the output is " + shape_str(g.tensor(out).max_dims));
  add_copy(oc, x, out, [&g, x, drop] {
    std::vector<int64_t> od;
    const auto& d = g.tensor(x).dims;
    for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i)
      if (!drop.count(i)) od.push_back(d[i]);
    return od;
  });
}

void build_squeeze_dims(OpContext& oc) { build_squeeze_impl(oc, mem::list_arg(oc, oc.arg(1), "dims"), false); }
void build_squeeze_dim(OpContext& oc) { build_squeeze_impl(oc, {mem::int_arg(oc, oc.arg(1), "dim")}, false); }
void build_squeeze_all(OpContext& oc) { build_squeeze_impl(oc, {}, true); }

// unsqueeze_copy [self, dim, out]: dim in [-(r+1), r].
void build_unsqueeze(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "self");
  int64_t r = g.tensor(x).rank();
  int64_t d = norm_dim(oc, mem::int_arg(oc, oc.arg(1), "dim"), r + 1);
  add_copy(oc, x, out, [&g, x, d] {
    std::vector<int64_t> od = g.tensor(x).dims;
    od.insert(od.begin() + d, 1);
    return od;
  });
}

ETW_REGISTER_OP("aten.view_copy.default", build_view);
ETW_REGISTER_OP("aten._unsafe_view.default", build_view);
ETW_REGISTER_OP("aten.alias_copy.default", build_same_shape);
ETW_REGISTER_OP("aten.lift_fresh_copy.default", build_same_shape);
ETW_REGISTER_OP("aten.detach_copy.default", build_same_shape);
ETW_REGISTER_OP("aten.clone.default", build_clone);
ETW_REGISTER_OP("aten.squeeze_copy.dims", build_squeeze_dims);
ETW_REGISTER_OP("aten.squeeze_copy.dim", build_squeeze_dim);
ETW_REGISTER_OP("aten.squeeze_copy.default", build_squeeze_all);
ETW_REGISTER_OP("aten.unsqueeze_copy.default", build_unsqueeze);

}  // namespace
}  // namespace etwebgpu::ops
