// SDPA decode route, pass 1 (split-K): few query rows over a long cache. Workgroup (split, row)
// takes keys [split * chunk, (split + 1) * chunk) of one query row (b, h, s), 64 at a time:
// invocation t scores key t against the query row held in workgroup memory, the tile's max and
// sum are reduced over the workgroup, the running (max, sum) is rescaled online, and invocation t
// accumulates value columns t and t + 64 (coalesced V reads). It writes its split's (max, sum,
// unnormalised value sums) to the scratch W, merged by sdpa_decode_combine; with one split it
// normalises and writes O itself (one dispatch). Head dims up to 128. With SUBGROUPS the
// reductions use subgroup operations; without, a tree in workgroup memory.
// Q, K, V, M (mask; absent: a dummy), O, the float scratch W and P come from the generated preamble.
//!include sdpa_params
//!include epilogue_store
//!include sdpa_bias

override MASK: u32 = 0u;
const WG: u32 = 64u;
const DMAX: u32 = 128u;
const VPT: u32 = DMAX / WG;  // value columns per invocation
//!include wg_reduce
var<workgroup> qs: array<f32, DMAX>;
var<workgroup> ps: array<f32, WG>;   // the tile's probabilities

//!include entry_main
  let split = wid.x;
  let row = wid.y;
  let s = row % P.sq;
  let h = (row / P.sq) % P.h;
  let b = row / (P.sq * P.h);
  let qo = P.q_o + b * P.q_b + h * P.q_h + s * P.q_s;
  let ko = P.k_o + b * P.k_b + (h / P.group) * P.k_h;
  let vo = P.v_o + b * P.v_b + (h / P.group) * P.v_h;
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  for (var d = lid; d < DMAX; d = d + WG) {
    var x = 0.0;
    if (d < P.d) { x = f32(Q[qo + d]); }
    qs[d] = x;
  }
  var kv_end = P.skv;
  if (P.causal == 1u) { kv_end = min(kv_end, P.start + s + 1u); }
  let c_begin = split * P.chunk;
  let c_end = min(kv_end, c_begin + P.chunk);
  workgroupBarrier();
  var m = neg_inf;
  var lsum = 0.0;
  var acc: array<f32, VPT>;
  for (var t0 = c_begin; t0 < c_end; t0 = t0 + WG) {
    let c = t0 + lid;
    var sc = neg_inf;
    if (c < c_end) {
      var dot = 0.0;
      let kb = ko + c * P.k_s;
      var d = 0u;
      // Many loads in flight (each invocation reads its own key row: one L2 round trip per
      // batch), added in order: the same sums whatever the batch.
      for (; d + 32u <= P.d; d = d + 32u) {
        var r: array<f32, 32>;
        for (var u = 0u; u < 32u; u = u + 1u) { r[u] = f32(K[kb + d + u]); }
        for (var u = 0u; u < 32u; u = u + 1u) { dot = dot + qs[d + u] * r[u]; }
      }
      for (; d + 8u <= P.d; d = d + 8u) {
        var r: array<f32, 8>;
        for (var u = 0u; u < 8u; u = u + 1u) { r[u] = f32(K[kb + d + u]); }
        for (var u = 0u; u < 8u; u = u + 1u) { dot = dot + qs[d + u] * r[u]; }
      }
      for (; d < P.d; d = d + 1u) { dot = dot + qs[d] * f32(K[kb + d]); }
      sc = dot * P.scale + bias(b, h, s, c);
    }
    let mn = max(m, wg_max(sc, lid));
    var p = 0.0;
    var alpha = 1.0;
    if (mn != neg_inf) {  // else every key so far is masked: nothing to add
      p = exp(sc - mn);
      alpha = exp(m - mn);  // 0 while m is -inf
    }
    ps[lid] = p;
    lsum = lsum * alpha + wg_sum(p, lid);  // its barriers also publish ps
    let n = min(WG, c_end - t0);
    for (var k = 0u; k < VPT; k = k + 1u) {
      let dv = lid + WG * k;
      if (dv < P.dv) {
        var a = acc[k] * alpha;
        // Rows of V loaded in batches before they are added (in the same order): the loads are
        // independent, so 32 are in flight instead of one L2 round trip per key (H200: 52 us per
        // layer at 1001 keys with one, 30 with eight).
        let vb = vo + t0 * P.v_s + dv;
        var j = 0u;
        for (; j + 32u <= n; j = j + 32u) {
          var r: array<f32, 32>;
          for (var u = 0u; u < 32u; u = u + 1u) { r[u] = f32(V[vb + (j + u) * P.v_s]); }
          for (var u = 0u; u < 32u; u = u + 1u) { a = a + ps[j + u] * r[u]; }
        }
        for (; j + 8u <= n; j = j + 8u) {
          var r: array<f32, 8>;
          for (var u = 0u; u < 8u; u = u + 1u) { r[u] = f32(V[vb + (j + u) * P.v_s]); }
          for (var u = 0u; u < 8u; u = u + 1u) { a = a + ps[j + u] * r[u]; }
        }
        for (; j < n; j = j + 1u) { a = a + ps[j] * f32(V[vb + j * P.v_s]); }
        acc[k] = a;
      }
    }
    m = mn;
    workgroupBarrier();  // ps is rewritten by the next tile
  }
  if (P.splits == 1u) {
    let oo = P.o_o + b * P.o_b + h * P.o_h + s * P.o_s;
    for (var k = 0u; k < VPT; k = k + 1u) {
      let dv = lid + WG * k;
      if (dv < P.dv) { O[oo + dv] = O_T(epilogue(finish_row(acc[k], lsum), oo + dv)); }
    }
    return;
  }
  let base = (row * P.splits + split) * (P.dv + 2u);
  if (lid == 0u) {
    W[base] = W_T(m);
    W[base + 1u] = W_T(lsum);
  }
  for (var k = 0u; k < VPT; k = k + 1u) {
    let dv = lid + WG * k;
    if (dv < P.dv) { W[base + 2u + dv] = W_T(acc[k]); }
  }
}
