// Microbenchmarks through our own kernels: each case is a one-op (or small) graph built with
// GraphBuilder and run through Model like any exported file. Prints GPU time per run (timestamp
// queries, median) and effective GB/s or GFLOP/s. With --out DIR it also writes, per case,
// meta.json, the inputs/weights and our output as .npy, so bench/compare_torch.py can rebuild the
// case in PyTorch, time it in the same command and check both give the same numbers.
// Wall time (upload + run + read back) is measured on runs without timestamp queries. Before each
// case's profiled runs and again before its wall-time runs the GPU is kept busy for --warm-ms (500;
// 0 with --small), so every case is timed at the GPU's working clock wherever it runs in the process.
// dispatch_chain_N: N dependent one-workgroup kernels, for the fixed cost per dispatch.
// lin_M_N_K[_ln] / addmm_M_N_K[_ln] / conv_C_OC_HW_KS / dw_C_HW_KS[_S] / dwpw_C_OC_HW[_S] / attn_H_S_D / dec_HQ_HKV_S_D: a linear, same-padded conv, attention or decode
// attention of any shape; --force OP=ROUTE
// (LoadOptions::force_route, e.g. matmul=large_m64, conv=gemm_splitk) times one route.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "etwebgpu/builder.h"
#include "etwebgpu/device.h"
#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/example_model.h"
#include "etwebgpu/npy.h"
#include "models/decoder_model.h"

using namespace etwebgpu;
using Id = GraphBuilder::Id;

