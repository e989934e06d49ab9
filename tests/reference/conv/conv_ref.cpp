#include "reference/conv/conv_ref.h"

#include <algorithm>
#include <stdexcept>

namespace etwebgpu::ref {

HostTensor conv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, ConvArgs a) {
  bool c1 = x.shape.size() == 3;
  if (c1) a.sh = 1, a.ph = 0, a.dh = 1, a.oph = 0;
  int64_t B = x.shape[0], C = x.shape[1], H = c1 ? 1 : x.shape[2], W = x.shape.back();
  int64_t KH = c1 ? 1 : w.shape[2], KW = w.shape.back();
  int64_t G = a.groups, OC, OH, OW;
  if (a.transposed) {
    OC = w.shape[1] * G;
    OH = (H - 1) * a.sh - 2 * a.ph + a.dh * (KH - 1) + a.oph + 1;
    OW = (W - 1) * a.sw - 2 * a.pw + a.dw * (KW - 1) + a.opw + 1;
  } else {
    OC = w.shape[0];
    OH = (H + 2 * a.ph - a.dh * (KH - 1) - 1) / a.sh + 1;
    OW = (W + 2 * a.pw - a.dw * (KW - 1) - 1) / a.sw + 1;
  }
  std::vector<int64_t> od = c1 ? std::vector<int64_t>{B, OC, OW} : std::vector<int64_t>{B, OC, OH, OW};
  HostTensor r(DType::Float64, od);
  auto xv = x.to_f64(), wv = w.to_f64();
  std::vector<double> bv = bias ? bias->to_f64() : std::vector<double>(OC, 0.0);
  double* o = r.as<double>();
  std::fill(o, o + r.numel(), 0.0);
  int64_t CG = C / G, OCG = OC / G;
  auto X = [&](int64_t b, int64_t c, int64_t h, int64_t ww) { return xv[((b * C + c) * H + h) * W + ww]; };
  auto O = [&](int64_t b, int64_t c, int64_t h, int64_t ww) -> double& { return o[((b * OC + c) * OH + h) * OW + ww]; };
  if (!a.transposed) {
    // out[b, oc, oh, ow] = sum_{ic in group, kh, kw} x[b, ic, oh*s - p + kh*d, ow*s - p + kw*d] * w[oc, ic', kh, kw]
    for (int64_t b = 0; b < B; ++b)
      for (int64_t oc = 0; oc < OC; ++oc)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double s = 0;
            int64_t g = oc / OCG;
            for (int64_t ci = 0; ci < CG; ++ci)
              for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                  int64_t ih = oh * a.sh - a.ph + kh * a.dh, iw = ow * a.sw - a.pw + kw * a.dw;
                  if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  s += X(b, g * CG + ci, ih, iw) * wv[((oc * CG + ci) * KH + kh) * KW + kw];
                }
            O(b, oc, oh, ow) = s;
          }
  } else {
    // Scatter form (the adjoint of conv): every input pixel adds w-weighted copies into the output.
    for (int64_t b = 0; b < B; ++b)
      for (int64_t ic = 0; ic < C; ++ic) {
        int64_t g = ic / CG;
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t iw = 0; iw < W; ++iw)
            for (int64_t oc = 0; oc < OCG; ++oc)
              for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                  int64_t oh = ih * a.sh - a.ph + kh * a.dh, ow = iw * a.sw - a.pw + kw * a.dw;
                  if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                  O(b, g * OCG + oc, oh, ow) += X(b, ic, ih, iw) * wv[((ic * OCG + oc) * KH + kh) * KW + kw];
                }
      }
  }
  for (int64_t i = 0; i < r.numel(); ++i) {
    int64_t oc = (i / (OH * OW)) % OC;
    double v = o[i] + bv[oc];
    o[i] = std::min(std::max(v, a.out_min), a.out_max);
  }
  return r;
}

}  // namespace etwebgpu::ref
