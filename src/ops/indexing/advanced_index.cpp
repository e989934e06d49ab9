// PyTorch advanced indexing through indexing_advanced.wgsl: index.Tensor (x[i0, None, i2]) and
// index_put (x[idx] = v, accumulate both ways), with Null entries (full slices) anywhere, up to 4
// index tensors broadcast together, int32/int64 indices (negative ones wrap once), and for
// index_put a single boolean mask (x[mask] = v). Result layout as PyTorch defines it: when the
// index tensors sit on adjacent dims their broadcast shape B replaces those dims in place,
// otherwise B comes first, followed by the remaining dims in order.
#include <memory>

#include "graph/index_check.h"
#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

constexpr size_t kMaxIndexTensors = 4;

// WGSL: struct Params { r, s, v: Shape, src: array<vec4<i32>, 2>, ix: array<array<vec4<u32>, 2>, 4>,
//                       mask_lo, mask_rank, pad0, pad1: u32 }
struct AdvParams {
  ShapeU r, s, v;
  int32_t src[8] = {0};
  uint32_t ix[kMaxIndexTensors][8] = {};
  uint32_t mask_lo = 0, mask_rank = 0, pad0 = 0, pad1 = 0;
  uint32_t sites[kMaxIndexTensors] = {};  // IndexCheck site of each index tensor
};
static_assert(sizeof(AdvParams) == 3 * 80 + 32 + 128 + 32);

enum AdvMode : uint32_t { kIndex = 0, kPut = 1, kMaskPut = 2 };

// The indexed result shape R and where each self dim reads its coordinate.
struct Plan {
  std::vector<int64_t> r;
  std::vector<int32_t> src;                 // per self dim: R coord (>= 0) or -(j+1) for index j
  std::vector<std::vector<int64_t>> ix;     // per index tensor: strides over R (0 off its block)
};

// `entries[k]` is the live dims of the k-th index tensor, or nullptr for a Null (full slice).
Plan make_plan(const std::vector<int64_t>& self, const std::vector<const std::vector<int64_t>*>& entries) {
  std::vector<size_t> pos;
  std::vector<int64_t> b;
  for (size_t k = 0; k < entries.size(); ++k) {
    if (!entries[k]) continue;
    pos.push_back(k);
    try {
      b = broadcast_shape(b, *entries[k]);
    } catch (const Error& e) {
      throw Error(ErrorKind::InvalidArgument, std::string("index tensors do not broadcast: ") + e.what());
    }
  }
  bool adjacent = pos.back() - pos.front() + 1 == pos.size();
  size_t b_off = adjacent ? pos.front() : 0;
  Plan p;
  p.src.assign(self.size(), 0);
  if (adjacent) p.r.assign(self.begin(), self.begin() + pos.front());
  p.r.insert(p.r.end(), b.begin(), b.end());
  size_t j = 0;
  for (size_t d = 0; d < self.size(); ++d) {
    if (j < pos.size() && pos[j] == d) {
      p.src[d] = -static_cast<int32_t>(j + 1);
      ++j;
    } else if (adjacent && d < pos.front()) {
      p.src[d] = static_cast<int32_t>(d);
    } else {
      p.src[d] = static_cast<int32_t>(p.r.size());
      p.r.push_back(self[d]);
    }
  }
  for (size_t k : pos) {
    auto bs = broadcast_strides(*entries[k], b);
    std::vector<int64_t> s(p.r.size(), 0);
    for (size_t q = 0; q < b.size(); ++q) s[b_off + q] = bs[q];
    p.ix.push_back(std::move(s));
  }
  return p;
}

void fill_index_strides(AdvParams& a, const Plan& p, const std::vector<uint32_t>& sites) {
  for (size_t j = 0; j < sites.size(); ++j) a.sites[j] = sites[j];
  for (size_t d = 0; d < p.src.size(); ++d) a.src[d] = p.src[d];
  for (size_t j = 0; j < p.ix.size(); ++j)
    for (size_t d = 0; d < p.ix[j].size(); ++d) a.ix[j][d] = static_cast<uint32_t>(p.ix[j][d]);
}

