// SDPA prefill route: attention in one pass (flash attention), no attn scratch. A 16x16
// workgroup owns BR query rows of one (b, h) and walks the keys in tiles of BC, K and V tiles
// staged in workgroup memory; each row's running max is shared through workgroup memory once per
// tile, its normaliser summed per invocation and reduced once at the end. GQA reads k/v head
// h / group. Grid (ceil(S_q / BR), 1, B*H); 27 KB of workgroup memory (attention.cpp:
// kFlashBytes*).
// Head dims up to 64: invocation (tx, ty) holds rows 2 ty and 2 ty + 1 against keys tx and
// tx + 16 of each 32-key tile, and the same rows x value columns tx + 16 k of the output, all in
// vector registers with constant indices, so both products run like a register-tiled GEMM
// (BR = 32); too few workgroups for the GPU split the keys (grid y = split, P.chunk keys each) and
// write partials (max, sum, value sums) per row and split to W, merged by sdpa_decode_combine.
// Up to 128 (D128): one row x one key and 8 value columns per invocation (BR = 16), no split.
// Q, K, V, M (mask; absent: a dummy), O, W (head dims <= 64) and P come from the generated
// preamble.
//!include sdpa_params
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
      if (n < P.dv) { O[oo + n] = O_T(finish_row(acc[i][k], total)); }
    }
  }
}
#else
const BR: u32 = 32u;
const BC: u32 = 32u;
const DMAX: u32 = 64u;
// Row pairs and key pairs as vec2, value columns as vec4. The K tile's row is padded (+1) so
// that its transposing store hits distinct banks; the P tile reuses its memory.
const KS: u32 = 17u;  // K2[d * KS + t] = (k[c0 + t, d], k[c0 + t + 16, d])
const PS: u32 = 17u;  // P2[c * PS + ty] = (p[2 ty, c], p[2 ty + 1, c])
var<workgroup> Q2: array<vec2<f32>, DMAX * 16u>;  // Q2[d * 16 + ty] = (q[s0 + 2 ty, d], q[s0 + 2 ty + 1, d])
var<workgroup> KP2: array<vec2<f32>, DMAX * KS>;
var<workgroup> V4: array<vec4<f32>, BC * 16u>;     // V4[c * 16 + t] = v[c0 + c, t + 16 k] for k = 0..3
var<workgroup> Red: array<f32, BR * 16u>;          // per row, one value from each of the 16 tx

