#include "reference/pooling/pooling_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace etwebgpu::ref {

int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  double num = static_cast<double>(in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0));
  int64_t o = static_cast<int64_t>(std::floor(num / stride)) + 1;
  if (ceil_mode && (o - 1) * stride >= in + pad) --o;
  return o;
}

namespace {
struct Planes {
  int64_t planes, H, W;
  explicit Planes(const HostTensor& x) {
    size_t r = x.shape.size();
    H = x.shape[r - 2];
    W = x.shape[r - 1];
    planes = x.numel() / (H * W);
  }
};
std::vector<int64_t> out_shape(const HostTensor& x, int64_t oh, int64_t ow) {
  std::vector<int64_t> s(x.shape.begin(), x.shape.end() - 2);
  s.push_back(oh);
  s.push_back(ow);
  return s;
}
}  // namespace

HostTensor avg_pool2d(const HostTensor& x, const Pool2d& p, bool count_include_pad, std::optional<int64_t> div) {
  Planes pl(x);
  auto v = x.to_f64();
  int64_t OH = pool_out_size(pl.H, p.kh, p.ph, p.sh, 1, p.ceil_mode), OW = pool_out_size(pl.W, p.kw, p.pw, p.sw, 1, p.ceil_mode);
  HostTensor out(DType::Float64, out_shape(x, OH, OW));
  double* o = out.as<double>();
  for (int64_t n = 0; n < pl.planes; ++n)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        int64_t h0 = oy * p.sh - p.ph, w0 = ox * p.sw - p.pw;
        int64_t h1 = std::min(h0 + p.kh, pl.H + p.ph), w1 = std::min(w0 + p.kw, pl.W + p.pw);
        int64_t pool = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, pl.H), w1 = std::min(w1, pl.W);
        double* dst = &o[(n * OH + oy) * OW + ox];
        if (h0 >= h1 || w0 >= w1) { *dst = 0; continue; }
        double s = 0;
        for (int64_t y = h0; y < h1; ++y)
          for (int64_t xx = w0; xx < w1; ++xx) s += v[(n * pl.H + y) * pl.W + xx];
        int64_t d = div ? *div : count_include_pad ? pool : (h1 - h0) * (w1 - w0);
        *dst = s / d;
      }
  return out;
}

std::pair<HostTensor, HostTensor> max_pool2d(const HostTensor& x, const Pool2d& p) {
  Planes pl(x);
  auto v = x.to_f64();
  int64_t OH = pool_out_size(pl.H, p.kh, p.ph, p.sh, p.dh, p.ceil_mode);
  int64_t OW = pool_out_size(pl.W, p.kw, p.pw, p.sw, p.dw, p.ceil_mode);
  HostTensor out(DType::Float64, out_shape(x, OH, OW)), idx(DType::Int32, out_shape(x, OH, OW));
  for (int64_t n = 0; n < pl.planes; ++n)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        // PyTorch: the index starts at the first in-bounds tap; `val > max || isnan(val)` updates.
        int64_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
        while (y0 < 0) y0 += p.dh;
        while (x0 < 0) x0 += p.dw;
        double m = -std::numeric_limits<double>::infinity();
        int64_t mi = y0 * pl.W + x0;
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            int64_t y = oy * p.sh - p.ph + ky * p.dh, xx = ox * p.sw - p.pw + kx * p.dw;
            if (y < 0 || y >= pl.H || xx < 0 || xx >= pl.W) continue;
            double val = v[(n * pl.H + y) * pl.W + xx];
            if (val > m || std::isnan(val)) {
              m = val;
              mi = y * pl.W + xx;
            }
          }
        int64_t k = (n * OH + oy) * OW + ox;
        out.as<double>()[k] = m;
        idx.as<int32_t>()[k] = static_cast<int32_t>(mi);
      }
  return {out, idx};
}

HostTensor adaptive_avg_pool2d(const HostTensor& x, int64_t OH, int64_t OW) {
  Planes pl(x);
  auto v = x.to_f64();
  HostTensor out(DType::Float64, out_shape(x, OH, OW));
  for (int64_t n = 0; n < pl.planes; ++n)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        int64_t h0 = oy * pl.H / OH, h1 = ((oy + 1) * pl.H + OH - 1) / OH;
        int64_t w0 = ox * pl.W / OW, w1 = ((ox + 1) * pl.W + OW - 1) / OW;
        double s = 0;
        for (int64_t y = h0; y < h1; ++y)
          for (int64_t xx = w0; xx < w1; ++xx) s += v[(n * pl.H + y) * pl.W + xx];
        out.as<double>()[(n * OH + oy) * OW + ox] = s / static_cast<double>((h1 - h0) * (w1 - w0));
      }
  return out;
}

}  // namespace etwebgpu::ref