struct Parsed {
  std::vector<int32_t> entries;  // value ids, -1 for Null
  std::vector<int32_t> tensors;  // the non-Null ones, in order
  bool mask = false;             // a single boolean mask index
  std::vector<uint32_t> sites;   // IndexCheck site per index tensor (not for a mask)
};

Parsed parse_indices(const OpContext& oc, int32_t list_id, bool allow_mask) {
  Graph& g = oc.g;
  Parsed p;
  std::vector<int32_t> list;
  try {
    list = g.value_list(list_id);
  } catch (const Error& e) {
    oc.fail(ErrorKind::Format, std::string("indices: ") + e.what());
  }
  for (int32_t v : list) {
    if (g.is_null(v)) {
      p.entries.push_back(-1);
      continue;
    }
    mem::require_tensor(oc, v, "each index");
    VkDType t = g.tensor(v).dtype;
    if (is_boolish(t)) {
      if (!allow_mask)
        oc.fail(ErrorKind::Unsupported, "boolean mask indices give a data-dependent output shape; only index_put "
                                        "accepts them (use masked_select)");
      p.mask = true;
    } else if (t != VkDType::Int32 && t != VkDType::Int64) {
      oc.fail(ErrorKind::InvalidArgument, std::string("indices must be int32, int64 or bool tensors, got ") +
                                              format::vk_dtype_name(t));
    }
    p.entries.push_back(v);
    p.tensors.push_back(v);
  }
  if (p.tensors.empty()) oc.fail(ErrorKind::InvalidArgument, "at least one index tensor is required");
  if (p.mask && p.tensors.size() != 1)
    oc.fail(ErrorKind::Unsupported, "a boolean mask index combined with other index tensors");
  if (p.tensors.size() > kMaxIndexTensors)
    oc.fail(ErrorKind::Unsupported, std::to_string(p.tensors.size()) + " index tensors (at most " +
                                        std::to_string(kMaxIndexTensors) + " are supported)");
  // index.Tensor and index_put accept [-size, size) and wrap negatives once, as PyTorch does.
  if (!p.mask)
    for (size_t k = 0; k < p.entries.size(); ++k)
      if (p.entries[k] >= 0)
        p.sites.push_back(g.index_check().add_site(mem::who(oc), static_cast<int64_t>(k), graph::IndexCheck::Negatives::WrapOnce));
  return p;
}

// The indexing_advanced kernel reading `in` (self or values) and writing `out` with index tensors
// `idx` (absent ones bound to a dummy). Accumulating puts bind the output as atomic words instead
// of a typed array (WGSL atomics are 32-bit; f16 outputs are updated a pair of halves at a time).
kernel::Kernel adv_kernel(Graph& g, AdvMode mode, uint32_t acc, int32_t in, int32_t out, const std::vector<int32_t>& idx) {
  kernel::Kernel k("indexing_advanced");
  k.constant("MODE", mode).constant("ACC", acc).input("IN", in);
  if (acc) {
    k.buffer("OUT", g.buffer(out), "atomic<u32>", kernel::Access::ReadWrite).define("ATOMIC");
    if (g.tensor(out).storage == kernel::Storage::F16) k.define("OUT_HALF");
    if (kernel::is_bytes(g.tensor(out).storage)) k.define("OUT_BYTES");
  } else {
    k.output("OUT", out);
  }
  for (size_t j = 0; j < kMaxIndexTensors; ++j) k.input("I" + std::to_string(j), j < idx.size() ? idx[j] : -1);
  k.fixed(g.index_check().binding());
  return k;
}

std::vector<const std::vector<int64_t>*> live_entries(const kernel::Live& l, const std::vector<int32_t>& entries) {
  std::vector<const std::vector<int64_t>*> e;
  for (int32_t v : entries) e.push_back(v < 0 ? nullptr : &l.dims(v));
  return e;
}