namespace {

HostTensor rnd(std::vector<int64_t> shape, uint64_t seed, float scale = 1.f) {
  HostTensor t(DType::Float32, std::move(shape));
  std::mt19937_64 r(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = scale * (static_cast<float>(r() >> 40) / 8388608.f - 1.f);
  return t;
}
std::vector<float> vec(const HostTensor& t) { return {t.as<float>(), t.as<float>() + t.numel()}; }

struct Case {
  std::string name, op;
  nlohmann::json params;
  std::vector<uint8_t> pte;
  std::vector<HostTensor> inputs;                              // run-time inputs, in order
  std::vector<std::pair<std::string, HostTensor>> weights;    // constants, for the torch rebuild
  double flops = 0, bytes = 0;                                 // per run
  bool fuse = true;                                            // LoadOptions::fuse
};

Case make_case(const std::string& name, bool small) {
  Case c;
  c.name = name;
  GraphBuilder g;
  auto out = [&](std::vector<int64_t> d) { Id o = g.tensor(DType::Float32, d); g.output(o); return o; };
  if (name == "add") {
    int64_t n = small ? (1 << 20) : (64LL << 20);
    c.inputs = {rnd({n}, 1), rnd({n}, 2)};
    Id a = g.input(DType::Float32, {n}), b = g.input(DType::Float32, {n});
    g.op("aten.add.Tensor", {a, b, g.int_(1), out({n})});
    c.op = "add";
    c.bytes = 3.0 * n * 4;
  } else if (name.rfind("gemm", 0) == 0) {
    int64_t n = std::stoll(name.substr(5));
    if (small) n = std::min<int64_t>(n, 256);
    c.inputs = {rnd({n, n}, 3), rnd({n, n}, 4)};
    Id a = g.input(DType::Float32, {n, n}), b = g.input(DType::Float32, {n, n});
    g.op("aten.mm.default", {a, b, out({n, n})});
    c.op = "mm";
    c.flops = 2.0 * n * n * n;
  } else if (name == "gemv_4096" || name == "linear_4096") {
    // linear_4096: a 4096^3 GEMM whose B is a constant weight (one 64 MB upload per run, not two).
    int64_t n = small ? 512 : 4096, m = name == "gemv_4096" ? 1 : n;
    auto w = rnd({n, n}, 5, 0.05f);
    c.inputs = {rnd({m, n}, 6)};
    c.weights = {{"weight", w}};
    Id x = g.input(DType::Float32, {m, n});
    g.op("aten.linear.default", {x, g.constant_f32({n, n}, vec(w)), g.null(), out({m, n})});
    c.op = "linear";
    c.flops = 2.0 * m * n * n;
    c.bytes = m == 1 ? 4.0 * n * n : 0;
  } else if (name.rfind("lin_", 0) == 0 || name.rfind("addmm_", 0) == 0) {
    // lin_M_N_K: x [M, K] @ W [N, K]^T + b, a transformer's projection; addmm_M_N_K: b + x [M, K] @
    // W [K, N], GPT-2's Conv1D projection (W and b constants), which the load rewrite
    // addmm_as_linear runs as a linear by W's transpose, as it runs GPT-2's. A trailing _ln puts a
    // LayerNorm over K in front (the pre-norm that folds into the GEMM's loads).
    const bool lin = name[0] == 'l';
    const std::string form = lin ? "lin" : "addmm";
    int64_t M = 0, N = 0, K = 0;
    int used = 0;
    if (std::sscanf(name.c_str() + form.size(), "_%" SCNd64 "_%" SCNd64 "_%" SCNd64 "%n", &M, &N, &K, &used) != 3 ||
        M < 1 || N < 1 || K < 1)
      throw Error(ErrorKind::InvalidArgument, "case " + name + ": expected " + form + "_M_N_K[_ln]");
    const std::string tail = name.substr(form.size() + static_cast<size_t>(used));
    if (!tail.empty() && tail != "_ln")
      throw Error(ErrorKind::InvalidArgument, "case " + name + ": expected " + form + "_M_N_K[_ln]");
    const std::vector<int64_t> wd = lin ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
    auto w = rnd(wd, 5, 0.05f), b = rnd({N}, 6, 0.1f);
    c.inputs = {rnd({M, K}, 7)};
    c.weights = {{"weight", w}, {"bias", b}};
    Id x = g.input(DType::Float32, {M, K});
    if (tail == "_ln") {
      auto nw = rnd({K}, 8), nb = rnd({K}, 9, 0.1f);
      c.weights.push_back({"norm_weight", nw});
      c.weights.push_back({"norm_bias", nb});
      Id y = g.tensor(DType::Float32, {M, K}), mean = g.tensor(DType::Float32, {M, 1}),
         rstd = g.tensor(DType::Float32, {M, 1});
      g.op("aten.native_layer_norm.default", {x, g.int_list({K}), g.constant_f32({K}, vec(nw)),
                                              g.constant_f32({K}, vec(nb)), g.dbl(1e-5), g.value_list({y, mean, rstd})});
      x = y;
    }
    if (lin) g.op("aten.linear.default", {x, g.constant_f32(wd, vec(w)), g.constant_f32({N}, vec(b)), out({M, N})});
    else g.op("aten.addmm.default", {g.constant_f32({N}, vec(b)), x, g.constant_f32(wd, vec(w)), g.dbl(1.0), g.dbl(1.0), out({M, N})});
    c.op = (tail.empty() ? "" : "layer_norm_") + std::string(lin ? "linear" : "addmm");
    c.flops = 2.0 * M * N * K;
  } else if (name.rfind("q4lin_", 0) == 0 || name.rfind("q4norm_", 0) == 0 || name.rfind("dq8ca_", 0) == 0) {
    // q4lin_N_K: one token through et_vk.linear_q4gsw (4-bit weights, groups of 32, f32 input);
    // q4norm_N_K: the same after an RMSNorm (with weight) that only it reads, which the GEMV takes
    // in where that pays (ops/norm/input_norm.h); dq8ca_N_K: the same weights as ExecuTorch's 8da4w
    // export runs them (choose_qparams_affine on the token, then et_vk.linear_dq8ca_q4gsw, int8 x
    // int4). Decode-speed comparison.
    const bool dq = name[0] == 'd';
    const bool normed = name[2] == 'n';
    int64_t N = 0, K = 0, L = 1;
    if (std::sscanf(name.c_str() + (normed ? 7 : 6), "%" SCNd64 "_%" SCNd64 "_x%" SCNd64, &N, &K, &L) < 2 || N < 1 || K < 32 ||
        K % 32 != 0 || L < 1)
      throw Error(ErrorKind::InvalidArgument,
                  "case " + name + ": expected q4lin_N_K[_xL] / q4norm_N_K[_xL] / dq8ca_N_K[_xL] with K a multiple of 32");
    // _xL: L linears of their own weights reading one token, so the weights of a run (L times
    // the bytes of one) exceed the GPU's L2 as a model's do: each streams from memory.
    const int64_t gs = 32, G = K / gs, npad = (N + 7) / 8 * 8;
    std::mt19937_64 r(21);
    for (int64_t l = 0; l < L; ++l) {
      // An input of its own each, so the load rewrites do not join them into one multi-output linear.
      c.inputs.push_back(rnd({1, 1, K}, 23));
      Id x = g.input(DType::Float32, {1, 1, K});
      if (normed) {
        Id y = g.tensor(DType::Float32, {1, 1, K});
        g.op("et_vk.rms_norm.default", {x, g.constant_f32({K}, vec(rnd({K}, 24, 1.f))), g.dbl(1e-5), y});
        x = y;
      }
      std::vector<uint8_t> packed(N * K / 2);
      std::vector<int32_t> sums(G * npad, 0);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < K / 2; ++j) {
          uint8_t b = static_cast<uint8_t>(r() & 0xff);
          packed[n * K / 2 + j] = b;
          sums[(2 * j / gs) * npad + n] += (b & 15) - 8 + (b >> 4) - 8;
        }
      std::vector<float> scv = vec(rnd({G, N}, 22 + static_cast<uint64_t>(l), 0.01f));
      for (auto& v : scv) v = std::abs(v) + 1e-3f;
      Id w = g.constant(DType::UInt8, {N, K / 2}, packed);
      if (!dq) {
        std::vector<float> st(G * npad, 0.f);
        for (int64_t gi = 0; gi < G; ++gi)
          for (int64_t n = 0; n < N; ++n) st[gi * npad + n] = scv[gi * N + n];
        g.op("et_vk.linear_q4gsw.default", {x, w, g.constant_f32({G, npad}, st), g.int_(gs), g.null(), out({1, 1, N})});
        c.op = normed ? "rms_norm_linear_q4gsw" : "linear_q4gsw";
      } else {
        Id s = g.tensor(DType::Float32, {1, 1}), z = g.tensor(DType::Int8, {1, 1});
        g.op("torchao.choose_qparams_affine.default",
             {x, g.str("ASYMMETRIC"), g.int_list({1, 1, K}), g.null(), g.int_(-128), g.int_(127), g.null(), g.null(), g.null(),
              g.boolean(false), g.value_list({s, z})});
        g.op("et_vk.linear_dq8ca_q4gsw.default",
             {x, s, z, w, g.constant_i32({G, npad}, sums), g.constant_f32({G, N}, scv), g.int_(gs), g.null(), out({1, 1, N})});
        c.op = "linear_dq8ca_q4gsw";
      }
    }
    c.bytes = static_cast<double>(L) * (N * K / 2.0 + G * N * 4.0);  // packed weights and their scales
  } else if (name.rfind("conv_", 0) == 0 && name != "conv_stem") {
    // conv_C_OC_HW_KS: a stride-1, same-padded KSxKS conv of C -> OC channels at HWxHW, batch 1.
    int64_t ic = 0, oc = 0, hw = 0, ks = 0;
    if (std::sscanf(name.c_str(), "conv_%" SCNd64 "_%" SCNd64 "_%" SCNd64 "_%" SCNd64, &ic, &oc, &hw, &ks) != 4 || ic < 1 || oc < 1 || hw < 1 ||
        ks < 1 || ks % 2 == 0)
      throw Error(ErrorKind::InvalidArgument, "case " + name + ": expected conv_C_OC_HW_KS with an odd KS");
    auto w = rnd({oc, ic, ks, ks}, 7, 0.1f), b = rnd({oc}, 8, 0.1f);
    c.inputs = {rnd({1, ic, hw, hw}, 9)};
    c.weights = {{"weight", w}, {"bias", b}};
    c.params = {{"stride", 1}, {"padding", ks / 2}};
    Id x = g.input(DType::Float32, {1, ic, hw, hw});
    g.op("aten.convolution.default", {x, g.constant_f32({oc, ic, ks, ks}, vec(w)), g.constant_f32({oc}, vec(b)),
                                      g.int_list({1, 1}), g.int_list({ks / 2, ks / 2}), g.int_list({1, 1}),
                                      g.boolean(false), g.int_list({0, 0}), g.int_(1), out({1, oc, hw, hw})});
    c.op = "conv2d";
    c.flops = 2.0 * oc * ic * ks * ks * hw * hw;
  } else if (name.rfind("dw_", 0) == 0) {
    // dw_C_HW_KS[_S]: a depthwise KSxKS conv of C channels at HWxHW, stride S (1), same-padded,
    // batch 1 (MobileNets, ShuffleNetV2, ConvNeXt's 7x7).
    int64_t ch = 0, hw = 0, ks = 0, st = 1;
    int n = std::sscanf(name.c_str(), "dw_%" SCNd64 "_%" SCNd64 "_%" SCNd64 "_%" SCNd64, &ch, &hw, &ks, &st);
    if (n < 3 || ch < 1 || hw < 1 || ks < 1 || ks % 2 == 0 || st < 1)
      throw Error(ErrorKind::InvalidArgument, "case " + name + ": expected dw_C_HW_KS[_S] with an odd KS");
    const int64_t ohw = (hw + 2 * (ks / 2) - ks) / st + 1;
    auto w = rnd({ch, 1, ks, ks}, 7, 0.1f), b = rnd({ch}, 8, 0.1f);
    c.inputs = {rnd({1, ch, hw, hw}, 9)};
    c.weights = {{"weight", w}, {"bias", b}};
    c.params = {{"stride", st}, {"padding", ks / 2}, {"groups", ch}};
    Id x = g.input(DType::Float32, {1, ch, hw, hw});
    g.op("aten.convolution.default", {x, g.constant_f32({ch, 1, ks, ks}, vec(w)), g.constant_f32({ch}, vec(b)),
                                      g.int_list({st, st}), g.int_list({ks / 2, ks / 2}), g.int_list({1, 1}),
                                      g.boolean(false), g.int_list({0, 0}), g.int_(ch), out({1, ch, ohw, ohw})});
    c.op = "conv2d";
    c.flops = 2.0 * ch * ks * ks * ohw * ohw;
  } else if (name.rfind("dwpw_", 0) == 0) {
    // dwpw_C_OC_HW[_S]: a depthwise 3x3 conv of C channels at HWxHW, stride S (1), padding 1, then
    // a 1x1 conv to OC channels, batch 1 (ShuffleNetV2's branch, MobileNetV2's projection).
    int64_t ch = 0, oc = 0, hw = 0, st = 1;
    int n = std::sscanf(name.c_str(), "dwpw_%" SCNd64 "_%" SCNd64 "_%" SCNd64 "_%" SCNd64, &ch, &oc, &hw, &st);
    if (n < 3 || ch < 1 || oc < 1 || hw < 1 || st < 1)
      throw Error(ErrorKind::InvalidArgument, "case " + name + ": expected dwpw_C_OC_HW[_S]");
    const int64_t ohw = (hw - 1) / st + 1;
    auto w = rnd({ch, 1, 3, 3}, 7, 0.1f), b = rnd({ch}, 8, 0.1f), w2 = rnd({oc, ch, 1, 1}, 10, 0.1f), b2 = rnd({oc}, 11, 0.1f);
    c.inputs = {rnd({1, ch, hw, hw}, 9)};
    c.weights = {{"weight", w}, {"bias", b}, {"weight2", w2}, {"bias2", b2}};
    c.params = {{"stride", st}};
    Id x = g.input(DType::Float32, {1, ch, hw, hw}), mid = g.tensor(DType::Float32, {1, ch, ohw, ohw});
    g.op("aten.convolution.default", {x, g.constant_f32({ch, 1, 3, 3}, vec(w)), g.constant_f32({ch}, vec(b)),
                                      g.int_list({st, st}), g.int_list({1, 1}), g.int_list({1, 1}), g.boolean(false),
                                      g.int_list({0, 0}), g.int_(ch), mid});
    g.op("aten.convolution.default", {mid, g.constant_f32({oc, ch, 1, 1}, vec(w2)), g.constant_f32({oc}, vec(b2)),
                                      g.int_list({1, 1}), g.int_list({0, 0}), g.int_list({1, 1}), g.boolean(false),
                                      g.int_list({0, 0}), g.int_(1), out({1, oc, ohw, ohw})});
    c.op = "dwpw";
    c.flops = 2.0 * ch * (9 + oc) * ohw * ohw;
  } else if (name == "conv3x3_64" || name == "conv_stem") {
    bool stem = name == "conv_stem";
    int64_t ic = stem ? 3 : 64, oc = stem ? 32 : 64, hw = small ? 56 : 224, s = stem ? 2 : 1;
    int64_t ohw = (hw + 2 - 3) / s + 1;
    auto w = rnd({oc, ic, 3, 3}, 7, 0.1f), b = rnd({oc}, 8, 0.1f);
    c.inputs = {rnd({1, ic, hw, hw}, 9)};
    c.weights = {{"weight", w}, {"bias", b}};
    c.params = {{"stride", s}, {"padding", 1}};
    Id x = g.input(DType::Float32, {1, ic, hw, hw});
    g.op("aten.convolution.default", {x, g.constant_f32({oc, ic, 3, 3}, vec(w)), g.constant_f32({oc}, vec(b)),
                                      g.int_list({s, s}), g.int_list({1, 1}), g.int_list({1, 1}), g.boolean(false),
                                      g.int_list({0, 0}), g.int_(1), out({1, oc, ohw, ohw})});
    c.op = "conv2d";
    c.flops = 2.0 * oc * ic * 9 * ohw * ohw;
  } else if (name == "upsample_bilinear_4x") {
    int64_t ch = small ? 8 : 64, hw = 128;
    c.inputs = {rnd({1, ch, hw, hw}, 10)};
    Id x = g.input(DType::Float32, {1, ch, hw, hw});
    g.op("aten.upsample_bilinear2d.vec", {x, g.int_list({hw * 4, hw * 4}), g.boolean(false), g.null(),
                                          out({1, ch, hw * 4, hw * 4})});
    c.op = "upsample_bilinear";
    c.bytes = 4.0 * ch * hw * hw * 17;
  } else if (name == "softmax_4096") {
    int64_t rows = small ? 64 : 4096, cols = 4096;
    c.inputs = {rnd({rows, cols}, 11, 4.f)};
    Id x = g.input(DType::Float32, {rows, cols});
    g.op("aten._softmax.default", {x, g.int_(-1), g.boolean(false), out({rows, cols})});
    c.op = "softmax";
    c.bytes = 2.0 * rows * cols * 4;
  } else if (name == "sdpa_1x8x1024x64" || name == "sdpa_1x8x32x4096") {
    bool chan = name == "sdpa_1x8x32x4096";
    int64_t s = chan ? 32 : (small ? 128 : 1024), d = chan ? (small ? 512 : 4096) : 64;
    c.inputs = {rnd({1, 8, s, d}, 12), rnd({1, 8, s, d}, 13), rnd({1, 8, s, d}, 14)};
    Id q = g.input(DType::Float32, {1, 8, s, d}), k = g.input(DType::Float32, {1, 8, s, d}),
       v = g.input(DType::Float32, {1, 8, s, d});
    g.op("et_vk.sdpa.default", {q, k, v, g.null(), g.null(), out({1, 8, s, d})});
    c.op = "sdpa";
    c.flops = 4.0 * 8 * s * s * d;
  } else if (name.rfind("attn_", 0) == 0) {
    // attn_H_S_D: softmax(q k^T / sqrt(D)) v over [1, H, S, D] (ViT-tiny: attn_3_197_64; the
    // Whisper-size encoder: attn_6_1500_64).
    int64_t h = 0, s = 0, d = 0;
    if (std::sscanf(name.c_str(), "attn_%" SCNd64 "_%" SCNd64 "_%" SCNd64, &h, &s, &d) != 3 || h < 1 || s < 1 || d < 1)
      throw Error(ErrorKind::InvalidArgument, "case " + name + ": expected attn_H_S_D");
    c.inputs = {rnd({1, h, s, d}, 12), rnd({1, h, s, d}, 13), rnd({1, h, s, d}, 14)};
    Id q = g.input(DType::Float32, {1, h, s, d}), k = g.input(DType::Float32, {1, h, s, d}),
       v = g.input(DType::Float32, {1, h, s, d});
    g.op("et_vk.sdpa.default", {q, k, v, g.null(), g.null(), out({1, h, s, d})});
    c.op = "sdpa";
    c.flops = 4.0 * h * s * s * d;
  } else if (name.rfind("dec_", 0) == 0) {
    // dec_HQ_HKV_S_D: a decode step's attention, one query row per head over S keys with GQA
    // (Llama-3.2-1B at 1,001 keys: dec_32_8_1001_64); --force sdpa_decode=wide|split picks the route.
    int64_t hq = 0, hkv = 0, s = 0, d = 0;
    if (std::sscanf(name.c_str(), "dec_%" SCNd64 "_%" SCNd64 "_%" SCNd64 "_%" SCNd64, &hq, &hkv, &s, &d) != 4 || hkv < 1 ||
        hq % hkv || s < 1 || d < 1)
      throw Error(ErrorKind::InvalidArgument, "case " + name + ": expected dec_HQ_HKV_S_D with HKV dividing HQ");
    c.inputs = {rnd({1, hq, 1, d}, 12), rnd({1, hkv, s, d}, 13), rnd({1, hkv, s, d}, 14)};
    Id q = g.input(DType::Float32, {1, hq, 1, d}), k = g.input(DType::Float32, {1, hkv, s, d}),
       v = g.input(DType::Float32, {1, hkv, s, d});
    g.op("etwebgpu.attention", {q, k, v, g.null(), g.null(), g.boolean(false), g.null(), out({1, hq, 1, d})});
    c.op = "sdpa";
    c.flops = 4.0 * hq * s * d;
    c.bytes = 2.0 * hkv * s * d * 4;
  } else if (name.rfind("net:", 0) == 0) {
    // A whole network described by bench/compare_torch.py (layer list + weight .npy files).
    std::string dir = name.substr(4);
    std::ifstream f(dir + "/net.json");
    if (!f) throw Error(ErrorKind::Io, "no net.json in " + dir);
    auto net = nlohmann::json::parse(f);
    std::map<std::string, std::pair<Id, std::vector<int64_t>>> t;
    std::vector<int64_t> in_shape = net.at("input").get<std::vector<int64_t>>();
    c.inputs = {read_npy(dir + "/input_0.npy")};
    t["x"] = {g.input(DType::Float32, in_shape), in_shape};
    std::string last = "x";
    auto load_const = [&](const std::string& file) {
      auto w = read_npy(dir + "/" + file);
      return std::make_pair(g.constant_f32(w.shape, vec(w)), w.shape);
    };
    for (auto& l : net.at("layers")) {
      std::string op = l.at("op"), out_name = l.at("out");
      if (op == "conv") {
        auto [x, xs] = t.at(l.at("in").get<std::string>());
        auto [w, ws] = load_const(l.at("w"));
        auto [b, bs] = load_const(l.at("b"));
        int64_t st = l.at("stride"), pd = l.at("pad"), gr = l.at("groups");
        int64_t oh = (xs[2] + 2 * pd - ws[2]) / st + 1, ow = (xs[3] + 2 * pd - ws[3]) / st + 1;
        std::vector<int64_t> os{xs[0], ws[0], oh, ow};
        Id o = g.tensor(DType::Float32, os);
        std::vector<Id> args{x, w, b, g.int_list({st, st}), g.int_list({pd, pd}), g.int_list({1, 1}), g.boolean(false),
                             g.int_list({0, 0}), g.int_(gr)};
        if (l.contains("clamp")) {
          args.push_back(g.dbl(l["clamp"][0].get<double>()));
          args.push_back(g.dbl(l["clamp"][1].get<double>()));
          args.push_back(o);
          g.op("et_vk.conv_with_clamp.default", args);
        } else {
          args.push_back(o);
          g.op("aten.convolution.default", args);
        }
        c.flops += 2.0 * os[1] * os[2] * os[3] * ws[1] * ws[2] * ws[3];
        t[out_name] = {o, os};
      } else if (op == "add") {
        auto [a, as] = t.at(l.at("a").get<std::string>());
        auto [b, bs] = t.at(l.at("b").get<std::string>());
        Id o = g.tensor(DType::Float32, as);
        g.op("aten.add.Tensor", {a, b, g.int_(1), o});
        t[out_name] = {o, as};
      } else if (op == "mean_hw") {
        auto [x, xs] = t.at(l.at("in").get<std::string>());
        std::vector<int64_t> os{xs[0], xs[1]};
        Id o = g.tensor(DType::Float32, os);
        g.op("aten.mean.dim", {x, g.int_list({-1, -2}), g.boolean(false), g.null(), o});
        t[out_name] = {o, os};
      } else if (op == "linear") {
        auto [x, xs] = t.at(l.at("in").get<std::string>());
        auto [w, ws] = load_const(l.at("w"));
        auto [b, bs] = load_const(l.at("b"));
        std::vector<int64_t> os{xs[0], ws[0]};
        Id o = g.tensor(DType::Float32, os);
        g.op("aten.linear.default", {x, w, b, o});
        c.flops += 2.0 * ws[0] * ws[1];
        t[out_name] = {o, os};
      } else {
        throw Error(ErrorKind::InvalidArgument, "net.json: unknown layer op " + op);
      }
      last = out_name;
    }
    g.output(t.at(last).first);
    c.op = "net";
    c.params = {{"dir", dir}};
  } else if (name.rfind("decoder:", 0) == 0) {
    // The small decoder (src/models/decoder_model.h) with weights written by compare_torch.py;
    // one prefill of the tokens in input_0.npy from position 0.
    std::string dir = name.substr(8);
    std::ifstream f(dir + "/config.json");
    if (!f) throw Error(ErrorKind::Io, "no config.json in " + dir);
    auto j = nlohmann::json::parse(f);
    models::DecoderConfig cfg;
    cfg.vocab = j.at("vocab"), cfg.dim = j.at("dim"), cfg.heads = j.at("heads"), cfg.kv_heads = j.at("kv_heads");
    cfg.head_dim = j.at("head_dim"), cfg.ffn = j.at("ffn"), cfg.cache = j.at("cache"), cfg.smax = j.at("smax");
    cfg.layers = j.at("layers"), cfg.eps = j.at("eps");
    auto ld = [&](const std::string& n) { return vec(read_npy(dir + "/" + n + ".npy")); };
    models::DecoderWeights w{ld("emb"), ld("final_norm"), ld("lm"), ld("cos"), ld("sin"), {}};
    for (int64_t l = 0; l < cfg.layers; ++l) {
      auto p = "l" + std::to_string(l) + "_";
      w.layers.push_back({ld(p + "attn_norm"), ld(p + "q_norm"), ld(p + "k_norm"), ld(p + "wq"), ld(p + "wk"), ld(p + "wv"),
                          ld(p + "wo"), ld(p + "mlp_norm"), ld(p + "wg"), ld(p + "wu"), ld(p + "wd")});
    }
    c.pte = models::build_decoder_pte(cfg, w);
    c.inputs = {read_npy(dir + "/input_0.npy"), HostTensor::from<int32_t>(DType::Int32, {1}, {0})};
    c.op = "decoder";
    c.params = {{"dir", dir}};
    return c;
  } else if (name.rfind("dispatch_chain_", 0) == 0) {
    // N dependent tiny kernels (abs of 256 floats, fusion off): the fixed cost of one dispatch.
    int64_t n = std::stoll(name.substr(15));
    c.inputs = {rnd({256}, 9)};
    Id x = g.input(DType::Float32, {256});
    for (int64_t i = 0; i < n; ++i) {
      Id y = i + 1 == n ? out({256}) : g.tensor(DType::Float32, {256});
      g.op("aten.abs.default", {x, y});
      x = y;
    }
    c.op = "abs_chain";
    c.params = {{"n", n}};
    c.fuse = false;
  } else if (name == "small_cnn") {
    auto em = make_example_model();
    c.pte = em.pte;
    c.inputs = {em.input};
    c.weights = em.weights;
    c.op = "small_cnn";
    return c;
  } else {
    throw Error(ErrorKind::InvalidArgument, "unknown case " + name);
  }
  c.pte = g.serialize();
  return c;
}

}  // namespace

