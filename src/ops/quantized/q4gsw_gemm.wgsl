// et_vk.linear_q4gsw / linear_qcs4w, tiled GEMM route (prefill): a 16x16 workgroup computes a 16 (rows) x 16
// (outputs) tile, staging input and dequantized weight tiles in workgroup memory.
// Grid: x = ceil(N / 16), y = ceil(M / 16) (checked against the device limit on the host).
//!include q4gsw_weights

const T: u32 = 16u;
var<workgroup> xs: array<f32, 256>;
var<workgroup> ws: array<f32, 256>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let n0 = wid.x * T;
  let m0 = wid.y * T;
  let tx = lid.x;
  let ty = lid.y;
  var acc = 0.0;
  for (var k0 = 0u; k0 < P.k; k0 = k0 + T) {
    let xm = m0 + ty;
    let xk = k0 + tx;
    xs[ty * T + tx] = select(0.0, f32(X[xm * P.k + xk]), xm < P.m && xk < P.k);
    let wn = n0 + ty;
    ws[ty * T + tx] = select(0.0, wq(wn, xk), wn < P.n && xk < P.k);
    workgroupBarrier();
    for (var kk = 0u; kk < T; kk = kk + 1u) { acc = acc + xs[ty * T + kk] * ws[tx * T + kk]; }
    workgroupBarrier();
  }
  let m = m0 + ty;
  let n = n0 + tx;
  if (m < P.m && n < P.n) {
    var r = acc;
    if (P.has_bias == 1u) { r = r + f32(BIAS[n]); }
    store_out(m, n, r);
  }
}