kernel::Groups groups_over(const std::vector<int64_t>& it) {
  return kernel::Groups::linear(kernel::ceil_div(static_cast<uint64_t>(numel(it)), kWorkgroupSize));
}

void check_rank(const OpContext& oc, int32_t x, const Parsed& p) {
  size_t used = p.entries.size();
  if (p.mask) used += static_cast<size_t>(oc.g.tensor(p.tensors[0]).rank()) - 1;
  if (static_cast<int64_t>(used) > oc.g.tensor(x).rank())
    oc.fail(ErrorKind::InvalidArgument, "too many indices (" + std::to_string(used) + ") for a tensor of rank " +
                                            std::to_string(oc.g.tensor(x).rank()));
}

// index.Tensor [self, indices, out]
void build_index(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  mem::require_tensor(oc, x, "self");
  mem::require_same_words(oc, x, out, "self");
  Parsed ps = parse_indices(oc, oc.arg(1), false);
  check_rank(oc, x, ps);
  mem::require_distinct(oc, x, out);
  auto a = std::make_shared<AdvParams>();
  auto r = std::make_shared<std::vector<int64_t>>();
  oc.prepare([x, ps, a, r](const kernel::Live& l) {
    const auto& xd = l.dims(x);
    Plan p = make_plan(xd, live_entries(l, ps.entries));
    *r = p.r;
    *a = AdvParams{};
    a->r = make_shape(p.r);
    a->s = make_shape(xd);
    fill_index_strides(*a, p, ps.sites);
  });
  oc.output(out, [r, bound = g.tensor(out).max_dims](const kernel::Live&) { return mem::ranked(*r, bound); });
  oc.add(adv_kernel(g, kIndex, 0, x, out, ps.tensors)
             .params<AdvParams>([a](const kernel::Live&) { return *a; })
             .groups([r](const kernel::Live&) { return groups_over(*r); })
             .variant("index"));
}

