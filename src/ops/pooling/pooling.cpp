// 2D pooling on [N, C, H, W] / [C, H, W]: avg_pool2d, max_pool2d(_with_indices), adaptive avg.
#include <optional>
#include <tuple>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

enum PoolMode : uint32_t { kAvg = 0, kMax = 1, kAdaptive = 2 };

struct Params {
  uint32_t total = 0, ih = 0, iw = 0, oh = 0, ow = 0, kh = 1, kw = 1, sh = 1;
  uint32_t sw = 1;
  int32_t ph = 0, pw = 0;
  uint32_t dh = 1, dw = 1;
  int32_t divisor = 0;
  uint32_t count_pad = 1, pad = 0;
};
static_assert(sizeof(Params) == 64);

struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false;
};

// A 1- or 2-element IntList as (h, w); `dflt` is used when the list is empty (stride).
std::pair<int64_t, int64_t> pair_arg(const OpContext& oc, int32_t id, const char* what,
                                     std::optional<std::pair<int64_t, int64_t>> dflt = std::nullopt) {
  auto v = oc.g.int_list(id);
  if (v.empty() && dflt) return *dflt;
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  oc.fail(ErrorKind::InvalidArgument, std::string(what) + " must have 1 or 2 elements, got " + shape_str(v));
}

// PyTorch's pooling_output_shape: with ceil_mode the last window must start inside input + left pad.
int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t o = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;  // floor division
  if (ceil_mode && (o - 1) * stride >= in + pad) --o;
  return o;
}

void check_input(OpContext& oc, int32_t x, int32_t out) {
  auto& md = oc.g.tensor(x).max_dims;
  if (md.size() != 3 && md.size() != 4)
    oc.fail(ErrorKind::Unsupported, "input " + shape_str(md) + ": only 3D [C,H,W] or 4D [N,C,H,W] is supported");
  require_dtype(oc, x, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "input");
  require_dtype(oc, out, {VkDType::Float32, VkDType::Float16, VkDType::Float64}, "output");
}

// Live output dims from live input dims: same leading dims, then (oh, ow).
std::vector<int64_t> with_hw(const std::vector<int64_t>& in, int64_t oh, int64_t ow) {
  std::vector<int64_t> o(in.begin(), in.end() - 2);
  o.push_back(oh);
  o.push_back(ow);
  return o;
}

struct PoolSetup {
  PoolMode mode = kAvg;
  int32_t x = -1, out = -1, idx = -1;
  Window w;
  int32_t divisor = 0;
  bool count_pad = true;
  std::pair<int64_t, int64_t> adaptive_out{0, 0};
};

void build_pool(OpContext& oc, PoolSetup s) {
  check_input(oc, s.x, s.out);
  if (s.mode != kAdaptive) {
    const Window& w = s.w;
    if (w.kh <= 0 || w.kw <= 0) oc.fail(ErrorKind::InvalidArgument, "kernel_size must be positive");
    if (w.sh <= 0 || w.sw <= 0) oc.fail(ErrorKind::InvalidArgument, "stride must be positive");
    if (w.dh <= 0 || w.dw <= 0) oc.fail(ErrorKind::InvalidArgument, "dilation must be positive");
    if (w.ph < 0 || w.pw < 0 || w.ph > w.kh / 2 || w.pw > w.kw / 2)
      oc.fail(ErrorKind::InvalidArgument, "pad should be at most half of kernel size");
  } else if (s.adaptive_out.first <= 0 || s.adaptive_out.second <= 0) {
    oc.fail(ErrorKind::InvalidArgument, "output_size must be positive");
  }
  if (s.idx >= 0) require_dtype(oc, s.idx, {VkDType::Int32, VkDType::Int64}, "indices output");
  auto p = std::make_shared<Params>();
  oc.prepare([s, p](const kernel::Live& l) {
    const auto& in = l.dims(s.x);
    int64_t H = in[in.size() - 2], W = in[in.size() - 1];
    const Window& w = s.w;
    int64_t oh, ow;
    if (s.mode == kAdaptive) {
      oh = s.adaptive_out.first;
      ow = s.adaptive_out.second;
      if (H <= 0 || W <= 0) throw Error(ErrorKind::InvalidArgument, "input " + shape_str(in) + " has an empty plane");
    } else {
      oh = out_size(H, w.kh, w.ph, w.sh, w.dh, w.ceil_mode);
      ow = out_size(W, w.kw, w.pw, w.sw, w.dw, w.ceil_mode);
      if (oh < 1 || ow < 1)
        throw Error(ErrorKind::InvalidArgument, "input " + shape_str(in) + " is too small: output " + std::to_string(oh) + "x" +
                                                    std::to_string(ow));
    }
    p->total = kernel::u32(numel(with_hw(in, oh, ow)), "output elements");
    p->ih = kernel::u32(H, "input height"), p->iw = kernel::u32(W, "input width");
    p->oh = kernel::u32(oh, "output height"), p->ow = kernel::u32(ow, "output width");
    p->kh = kernel::u32(w.kh, "kernel height"), p->kw = kernel::u32(w.kw, "kernel width");
    p->sh = kernel::u32(w.sh, "stride"), p->sw = kernel::u32(w.sw, "stride");
    p->ph = static_cast<int32_t>(w.ph), p->pw = static_cast<int32_t>(w.pw);
    p->dh = kernel::u32(w.dh, "dilation"), p->dw = kernel::u32(w.dw, "dilation");
    p->divisor = s.divisor;
    p->count_pad = s.count_pad ? 1u : 0u;
  });
  auto dims = [x = s.x, p](const kernel::Live& l) { return with_hw(l.dims(x), p->oh, p->ow); };
  oc.output(s.out, dims);
  if (s.idx >= 0) oc.output(s.idx, dims);
  kernel::Kernel k("pool2d");
  k.constant("MODE", s.mode).input("X", s.x).output("O", s.out);
  if (s.idx >= 0) k.output("IDX", s.idx).define("WRITE_IDX");
  oc.add(k.params<Params>([p](const kernel::Live&) { return *p; })
             .flat(s.out)
             .variant(s.mode == kAvg ? "avg" : s.mode == kMax ? "max" : "adaptive_avg"));
}

