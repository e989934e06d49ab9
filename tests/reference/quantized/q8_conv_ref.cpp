#include "reference/quantized/q8_conv_ref.h"

#include <algorithm>
#include <cfenv>
#include <cmath>

namespace etwebgpu::ref {

Q8ConvResult q8ta_conv2d(const HostTensor& x, const Q8Conv& c) {
  const int64_t B = x.shape[0], IC = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = (H + 2 * c.ph - c.dh * (c.KH - 1) - 1) / c.sh + 1;
  const int64_t OW = (W + 2 * c.pw - c.dw * (c.KW - 1) - 1) / c.sw + 1;
  const int64_t OCg = c.OC / c.groups;
  const int8_t* xq = x.as<int8_t>();
  // dequantize_per_tensor computes (x - zp) * scale in float32.
  const double is = static_cast<float>(c.iscale);
  const double inv = static_cast<float>(1.0 / c.oscale);
  Q8ConvResult r;
  r.q = HostTensor(DType::Int8, {B, c.OC, OH, OW});
  r.scaled.resize(static_cast<size_t>(B * c.OC * OH * OW));
  int8_t* y = r.q.as<int8_t>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < c.OC; ++o) {
      const int64_t g = o / OCg;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = 0;
          for (int64_t ic = 0; ic < c.ICg; ++ic)
            for (int64_t kh = 0; kh < c.KH; ++kh)
              for (int64_t kw = 0; kw < c.KW; ++kw) {
                const int64_t ih = oh * c.sh - c.ph + kh * c.dh, iw = ow * c.sw - c.pw + kw * c.dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;  // zero padding of x_f
                const double xf = (xq[((b * IC + g * c.ICg + ic) * H + ih) * W + iw] - c.izp) * is;
                const double wf = c.w[((o * c.ICg + ic) * c.KH + kh) * c.KW + kw] * static_cast<double>(c.wscale[o]);
                s += xf * wf;
              }
          if (!c.bias.empty()) s += c.bias[o];
          if (c.relu) s = std::max(s, 0.0);
          const double v = s * inv;
          const int64_t i = ((b * c.OC + o) * OH + oh) * OW + ow;
          r.scaled[i] = v;
          const double q = std::nearbyint(v) + static_cast<double>(c.ozp);  // round half to even
          y[i] = static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
        }
    }
  return r;
}

std::vector<int8_t> pack_q8_conv_weights(const Q8Conv& c) {
  const int64_t K = c.KH * c.KW * c.ICg, Kp = (K + 3) / 4 * 4;
  std::vector<int8_t> p(static_cast<size_t>(c.OC * Kp), 0);
  for (int64_t o = 0; o < c.OC; ++o)
    for (int64_t ic = 0; ic < c.ICg; ++ic)
      for (int64_t kh = 0; kh < c.KH; ++kh)
        for (int64_t kw = 0; kw < c.KW; ++kw)
          p[o * Kp + (kh * c.KW + kw) * c.ICg + ic] = c.w[((o * c.ICg + ic) * c.KH + kh) * c.KW + kw];
  return p;
}

std::vector<int8_t> pack_q8_dw_weights(const Q8Conv& c) {
  std::vector<int8_t> p(static_cast<size_t>(c.KH * c.KW * c.OC));
  for (int64_t o = 0; o < c.OC; ++o)
    for (int64_t kh = 0; kh < c.KH; ++kh)
      for (int64_t kw = 0; kw < c.KW; ++kw) p[(kh * c.KW + kw) * c.OC + o] = c.w[(o * c.KH + kh) * c.KW + kw];
  return p;
}

std::vector<int32_t> q8_weight_sums(const Q8Conv& c) {
  const int64_t per = c.ICg * c.KH * c.KW;
  std::vector<int32_t> s(static_cast<size_t>((c.OC + 3) / 4 * 4), 0);
  for (int64_t o = 0; o < c.OC; ++o)
    for (int64_t k = 0; k < per; ++k) s[o] += c.w[o * per + k];
  return s;
}

}  // namespace etwebgpu::ref
