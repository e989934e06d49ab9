// et_vk.q8ta_linear / q8ta_linear_gemv (static int8 in and out): one invocation per output word
// (four consecutive outputs of the flat [M, N] result; flat index with 2D folding), each a full
// integer dot product over K:
//   acc = sum_k x_q[m, k] * w_q[n, k] - izp * wsum[n]        (exact in i32)
//   y   = f32(acc) * iscale * wscale[n] + bias[n]; relu; q = clamp(round(y * oscale_inv) + ozp, -128, 127)
// K a multiple of 4 (P.aligned): rows are whole words and dot4 takes four products at a time;
// otherwise bytes one by one. SPLIT_K (few outputs, e.g. a classifier head at batch 1): one
// workgroup per output word, its WG invocations summing strided parts of K, reduced in workgroup
// memory; integer sums, so the result is the same. Bindings (generated preamble): X_words, W_words (int8, packed),
// WSUM (i32), WS, BIAS (absent: zero dummy), O_words (written whole) and P.
struct Params {
  m: u32, n: u32, k: u32, total: u32,
  words: u32, aligned: u32, has_bias: u32, relu: u32,
  izp: i32, ozp: i32, iscale: f32, oscale_inv: f32,
};
//!include q8_int_math

override WG: u32 = 64u;

// Sum over K of x_q[m, k] * w_q[n, k] for k = first, first + step, ... (in words when aligned).
fn partial_dot(m: u32, n: u32, first: u32, step: u32) -> i32 {
  var acc = 0;
  if (P.aligned == 1u) {
    let kw = P.k / 4u;
    let xo = m * kw;
    let wo = n * kw;
    for (var j = first; j < kw; j = j + step) { acc = acc + dot4(X_words[xo + j], W_words[wo + j]); }
  } else {
    for (var k = first; k < P.k; k = k + step) { acc = acc + load_X(m * P.k + k) * load_W(n * P.k + k); }
  }
  return acc;
}

fn requant(n: u32, dot: i32) -> i32 {
  let acc = dot - P.izp * WSUM[n];
  var y = f32(acc) * P.iscale * f32(WS[n]);
  if (P.has_bias == 1u) { y = y + f32(BIAS[n]); }
  if (P.relu == 1u) { y = max(y, 0.0); }
  return i32(clamp(round(y * P.oscale_inv) + f32(P.ozp), -128.0, 127.0));
}

#if SPLIT_K
var<workgroup> partial: array<i32, 256>;  // 4 outputs x WG (<= 64) invocations

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let w = wid.x + wid.y * nwg.x;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let e = w * 4u + j;
    var acc = 0;
    if (w < P.words && e < P.total) { acc = partial_dot(e / P.n, e % P.n, lid, WG); }
    partial[j * WG + lid] = acc;
  }
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      for (var j = 0u; j < 4u; j = j + 1u) { partial[j * WG + lid] = partial[j * WG + lid] + partial[j * WG + lid + s]; }
    }
    workgroupBarrier();
  }
  if (lid != 0u || w >= P.words) { return; }
  var word = 0u;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let e = w * 4u + j;
    if (e < P.total) { word = word | ((u32(requant(e % P.n, partial[j * WG])) & 0xffu) << (8u * j)); }
  }
  O_words[w] = word;
}
#else
fn q8ta_out(e: u32) -> i32 {
  let n = e % P.n;
  return requant(n, partial_dot(e / P.n, n, 0u, 1u));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let w = (wid.x + wid.y * nwg.x) * WG + lid;
  if (w >= P.words) { return; }
  var word = 0u;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let e = w * 4u + j;
    if (e < P.total) { word = word | ((u32(q8ta_out(e)) & 0xffu) << (8u * j)); }
  }
  O_words[w] = word;
}
#endif
