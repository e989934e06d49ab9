// et_vk.linear_q8ta_q8csw (float in and out, int8 channel-wise weights), as ExecuTorch's reference
// computes it (custom_ops_lib.py: the input quantization arguments are not applied):
//   out[m, n] = (sum_k x[m, k] * w_q[n, k]) * wscale[n] + bias[n]
// One invocation per output (flat index, 2D folding). Bindings: X, W_words (int8), WS, BIAS, O, P.
struct Params { m: u32, n: u32, k: u32, total: u32, has_bias: u32, pad0: u32, pad1: u32, pad2: u32 };

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let m = i / P.n;
  let n = i % P.n;
  var acc = 0.0;
  for (var k = 0u; k < P.k; k = k + 1u) { acc = acc + f32(X[m * P.k + k]) * f32(load_W(n * P.k + k)); }
  var y = acc * f32(WS[n]);
  if (P.has_bias == 1u) { y = y + f32(BIAS[n]); }
  O[i] = O_T(y);
}