// A compute-bound graph with a tiny input and output (a chain of eight 2048^3 products of
// constants, about 4 ms on the H200 against 0.07 ms of host work per run).
constexpr int64_t kWarmN = 2048;
std::unique_ptr<Model> make_warm_model() {
  GraphBuilder g;
  const int64_t n = kWarmN;
  float sc = std::sqrt(3.f / n);  // keeps the chain's values near 1
  Id a = g.constant_f32({n, n}, vec(rnd({n, n}, 7, sc))), b = g.constant_f32({n, n}, vec(rnd({n, n}, 8, sc)));
  Id z = a;
  for (int i = 0; i < 8; ++i) {
    Id t = g.tensor(DType::Float32, {n, n});
    g.op("aten.mm.default", {z, b, t});
    z = t;
  }
  Id x = g.input(DType::Float32, {1, n});
  Id y = g.tensor(DType::Float32, {1, n});
  g.op("aten.mm.default", {x, z, y});
  g.output(y);
  return Model::load_bytes(g.serialize());
}

// Keeps the GPU busy for `ms` before a case is timed. GPU drivers set the clock from recent
// utilisation: on the H200 a process starts at the boost clock (1980 MHz), and a few seconds of
// host-bound runs (large uploads and read-backs) bring it down to 345 MHz, from where it climbs
// back only under sustained load. Without this, a case's figures would depend on what ran before
// it in the process (docs/PERFORMANCE.md, "Long-lived processes").
void warm_gpu(Model& warm, double ms) {
  std::vector<HostTensor> in{rnd({1, kWarmN}, 9)}, out;
  auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() < ms)
    warm.run_into(in, out);
}

