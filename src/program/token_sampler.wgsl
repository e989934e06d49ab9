// Picks the next token from one row of logits, on the GPU (only the token id goes back to the
// host). Greedy: argmax, first index on ties (as torch.argmax), in two passes: ARGMAX_BLOCKS, one
// workgroup per block of BLOCK logits writing its (key, first index) to PART, then one workgroup
// over the P.blocks partials (one workgroup alone reading a 128K vocabulary waits on 500 loads in
// a row per invocation). Sampling, in one workgroup: weights
// exp((x - max) / temperature) restricted to the top_k largest (ties broken by lower index), then to
// the smallest top set whose mass reaches top_p, then the token where the running sum over the kept
// tokens in index order crosses u * total. Thresholds are found by bisection over an order-
// preserving u32 key of the logits, so no sort and no candidate buffer is needed.
struct Params { n: u32, offset: u32, sample: u32, top_k: u32, inv_temp: f32, top_p: f32, u: f32, blocks: u32 };

// L (logits, f32 or f16 storage, read as f32), OUT, PART and P come from the generated preamble.

const WG: u32 = 256u;
var<workgroup> su: array<u32, WG>;
var<workgroup> si: array<u32, WG>;
var<workgroup> sf: array<f32, WG>;
var<workgroup> red_u: u32;
var<workgroup> red_f: f32;

// Monotonic: a < b (as floats, NaN above +inf) iff key(a) < key(b).
fn key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x80000000u) != 0u) { return ~b; }
  return b | 0x80000000u;
}
fn unkey(k: u32) -> f32 {
  if ((k & 0x80000000u) != 0u) { return bitcast<f32>(k & 0x7fffffffu); }
  return bitcast<f32>(~k);
}
fn logit(i: u32) -> f32 { return f32(L[P.offset + i]); }

