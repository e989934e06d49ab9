// et_vk.linear_q4gsw, large-tile GEMM route (prefill chunks): the shared register-blocked core
// (gemm_core.wgsl, 128 x 128 tiles, K staged 8 at a time) with the 4-bit weights dequantized in
// the loads: each staged quad is 4 consecutive k of one output column, two bytes of one packed
// word and one group scale (group size a multiple of 4, K a multiple of 8, rows whole words: the
// host checks). X is read as vec4 rows. Tile edges (M, N) are checked; no split-K.
//!include q4gsw_weights
//!include gemm_core

var<private> g_ar: u32;
var<private> g_aq: u32;
var<private> g_a_on: bool;
var<private> g_a_row_ok: bool;
var<private> g_a_base: u32;
var<private> g_b_ok: bool;
var<private> g_n: u32;

// Weights k .. k+3 of column n (k % 4 == 0): byte j holds q[2j] low, q[2j+1] high.
fn wq4(n: u32, k: u32) -> vec4<f32> {
  let byte = n * P.wrow + k / 2u;
  let half = (W[byte / 4u] >> ((byte % 4u) * 8u)) & 0xffffu;
  return nib4(vec4<u32>(half, half >> 4u, half >> 8u, half >> 12u)) * f32(SC[(k / P.gs) * P.srow + n]);
}

fn load_tile(t: u32) -> Tile {
  var r: Tile;
  let k = t * BK + g_aq * 4u;
  if (g_a_row_ok && k < P.k) { r.a = vec4<f32>(X[g_a_base + t * (BK / 4u)]); }
  if (g_b_ok && k < P.k) { r.b = wq4(g_n, k); }
  return r;
}

fn stage_tile(buf: u32, r: Tile) {
  if (g_a_on) { stage_a(buf, g_ar, g_aq, r.a); }
  stage_b(buf, g_ar, g_aq, r.b);
}

fn store_c(m: u32, n: u32, v: vec4<f32>) {
  if (m >= P.m) { return; }
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (n + j < P.n) {
      var r = v[j];
      if (P.has_bias == 1u) { r = r + f32(BIAS[n + j]); }
      store_out(m, n + j, r);
    }
  }
}

fn store_row(m: u32, c: u32, v0: vec4<f32>, v1: vec4<f32>) {
  store_c(m, c, v0);
  store_c(m, c + 64u, v1);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let BM = 16u * TM;
  let m0 = wid.y * BM;
  let n0 = wid.x * 128u;
  let K = P.k;
  g_ar = lid / 2u;
  g_aq = lid % 2u;
  g_a_on = g_ar < BM;
  g_a_row_ok = g_a_on && m0 + g_ar < P.m;
  g_a_base = (min(m0 + g_ar, P.m - 1u) * K) / 4u + g_aq;
  g_b_ok = n0 + g_ar < P.n;
  g_n = min(n0 + g_ar, P.n - 1u);

//!include gemm_loop_body
}