Window read_window(OpContext& oc, int k_arg, int s_arg, int p_arg, int d_arg, int c_arg) {
  Window w;
  std::tie(w.kh, w.kw) = pair_arg(oc, oc.arg(k_arg), "kernel_size");
  std::tie(w.sh, w.sw) = pair_arg(oc, oc.arg(s_arg), "stride", std::make_pair(w.kh, w.kw));
  std::tie(w.ph, w.pw) = pair_arg(oc, oc.arg(p_arg), "padding");
  if (d_arg >= 0) std::tie(w.dh, w.dw) = pair_arg(oc, oc.arg(d_arg), "dilation");
  w.ceil_mode = oc.g.boolean(oc.arg(c_arg));
  return w;
}

void build_avg_pool(OpContext& oc) {
  Graph& g = oc.g;
  PoolSetup s;
  s.mode = kAvg, s.x = oc.arg(0), s.out = oc.out();
  s.w = read_window(oc, 1, 2, 3, -1, 4);
  s.count_pad = g.boolean(oc.arg(5));
  if (!g.is_null(oc.arg(6))) {
    int64_t d = g.integer(oc.arg(6));
    if (d == 0) oc.fail(ErrorKind::InvalidArgument, "divisor_override must be non-zero");
    s.divisor = static_cast<int32_t>(d);
  }
  build_pool(oc, s);
}

void build_max_pool(OpContext& oc, bool with_indices) {
  Graph& g = oc.g;
  int32_t out = oc.out(), idx = -1;
  if (with_indices) {
    auto items = g.value_list(oc.out());
    if (items.size() != 2 || !g.is_tensor(items[0]) || !g.is_tensor(items[1]))
      oc.fail(ErrorKind::InvalidArgument, "output must be a list of (values, indices) tensors");
    out = items[0];
    idx = items[1];
  }
  PoolSetup s;
  s.mode = kMax, s.x = oc.arg(0), s.out = out, s.idx = idx;
  s.w = read_window(oc, 1, 2, 3, 4, 5);
  // PyTorch bounds max-pool padding by half the (undilated) kernel, like avg.
  build_pool(oc, s);
}

void build_adaptive_avg(OpContext& oc) {
  PoolSetup s;
  s.mode = kAdaptive, s.x = oc.arg(0), s.out = oc.out();
  s.adaptive_out = pair_arg(oc, oc.arg(1), "output_size");
  build_pool(oc, s);
}

ETW_REGISTER_OP("aten.avg_pool2d.default", build_avg_pool);
ETW_REGISTER_OP("aten.max_pool2d_with_indices.default", [](OpContext& oc) { build_max_pool(oc, true); });
ETW_REGISTER_OP("aten.max_pool2d.default", [](OpContext& oc) { build_max_pool(oc, false); });
ETW_REGISTER_OP("aten._adaptive_avg_pool2d.default", build_adaptive_avg);
ETW_REGISTER_OP("aten.adaptive_avg_pool2d.default", build_adaptive_avg);

}  // namespace
}  // namespace etwebgpu::ops
