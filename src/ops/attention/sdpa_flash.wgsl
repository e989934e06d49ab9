// SDPA prefill route: attention in one pass (flash attention), no attn scratch. A 16x16
// workgroup owns BR query rows of one (b, h) and walks the keys in tiles of BC, K and V tiles
// staged in workgroup memory. Invocation (tx, ty) holds RPT rows (ty * RPT + i) against KPT keys
// (tx + 16 j) of each score tile and RPT rows x DPT value columns (tx + 16 k) of the output, so
// both products are register-tiled like a GEMM (independent FMAs, broadcast or conflict-free
// workgroup reads). Each row's running max is shared through workgroup memory once per tile;
// its normaliser is summed per invocation and reduced once at the end. GQA reads k/v head
// h / group. Head dims up to 64, or 128 with D128 defined. Grid (ceil(S_q / BR), 1, B*H).
// Q, K, V, M (mask; absent: a dummy), O and P come from the generated preamble.
//!include sdpa_params
//!include sdpa_bias

override MASK: u32 = 0u;
// Sized to stay within 32 KB of workgroup memory (attention.cpp: kFlashBytes*).
#if D128
const RPT: u32 = 1u;
const KPT: u32 = 1u;
const DPT: u32 = 8u;
#else
const RPT: u32 = 2u;
const KPT: u32 = 2u;
const DPT: u32 = 4u;
#endif
const BR: u32 = 16u * RPT;    // query rows per workgroup
const BC: u32 = 16u * KPT;    // keys per tile
const DMAX: u32 = 16u * DPT;  // head dims
// Transposed K and P tiles with a padded row (the +1) so that the transposing stores hit distinct
// banks (the Q tile is stored once per workgroup: not padded, to save room); the P tile reuses
// the K tile's memory once the scores are taken.
const QS: u32 = BR;
const KS: u32 = BC + 1u;
const PS: u32 = BR + 1u;
const KP_LEN: u32 = max(DMAX * KS, BC * PS);
var<workgroup> Qs: array<f32, DMAX * QS>;   // Qs[d * QS + r] = q[s0 + r, d]
var<workgroup> KPs: array<f32, KP_LEN>;     // Ks[d * KS + c] = k[c0 + c, d], then Ps[c * PS + r]
var<workgroup> Vs: array<f32, BC * DMAX>;   // Vs[c * DMAX + d] = v[c0 + c, d]
var<workgroup> Red: array<f32, BR * 16u>;   // per row, one value from each of the 16 tx

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let tx = l.x;
  let ty = l.y;
  let bh = wid.z;
  let h = bh % P.h;
  let b = bh / P.h;
  let s0 = wid.x * BR;
  let qo = P.q_o + b * P.q_b + h * P.q_h;
  let ko = P.k_o + b * P.k_b + (h / P.group) * P.k_h;
  let vo = P.v_o + b * P.v_b + (h / P.group) * P.v_h;
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  for (var e = li; e < BR * DMAX; e = e + 256u) {
    let r = e / DMAX;
    let d = e % DMAX;
    var x = 0.0;
    if (s0 + r < P.sq && d < P.d) { x = f32(Q[qo + (s0 + r) * P.q_s + d]); }
    Qs[d * QS + r] = x;
  }
  // Keys past the causal limit of the block's last query are visible to none of its rows.
  var kv_end = P.skv;
  if (P.causal == 1u) { kv_end = min(kv_end, P.start + min(s0 + BR, P.sq)); }
  var m: array<f32, RPT>;
  var lsum: array<f32, RPT>;
  var acc: array<array<f32, DPT>, RPT>;
  for (var i = 0u; i < RPT; i = i + 1u) { m[i] = neg_inf; }
  for (var c0 = 0u; c0 < kv_end; c0 = c0 + BC) {
    for (var e = li; e < BC * DMAX; e = e + 256u) {
      let c = e / DMAX;
      let d = e % DMAX;
      var kx = 0.0;
      var vx = 0.0;
      if (c0 + c < P.skv) {
        if (d < P.d) { kx = f32(K[ko + (c0 + c) * P.k_s + d]); }
        if (d < P.dv) { vx = f32(V[vo + (c0 + c) * P.v_s + d]); }
      }
      KPs[d * KS + c] = kx;
      Vs[c * DMAX + d] = vx;
    }
    workgroupBarrier();
    var sc = array<array<f32, KPT>, RPT>();  // zeroed per tile: a bare `var` may keep the last tile's
    for (var d = 0u; d < P.d; d = d + 1u) {
      var qv: array<f32, RPT>;
      for (var i = 0u; i < RPT; i = i + 1u) { qv[i] = Qs[d * QS + ty * RPT + i]; }
      for (var j = 0u; j < KPT; j = j + 1u) {
        let kv = KPs[d * KS + tx + 16u * j];
        for (var i = 0u; i < RPT; i = i + 1u) { sc[i][j] = fma(qv[i], kv, sc[i][j]); }
      }
    }
    for (var i = 0u; i < RPT; i = i + 1u) {
      let s = s0 + ty * RPT + i;
      var rmax = neg_inf;
      for (var j = 0u; j < KPT; j = j + 1u) {
        let c = c0 + tx + 16u * j;
        var x = neg_inf;
        if (s < P.sq && c < P.skv) { x = sc[i][j] * P.scale + bias(b, h, s, c); }
        sc[i][j] = x;
        rmax = max(rmax, x);
      }
      Red[(ty * RPT + i) * 16u + tx] = rmax;
    }
    workgroupBarrier();  // also: every score is taken, so the K tile may become the P tile
    for (var i = 0u; i < RPT; i = i + 1u) {
      let row = ty * RPT + i;
      var tmax = neg_inf;
      for (var t = 0u; t < 16u; t = t + 1u) { tmax = max(tmax, Red[row * 16u + t]); }
      let mn = max(m[i], tmax);
      // mn is -inf while every key so far is masked: nothing to add, nothing to rescale.
      let live = mn != neg_inf;
      let alpha = select(1.0, exp(m[i] - mn), live);  // 0 while m is -inf
      lsum[i] = lsum[i] * alpha;
      for (var k = 0u; k < DPT; k = k + 1u) { acc[i][k] = acc[i][k] * alpha; }
      m[i] = mn;
      for (var j = 0u; j < KPT; j = j + 1u) {
        let p = select(0.0, exp(sc[i][j] - mn), live);
        lsum[i] = lsum[i] + p;
        KPs[(tx + 16u * j) * PS + row] = p;
      }
    }
    workgroupBarrier();
    for (var c = 0u; c < BC; c = c + 1u) {
      var pv: array<f32, RPT>;
      for (var i = 0u; i < RPT; i = i + 1u) { pv[i] = KPs[c * PS + ty * RPT + i]; }
      for (var k = 0u; k < DPT; k = k + 1u) {
        let vv = Vs[c * DMAX + tx + 16u * k];
        for (var i = 0u; i < RPT; i = i + 1u) { acc[i][k] = fma(pv[i], vv, acc[i][k]); }
      }
    }
    workgroupBarrier();  // the next tile overwrites K/P and V
  }
  for (var i = 0u; i < RPT; i = i + 1u) { Red[(ty * RPT + i) * 16u + tx] = lsum[i]; }
  workgroupBarrier();
  for (var i = 0u; i < RPT; i = i + 1u) {
    let s = s0 + ty * RPT + i;
    if (s >= P.sq) { continue; }
    var total = 0.0;
    for (var t = 0u; t < 16u; t = t + 1u) { total = total + Red[(ty * RPT + i) * 16u + t]; }
    let oo = P.o_o + b * P.o_b + h * P.o_h + s * P.o_s;
    for (var k = 0u; k < DPT; k = k + 1u) {
      let n = tx + 16u * k;
      if (n < P.dv) { O[oo + n] = O_T(finish_row(acc[i][k], total)); }
    }
  }
}
