// et_vk.linear_q4gsw / linear_qcs4w, GEMV route (one token): one workgroup per output (m, n), the K
// reduction split over the workgroup. Flat workgroup index with 2D folding.
// WORDS (K and the group size multiples of 8, weight rows whole words; q4gsw only): each step takes
// one packed word (8 weights, one group scale) and two vec4 of X; otherwise one weight at a time.
//!include q4gsw_weights

const WG: u32 = 64u;
var<workgroup> red: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = wid.x + wid.y * nwg.x;
  if (g >= P.m * P.n) { return; }
  let m = g / P.n;
  let n = g % P.n;
  var acc = 0.0;
#if WORDS
  let words = P.k / 8u;
  let wbase = n * (P.wrow / 4u);
  let xbase = m * (P.k / 4u);
  for (var j = lid; j < words; j = j + WG) {
    let w = W[wbase + j];
    let lo = vec4<i32>(vec4<u32>(w & 15u, (w >> 4u) & 15u, (w >> 8u) & 15u, (w >> 12u) & 15u)) - vec4<i32>(8);
    let hi = vec4<i32>(vec4<u32>((w >> 16u) & 15u, (w >> 20u) & 15u, (w >> 24u) & 15u, w >> 28u)) - vec4<i32>(8);
    let s = f32(SC[((j * 8u) / P.gs) * P.srow + n]);
    acc = acc + (dot(vec4<f32>(X[xbase + 2u * j]), vec4<f32>(lo)) + dot(vec4<f32>(X[xbase + 2u * j + 1u]), vec4<f32>(hi))) * s;
  }
#else
  for (var k = lid; k < P.k; k = k + WG) { acc = acc + f32(X[m * P.k + k]) * wq(n, k); }
#endif
  red[lid] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) {
    var r = red[0];
    if (P.has_bias == 1u) { r = r + f32(BIAS[n]); }
    store_out(m, n, r);
  }
}
