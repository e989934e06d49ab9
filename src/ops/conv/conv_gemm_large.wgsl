// Convolution (groups == 1, not transposed) as a large-tile implicit-im2col GEMM, for big problems:
// C[M = OC, N = B*OH*OW] = W[OC, K = IC*KH*KW] @ im2col(X)[K, N]. Same core as matmul_gemm_large:
// 256 invocations (16 x 16) per BM x 128 tile (BM = 16 * TM: TM = 8 -> 128, TM = 4 -> 64), each a
// TM x 8 register block (rows ty*4+i (+64), columns tx*4+j and 64+tx*4+j), K staged BK = 8 at a
// time through double-buffered k-major workgroup memory with a register prefetch of the next tile.
// The im2col tile is gathered on the fly: each invocation owns one column n (decomposed once) and
// 4 k rows per step; KH and KW are override constants so the k -> (ic, kh, kw) split is a
// multiply-shift. Out-of-range taps read 0 (zero padding). Weights load as scalars (any K).
// ALIGNED = 1 (OC % BM == 0, N % 128 == 0, K % 8 == 0) drops the tile-edge checks.
// Epilogue: bias, optional clamp, NCHW store. 1-D convolutions arrive with H = KH = 1.
//!include conv_params

override HAS_BIAS: u32 = 0u;
override HAS_CLAMP: u32 = 0u;
override TM: u32 = 8u;
override ALIGNED: u32 = 0u;
override KHC: u32 = 3u;  // kernel height (P.KH)
override KWC: u32 = 3u;  // kernel width (P.KW)

const BK: u32 = 8u;
var<workgroup> As: array<vec4<f32>, 512>;  // 2 x [BK][32 quads of oc]
var<workgroup> Bs: array<vec4<f32>, 512>;  // 2 x [BK][32 quads of n]

fn epilogue(v: f32) -> f32 {
  // clamp(min, max) as PyTorch: NaN stays NaN, min > max gives max.
  if (HAS_CLAMP == 1u && v == v) { return min(max(v, P.out_min), P.out_max); }
  return v;
}

// Output row oc, columns c0..c0+3 (v0) and c0+64..c0+67 (v1): bias, clamp, NCHW store.
fn store_o(oc: u32, c0: u32, v0: vec4<f32>, v1: vec4<f32>) {
  if (ALIGNED == 0u && oc >= P.OC) { return; }
  var bias = 0.0;
  if (HAS_BIAS == 1u) { bias = BIAS[oc]; }
  let ohw = P.OH * P.OW;
  for (var j = 0u; j < 8u; j = j + 1u) {
    let n = c0 + (j / 4u) * 64u + j % 4u;
    if (ALIGNED == 1u || n < P.N) {
      let b = n / ohw;
      O[(b * P.OC + oc) * ohw + n - b * ohw] = epilogue(select(v1[j % 4u], v0[j % 4u], j < 4u) + bias);
    }
  }
}

