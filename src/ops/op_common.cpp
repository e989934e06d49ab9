#include "ops/op_common.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>

#include "format/escape.h"

namespace etwebgpu::ops {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

ShapeU make_shape(const std::vector<int64_t>& dims, const std::vector<int64_t>* strides) {
  if (dims.size() > kMaxRank)
    throw Error(ErrorKind::Limit, "rank " + std::to_string(dims.size()) + " exceeds the supported 8");
  int64_t n = numel(dims);
  if (n > std::numeric_limits<uint32_t>::max())
    throw Error(ErrorKind::Limit, "tensor " + shape_str(dims) + " has more than 2^32 elements");
  ShapeU s;
  s.rank = static_cast<uint32_t>(dims.size());
  s.numel = static_cast<uint32_t>(n);
  auto cs = strides ? *strides : contiguous_strides(dims);
  for (size_t i = 0; i < dims.size(); ++i) {
    s.dims[i] = static_cast<uint32_t>(dims[i]);
    s.strides[i] = static_cast<uint32_t>(cs[i]);
  }
  return s;
}

std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> o(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(ErrorKind::InvalidArgument, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    o[i] = da == 1 ? db : da;
  }
  return o;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  std::vector<int64_t> s(out.size(), 0);
  auto cs = contiguous_strides(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[off + i] = in[i] == 1 ? 0 : cs[i];
  return s;
}


int64_t norm_dim(const OpContext& oc, int64_t d, int64_t r) {
  int64_t k = d < 0 ? d + r : d;
  if (k < 0 || k >= std::max<int64_t>(r, 1))
    oc.fail(ErrorKind::InvalidArgument, "dim " + std::to_string(d) + " out of range for rank " + std::to_string(r));
  return k;
}

int64_t select_index(int64_t idx, int64_t d, int64_t size) {
  if (idx < -size || idx >= size)
    throw Error(ErrorKind::InvalidArgument, "index " + std::to_string(idx) + " out of range for dim " + std::to_string(d) +
                                                " of size " + std::to_string(size));
  return idx < 0 ? idx + size : idx;
}

bool is_float(VkDType t) { return t == VkDType::Float32 || t == VkDType::Float16 || t == VkDType::Float64; }
bool is_int(VkDType t) { return t == VkDType::Int32 || t == VkDType::Int64 || t == VkDType::Int8; }
bool is_boolish(VkDType t) { return t == VkDType::Bool || t == VkDType::UInt8; }

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);  // not std::bit_cast: the web build's libc++ (emscripten 3.1.6) lacks it
  return u;
}

uint32_t scalar_word(const OpContext& oc, double v, VkDType t, const char* what) {
  if (is_float(t)) return f32_bits(static_cast<float>(v));
  if (is_boolish(t)) return v != 0.0 ? 1u : 0u;
  const double tv = std::trunc(v);
  if (!(tv >= INT32_MIN && tv <= INT32_MAX))
    oc.fail(ErrorKind::InvalidArgument, std::string(what) + " " + std::to_string(v) + " does not fit an int32 tensor");
  return static_cast<uint32_t>(static_cast<int32_t>(tv));
}

void require_dtype(const OpContext& oc, int32_t id, std::initializer_list<VkDType> allowed, const char* what) {
  VkDType t = oc.g.tensor(id).dtype;
  for (auto a : allowed)
    if (a == t) return;
  std::string names;
  for (auto a : allowed) names += (names.empty() ? "" : "/") + std::string(format::vk_dtype_name(a));
  oc.fail(ErrorKind::Unsupported, std::string(what) + " has dtype " + format::vk_dtype_name(t) + "; supported: " + names);
}

void require_same_numel(const OpContext& oc, int32_t a, int32_t b) {
  auto& ta = oc.g.tensor(a);
  auto& tb = oc.g.tensor(b);
  if (ta.max_numel() != tb.max_numel())
    oc.fail(ErrorKind::InvalidArgument, "input " + shape_str(ta.max_dims) + " and output " + shape_str(tb.max_dims) +
                                            " hold different element counts");
}

SplitK choose_split_k(const SplitPolicy& pol, uint64_t tiles, uint64_t K, bool force, uint64_t max_splits_by_scratch) {
  if (tiles == 0 || (!force && (tiles >= pol.below_tiles || K < pol.min_k))) return {};
  uint64_t s = ceil_div(pol.target, tiles);
  if (force) s = std::max<uint64_t>(s, 2);
  s = std::min({s, pol.max_splits, K / (force ? 16 : pol.min_chunk), max_splits_by_scratch});
  if (s < 2) return {};
  uint64_t chunk = (ceil_div(K, s) + 15) / 16 * 16;
  return {static_cast<uint32_t>(ceil_div(K, chunk)), static_cast<uint32_t>(chunk)};
}

std::string pinned_route(const OpContext& oc, const char* key, std::initializer_list<const char*> allowed) {
  const auto& fr = oc.g.options().force_route;
  auto it = fr.find(key);
  if (it == fr.end()) return "";
  std::string list;
  size_t i = 0;
  for (const char* a : allowed) {
    if (it->second == a) return it->second;
    list += std::string(i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + "\"" + a + "\"";
    ++i;
  }
  oc.fail(ErrorKind::InvalidArgument,
          std::string("force_route ") + key + " must be " + list + ", got \"" + format::escape_untrusted(it->second) + "\"");
}

bool holds_vec4(Graph& g, int32_t id) {
  return g.buffer(id).size() >= 4u * kernel::element_bytes(g.tensor(id).storage);
}

bool use_subgroups(const OpContext& oc, uint32_t max_size) {
  const std::string r = pinned_route(oc, "reduce", {"workgroup", "subgroup"});
  const auto& info = oc.g.ctx().info();
  const bool fit = info.subgroups && info.subgroup_min >= 1 && info.subgroup_max <= max_size;
  if (r == "subgroup" && !fit)
    oc.fail(ErrorKind::Unsupported, "force_route reduce = \"subgroup\" needs subgroups of at most " + std::to_string(max_size) +
                                        " invocations; the device has " +
                                        (info.subgroups ? std::to_string(info.subgroup_min) + ".." + std::to_string(info.subgroup_max) : std::string("none")));
  return fit && r != "workgroup";
}

}  // namespace etwebgpu::ops
