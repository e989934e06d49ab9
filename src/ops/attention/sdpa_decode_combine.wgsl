// SDPA decode route, pass 2: merges the key splits of each query row written by sdpa_decode
// (one 64-wide workgroup per row, 2D-folded grid): M = max m_i, L = sum l_i exp(m_i - M),
// out = sum acc_i exp(m_i - M) / L. A split that saw no visible key has m_i = -inf and adds 0.
// W (the f32 partials), O and P come from the generated preamble.
//!include sdpa_params
//!include epilogue_store

const WG: u32 = 64u;
const VPT: u32 = 2u;  // value columns per invocation: head dims up to 128

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= P.rows) { return; }
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  let stride = P.dv + 2u;
  let base = row * P.splits * stride;
  var mx = neg_inf;
  for (var i = 0u; i < P.splits; i = i + 1u) { mx = max(mx, f32(W[base + i * stride])); }
  var l = 0.0;
  var acc: array<f32, VPT>;
  if (mx != neg_inf) {
    for (var i = 0u; i < P.splits; i = i + 1u) {
      let o = base + i * stride;
      let w = exp(f32(W[o]) - mx);
      l = l + f32(W[o + 1u]) * w;
      for (var k = 0u; k < VPT; k = k + 1u) {
        let dv = lid + WG * k;
        if (dv < P.dv) { acc[k] = acc[k] + f32(W[o + 2u + dv]) * w; }
      }
    }
  }
  let s = row % P.sq;
  let h = (row / P.sq) % P.h;
  let b = row / (P.sq * P.h);
  let oo = P.o_o + b * P.o_b + h * P.o_h + s * P.o_s;
  for (var k = 0u; k < VPT; k = k + 1u) {
    let dv = lid + WG * k;
    if (dv < P.dv) { O[oo + dv] = O_T(epilogue(finish_row(acc[k], l), oo + dv)); }
  }
}
