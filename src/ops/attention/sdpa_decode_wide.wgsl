// SDPA decode route, one pass: one 256-wide workgroup per query row (b, h, s) over all its
// visible keys, which fit the score array (SMAX; attention.cpp picks it). Scores are taken in
// passes of 256 keys: L = 4 neighbouring invocations share a key row (each reads every fourth vec4
// of it, so a warp's load touches 8 rows instead of 32; one row per invocation took a 1B layer 33
// us on an H100 at 1,001 keys), R = 4 rows an invocation at a time, the partial dots added through
// workgroup memory; the scores stay there. One max and one sum over the workgroup; then invocation
// t adds value column block t % VC (four columns) over keys t / VC, t / VC + 256 / VC, ..., and
// the 256 / VC partial sums are added in eight interleaved groups, then the groups in order.
// No partials and no combine pass: the split route's two dispatches (sdpa_decode, then
// sdpa_decode_combine) are one. K and V are vec4 arrays: head dims, offsets and strides are
// multiples of 4 (attention.cpp checks them each run).
// WRITE_NEW (sdpa_with_kv_cache): K and V are the caches, bound read-write, and KN / VN the
// chunk's new rows [S, Hkv, D], which belong at cache rows start .. start + S - 1 (the cache's
// strides). Keys from start on are read from KN / VN, and the workgroup of each kv head's first
// q head and first row stores them into the caches: no workgroup of this dispatch reads the cache
// there, and the kv_cache_write dispatch before it is skipped.
// Q, K, V, M (mask; absent: a dummy), O, KN, VN and P come from the generated preamble.
//!include sdpa_params
//!include epilogue_store
//!include sdpa_bias

override MASK: u32 = 0u;
override SMAX: u32 = 2048u;  // keys a row may have
override VC: u32 = 16u;      // value vec4 columns a key takes: 16 (D_v <= 64) or 32 (<= 128)
const WG: u32 = 256u;
const L: u32 = 4u;           // invocations sharing a key row in a scoring pass
const R: u32 = 4u;           // key rows an invocation reads at a time (= L: a pass is WG keys)
const B: u32 = 16u;          // value loads in flight per invocation
const G: u32 = 8u;           // groups the value partial sums are first added in
//!include wg_reduce
var<workgroup> qs: array<vec4<f32>, 32>;
var<workgroup> ps: array<f32, SMAX>;      // scores, then probabilities
var<workgroup> vsum: array<vec4<f32>, WG>;  // a pass's partial dots (R per invocation), then value sums

#if WRITE_NEW
// The query row (qs) times the new key row at vec4 kb of KN, read whole by one invocation.
fn q_dot_kn(kb: u32, d4: u32) -> f32 {
  var t = 0.0;
  var j = 0u;
  for (; j + B <= d4; j = j + B) {
    var r: array<vec4<f32>, B>;
    for (var u = 0u; u < B; u = u + 1u) { r[u] = vec4<f32>(KN[kb + j + u]); }
    for (var u = 0u; u < B; u = u + 1u) { t = t + dot(qs[j + u], r[u]); }
  }
  for (; j < d4; j = j + 1u) { t = t + dot(qs[j], vec4<f32>(KN[kb + j])); }
  return t;
}
#endif

//!include entry_main
  let row = wid.x + wid.y * nwg.x;
  if (row >= P.rows) { return; }  // uniform: depends on the workgroup only
  let s = row % P.sq;
  let h = (row / P.sq) % P.h;
  let b = row / (P.sq * P.h);
  let qo = P.q_o + b * P.q_b + h * P.q_h + s * P.q_s;
  let k4 = (P.k_o + b * P.k_b + (h / P.group) * P.k_h) / 4u;
  let v4 = (P.v_o + b * P.v_b + (h / P.group) * P.v_h) / 4u;
  let ks = P.k_s / 4u;
  let vs = P.v_s / 4u;
  let d4 = P.d / 4u;
  let dv4 = P.dv / 4u;
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  if (lid < 32u) {
    var x = vec4<f32>(0.0);
    if (lid < d4) { x = vec4<f32>(f32(Q[qo + 4u * lid]), f32(Q[qo + 4u * lid + 1u]), f32(Q[qo + 4u * lid + 2u]), f32(Q[qo + 4u * lid + 3u])); }
    qs[lid] = x;
  }
  var n = P.skv;
  if (P.causal == 1u) { n = min(n, P.start + s + 1u); }
  var cached = n;  // keys read from K and V; WRITE_NEW: the rest from KN and VN
#if WRITE_NEW
  cached = min(n, P.start);
  if (h % P.group == 0u && s == 0u) {
    for (var i = lid; i < P.sq * d4; i = i + WG) {
      K[k4 + (P.start + i / d4) * ks + i % d4] = KN[k4 + (i / d4) * ks + i % d4];
    }
    for (var i = lid; i < P.sq * dv4; i = i + WG) {
      V[v4 + (P.start + i / dv4) * vs + i % dv4] = VN[v4 + (i / dv4) * vs + i % dv4];
    }
  }