fn sum_u(v: u32, lid: u32) -> u32 {
  su[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { su[lid] = su[lid] + su[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { red_u = su[0]; }
  return workgroupUniformLoad(&red_u);
}
fn sum_f(v: f32, lid: u32) -> f32 {
  sf[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { sf[lid] = sf[lid] + sf[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { red_f = sf[0]; }
  return workgroupUniformLoad(&red_f);
}
fn max_u(v: u32, lid: u32) -> u32 {
  su[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { su[lid] = max(su[lid], su[lid + s]); }
    workgroupBarrier();
  }
  if (lid == 0u) { red_u = su[0]; }
  return workgroupUniformLoad(&red_u);
}

// The better of two (key, index) candidates: the larger key, the lower index on ties; index
// 0xffffffff is no candidate.
fn better(k: u32, i: u32, bk: u32, bi: u32) -> bool { return i != 0xffffffffu && (bi == 0xffffffffu || k > bk || (k == bk && i < bi)); }

// The workgroup's best of one candidate per invocation, left in su[0] / si[0].
fn best_of(k: u32, i: u32, lid: u32) {
  su[lid] = k;
  si[lid] = i;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s && better(su[lid + s], si[lid + s], su[lid], si[lid])) {
      su[lid] = su[lid + s];
      si[lid] = si[lid + s];
    }
    workgroupBarrier();
  }
}

#if ARGMAX_BLOCKS
override BLOCK: u32 = 2048u;  // a multiple of WG

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let begin = wid.x * BLOCK;
  let end = min(begin + BLOCK, P.n);
  var bk = 0u;
  var bi = 0xffffffffu;
  for (var i = begin + lid; i < end; i = i + WG) {
    let k = key(logit(i));
    if (better(k, i, bk, bi)) { bk = k; bi = i; }
  }
  best_of(bk, bi, lid);
  if (lid == 0u) {
    PART[2u * wid.x] = su[0];
    PART[2u * wid.x + 1u] = si[0];
  }
}
#else
// Kept after top-k: key above the threshold, or equal to it with an index below j_cut.
fn kept_k(i: u32, k: u32, t: u32, j_cut: u32) -> bool { return k > t || (k == t && i < j_cut); }

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  let n = P.n;
  if (P.sample == 0u) {
    // The blocks' candidates, in block order (each block's index is its first best).
    var bk = 0u;
    var bi = 0xffffffffu;
    for (var b = lid; b < P.blocks; b = b + WG) {
      if (better(PART[2u * b], PART[2u * b + 1u], bk, bi)) { bk = PART[2u * b]; bi = PART[2u * b + 1u]; }
    }
    best_of(bk, bi, lid);
    if (lid == 0u) { OUT[0] = si[0]; }
    return;
  }

  var mk = 0u;
  for (var i = lid; i < n; i = i + WG) { mk = max(mk, key(logit(i))); }
  let m = unkey(max_u(mk, lid));

  // top-k: the largest threshold t with count(key >= t) >= k, then the index cut among ties.
  var t = 0u;
  var j_cut = n;
  if (P.top_k > 0u && P.top_k < n) {
    var lo = 0u;
    var hi = 0xffffffffu;
    for (var it = 0u; it < 32u; it = it + 1u) {
      let mid = lo + (hi - lo) / 2u + (hi - lo) % 2u;
      var c = 0u;
      for (var i = lid; i < n; i = i + WG) { c = c + select(0u, 1u, key(logit(i)) >= mid); }
      if (sum_u(c, lid) >= P.top_k) { lo = mid; } else { hi = mid - 1u; }
      if (lo == hi) { break; }
    }
    t = lo;
    var gt = 0u;
    for (var i = lid; i < n; i = i + WG) { gt = gt + select(0u, 1u, key(logit(i)) > t); }
    let need = P.top_k - sum_u(gt, lid);
    // Smallest j with count(key == t && i < j) >= need.
    var jl = 0u;
    var jh = n;
    loop {
      if (jl >= jh) { break; }
      let mid = jl + (jh - jl) / 2u;
      var c = 0u;
      for (var i = lid; i < mid; i = i + WG) { c = c + select(0u, 1u, key(logit(i)) == t); }
      if (sum_u(c, lid) >= need) { jh = mid; } else { jl = mid + 1u; }
    }
    j_cut = jl;
  }

  // top-p: the largest threshold t2 whose kept mass reaches top_p of the top-k mass.
  var t2 = 0u;
  if (P.top_p < 1.0) {
    var z = 0.0;
    for (var i = lid; i < n; i = i + WG) {
      let x = logit(i);
      if (kept_k(i, key(x), t, j_cut)) { z = z + exp((x - m) * P.inv_temp); }
    }
    let goal = P.top_p * sum_f(z, lid);
    var lo = 0u;
    var hi = 0xffffffffu;
    for (var it = 0u; it < 32u; it = it + 1u) {
      let mid = lo + (hi - lo) / 2u + (hi - lo) % 2u;
      var s = 0.0;
      for (var i = lid; i < n; i = i + WG) {
        let x = logit(i);
        let k = key(x);
        if (kept_k(i, k, t, j_cut) && k >= mid) { s = s + exp((x - m) * P.inv_temp); }
      }
      if (sum_f(s, lid) >= goal) { lo = mid; } else { hi = mid - 1u; }
      if (lo == hi) { break; }
    }
    t2 = lo;
  }

  // The crossing token: each thread sums one contiguous chunk, thread 0 walks the chunk sums.
  let chunk = (n + WG - 1u) / WG;
  let begin = min(lid * chunk, n);
  let end = min(begin + chunk, n);
  var cs = 0.0;
  for (var i = begin; i < end; i = i + 1u) {
    let x = logit(i);
    let k = key(x);
    if (kept_k(i, k, t, j_cut) && k >= t2) { cs = cs + exp((x - m) * P.inv_temp); }
  }
  sf[lid] = cs;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0.0;
    for (var c = 0u; c < WG; c = c + 1u) { total = total + sf[c]; }
    let goal_mass = P.u * total;
    var acc = 0.0;
    var pick = 0xffffffffu;
    var last = 0xffffffffu;
    for (var c = 0u; c < WG && pick == 0xffffffffu; c = c + 1u) {
      if (acc + sf[c] <= goal_mass) { acc = acc + sf[c]; continue; }
      let b = min(c * chunk, n);
      let e = min(b + chunk, n);
      for (var i = b; i < e; i = i + 1u) {
        let x = logit(i);
        let k = key(x);
        if (kept_k(i, k, t, j_cut) && k >= t2) {
          last = i;
          acc = acc + exp((x - m) * P.inv_temp);
          if (acc > goal_mass) { pick = i; break; }
        }
      }
    }
    // Rounding can leave the target just above the summed mass: take the last kept token.
    if (pick == 0xffffffffu) {
      for (var i = 0u; i < n; i = i + 1u) {
        let k = key(logit(i));
        if (kept_k(i, k, t, j_cut) && k >= t2) { last = i; }
      }
      pick = last;
    }
    OUT[0] = pick;
  }
}
#endif
