#include "reference/quantized/q4_ref.h"

namespace etwebgpu::ref {

std::vector<uint8_t> pack_q4_linear(const std::vector<int8_t>& q, int64_t rows, int64_t cols, int64_t pad_to) {
  int64_t pc = (cols + pad_to - 1) / pad_to * pad_to;
  std::vector<uint8_t> out(rows * pc / 2);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < pc / 2; ++j) {
      int even = 2 * j < cols ? q[r * cols + 2 * j] : 0;
      int odd = 2 * j + 1 < cols ? q[r * cols + 2 * j + 1] : 0;
      out[r * (pc / 2) + j] = static_cast<uint8_t>(((odd + 8) << 4) | (even + 8));
    }
  return out;
}

std::vector<uint8_t> pack_q4_embedding(const std::vector<int8_t>& q, int64_t rows, int64_t cols) {
  std::vector<uint8_t> out(rows * cols / 2);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols / 2; ++j)
      out[r * (cols / 2) + j] =
          static_cast<uint8_t>(((q[r * cols + 2 * j] + 8) << 4) | (q[r * cols + 2 * j + 1] + 8));
  return out;
}

std::vector<uint8_t> pack_q4_channelwise(const std::vector<int8_t>& q, int64_t rows, int64_t cols) {
  int64_t half = (cols + 1) / 2;
  std::vector<uint8_t> out(rows * half);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < half; ++j) {
      int even = q[r * cols + 2 * j];
      int odd = 2 * j + 1 < cols ? q[r * cols + 2 * j + 1] : 0;
      out[r * half + j] = static_cast<uint8_t>(((even + 8) << 4) | (odd + 8));
    }
  return out;
}

HostTensor linear_qcs4w(const HostTensor& x, const std::vector<int8_t>& q, int64_t N, int64_t K,
                        const std::vector<float>& scales) {
  auto xv = x.to_f64();
  int64_t M = x.numel() / K;
  std::vector<int64_t> os = x.shape;
  os.back() = N;
  HostTensor out(DType::Float64, os);
  double* o = out.as<double>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += xv[m * K + k] * static_cast<double>(q[n * K + k]);
      o[m * N + n] = acc * static_cast<double>(scales[n]);
    }
  return out;
}

HostTensor linear_q4gsw(const HostTensor& x, const std::vector<int8_t>& q, int64_t N, int64_t K,
                        const std::vector<float>& scales, int64_t scol, int64_t gs, const std::vector<float>* bias) {
  auto xv = x.to_f64();
  int64_t M = x.numel() / K;
  std::vector<int64_t> os = x.shape;
  os.back() = N;
  HostTensor out(DType::Float64, os);
  double* o = out.as<double>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = bias ? (*bias)[n] : 0.0;
      for (int64_t k = 0; k < K; ++k)
        acc += xv[m * K + k] * static_cast<double>(q[n * K + k]) * static_cast<double>(scales[(k / gs) * scol + n]);
      o[m * N + n] = acc;
    }
  return out;
}

HostTensor embedding_q4gsw(const std::vector<int8_t>& q, int64_t V, int64_t D, const std::vector<float>& scales,
                           int64_t gs, bool single_scale, const HostTensor& indices) {
  auto iv = indices.to_f64();
  std::vector<int64_t> os = indices.shape;
  os.push_back(D);
  HostTensor out(DType::Float64, os);
  double* o = out.as<double>();
  for (size_t t = 0; t < iv.size(); ++t) {
    int64_t r = static_cast<int64_t>(iv[t]);
    for (int64_t d = 0; d < D; ++d) {
      double s = single_scale ? scales[0] : scales[r * (D / gs) + d / gs];
      o[t * D + d] = static_cast<double>(q[r * D + d]) * s;
    }
  }
  (void)V;
  return out;
}

}  // namespace etwebgpu::ref