#endif
  workgroupBarrier();
  var m_loc = neg_inf;
  let lane = lid % L;
  let g = lid / L;
  for (var c0 = 0u; c0 < cached; c0 = c0 + WG) {
    // Invocation (g, lane) reads vec4s lane, lane + L, ... of rows c0 + g + k * (WG / L).
    var part = vec4<f32>(0.0);
    for (var i0 = lane; i0 < d4; i0 = i0 + 4u * L) {
      var r: array<vec4<f32>, 16>;  // [row k][vec4 u]
      for (var k = 0u; k < R; k = k + 1u) {
        let c = c0 + g + k * (WG / L);
        for (var u = 0u; u < 4u; u = u + 1u) {
          let j = i0 + u * L;
          var x = vec4<f32>(0.0);
          if (c < cached && j < d4) { x = vec4<f32>(K[k4 + c * ks + j]); }
          r[4u * k + u] = x;
        }
      }
      for (var k = 0u; k < R; k = k + 1u) {
        for (var u = 0u; u < 4u; u = u + 1u) {
          let j = i0 + u * L;
          if (j < d4) { part[k] = part[k] + dot(qs[j], r[4u * k + u]); }
        }
      }
    }
    vsum[lid] = part;
    workgroupBarrier();
    // Key c0 + lid is row k = lid / (WG / L) of the invocations (lid % (WG / L), *).
    let c = c0 + lid;
    if (c < cached) {
      let at = (lid % (WG / L)) * L;
      let k = lid / (WG / L);
      var t = 0.0;
      for (var l = 0u; l < L; l = l + 1u) { t = t + vsum[at + l][k]; }
      let sc = t * P.scale + bias(b, h, s, c);
      ps[c] = sc;
      m_loc = max(m_loc, sc);
    }
    workgroupBarrier();  // vsum is rewritten by the next pass
  }
#if WRITE_NEW
  // The new keys (S of them at most), one invocation each.
  for (var t = lid; t < n - cached; t = t + WG) {
    let c = cached + t;
    let sc = q_dot_kn(k4 + t * ks, d4) * P.scale + bias(b, h, s, c);
    ps[c] = sc;
    m_loc = max(m_loc, sc);
  }
#endif
  let mx = wg_max(m_loc, lid);
  var l_loc = 0.0;
  for (var c = lid; c < n; c = c + WG) {
    var p = 0.0;
    if (mx != neg_inf) { p = exp(ps[c] - mx); }  // else every key is masked: nothing to add
    ps[c] = p;
    l_loc = l_loc + p;
  }
  let l = wg_sum(l_loc, lid);  // its barriers also publish ps
  let col = lid % VC;
  let parts = WG / VC;
  var acc = vec4<f32>(0.0);
  if (col < dv4) {
    let vb = v4 + col;
    var c = lid / VC;
    // Value rows loaded in batches before they are added (in key order); the last, partial batch
    // too, its loads guarded: as single loads it waited one round trip each (14 at 1,001 keys,
    // 21.7 against 20.1 us for the Llama-3.2-1B layer's attention on an H100), and guarding every
    // batch cost 1.4 to 2.8 us at 1,900 and 2,048 keys.
    for (; c + (B - 1u) * parts < cached; c = c + B * parts) {
      var r: array<vec4<f32>, B>;
      for (var u = 0u; u < B; u = u + 1u) { r[u] = vec4<f32>(V[vb + (c + u * parts) * vs]); }
      for (var u = 0u; u < B; u = u + 1u) { acc = acc + ps[c + u * parts] * r[u]; }
    }
    if (c < cached) {
      var r: array<vec4<f32>, B>;
      for (var u = 0u; u < B; u = u + 1u) {
        var x = vec4<f32>(0.0);
        if (c + u * parts < cached) { x = vec4<f32>(V[vb + (c + u * parts) * vs]); }
        r[u] = x;
      }
      for (var u = 0u; u < B; u = u + 1u) {
        if (c + u * parts < cached) { acc = acc + ps[c + u * parts] * r[u]; }
      }
    }
#if WRITE_NEW
    // The new keys: each key group takes every parts-th from `cached` on.
    for (c = cached + lid / VC; c < n; c = c + parts) {
      acc = acc + ps[c] * vec4<f32>(VN[vb + (c - cached) * vs]);
    }
#endif
  }
  vsum[lid] = acc;
  workgroupBarrier();
  var grp = vec4<f32>(0.0);
  if (lid < G * VC) {
    for (var i = lid / VC; i < parts; i = i + G) { grp = grp + vsum[i * VC + col]; }
  }
  workgroupBarrier();
  if (lid < G * VC) { vsum[lid] = grp; }
  workgroupBarrier();
  if (lid < VC && lid < dv4) {
    var tot = vsum[lid];
    for (var i = 1u; i < G; i = i + 1u) { tot = tot + vsum[i * VC + lid]; }
    let oo = P.o_o + b * P.o_b + h * P.o_h + s * P.o_s + 4u * lid;
    for (var e = 0u; e < 4u; e = e + 1u) { O[oo + e] = O_T(epilogue(finish_row(tot[e], l), oo + e)); }
  }
}
