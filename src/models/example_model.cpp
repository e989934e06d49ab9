#include "etwebgpu/example_model.h"

#include <algorithm>
#include <cmath>

#include "etwebgpu/builder.h"

namespace etwebgpu {
namespace {

// Deterministic weights without <random>'s implementation-defined distributions.
struct Lcg {
  uint64_t s;
  float next(float scale) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return scale * (static_cast<float>((s >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f);
  }
  std::vector<float> vec(size_t n, float scale) {
    std::vector<float> v(n);
    for (auto& x : v) x = next(scale);
    return v;
  }
};

// fp64 NCHW conv, stride 1, padding 1, 3x3.
std::vector<double> conv3x3(const std::vector<double>& x, int C, int H, int W, const std::vector<float>& w,
                            const std::vector<float>& b, int OC) {
  std::vector<double> y(static_cast<size_t>(OC) * H * W);
  for (int oc = 0; oc < OC; ++oc)
    for (int h = 0; h < H; ++h)
      for (int wi = 0; wi < W; ++wi) {
        double s = b[oc];
        for (int c = 0; c < C; ++c)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int ih = h - 1 + kh, iw = wi - 1 + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              s += x[(static_cast<size_t>(c) * H + ih) * W + iw] * w[((static_cast<size_t>(oc) * C + c) * 3 + kh) * 3 + kw];
            }
        y[(static_cast<size_t>(oc) * H + h) * W + wi] = s;
      }
  return y;
}

}  // namespace

ExampleModel make_example_model() {
  Lcg rng{42};
  const int C0 = 3, H = 16, W = 16, C1 = 8, C2 = 16, K = 10;
  auto w1 = rng.vec(C1 * C0 * 9, 0.4f), b1 = rng.vec(C1, 0.1f);
  auto w2 = rng.vec(C2 * C1 * 9, 0.2f), b2 = rng.vec(C2, 0.1f);
  auto wl = rng.vec(K * C2, 0.5f), bl = rng.vec(K, 0.1f);
  auto xin = rng.vec(C0 * H * W, 1.0f);

  GraphBuilder gb;
  auto x = gb.input(DType::Float32, {1, C0, H, W});
  auto cw1 = gb.constant_f32({C1, C0, 3, 3}, w1), cb1 = gb.constant_f32({C1}, b1);
  auto cw2 = gb.constant_f32({C2, C1, 3, 3}, w2), cb2 = gb.constant_f32({C2}, b2);
  auto cwl = gb.constant_f32({K, C2}, wl), cbl = gb.constant_f32({K}, bl);
  auto conv = [&](GraphBuilder::Id in, GraphBuilder::Id w, GraphBuilder::Id b, int oc, int h, int wd) {
    auto out = gb.tensor(DType::Float32, {1, oc, h, wd});
    gb.op("aten.convolution.default", {in, w, b, gb.int_list({1, 1}), gb.int_list({1, 1}), gb.int_list({1, 1}),
                                       gb.boolean(false), gb.int_list({0, 0}), gb.int_(1), out});
    return out;
  };
  auto y1 = conv(x, cw1, cb1, C1, H, W);
  auto r1 = gb.tensor(DType::Float32, {1, C1, H, W});
  gb.op("aten.relu.default", {y1, r1});
  auto p1 = gb.tensor(DType::Float32, {1, C1, H / 2, W / 2});
  auto p1i = gb.tensor(DType::Int32, {1, C1, H / 2, W / 2});
  gb.op("aten.max_pool2d_with_indices.default", {r1, gb.int_list({2, 2}), gb.int_list({2, 2}), gb.int_list({0, 0}),
                                                 gb.int_list({1, 1}), gb.boolean(false), gb.value_list({p1, p1i})});
  auto y2 = conv(p1, cw2, cb2, C2, H / 2, W / 2);
  auto t2 = gb.tensor(DType::Float32, {1, C2, H / 2, W / 2});
  gb.op("aten.hardtanh.default", {y2, gb.dbl(-1.0), gb.dbl(1.0), t2});
  auto m = gb.tensor(DType::Float32, {1, C2});
  gb.op("aten.mean.dim", {t2, gb.int_list({2, 3}), gb.boolean(false), gb.null(), m});
  auto l = gb.tensor(DType::Float32, {1, K});
  gb.op("aten.linear.default", {m, cwl, cbl, l});
  auto sm = gb.tensor(DType::Float32, {1, K});
  gb.op("aten._softmax.default", {l, gb.int_(1), gb.boolean(false), sm});
  gb.output(sm);

  ExampleModel em;
  em.pte = gb.serialize();
  em.input = HostTensor::from<float>(DType::Float32, {1, C0, H, W}, xin);
  em.weights = {{"w1", HostTensor::from<float>(DType::Float32, {C1, C0, 3, 3}, w1)},
                {"b1", HostTensor::from<float>(DType::Float32, {C1}, b1)},
                {"w2", HostTensor::from<float>(DType::Float32, {C2, C1, 3, 3}, w2)},
                {"b2", HostTensor::from<float>(DType::Float32, {C2}, b2)},
                {"wl", HostTensor::from<float>(DType::Float32, {K, C2}, wl)},
                {"bl", HostTensor::from<float>(DType::Float32, {K}, bl)}};

  // float64 reference
  std::vector<double> xd(xin.begin(), xin.end());
  auto a1 = conv3x3(xd, C0, H, W, w1, b1, C1);
  for (auto& v : a1) v = std::max(v, 0.0);
  std::vector<double> pool(static_cast<size_t>(C1) * (H / 2) * (W / 2));
  for (int c = 0; c < C1; ++c)
    for (int h = 0; h < H / 2; ++h)
      for (int w = 0; w < W / 2; ++w) {
        double mx = -INFINITY;
        for (int dh = 0; dh < 2; ++dh)
          for (int dw = 0; dw < 2; ++dw) mx = std::max(mx, a1[(static_cast<size_t>(c) * H + 2 * h + dh) * W + 2 * w + dw]);
        pool[(static_cast<size_t>(c) * (H / 2) + h) * (W / 2) + w] = mx;
      }
  auto a2 = conv3x3(pool, C1, H / 2, W / 2, w2, b2, C2);
  std::vector<double> mean(C2, 0.0);
  for (int c = 0; c < C2; ++c) {
    for (int i = 0; i < (H / 2) * (W / 2); ++i) mean[c] += std::clamp(a2[static_cast<size_t>(c) * (H / 2) * (W / 2) + i], -1.0, 1.0);
    mean[c] /= (H / 2) * (W / 2);
  }
  std::vector<double> logits(K);
  for (int k = 0; k < K; ++k) {
    logits[k] = bl[k];
    for (int c = 0; c < C2; ++c) logits[k] += mean[c] * wl[static_cast<size_t>(k) * C2 + c];
  }
  double mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
  for (auto& v : logits) sum += std::exp(v - mx);
  std::vector<double> prob(K);
  for (int k = 0; k < K; ++k) prob[k] = std::exp(logits[k] - mx) / sum;
  em.expected = HostTensor::from<double>(DType::Float64, {1, K}, prob);
  return em;
}

}  // namespace etwebgpu
