// Convolution (groups == 1, not transposed) as a large-tile implicit-im2col GEMM, for big problems:
// C[M = OC, N = B*OH*OW] = W[OC, K = IC*KH*KW] @ im2col(X)[K, N], on the core shared with
// matmul_gemm_large (gemm_core.wgsl: BM x 128 tiles, BM = 16 * TM, K staged 8 at a time).
// The im2col tile is gathered on the fly. ROW4 = 0: each invocation owns one column n (decomposed
// once) and 4 k rows per step. ROW4 = 1 (OW % 4 == 0, so four columns n..n+3 from a multiple of
// 4 lie on one output row): each owns one k row and such a quad, so one k split, one row check and
// one vec4 store serve four values (H200: 3x3 64->64 at 224x224 0.165 -> 0.160 ms, 16 and 32
// channels at 256x256 and 128x128 10-12% faster). KH and KW are override constants so the
// k -> (ic, kh, kw) split is a multiply-shift. Out-of-range taps read 0 (zero padding). Weights
// load as scalars (any K).
// ALIGNED = 1 (OC % BM == 0, N % 128 == 0, K % 8 == 0) drops the tile-edge checks.
// Epilogue: bias, optional clamp, a fused epilogue (conv_params.wgsl), NCHW store. 1-D convolutions arrive with H = KH = 1.
//!include conv_params
//!include gemm_core

override KHC: u32 = 3u;  // kernel height (P.KH)
override KWC: u32 = 3u;  // kernel width (P.KW)
override ROW4: u32 = 0u;

// Loader state of this invocation, set once by conv_gemm_large.
// Weights: row ar (of BM), k quad aq: 4 scalars at k = aq*4 + j.
// im2col, ROW4 = 0: column bc (of 128), k rows bk + 2 * j; ROW4 = 1: columns bc*4 .. bc*4+3
// (bc of 32), k row bk (of 8). ih0 / iw0 / xb: of column bc, or of the quad's first column.
var<private> g_ar: u32;
var<private> g_aq: u32;
var<private> g_a_on: bool;
var<private> g_a_row_ok: bool;
var<private> g_a_base: u32;
var<private> g_bc: u32;
var<private> g_bk: u32;
var<private> g_n_ok: bool;
var<private> g_quad_ok: vec4<bool>;
var<private> g_ih0: i32;
var<private> g_iw0: i32;
var<private> g_xb: u32;

// im2col element k of column bc (ROW4 = 0), 0 outside the input or past K.
fn gather(kb: u32) -> f32 {
  if (!g_n_ok || (ALIGNED == 0u && kb >= P.K)) { return 0.0; }
  let ic = kb / (KHC * KWC);
  let kr = kb - ic * (KHC * KWC);
  let kh = kr / KWC;
  let kw = kr - kh * KWC;
  let ih = g_ih0 + i32(kh * P.dh);
  let iw = g_iw0 + i32(kw * P.dw);
  if (ih < 0 || ih >= i32(P.H) || iw < 0 || iw >= i32(P.W)) { return 0.0; }
  return x_in(g_xb + ic * P.H * P.W + u32(ih) * P.W + u32(iw), ic);
}

// im2col row kb over the quad's four columns (ROW4 = 1).
fn gather_quad(kb: u32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  if (ALIGNED == 0u && kb >= P.K) { return v; }
  let ic = kb / (KHC * KWC);
  let kr = kb - ic * (KHC * KWC);
  let kh = kr / KWC;
  let kw = kr - kh * KWC;
  let ih = g_ih0 + i32(kh * P.dh);
  if (ih < 0 || ih >= i32(P.H)) { return v; }
  let iw = g_iw0 + i32(kw * P.dw);
  let row = g_xb + ic * P.H * P.W + u32(ih) * P.W;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let w = iw + i32(j * P.sw);
    if (g_quad_ok[j] && w >= 0 && w < i32(P.W)) { v[j] = x_in(row + u32(w), ic); }
  }
  return v;
}

fn load_tile(t: u32) -> Tile {
  var r: Tile;
  let k0 = t * BK;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let ka = k0 + g_aq * 4u + j;
    if (g_a_row_ok && (ALIGNED == 1u || ka < P.K)) { r.a[j] = f32(Wt[g_a_base + k0 + j]); }
  }
  if (ROW4 == 1u) {
    r.b = gather_quad(k0 + g_bk);
  } else {
    for (var j = 0u; j < 4u; j = j + 1u) { r.b[j] = gather(k0 + g_bk + 2u * j); }
  }
  return r;
}

fn stage_tile(buf: u32, r: Tile) {
  if (g_a_on) { stage_a(buf, g_ar, g_aq, r.a); }
  if (ROW4 == 1u) {
    Bs[buf + g_bk * 32u + g_bc] = r.b;
    return;
  }
  let i = buf + g_bk * 32u + g_bc / 4u;
  let lane = g_bc % 4u;
  Bs[i][lane] = r.b.x;
  Bs[i + 64u][lane] = r.b.y;
  Bs[i + 128u][lane] = r.b.z;
  Bs[i + 192u][lane] = r.b.w;
}

// Output row oc, columns c..c+3 (v0) and c+64..c+67 (v1): bias, epilogue, NCHW store.
fn store_row(oc: u32, c: u32, v0: vec4<f32>, v1: vec4<f32>) {
  if (ALIGNED == 0u && oc >= P.OC) { return; }
  var bias = 0.0;
  if (HAS_BIAS == 1u) { bias = f32(BIAS[oc]); }
  let ohw = P.OH * P.OW;
  for (var j = 0u; j < 8u; j = j + 1u) {
    let n = c + (j / 4u) * 64u + j % 4u;
    if (ALIGNED == 1u || n < P.N) {
      let b = n / ohw;
      let o = (b * P.OC + oc) * ohw + n - b * ohw;
      store_out(o, epilogue(select(v1[j % 4u], v0[j % 4u], j < 4u) + bias, o));
    }
  }
}

@compute @workgroup_size(256)
fn conv_gemm_large(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let BM = 16u * TM;
  let m0 = wid.y * BM;
  let n0 = wid.x * 128u;
  let ohw = P.OH * P.OW;

  g_ar = lid / 2u;
  g_aq = lid % 2u;
  g_a_on = g_ar < BM;
  g_a_row_ok = g_a_on && (ALIGNED == 1u || m0 + g_ar < P.OC);
  g_a_base = min(m0 + g_ar, P.OC - 1u) * P.K + g_aq * 4u;
  g_bc = select(lid % 128u, lid % 32u, ROW4 == 1u);
  g_bk = select(lid / 128u, lid / 32u, ROW4 == 1u);
  let gn = n0 + select(g_bc, g_bc * 4u, ROW4 == 1u);
  g_n_ok = ALIGNED == 1u || gn < P.N;
  for (var j = 0u; j < 4u; j = j + 1u) { g_quad_ok[j] = ALIGNED == 1u || gn + j < P.N; }
  let gnc = min(gn, P.N - 1u);
  let sp = gnc % ohw;
  g_ih0 = i32((sp / P.OW) * P.sh) - i32(P.ph);
  g_iw0 = i32((sp % P.OW) * P.sw) - i32(P.pw);
  g_xb = (gnc / ohw) * P.IC * P.H * P.W;

  let K = P.K;
//!include gemm_loop_body
}
