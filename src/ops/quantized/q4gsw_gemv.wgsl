// et_vk.linear_q4gsw / linear_qcs4w, GEMV route (one token): one workgroup per output (m, n), the K
// reduction split over the workgroup, one weight at a time: the shapes q4gsw_gemv_rows does not
// take (K or the group size not a multiple of 8) and linear_qcs4w. Flat workgroup index with 2D folding.
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
  for (var k = lid; k < P.k; k = k + WG) { acc = acc + f32(X[m * P.k + k]) * wq(n, k); }
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
