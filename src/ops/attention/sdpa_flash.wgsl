// SDPA prefill route: attention in one pass (flash attention), no attn scratch. A workgroup owns
// BR query rows of one (b, h) and walks the keys in tiles of BC, K and V tiles staged in workgroup
// memory; each row's running max is shared through workgroup memory once per tile, its normaliser
// summed per invocation and reduced once at the end. GQA reads k/v head h / group. Grid
// (ceil(S_q / BR), splits, B*H); 26 KB of workgroup memory, 36 KB with ROWS64 (attention.cpp:
// kFlashBytes*).
// Head dims up to 64: BR = 32 (64 with ROWS64), BC = 32, both products register-tiled (below);
// too few workgroups for the GPU split the keys (grid y = split, P.chunk keys each) and write
// partials (max, sum, value sums) per row and split to W, merged by sdpa_decode_combine.
// Up to 128 (D128): one row x one key and 8 value columns per invocation (BR = 16), no split.
// Q, K, V, M (mask; absent: a dummy), O, W (head dims <= 64) and P come from the generated
// preamble.
//!include sdpa_params
//!include epilogue_store
//!include sdpa_bias

override MASK: u32 = 0u;

#if D128
const RPT: u32 = 1u;
const KPT: u32 = 1u;
const DPT: u32 = 8u;
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
      if (n < P.dv) { O[oo + n] = O_T(epilogue(finish_row(acc[i][k], total), oo + n)); }
    }
  }
}
#else
// Head dims <= 64: a 16 x TY workgroup owns BR = 4 TY query rows (TY = 16 where the device has
// 36 KB of workgroup memory: twice the rows per K/V tile and twice the warps, 0.24 against
// 0.32 ms on the H200 for 6 heads x 1500 x 64). Invocation (tx, ty) holds rows
// 4 ty + i (i < 4) against keys tx and tx + 16 of each 32-key tile, and the same rows x value
// columns 4 tx .. 4 tx + 3 of the output: 8 scores and 16 sums in registers, every shared read a
// vec4 feeding 4 (QK) or 16 (AV) FMAs. The K and P tiles are stored with their vec4 column XORed
// by the row's low 3 bits, so that the 8 invocations of a vec4 access phase hit distinct banks
// without padding.
#if ROWS64
const TY: u32 = 16u;  // 36 KB of workgroup memory
#else
const TY: u32 = 8u;   // 26 KB
#endif
const BR: u32 = 4u * TY;
const BC: u32 = 32u;
var<workgroup> Qs: array<vec4<f32>, BR * 16u>;   // Qs[r * 16 + dq] = q[s0 + r, 4 dq .. 4 dq + 3]
var<workgroup> KP: array<vec4<f32>, BC * 16u>;   // KP[c * 16 + (dq ^ (c & 7))] = k[c0 + c, 4 dq ..]; then
                                                 // KP[c * TY + (rq ^ (c & 7))] = p[4 rq .. 4 rq + 3, c]
var<workgroup> Vs: array<vec4<f32>, BC * 16u>;   // Vs[c * 16 + nq] = v[c0 + c, 4 nq .. 4 nq + 3]
var<workgroup> Red: array<vec4<f32>, TY * 16u>;  // Red[ty * 16 + tx]: one value per row of ty's 4

// Score of query row s against key c from its dot product: -inf past the rows and from `end`,
// the end of this workgroup's key range, on.
fn score(b: u32, h: u32, s: u32, c: u32, end: u32, dot: f32) -> f32 {
  if (s >= P.sq || c >= end) { return bitcast<f32>(P.neg_inf_bits); }
  return dot * P.scale + bias(b, h, s, c);
}