// index_put [self, indices, values, accumulate, out]: out = self with out[indices] = values (or
// += values). When out shares self's buffer (an in-place index_put_, or a KV-cache update the
// program merge aliased onto its mutable buffer) the copy of self is skipped.
void build_index_put(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), vals = oc.arg(2), out = oc.out();
  mem::require_tensor(oc, x, "self");
  mem::require_tensor(oc, vals, "values");
  mem::require_same_words(oc, x, out, "self");
  mem::require_same_words(oc, vals, out, "values");
  bool accumulate = false;
  if (!g.is_null(oc.arg(3))) {
    try {
      accumulate = g.boolean(oc.arg(3));
    } catch (const Error& e) {
      oc.fail(ErrorKind::Format, std::string("accumulate: ") + e.what());
    }
  }
  Parsed ps = parse_indices(oc, oc.arg(1), true);
  check_rank(oc, x, ps);
  if (g.tensor(x).max_dims != g.tensor(out).max_dims)
    oc.fail(ErrorKind::InvalidArgument, "out " + shape_str(g.tensor(out).max_dims) + " must have self's shape " +
                                            shape_str(g.tensor(x).max_dims));
  VkDType t = g.tensor(out).dtype;
  uint32_t acc = !accumulate ? 0 : is_float(t) ? 1 : t == VkDType::Bool ? 3 : 2;
  const gpu::Buffer& xb = g.buffer(x);
  const gpu::Buffer& ob = g.buffer(out);
  const gpu::Buffer& vb = g.buffer(vals);
  if (&vb == &ob) oc.fail(ErrorKind::Unsupported, "values share the output's memory object");
  bool in_place = &xb == &ob;
  if (!in_place) {
    Step c;
    c.copy_src = &xb;
    c.copy_dst = &ob;
    c.variant = "copy_self";
    oc.node.steps.push_back(std::move(c));
  }
  AdvMode mode = ps.mask ? kMaskPut : kPut;
  auto a = std::make_shared<AdvParams>();
  auto target = std::make_shared<std::vector<int64_t>>();  // the shape values broadcast to (the iteration)
  oc.prepare([x, vals, ps, mode, a, target](const kernel::Live& l) {
    const auto& xd = l.dims(x);
    const auto& vd = l.dims(vals);
    *a = AdvParams{};
    a->s = make_shape(xd);
    if (mode == kMaskPut) {
      const auto& md = l.dims(ps.tensors[0]);
      size_t lo = 0;
      while (ps.entries[lo] < 0) ++lo;
      for (size_t k = 0; k < md.size(); ++k)
        if (md[k] != xd[lo + k])
          throw Error(ErrorKind::InvalidArgument, "the mask " + shape_str(md) + " does not match the indexed dims of self " +
                                                      shape_str(xd) + " at dim " + std::to_string(lo + k));
      // values broadcast to [count, rest...]; the count dim is data-dependent, so values must be 1 there.
      std::vector<int64_t> rest(xd.begin() + lo + md.size(), xd.end());
      std::vector<int64_t> slot = {1};
      slot.insert(slot.end(), rest.begin(), rest.end());
      std::vector<int64_t> bs;
      try {
        if (broadcast_shape(vd, slot) != slot) throw Error(ErrorKind::InvalidArgument, "");
        bs = broadcast_strides(vd, slot);
      } catch (const Error&) {
        // Values that would fit one row per selected element ([n, rest...]) are valid PyTorch whose
        // fit depends on the live count: unsupported, not invalid.
        bool per_element = false;
        if (vd.size() == slot.size() && vd[0] != 1) {
          std::vector<int64_t> vr(vd.begin() + 1, vd.end());
          try {
            per_element = broadcast_shape(vr, rest) == rest;
          } catch (const Error&) {
          }
        }
        std::string sel = "[count";
        for (int64_t d : rest) sel += ", " + std::to_string(d);
        throw Error(per_element ? ErrorKind::Unsupported : ErrorKind::InvalidArgument,
                    "values " + shape_str(vd) + " cannot be broadcast to the masked selection " + sel +
                        "] (only values broadcast over the count are supported)");
      }
      std::vector<int64_t> vs(xd.size(), 0);
      for (size_t k = 0; k < rest.size(); ++k) vs[lo + md.size() + k] = bs[1 + k];
      a->v = make_shape(xd, &vs);
      a->mask_lo = static_cast<uint32_t>(lo);
      a->mask_rank = static_cast<uint32_t>(md.size());
      auto ms = contiguous_strides(md);
      for (size_t k = 0; k < ms.size(); ++k) a->ix[0][k] = static_cast<uint32_t>(ms[k]);
      a->r = make_shape(xd);
      *target = xd;
    } else {
      Plan p = make_plan(xd, live_entries(l, ps.entries));
      try {
        if (broadcast_shape(vd, p.r) != p.r) throw Error(ErrorKind::InvalidArgument, "");
      } catch (const Error&) {
        throw Error(ErrorKind::InvalidArgument, "values " + shape_str(vd) + " cannot be broadcast to the indexed shape " +
                                                    shape_str(p.r));
      }
      auto vs = broadcast_strides(vd, p.r);
      a->r = make_shape(p.r);
      a->v = make_shape(p.r, &vs);
      fill_index_strides(*a, p, ps.sites);
      *target = p.r;
    }
  });
  oc.output_like(out, x);
  oc.add(adv_kernel(g, mode, acc, vals, out, ps.tensors)
             .params<AdvParams>([a](const kernel::Live&) { return *a; })
             .groups([target](const kernel::Live&) { return groups_over(*target); })
             .variant(ps.mask ? "mask_put" : "put"));
  if (!in_place) {  // the copy of self is host-side: its byte count follows the live output
    graph::Node* node = &oc.node;
    oc.node.resize = [&g, node, out] {
      const Tensor& t = g.tensor(out);
      node->steps[0].copy_size = t.bytes(t.numel());
    };
  }
}

ETW_REGISTER_OP("aten.index.Tensor", build_index);
ETW_REGISTER_OP("aten.index_put.default", build_index_put);

}  // namespace
}  // namespace etwebgpu::ops