@compute @workgroup_size(256)
fn conv_gemm_large(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let BM = 16u * TM;
  let tx = lid % 16u;
  let ty = lid / 16u;
  let m0 = wid.y * BM;
  let n0 = wid.x * 128u;
  let K = P.K;
  let ohw = P.OH * P.OW;
  let hw = P.H * P.W;

  // Weight loader: row ar (of BM), k quad aq: 4 scalars at k = aq*4 + j.
  let ar = lid / 2u;
  let aq = lid % 2u;
  let a_on = ar < BM;
  let a_row_ok = a_on && (ALIGNED == 1u || m0 + ar < P.OC);
  let a_base = min(m0 + ar, P.OC - 1u) * K + aq * 4u;
  let a_st = aq * 4u * 32u + ar / 4u;
  let a_lane = ar % 4u;
  // im2col loader: column bn (of 128), k rows bk + 2 * j.
  let bn = lid % 128u;
  let bk = lid / 128u;
  let gn = n0 + bn;
  let n_ok = ALIGNED == 1u || gn < P.N;
  let gnc = min(gn, P.N - 1u);
  let bi = gnc / ohw;
  let sp = gnc % ohw;
  let ih0 = i32((sp / P.OW) * P.sh) - i32(P.ph);
  let iw0 = i32((sp % P.OW) * P.sw) - i32(P.pw);
  let xb = bi * P.IC * hw;
  let b_st = bk * 32u + bn / 4u;
  let b_lane = bn % 4u;

  var acc: array<vec4<f32>, 16>;
  let nt = (K + BK - 1u) / BK;
  var ra = vec4<f32>(0.0);
  var rb = vec4<f32>(0.0);
  for (var t = 0u; t <= nt; t = t + 1u) {
    // Step t loads tile t into registers (prefetch), stores them after the multiply of tile t - 1.
    if (t < nt) {
      let k0 = t * BK;
      for (var j = 0u; j < 4u; j = j + 1u) {
        let ka = k0 + aq * 4u + j;
        var av = 0.0;
        if (a_row_ok && (ALIGNED == 1u || ka < K)) { av = Wt[a_base + k0 + j]; }
        ra[j] = av;
        let kb = k0 + bk + 2u * j;
        var bv = 0.0;
        if (n_ok && (ALIGNED == 1u || kb < K)) {
          let ic = kb / (KHC * KWC);
          let kr = kb - ic * (KHC * KWC);
          let kh = kr / KWC;
          let kw = kr - kh * KWC;
          let ih = ih0 + i32(kh * P.dh);
          let iw = iw0 + i32(kw * P.dw);
          if (ih >= 0 && ih < i32(P.H) && iw >= 0 && iw < i32(P.W)) {
            bv = X[xb + ic * hw + u32(ih) * P.W + u32(iw)];
          }
        }
        rb[j] = bv;
      }
    }
    if (t > 0u) {
      let buf = ((t - 1u) % 2u) * 256u;
      for (var k = 0u; k < BK; k = k + 1u) {
        let a0 = As[buf + k * 32u + ty];
        let b0 = Bs[buf + k * 32u + tx];
        let b1 = Bs[buf + k * 32u + tx + 16u];
        acc[0] = fma(vec4<f32>(a0.x), b0, acc[0]);
        acc[1] = fma(vec4<f32>(a0.x), b1, acc[1]);
        acc[2] = fma(vec4<f32>(a0.y), b0, acc[2]);
        acc[3] = fma(vec4<f32>(a0.y), b1, acc[3]);
        acc[4] = fma(vec4<f32>(a0.z), b0, acc[4]);
        acc[5] = fma(vec4<f32>(a0.z), b1, acc[5]);
        acc[6] = fma(vec4<f32>(a0.w), b0, acc[6]);
        acc[7] = fma(vec4<f32>(a0.w), b1, acc[7]);
        if (TM == 8u) {
          let a1 = As[buf + k * 32u + ty + 16u];
          acc[8] = fma(vec4<f32>(a1.x), b0, acc[8]);
          acc[9] = fma(vec4<f32>(a1.x), b1, acc[9]);
          acc[10] = fma(vec4<f32>(a1.y), b0, acc[10]);
          acc[11] = fma(vec4<f32>(a1.y), b1, acc[11]);
          acc[12] = fma(vec4<f32>(a1.z), b0, acc[12]);
          acc[13] = fma(vec4<f32>(a1.z), b1, acc[13]);
          acc[14] = fma(vec4<f32>(a1.w), b0, acc[14]);
          acc[15] = fma(vec4<f32>(a1.w), b1, acc[15]);
        }
      }
    }
    if (t < nt) {
      let buf = (t % 2u) * 256u;
      if (a_on) {
        As[buf + a_st][a_lane] = ra.x;
        As[buf + a_st + 32u][a_lane] = ra.y;
        As[buf + a_st + 64u][a_lane] = ra.z;
        As[buf + a_st + 96u][a_lane] = ra.w;
      }
      Bs[buf + b_st][b_lane] = rb.x;
      Bs[buf + b_st + 64u][b_lane] = rb.y;
      Bs[buf + b_st + 128u][b_lane] = rb.z;
      Bs[buf + b_st + 192u][b_lane] = rb.w;
    }
    workgroupBarrier();
  }
  // Constant acc indices only (a dynamically indexed acc could be moved out of registers).
  let r0 = m0 + ty * 4u;
  let c0 = n0 + tx * 4u;
  store_o(r0, c0, acc[0], acc[1]);
  store_o(r0 + 1u, c0, acc[2], acc[3]);
  store_o(r0 + 2u, c0, acc[4], acc[5]);
  store_o(r0 + 3u, c0, acc[6], acc[7]);
  if (TM == 8u) {
    store_o(r0 + 64u, c0, acc[8], acc[9]);
    store_o(r0 + 65u, c0, acc[10], acc[11]);
    store_o(r0 + 66u, c0, acc[12], acc[13]);
    store_o(r0 + 67u, c0, acc[14], acc[15]);
  }
}