// Row r's output: its partials to W when the keys are split, else acc / total through O.
fn store_row(bh: u32, b: u32, h: u32, r: u32, split: u32, tx: u32, m: f32, total: f32, acc: vec4<f32>) {
  if (r >= P.sq) { return; }
  if (P.splits > 1u) {  // partials as sdpa_decode writes them: row (bh, r), split `split`
    let base = ((bh * P.sq + r) * P.splits + split) * (P.dv + 2u);
    if (tx == 0u) {
      W[base] = W_T(m);
      W[base + 1u] = W_T(total);
    }
    for (var k = 0u; k < 4u; k = k + 1u) {
      if (4u * tx + k < P.dv) { W[base + 2u + 4u * tx + k] = W_T(acc[k]); }
    }
    return;
  }
  let oo = P.o_o + b * P.o_b + h * P.o_h + r * P.o_s;
  for (var k = 0u; k < 4u; k = k + 1u) {
    if (4u * tx + k < P.dv) { O[oo + 4u * tx + k] = O_T(epilogue(finish_row(acc[k], total), oo + 4u * tx + k)); }
  }
}

const UNITS: u32 = BC * 16u / (16u * TY);  // vec4s of the K (and V) tile per invocation
// This invocation's share of the K and V tiles at key c0: unit u = li + 16 TY j is key c0 + u / 16,
// dims 4 (u % 16) .. + 3; zero past `end` and past the head dims.
fn fetch(c0: u32, end: u32, li: u32, ko: u32, vo: u32, pk: ptr<function, array<vec4<f32>, UNITS>>,
         pv: ptr<function, array<vec4<f32>, UNITS>>) {
  for (var j = 0u; j < UNITS; j = j + 1u) {
    let u = li + 16u * TY * j;
    let c = c0 + u / 16u;
    let d = 4u * (u % 16u);
    var kx = vec4<f32>(0.0);
    var vx = vec4<f32>(0.0);
    if (c < end) {
      let kb = ko + c * P.k_s + d;
      let vb = vo + c * P.v_s + d;
      for (var t = 0u; t < 4u; t = t + 1u) {
        if (d + t < P.d) { kx[t] = f32(K[kb + t]); }
        if (d + t < P.dv) { vx[t] = f32(V[vb + t]); }
      }
    }
    (*pk)[j] = kx;
    (*pv)[j] = vx;
  }
}

