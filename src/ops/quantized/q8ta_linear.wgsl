// et_vk.q8ta_linear / q8ta_linear_gemv (static int8 in and out): one invocation per output word
// (four consecutive outputs of the flat [M, N] result; flat index with 2D folding), each a full
// integer dot product over K:
//   acc = sum_k x_q[m, k] * w_q[n, k] - izp * wsum[n]        (exact in i32)
//   y   = f32(acc) * iscale * wscale[n] + bias[n]; relu; q = clamp(round(y * oscale_inv) + ozp, -128, 127)
// K a multiple of 4 (P.aligned): rows are whole words and dot4 takes four products at a time;
// otherwise bytes one by one. Bindings (generated preamble): X_words, W_words (int8, packed),
// WSUM (i32), WS, BIAS (absent: zero dummy), O_words (written whole) and P.
struct Params {
  m: u32, n: u32, k: u32, total: u32,
  words: u32, aligned: u32, has_bias: u32, relu: u32,
  izp: i32, ozp: i32, iscale: f32, oscale_inv: f32,
};
//!include q8_int_math

override WG: u32 = 64u;

fn q8ta_out(e: u32) -> i32 {
  let m = e / P.n;
  let n = e % P.n;
  var acc = 0;
  if (P.aligned == 1u) {
    let kw = P.k / 4u;
    let xo = m * kw;
    let wo = n * kw;
    for (var j = 0u; j < kw; j = j + 1u) { acc = acc + dot4(X_words[xo + j], W_words[wo + j]); }
  } else {
    for (var k = 0u; k < P.k; k = k + 1u) { acc = acc + load_X(m * P.k + k) * load_W(n * P.k + k); }
  }
  acc = acc - P.izp * WSUM[n];
  var y = f32(acc) * P.iscale * f32(WS[n]);
  if (P.has_bias == 1u) { y = y + f32(BIAS[n]); }
  if (P.relu == 1u) { y = max(y, 0.0); }
  return i32(clamp(round(y * P.oscale_inv) + f32(P.ozp), -128.0, 127.0));
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
