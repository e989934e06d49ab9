#include "reference/sampling/sampling_ref.h"

#include <algorithm>
#include <cmath>

namespace etwebgpu::ref {
namespace {

// Pixel coordinate of a normalized one: -1/1 are pixel centres with align_corners, else edges.
double unnormalize(double c, int64_t size, bool align) {
  return align ? (c + 1) / 2 * static_cast<double>(size - 1) : ((c + 1) * static_cast<double>(size) - 1) / 2;
}

// Mirror about the borders [lo, hi] repeatedly until inside.
double mirror(double c, double lo, double hi) {
  if (hi <= lo) return 0;
  double span = hi - lo;
  double d = std::fabs(c - lo);
  double k = std::floor(d / span);
  double r = d - k * span;
  return static_cast<int64_t>(k) % 2 == 0 ? lo + r : hi - r;
}

double pad_coord(double c, int64_t size, int padding, bool align) {
  double last = static_cast<double>(size - 1);
  if (padding == 1) return std::clamp(c, 0.0, last);
  if (padding == 2) {
    // Reflect about pixel centres (align_corners) or about the image edges (-0.5, size - 0.5).
    double m = align ? mirror(c, 0, last) : mirror(c, -0.5, static_cast<double>(size) - 0.5);
    return std::clamp(m, 0.0, last);
  }
  return c;
}

double cubic_w(double d) {  // Keys' cubic convolution kernel, a = -0.75
  const double a = -0.75;
  d = std::fabs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0;
}

}  // namespace

HostTensor grid_sampler_2d(const HostTensor& input, const HostTensor& grid, int interp, int padding, bool align) {
  auto x = input.to_f64(), gr = grid.to_f64();
  int64_t N = input.shape[0], C = input.shape[1], H = input.shape[2], W = input.shape[3];
  int64_t OH = grid.shape[1], OW = grid.shape[2];
  std::vector<double> out(static_cast<size_t>(N * C * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const double* plane = x.data() + (n * C + c) * H * W;
      auto at = [&](int64_t xx, int64_t yy) { return (xx < 0 || yy < 0 || xx >= W || yy >= H) ? 0.0 : plane[yy * W + xx]; };
      for (int64_t h = 0; h < OH; ++h)
        for (int64_t w = 0; w < OW; ++w) {
          double gx = gr[((n * OH + h) * OW + w) * 2], gy = gr[((n * OH + h) * OW + w) * 2 + 1];
          double ux = unnormalize(gx, W, align), uy = unnormalize(gy, H, align);
          double v = 0;
          if (interp == 2) {
            double fx = std::floor(ux), fy = std::floor(uy);
            for (int j = -1; j <= 2; ++j)
              for (int i = -1; i <= 2; ++i) {
                int64_t tx = static_cast<int64_t>(pad_coord(fx + i, W, padding, align));
                int64_t ty = static_cast<int64_t>(pad_coord(fy + j, H, padding, align));
                v += cubic_w(ux - (fx + i)) * cubic_w(uy - (fy + j)) * at(tx, ty);
              }
          } else {
            double px = pad_coord(ux, W, padding, align), py = pad_coord(uy, H, padding, align);
            if (interp == 1) {
              v = at(static_cast<int64_t>(std::nearbyint(px)), static_cast<int64_t>(std::nearbyint(py)));
            } else {
              double fx = std::floor(px), fy = std::floor(py);
              for (int j = 0; j <= 1; ++j)
                for (int i = 0; i <= 1; ++i) {
                  double wx = 1 - std::fabs(px - (fx + i)), wy = 1 - std::fabs(py - (fy + j));
                  v += wx * wy * at(static_cast<int64_t>(fx) + i, static_cast<int64_t>(fy) + j);
                }
            }
          }
          out[static_cast<size_t>(((n * C + c) * OH + h) * OW + w)] = v;
        }
    }
  return HostTensor::from<double>(DType::Float64, {N, C, OH, OW}, out);
}

HostTensor upsample_bilinear2d_aa(const HostTensor& input, int64_t oh, int64_t ow, bool align,
                                  std::optional<double> scale_h, std::optional<double> scale_w) {
  auto x = input.to_f64();
  int64_t N = input.shape[0], C = input.shape[1], H = input.shape[2], W = input.shape[3];
  // Per output index: first input index and normalized weights along one axis.
  auto weights = [&](int64_t in, int64_t out, std::optional<double> s) {
    double scale = align ? (out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0)
                         : (s && *s > 0 ? 1.0 / *s : static_cast<double>(in) / static_cast<double>(out));
    double support = scale >= 1 ? scale : 1.0;  // triangle of half-width 1, stretched when shrinking
    double inv = scale >= 1 ? 1.0 / scale : 1.0;
    std::vector<std::pair<int64_t, std::vector<double>>> r;
    for (int64_t i = 0; i < out; ++i) {
      double centre = scale * (static_cast<double>(i) + 0.5);
      int64_t lo = std::max<int64_t>(static_cast<int64_t>(centre - support + 0.5), 0);
      int64_t hi = std::min<int64_t>(static_cast<int64_t>(centre + support + 0.5), in);
      std::vector<double> w;
      double total = 0;
      for (int64_t j = lo; j < hi; ++j) {
        double d = std::fabs((static_cast<double>(j) - centre + 0.5) * inv);
        w.push_back(d < 1 ? 1 - d : 0);
        total += w.back();
      }
      if (total != 0)
        for (auto& v : w) v /= total;
      r.push_back({lo, w});
    }
    return r;
  };
  auto wy = weights(H, oh, scale_h), wx = weights(W, ow, scale_w);
  std::vector<double> out(static_cast<size_t>(N * C * oh * ow));
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double v = 0;
        for (size_t a = 0; a < wy[i].second.size(); ++a)
          for (size_t b = 0; b < wx[j].second.size(); ++b)
            v += wy[i].second[a] * wx[j].second[b] * x[(nc * H + wy[i].first + a) * W + wx[j].first + b];
        out[static_cast<size_t>((nc * oh + i) * ow + j)] = v;
      }
  return HostTensor::from<double>(DType::Float64, {N, C, oh, ow}, out);
}

}  // namespace etwebgpu::ref