@compute @workgroup_size(16, TY)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let tx = l.x;
  let ty = l.y;
  let sw = tx & 7u;  // the swizzle of keys tx and tx + 16
  let bh = wid.z;
  let h = bh % P.h;
  let b = bh / P.h;
  let s0 = wid.x * BR;
  let qo = P.q_o + b * P.q_b + h * P.q_h;
  let ko = P.k_o + b * P.k_b + (h / P.group) * P.k_h;
  let vo = P.v_o + b * P.v_b + (h / P.group) * P.v_h;
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  for (var u = li; u < BR * 16u; u = u + 16u * TY) {
    let r = u / 16u;
    let dq = u % 16u;
    var x = vec4<f32>(0.0);
    if (s0 + r < P.sq) {
      let base = qo + (s0 + r) * P.q_s;
      for (var t = 0u; t < 4u; t = t + 1u) {
        if (4u * dq + t < P.d) { x[t] = f32(Q[base + 4u * dq + t]); }
      }
    }
    Qs[u] = x;
  }
  // Keys past the causal limit of the block's last query are visible to none of its rows.
  var kv_end = P.skv;
  if (P.causal == 1u) { kv_end = min(kv_end, P.start + min(s0 + BR, P.sq)); }
  let c_begin = wid.y * P.chunk;  // this split's keys
  kv_end = min(kv_end, c_begin + P.chunk);
  var m = vec4<f32>(neg_inf);  // rows 4 ty + i in component i
  var lsum = vec4<f32>(0.0);
  var acc: array<vec4<f32>, 4>;  // acc[i]: row 4 ty + i, value columns 4 tx .. 4 tx + 3
  // The next tile's K and V are loaded into registers while the current one is worked on.
  var pk: array<vec4<f32>, UNITS>;
  var pv: array<vec4<f32>, UNITS>;
  fetch(c_begin, kv_end, li, ko, vo, &pk, &pv);
  for (var c0 = c_begin; c0 < kv_end; c0 = c0 + BC) {
    for (var j = 0u; j < UNITS; j = j + 1u) {
      let u = li + 16u * TY * j;
      let c = u / 16u;
      KP[c * 16u + ((u % 16u) ^ (c & 7u))] = pk[j];
      Vs[u] = pv[j];
    }
    workgroupBarrier();
    if (c0 + BC < kv_end) { fetch(c0 + BC, kv_end, li, ko, vo, &pk, &pv); }
    var s: array<vec2<f32>, 4>;  // s[i]: row 4 ty + i against keys tx and tx + 16
    for (var i = 0u; i < 4u; i = i + 1u) { s[i] = vec2<f32>(0.0); }
    for (var dq = 0u; dq < 16u; dq = dq + 1u) {  // zero past P.d: a constant trip count
      let k0 = KP[tx * 16u + (dq ^ sw)];
      let k1 = KP[(tx + 16u) * 16u + (dq ^ sw)];
      for (var i = 0u; i < 4u; i = i + 1u) {
        let q = Qs[(4u * ty + i) * 16u + dq];
        s[i] = s[i] + vec2<f32>(dot(q, k0), dot(q, k1));
      }
    }
    var rmax = vec4<f32>(neg_inf);
    for (var i = 0u; i < 4u; i = i + 1u) {
      let r = s0 + 4u * ty + i;
      s[i] = vec2<f32>(score(b, h, r, c0 + tx, kv_end, s[i].x), score(b, h, r, c0 + tx + 16u, kv_end, s[i].y));
      rmax[i] = max(s[i].x, s[i].y);
    }
    Red[ty * 16u + tx] = rmax;
    workgroupBarrier();  // also: every score is taken, so the K tile may become the P tile
    var tmax = vec4<f32>(neg_inf);
    for (var t = 0u; t < 16u; t = t + 1u) { tmax = max(tmax, Red[ty * 16u + t]); }
    let mn = max(m, tmax);
    // A row's mn is -inf while every key so far is masked: nothing to add, nothing to rescale.
    let live = mn != vec4<f32>(neg_inf);
    let alpha = select(vec4<f32>(1.0), exp(m - mn), live);  // 0 while m is -inf
    lsum = lsum * alpha;
    m = mn;
    var p0 = vec4<f32>(0.0);  // rows 4 ty .. 4 ty + 3 against key tx
    var p1 = vec4<f32>(0.0);  // against key tx + 16
    for (var i = 0u; i < 4u; i = i + 1u) {
      acc[i] = acc[i] * alpha[i];
      let pi = select(vec2<f32>(0.0), exp(s[i] - vec2<f32>(mn[i])), vec2<bool>(live[i]));
      lsum[i] = lsum[i] + pi.x + pi.y;
      p0[i] = pi.x;
      p1[i] = pi.y;
    }
    KP[tx * TY + (ty ^ sw)] = p0;
    KP[(tx + 16u) * TY + (ty ^ sw)] = p1;
    workgroupBarrier();
    for (var c = 0u; c < BC; c = c + 1u) {
      let p = KP[c * TY + (ty ^ (c & 7u))];
      let v = Vs[c * 16u + tx];
      for (var i = 0u; i < 4u; i = i + 1u) { acc[i] = fma(vec4<f32>(p[i]), v, acc[i]); }
    }
    workgroupBarrier();  // the next tile overwrites K/P and V
  }
  Red[ty * 16u + tx] = lsum;
  workgroupBarrier();
  var total = vec4<f32>(0.0);
  for (var t = 0u; t < 16u; t = t + 1u) { total = total + Red[ty * 16u + t]; }
  let r0 = s0 + 4u * ty;
  store_row(bh, b, h, r0, wid.y, tx, m.x, total.x, acc[0]);
  store_row(bh, b, h, r0 + 1u, wid.y, tx, m.y, total.y, acc[1]);
  store_row(bh, b, h, r0 + 2u, wid.y, tx, m.z, total.z, acc[2]);
  store_row(bh, b, h, r0 + 3u, wid.y, tx, m.w, total.w, acc[3]);
}
#endif