int main(int argc, char** argv) {
  std::vector<std::string> cases = {"add", "gemm_1024", "gemm_2048", "gemm_4096", "linear_4096", "gemv_4096", "conv3x3_64",
                                    "conv_stem", "upsample_bilinear_4x", "softmax_4096", "sdpa_1x8x1024x64",
                                    "sdpa_1x8x32x4096", "small_cnn"};
  std::string out_dir;
  int iters = 20;
  double warm_ms = -1;  // default: 500, none with --small (CI-sized cases on a CPU adapter)
  bool small = false;
  std::vector<std::string> only;
  std::map<std::string, std::string> force;  // LoadOptions::force_route, e.g. matmul=large_m64
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--force" && i + 1 < argc && std::string(argv[i + 1]).find('=') != std::string::npos) {
      std::string kv = argv[++i];
      force[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    } else if (a == "--out" && i + 1 < argc) out_dir = argv[++i];
    else if (a == "--iters" && i + 1 < argc) iters = std::stoi(argv[++i]);
    else if (a == "--warm-ms" && i + 1 < argc) warm_ms = std::stod(argv[++i]);
    else if (a == "--small") small = true;
    else if (a == "--case" && i + 1 < argc) only.push_back(argv[++i]);
    else {
      std::fprintf(stderr, "usage: etwebgpu_microbench [--case NAME]... [--iters N] [--warm-ms MS] [--small] [--out DIR] "
                           "[--force OP=ROUTE]...\n  cases beyond the defaults: lin_M_N_K conv_C_OC_HW_KS dw_C_HW_KS[_S] dwpw_C_OC_HW[_S] attn_H_S_D net:DIR decoder:DIR "
                           "dispatch_chain_N\n");
      return 2;
    }
  }
  if (!only.empty()) cases = only;
  std::printf("adapter: %s\n", device_info().summary.c_str());
  std::printf("%-22s %12s %12s %12s %12s  %s\n", "case", "GPU ms", "wall ms", "GFLOP/s", "GB/s", "kernels");
  int rc = 0;
  if (warm_ms < 0) warm_ms = small ? 0 : 500;
  std::unique_ptr<Model> warm = warm_ms > 0 ? make_warm_model() : nullptr;
  for (auto& name : cases) {
    try {
      Case c = make_case(name, small);
      LoadOptions lo;
      lo.fuse = c.fuse;
      lo.force_route = force;
      auto model = Model::load_bytes(c.pte, lo);
      std::vector<HostTensor> outs;
      for (int i = 0; i < 3; ++i) model->run_into(c.inputs, outs);
      std::vector<double> gpu, wall;
      std::map<std::string, int> variants;
      if (warm) warm_gpu(*warm, warm_ms);
      for (int i = 0; i < iters; ++i) {
        Profile p;
        model->run_into(c.inputs, outs, &p);
        double ns = 0;
        for (auto& d : p.dispatches) {
          ns += static_cast<double>(d.gpu_ns);
          if (i == 0) variants[d.op + (d.variant.empty() ? "" : "[" + d.variant + "]")]++;
        }
        gpu.push_back(ns / 1e6);
      }
      if (warm) warm_gpu(*warm, warm_ms);
      for (int i = 0; i < iters; ++i) {  // wall time without timestamp queries
        auto t0 = std::chrono::steady_clock::now();
        model->run_into(c.inputs, outs);
        wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(gpu.begin(), gpu.end());
      std::sort(wall.begin(), wall.end());
      double g_ms = gpu[gpu.size() / 2], w_ms = wall[wall.size() / 2];
      std::string kern;
      for (auto& [k, n] : variants) kern += (kern.empty() ? "" : " ") + k + (n > 1 ? "x" + std::to_string(n) : "");
      std::printf("%-22s %12.4f %12.3f %12.1f %12.1f  %s\n", name.c_str(), g_ms, w_ms,
                  c.flops ? c.flops / (g_ms * 1e6) : 0.0, c.bytes ? c.bytes / (g_ms * 1e6) : 0.0, kern.c_str());
      std::fflush(stdout);
      if (!out_dir.empty()) {
        auto colon = name.find(':');
        std::string d = out_dir + "/" + (colon != std::string::npos ? std::filesystem::path(name.substr(colon + 1)).filename().string() : name);
        std::filesystem::create_directories(d);
        nlohmann::json meta = {{"case", name}, {"op", c.op}, {"params", c.params}, {"gpu_ms", g_ms},
                               {"wall_ms", w_ms}, {"flops", c.flops}, {"bytes", c.bytes}, {"small", small}};
        for (size_t i = 0; i < c.inputs.size(); ++i) write_npy(d + "/input_" + std::to_string(i) + ".npy", c.inputs[i]);
        for (auto& [wn, wt] : c.weights) write_npy(d + "/" + wn + ".npy", wt);
        write_npy(d + "/ours.npy", outs[0]);
        std::ofstream(d + "/meta.json") << meta.dump(1);
      }
    } catch (const std::exception& e) {
      std::printf("%-22s FAILED: %s\n", name.c_str(), e.what());
      rc = 1;
    }
  }
  return rc;
}