// Score of query row s against key c from its dot product: -inf outside the problem.
fn score(b: u32, h: u32, s: u32, c: u32, dot: f32) -> f32 {
  if (s >= P.sq || c >= P.skv) { return bitcast<f32>(P.neg_inf_bits); }
  return dot * P.scale + bias(b, h, s, c);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let tx = l.x;
  let ty = l.y;
  let bh = wid.z;
  let h = bh % P.h;
  let b = bh / P.h;
  let s0 = wid.x * BR;
  let r0 = 2u * ty;  // this invocation's rows: s0 + r0 and s0 + r0 + 1
  let qo = P.q_o + b * P.q_b + h * P.q_h;
  let ko = P.k_o + b * P.k_b + (h / P.group) * P.k_h;
  let vo = P.v_o + b * P.v_b + (h / P.group) * P.v_h;
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  for (var e = li; e < BR * DMAX; e = e + 256u) {
    let r = e / DMAX;
    let d = e % DMAX;
    var x = 0.0;
    if (s0 + r < P.sq && d < P.d) { x = f32(Q[qo + (s0 + r) * P.q_s + d]); }
    Q2[d * 16u + r / 2u][r % 2u] = x;
  }
  // Keys past the causal limit of the block's last query are visible to none of its rows.
  var kv_end = P.skv;
  if (P.causal == 1u) { kv_end = min(kv_end, P.start + min(s0 + BR, P.sq)); }
  let c_begin = wid.y * P.chunk;  // this split's keys
  kv_end = min(kv_end, c_begin + P.chunk);
  var m = vec2<f32>(neg_inf);
  var lsum = vec2<f32>(0.0);
  var acc0 = vec4<f32>(0.0);  // row r0, columns tx + 16 k
  var acc1 = vec4<f32>(0.0);  // row r0 + 1
  for (var c0 = c_begin; c0 < kv_end; c0 = c0 + BC) {
    for (var e = li; e < BC * DMAX; e = e + 256u) {
      let c = e / DMAX;
      let d = e % DMAX;
      var kx = 0.0;
      var vx = 0.0;
      if (c0 + c < P.skv) {
        if (d < P.d) { kx = f32(K[ko + (c0 + c) * P.k_s + d]); }
        if (d < P.dv) { vx = f32(V[vo + (c0 + c) * P.v_s + d]); }
      }
      KP2[d * KS + c % 16u][c / 16u] = kx;
      V4[c * 16u + d % 16u][d / 16u] = vx;
    }
    workgroupBarrier();
    var sa = vec2<f32>(0.0);  // row r0 against keys tx, tx + 16
    var sb = vec2<f32>(0.0);  // row r0 + 1
    for (var d = 0u; d < DMAX; d = d + 1u) {  // zero past P.d: a constant trip count
      let q = Q2[d * 16u + ty];
      let k = KP2[d * KS + tx];
      sa = fma(vec2<f32>(q.x), k, sa);
      sb = fma(vec2<f32>(q.y), k, sb);
    }
    let sr = s0 + r0;
    sa = vec2<f32>(score(b, h, sr, c0 + tx, sa.x), score(b, h, sr, c0 + tx + 16u, sa.y));
    sb = vec2<f32>(score(b, h, sr + 1u, c0 + tx, sb.x), score(b, h, sr + 1u, c0 + tx + 16u, sb.y));
    Red[r0 * 16u + tx] = max(sa.x, sa.y);
    Red[(r0 + 1u) * 16u + tx] = max(sb.x, sb.y);
    workgroupBarrier();  // also: every score is taken, so the K tile may become the P tile
    var tmax = vec2<f32>(neg_inf);
    for (var t = 0u; t < 16u; t = t + 1u) {
      tmax = max(tmax, vec2<f32>(Red[r0 * 16u + t], Red[(r0 + 1u) * 16u + t]));
    }
    let mn = max(m, tmax);
    // A row's mn is -inf while every key so far is masked: nothing to add, nothing to rescale.
    let live = mn != vec2<f32>(neg_inf);
    let alpha = select(vec2<f32>(1.0), exp(m - mn), live);  // 0 while m is -inf
    lsum = lsum * alpha;
    acc0 = acc0 * alpha.x;
    acc1 = acc1 * alpha.y;
    m = mn;
    let pa = select(vec2<f32>(0.0), exp(sa - vec2<f32>(mn.x)), vec2<bool>(live.x));
    let pb = select(vec2<f32>(0.0), exp(sb - vec2<f32>(mn.y)), vec2<bool>(live.y));
    lsum = lsum + vec2<f32>(pa.x + pa.y, pb.x + pb.y);
    KP2[tx * PS + ty] = vec2<f32>(pa.x, pb.x);
    KP2[(tx + 16u) * PS + ty] = vec2<f32>(pa.y, pb.y);
    workgroupBarrier();
    for (var c = 0u; c < BC; c = c + 1u) {
      let p = KP2[c * PS + ty];
      let v = V4[c * 16u + tx];
      acc0 = fma(vec4<f32>(p.x), v, acc0);
      acc1 = fma(vec4<f32>(p.y), v, acc1);
    }
    workgroupBarrier();  // the next tile overwrites K/P and V
  }
  Red[r0 * 16u + tx] = lsum.x;
  Red[(r0 + 1u) * 16u + tx] = lsum.y;
  workgroupBarrier();
  var total = vec2<f32>(0.0);
  for (var t = 0u; t < 16u; t = t + 1u) { total = total + vec2<f32>(Red[r0 * 16u + t], Red[(r0 + 1u) * 16u + t]); }
  let sr = s0 + r0;
  if (P.splits > 1u) {  // partials as sdpa_decode writes them: row (bh, s), split wid.y
    let stride = P.dv + 2u;
    for (var i = 0u; i < 2u; i = i + 1u) {
      if (sr + i >= P.sq) { continue; }
      let base = ((bh * P.sq + sr + i) * P.splits + wid.y) * stride;
      let a = select(acc0, acc1, i == 1u);
      if (tx == 0u) {
        W[base] = m[i];
        W[base + 1u] = total[i];
      }
      for (var k = 0u; k < 4u; k = k + 1u) {
        if (tx + 16u * k < P.dv) { W[base + 2u + tx + 16u * k] = a[k]; }
      }
    }
    return;
  }
  if (sr < P.sq) {
    let oo = P.o_o + b * P.o_b + h * P.o_h + sr * P.o_s;
    for (var k = 0u; k < 4u; k = k + 1u) {
      if (tx + 16u * k < P.dv) { O[oo + tx + 16u * k] = O_T(finish_row(acc0[k], total.x)); }
    }
  }
  if (sr + 1u < P.sq) {
    let oo = P.o_o + b * P.o_b + h * P.o_h + (sr + 1u) * P.o_s;
    for (var k = 0u; k < 4u; k = k + 1u) {
      if (tx + 16u * k < P.dv) { O[oo + tx + 16u * k] = O_T(finish_row(acc1[k], total.y)); }
    }
  }
}
#endif
