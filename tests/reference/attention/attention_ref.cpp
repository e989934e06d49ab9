#include "reference/attention/attention_ref.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace etwebgpu::ref {

namespace {
// Offset of index `idx` (in shape `full`) inside a tensor of shape `s` broadcast to `full`.
int64_t bcast_offset(const std::vector<int64_t>& idx, const std::vector<int64_t>& full, const std::vector<int64_t>& s) {
  int64_t off = 0, mul = 1;
  for (int64_t d = static_cast<int64_t>(full.size()) - 1; d >= 0; --d) {
    int64_t sd = d - static_cast<int64_t>(full.size() - s.size());
    if (sd < 0) break;
    if (s[sd] != 1) off += idx[d] * mul;
    mul *= s[sd];
  }
  return off;
}

void softmax_inplace(std::vector<double>& row) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : row) m = std::max(m, x);
  double sum = 0;
  for (double& x : row) sum += (x = std::exp(x - m));
  for (double& x : row) x /= sum;
}
}  // namespace

HostTensor sdpa(const HostTensor& q, const HostTensor& k, const HostTensor& v, const HostTensor* mask,
                std::optional<double> scale) {
  size_t R = q.shape.size();
  int64_t H = R >= 3 ? q.shape[R - 3] : 1, Sq = q.shape[R - 2], D = q.shape[R - 1];
  int64_t Hk = R >= 3 ? k.shape[R - 3] : 1, Skv = k.shape[R - 2], Dv = v.shape[R - 1];
  int64_t B = 1;
  for (size_t i = 0; i + 3 < R; ++i) B *= q.shape[i];
  double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(D));
  auto qv = q.to_f64(), kv = k.to_f64(), vv = v.to_f64();
  std::vector<double> mv;
  if (mask) mv = mask->to_f64();
  std::vector<int64_t> oshape = q.shape;
  oshape[R - 1] = Dv;
  std::vector<int64_t> full(q.shape.begin(), q.shape.end() - 1);
  full.push_back(Skv);
  HostTensor out(DType::Float64, oshape);
  double* o = out.as<double>();
  std::vector<double> row(Skv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      int64_t hk = Hk == 1 ? 0 : h;
      for (int64_t s = 0; s < Sq; ++s) {
        for (int64_t c = 0; c < Skv; ++c) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += qv[((b * H + h) * Sq + s) * D + d] * kv[((b * Hk + hk) * Skv + c) * D + d];
          double x = dot * sc;
          if (mask) {
            // Multi-index of (b..., h, s, c) in `full`.
            std::vector<int64_t> idx(full.size());
            int64_t rem = b;
            for (int64_t i = static_cast<int64_t>(R) - 4; i >= 0; --i) { idx[i] = rem % full[i]; rem /= full[i]; }
            if (R >= 3) idx[R - 3] = h;
            idx[R - 2] = s;
            idx[R - 1] = c;
            double m = mv[bcast_offset(idx, full, mask->shape)];
            if (mask->dtype == DType::Bool) x = m != 0 ? x : -std::numeric_limits<double>::infinity();
            else x += m;
          }
          row[c] = x;
        }
        softmax_inplace(row);
        for (int64_t d = 0; d < Dv; ++d) {
          double acc = 0;
          for (int64_t c = 0; c < Skv; ++c) acc += row[c] * vv[((b * Hk + hk) * Skv + c) * Dv + d];
          o[((b * H + h) * Sq + s) * Dv + d] = acc;
        }
      }
    }
  return out;
}

HostTensor sdpa_kv_causal(const HostTensor& q, const HostTensor& keys, const HostTensor& values, int64_t start_pos,
                          std::optional<double> scale) {
  int64_t S = q.shape[1], Hq = q.shape[2], D = q.shape[3], Hkv = keys.shape[2];
  if (Hq % Hkv) throw std::runtime_error("GQA needs Hq % Hkv == 0");
  double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(D));
  auto qv = q.to_f64(), kv = keys.to_f64(), vv = values.to_f64();
  HostTensor out(DType::Float64, q.shape);
  double* o = out.as<double>();
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < Hq; ++h) {
      int64_t hk = h / (Hq / Hkv);  // repeat_interleave of kv heads
      int64_t L = start_pos + s + 1;
      std::vector<double> row(L);
      for (int64_t c = 0; c < L; ++c) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += qv[(s * Hq + h) * D + d] * kv[(c * Hkv + hk) * D + d];
        row[c] = dot * sc;
      }
      softmax_inplace(row);
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t c = 0; c < L; ++c) acc += row[c] * vv[(c * Hkv + hk) * D + d];
        o[(s * Hq + h) * D + d] = acc;
      }
    }
  return out;
}

HostTensor split_heads(const HostTensor& rows, int64_t width, int64_t heads, int64_t d, int64_t offset) {
  auto x = rows.to_f64();
  int64_t S = static_cast<int64_t>(x.size()) / width;
  HostTensor out(DType::Float64, {1, heads, S, d});
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t r = 0; r < S; ++r)
      for (int64_t i = 0; i < d; ++i) out.as<double>()[(h * S + r) * d + i] = x[r * width + offset + h * d + i];
  return out;
}

HostTensor merge_heads(const HostTensor& o) {
  int64_t H = o.shape[1], S = o.shape[2], D = o.shape[3];
  auto x = o.to_f64();
  HostTensor out(DType::Float64, {S, H * D});
  for (int64_t h = 0; h < H; ++h)
    for (int64_t r = 0; r < S; ++r)
      for (int64_t i = 0; i < D; ++i) out.as<double>()[r * H * D + h * D + i] = x[(h * S + r) * D + i];
  return out;
}

}  // namespace etwebgpu::ref
