#include "reference/resize/resize_ref.h"

#include <algorithm>
#include <cmath>

namespace etwebgpu::ref {

namespace {
// area_pixel_compute_scale
float scale_of(int64_t in, int64_t out, bool align, std::optional<double> sf) {
  if (align) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  if (sf && *sf > 0) return static_cast<float>(1.0 / *sf);
  return static_cast<float>(in) / static_cast<float>(out);
}
// compute_source_index_and_lambda: (i0, i1, lambda1)
void linear_src(int64_t dst, int64_t in, int64_t out, float scale, bool align, int64_t& i0, int64_t& i1, double& l1) {
  if (in == out) {
    i0 = i1 = dst;
    l1 = 0;
    return;
  }
  double src = align ? static_cast<double>(scale) * dst : static_cast<double>(scale) * (dst + 0.5) - 0.5;
  if (!align && src < 0) src = 0;
  i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
  l1 = std::min(std::max(src - i0, 0.0), 1.0);
  i1 = i0 + (i0 < in - 1 ? 1 : 0);
}
int64_t nearest_src(int64_t dst, int64_t in, int64_t out, float scale) {
  if (out == in) return dst;
  if (out == 2 * in) return dst >> 1;
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(dst) * scale)), in - 1);
}
}  // namespace

HostTensor upsample_bilinear2d(const HostTensor& x, int64_t OH, int64_t OW, bool align, std::optional<double> sh,
                               std::optional<double> sw) {
  size_t r = x.shape.size();
  int64_t H = x.shape[r - 2], W = x.shape[r - 1], planes = x.numel() / (H * W);
  float fh = scale_of(H, OH, align, sh), fw = scale_of(W, OW, align, sw);
  auto v = x.to_f64();
  std::vector<int64_t> os(x.shape.begin(), x.shape.end() - 2);
  os.push_back(OH);
  os.push_back(OW);
  HostTensor out(DType::Float64, os);
  for (int64_t n = 0; n < planes; ++n)
    for (int64_t oy = 0; oy < OH; ++oy) {
      int64_t y0, y1;
      double ly;
      linear_src(oy, H, OH, fh, align, y0, y1, ly);
      for (int64_t ox = 0; ox < OW; ++ox) {
        int64_t x0, x1;
        double lx;
        linear_src(ox, W, OW, fw, align, x0, x1, lx);
        const double* p = &v[n * H * W];
        double val = (1 - ly) * ((1 - lx) * p[y0 * W + x0] + lx * p[y0 * W + x1]) +
                     ly * ((1 - lx) * p[y1 * W + x0] + lx * p[y1 * W + x1]);
        out.as<double>()[(n * OH + oy) * OW + ox] = val;
      }
    }
  return out;
}

HostTensor upsample_nearest2d(const HostTensor& x, int64_t OH, int64_t OW, std::optional<double> sh,
                              std::optional<double> sw) {
  size_t r = x.shape.size();
  int64_t H = x.shape[r - 2], W = x.shape[r - 1], planes = x.numel() / (H * W);
  float fh = scale_of(H, OH, false, sh), fw = scale_of(W, OW, false, sw);
  auto v = x.to_f64();
  std::vector<int64_t> os(x.shape.begin(), x.shape.end() - 2);
  os.push_back(OH);
  os.push_back(OW);
  HostTensor out(DType::Float64, os);
  for (int64_t n = 0; n < planes; ++n)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox)
        out.as<double>()[(n * OH + oy) * OW + ox] =
            v[(n * H + nearest_src(oy, H, OH, fh)) * W + nearest_src(ox, W, OW, fw)];
  return out;
}

}  // namespace etwebgpu::ref
