// Contiguous reshapes (view_copy, _unsafe_view, alias_copy, lift_fresh_copy, detach_copy, clone,
// squeeze_copy, unsqueeze_copy): the words do not move, so each is one buffer-to-buffer copy of
// the live element count, or no step at all when the memory plan gave the output its input's
// buffer (graph/memory_plan.h: a copy-free view).
#include <algorithm>
#include <functional>
#include <set>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

// Pushes the copy step and its host hook; `out_dims` computes the output's live dims.
void add_copy(OpContext& oc, int32_t x, int32_t out, std::function<std::vector<int64_t>(const kernel::Live&)> out_dims) {
  Graph& g = oc.g;
  mem::require_tensor(oc, x, "self");
  mem::require_same_words(oc, x, out, "self");
  const gpu::Buffer& bx = g.buffer(x);
  const gpu::Buffer& bo = g.buffer(out);
  bool same = &bx == &bo;  // the words are already there (and WebGPU rejects a copy within one buffer)
  size_t si = oc.node.steps.size();
  if (!same) {
    Step s;
    s.copy_src = &bx;
    s.copy_dst = &bo;
    s.variant = "copy";
    oc.node.steps.push_back(std::move(s));
  }
  oc.output(out, [x, out_dims = std::move(out_dims), bound = g.tensor(out).max_dims](const kernel::Live& l) {
    std::vector<int64_t> od = out_dims(l);
    if (numel(od) != l.numel(x))
      throw Error(ErrorKind::InvalidArgument, "shape " + shape_str(od) + " is invalid for input of shape " + shape_str(l.dims(x)));
    return mem::ranked(od, bound);
  });
  if (same) return;
  graph::Node* node = &oc.node;
  oc.node.resize = [&g, out, node, si] {
    const Tensor& t = g.tensor(out);
    node->steps[si].copy_size = t.bytes(t.numel());
  };
}

// view_copy / _unsafe_view: [self, size (IntList | ValueList of Int/SymInt), out].
void build_view(OpContext& oc) {
  int32_t x = oc.arg(0), size = oc.arg(1), out = oc.out();
  mem::LiveInts live_size(oc, size, "size");
  add_copy(oc, x, out, [x, live_size](const kernel::Live& l) {
    std::vector<int64_t> s = live_size(l);
    int64_t n = l.numel(x), known = 1;
    int infer = -1;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == -1) {
        if (infer >= 0) throw Error(ErrorKind::InvalidArgument, "only one dimension can be inferred (-1)");
        infer = static_cast<int>(i);
      } else if (s[i] < 0) {
        throw Error(ErrorKind::InvalidArgument, "invalid size " + std::to_string(s[i]) + " in " + shape_str(s));
      } else {
        known *= s[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || n % known != 0)
        throw Error(ErrorKind::InvalidArgument, "shape " + shape_str(s) + " is invalid for input of shape " +
                                                    shape_str(l.dims(x)));
      s[infer] = n / known;
    }
    return s;
  });
}

// alias_copy [self, out] and clone [self, memory_format, out]: same shape.
void build_same_shape(OpContext& oc) {
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "self");
  require_same_numel(oc, x, out);
  add_copy(oc, x, out, [x](const kernel::Live& l) { return l.dims(x); });
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
  add_copy(oc, x, out, [x, drop](const kernel::Live& l) {
    std::vector<int64_t> od;
    const auto& d = l.dims(x);
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
  add_copy(oc, x, out, [x, d](const kernel::Live& l) {
    std::vector<int64_t> od = l.dims(x);
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
