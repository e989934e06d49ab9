// SDPA prefill route: attention in one pass (flash attention), no attn scratch. A 16x16
// workgroup owns 16 query rows of one (b, h) and walks the keys in tiles of 16: the K and V tiles
// are staged in workgroup memory, invocation (x, y) scores key x against query y, and each row
// keeps a running (max, sum) rescaled online while invocation (x, y) accumulates value columns
// x, x + 16, ... of query y. GQA reads k/v head h / group. Head dims up to DMAX: 64 (13.5 KB of
// workgroup memory), or 128 with D128 defined (25.8 KB). Grid (ceil(S_q/16), 1, B*H).
// Q, K, V, M (mask; absent: a dummy), O and P come from the generated preamble.
//!include sdpa_params
//!include sdpa_bias

override MASK: u32 = 0u;
#if D128
const DMAX: u32 = 128u;
#else
const DMAX: u32 = 64u;
#endif
const BR: u32 = 16u;          // query rows per workgroup
const BC: u32 = 16u;          // keys per tile
const DS: u32 = DMAX + 1u;    // row stride of the Q and K tiles: column reads across rows hit distinct banks
const SS: u32 = BC + 1u;
const VPT: u32 = DMAX / 16u;  // value columns per invocation
var<workgroup> Qs: array<f32, BR * DS>;  // Qs[r * DS + d] = q[s0 + r, d]
var<workgroup> Ks: array<f32, BC * DS>;
var<workgroup> Vs: array<f32, BC * DMAX>;
var<workgroup> Ss: array<f32, BR * SS>;  // the scores of the current tile

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let bh = wid.z;
  let h = bh % P.h;
  let b = bh / P.h;
  let s0 = wid.x * BR;
  let s = s0 + l.y;
  let qo = P.q_o + b * P.q_b + h * P.q_h;
  let ko = P.k_o + b * P.k_b + (h / P.group) * P.k_h;
  let vo = P.v_o + b * P.v_b + (h / P.group) * P.v_h;
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  for (var e = li; e < BR * DMAX; e = e + 256u) {
    let r = e / DMAX;
    let d = e % DMAX;
    var x = 0.0;
    if (s0 + r < P.sq && d < P.d) { x = f32(Q[qo + (s0 + r) * P.q_s + d]); }
    Qs[r * DS + d] = x;
  }
  // Keys past the causal limit of the block's last query are visible to none of its rows.
  var kv_end = P.skv;
  if (P.causal == 1u) { kv_end = min(kv_end, P.start + min(s0 + BR, P.sq)); }
  var m = neg_inf;
  var lsum = 0.0;
  var acc: array<f32, VPT>;
  for (var c0 = 0u; c0 < kv_end; c0 = c0 + BC) {
    for (var e = li; e < BC * DMAX; e = e + 256u) {
      let r = e / DMAX;
      let d = e % DMAX;
      var kx = 0.0;
      var vx = 0.0;
      if (c0 + r < P.skv) {
        if (d < P.d) { kx = f32(K[ko + (c0 + r) * P.k_s + d]); }
        if (d < P.dv) { vx = f32(V[vo + (c0 + r) * P.v_s + d]); }
      }
      Ks[r * DS + d] = kx;
      Vs[r * DMAX + d] = vx;
    }
    workgroupBarrier();
    let c = c0 + l.x;
    var sc = neg_inf;
    if (s < P.sq && c < P.skv) {
      var dot = 0.0;
      for (var d = 0u; d < P.d; d = d + 1u) { dot = dot + Qs[l.y * DS + d] * Ks[l.x * DS + d]; }
      sc = dot * P.scale + bias(b, h, s, c);
    }
    Ss[l.y * SS + l.x] = sc;
    workgroupBarrier();
    var tmax = neg_inf;
    for (var j = 0u; j < BC; j = j + 1u) { tmax = max(tmax, Ss[l.y * SS + j]); }
    let mn = max(m, tmax);
    if (mn != neg_inf) {  // else every key so far is masked: nothing to add
      let alpha = exp(m - mn);  // 0 while m is -inf
      lsum = lsum * alpha;
      for (var k = 0u; k < VPT; k = k + 1u) { acc[k] = acc[k] * alpha; }
      for (var j = 0u; j < BC; j = j + 1u) {
        let p = exp(Ss[l.y * SS + j] - mn);
        lsum = lsum + p;
        for (var k = 0u; k < VPT; k = k + 1u) { acc[k] = acc[k] + p * Vs[j * DMAX + l.x + 16u * k]; }
      }
      m = mn;
    }
    workgroupBarrier();
  }
  if (s >= P.sq) { return; }
  let oo = P.o_o + b * P.o_b + h * P.o_h + s * P.o_s;
  for (var k = 0u; k < VPT; k = k + 1u) {
    let n = l.x + 16u * k;
    if (n < P.dv) { O[oo + n] = O_T(finish_row(acc[k], lsum)); }
  }
}
