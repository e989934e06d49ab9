// et_vk.linear_q4gsw, GEMV route (one token): one workgroup per output (m, n), the K reduction
// split over the workgroup. Flat workgroup index with 2D folding.
struct Params { m: u32, n: u32, k: u32, gs: u32, wrow: u32, srow: u32, has_bias: u32, pad: u32 };

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> W: array<u32>;   // packed bytes, 4 per word
@group(0) @binding(2) var<storage, read> SC: array<f32>;  // scales [num_groups, srow]
@group(0) @binding(3) var<storage, read> BIAS: array<f32>;
@group(0) @binding(4) var<storage, read_write> O: array<f32>;
@group(0) @binding(5) var<uniform> P: Params;

// Weight row n holds K_pad/2 bytes; byte j = (q[2j+1] + 8) << 4 | (q[2j] + 8).
fn wq(n: u32, k: u32) -> f32 {
  let byte = n * P.wrow + k / 2u;
  let b = (W[byte / 4u] >> ((byte % 4u) * 8u)) & 0xffu;
  let nib = select(b & 15u, b >> 4u, (k & 1u) == 1u);
  return f32(i32(nib) - 8) * SC[(k / P.gs) * P.srow + n];
}

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
  for (var k = lid; k < P.k; k = k + WG) { acc = acc + X[m * P.k + k] * wq(n, k); }
  red[lid] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) {
    var r = red[0];
    if (P.has_bias == 1u) { r = r + BIAS[n]; }
    O[m * P.n + n] = r;
  }
}
