// SDPA decode route, pass 2: merges the key splits of each query row written by sdpa_decode
// (one 64-wide workgroup per row, 2D-folded grid): M = max m_i, L = sum l_i exp(m_i - M),
// out = sum acc_i exp(m_i - M) / L. A split that saw no visible key has m_i = -inf and adds 0.
// The splits' statistics are read by many invocations at once and their value rows in batches:
// one loop of dependent loads over the splits cost an L2 round trip per split (8 to 16 in decode).
// W (the f32 partials), O and P come from the generated preamble.
//!include sdpa_params
//!include epilogue_store

const WG: u32 = 64u;
const VPT: u32 = 2u;       // value columns per invocation: head dims up to 128
const CHUNK: u32 = WG;     // splits weighted at a time, one an invocation
const BATCH: u32 = 16u;    // value rows loaded before they are added
var<workgroup> wts: array<f32, CHUNK>;
var<workgroup> red: array<f32, WG>;

fn reduce(x: f32, lid: u32, is_max: bool) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k = k / 2u) {
    if (lid < k) {
      if (is_max) { red[lid] = max(red[lid], red[lid + k]); } else { red[lid] = red[lid] + red[lid + k]; }
    }
    workgroupBarrier();
  }
  let t = red[0];
  workgroupBarrier();  // red is reused by the next reduction
  return t;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= P.rows) { return; }
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  let stride = P.dv + 2u;
  let base = row * P.splits * stride;
  var m_loc = neg_inf;
  for (var i = lid; i < P.splits; i = i + WG) { m_loc = max(m_loc, f32(W[base + i * stride])); }
  let mx = reduce(m_loc, lid, true);
  var l_loc = 0.0;
  var acc: array<f32, VPT>;
  for (var c0 = 0u; c0 < P.splits; c0 = c0 + CHUNK) {
    let cn = min(CHUNK, P.splits - c0);
    for (var i = lid; i < cn; i = i + WG) {
      let o = base + (c0 + i) * stride;
      var w = 0.0;
      if (mx != neg_inf) { w = exp(f32(W[o]) - mx); }
      wts[i] = w;
      l_loc = l_loc + f32(W[o + 1u]) * w;
    }
    workgroupBarrier();
    for (var k = 0u; k < VPT; k = k + 1u) {
      let dv = lid + WG * k;
      if (dv < P.dv) {
        var a = acc[k];
        let vb = base + c0 * stride + 2u + dv;
        var i = 0u;
        for (; i + BATCH <= cn; i = i + BATCH) {
          var r: array<f32, BATCH>;
          for (var u = 0u; u < BATCH; u = u + 1u) { r[u] = f32(W[vb + (i + u) * stride]); }
          for (var u = 0u; u < BATCH; u = u + 1u) { a = a + r[u] * wts[i + u]; }
        }
        for (; i < cn; i = i + 1u) { a = a + f32(W[vb + i * stride]) * wts[i]; }
        acc[k] = a;
      }
    }
    workgroupBarrier();  // wts is rewritten by the next chunk
  }
  let l = reduce(l_loc, lid, false);
  let s = row % P.sq;
  let h = (row / P.sq) % P.h;
  let b = row / (P.sq * P.h);
  let oo = P.o_o + b * P.o_b + h * P.o_h + s * P.o_s;
  for (var k = 0u; k < VPT; k = k + 1u) {
    let dv = lid + WG * k;
    if (dv < P.dv) { O[oo + dv] = O_T(epilogue(finish_row(acc[k], l), oo + dv)); }
  }
}
