// Picks the next token from one row of logits, on the GPU (only the token id goes back to the
// host). Greedy: argmax, first index on ties (as torch.argmax). Sampling: weights
// exp((x - max) / temperature) restricted to the top_k largest (ties broken by lower index), then to
// the smallest top set whose mass reaches top_p, then the token where the running sum over the kept
// tokens in index order crosses u * total. Thresholds are over an order-preserving u32 key of the
// logits: by bisection over the logits, or by binary searches over sorted blocks (PICK_MASS).
// The pick runs in one workgroup (main, below). A 128K vocabulary read by one workgroup waits on
// 500 loads in a row per invocation, and sampling's bisections read it about 80 times, so a first
// pass over blocks of BLOCK logits, one workgroup each, shrinks what the pick reads (P.blocks > 0):
// - greedy (ARGMAX_BLOCKS): each block's best (key, first index) into PART; the pick takes the
//   best of the P.blocks candidates.
// - top_k of at most 256 (TOPK_BLOCKS): each block's top_k (key descending, lower index first),
//   in index order, as (value bits, index) pairs at PART[2 * (block * top_k + j)]; the pick runs
//   over those P.n = blocks * top_k candidates as if they were the logits. The global top_k are
//   among them (each has fewer than top_k tokens before it, so fewer in its block), they keep
//   index order, and a short last block's padding has key 0, which no threshold keeps.
// - top-p or temperature without top-k, or a top_k above 256 (MASS_BLOCKS): each block's largest
//   logit bm and its mass sum exp((x - bm) / T) at PART[2 * block]; for top-k or top-p also its
//   keys sorted descending, each with the running mass down to it (the block's own sum at its
//   last), after the blocks' pairs. The pick (PICK_MASS) finds the top-k threshold (by counts) and
//   then the nucleus threshold (by masses) over the sorted blocks four key bits a round (each
//   block's count above a threshold by binary search, the amounts summed in one order for every
//   threshold), then the block where the running kept mass crosses u times the whole, then the
//   token inside that block.
struct Params { n: u32, offset: u32, sample: u32, top_k: u32, inv_temp: f32, top_p: f32, u: f32, blocks: u32 };

// L (logits, f32 or f16 storage, read as f32), OUT (the pick's), PART and P come from the
// generated preamble.

const WG: u32 = 256u;
override BLOCK: u32 = 2048u;  // logits a first-pass workgroup reads; a multiple of WG
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
// The pick reads a top-k first pass's candidates as its logits.
var<private> from_cand: bool;
fn logit(i: u32) -> f32 {
#if !ARGMAX_BLOCKS && !TOPK_BLOCKS && !MASS_BLOCKS
  if (from_cand) { return bitcast<f32>(PART[2u * i]); }
#endif
  return f32(L[P.offset + i]);
}

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

// Inclusive prefix sum over the workgroup's invocations (in sf). Counts go through it as floats:
// exact, being at most a block's 2048.
fn scan(v: f32, lid: u32) -> f32 {
  sf[lid] = v;
  workgroupBarrier();
  for (var s = 1u; s < WG; s = s * 2u) {
    var t = sf[lid];
    if (lid >= s) { t = t + sf[lid - s]; }
    workgroupBarrier();
    sf[lid] = t;
    workgroupBarrier();
  }
  let r = sf[lid];
  workgroupBarrier();  // sf is reused by the next scan
  return r;
}
fn scan_u(v: u32, lid: u32) -> u32 { return u32(scan(f32(v), lid)); }

#if ARGMAX_BLOCKS

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
#elif TOPK_BLOCKS
var<workgroup> keys: array<u32, BLOCK>;
var<workgroup> hist: array<atomic<u32>, WG>;  // one bin per 8-bit digit value
var<workgroup> pick_bin: u32;
var<workgroup> pick_above: u32;


// In the block's top k: above the k-th largest key t, or one of the first `need` ties at t (`tie`
// ties at lower indices).
fn in_top(kv: u32, t: u32, tie: u32, need: u32) -> bool { return kv > t || (kv == t && tie < need); }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let begin = wid.x * BLOCK;
  let len = min(BLOCK, P.n - begin);
  let k = min(P.top_k, len);
  let per = BLOCK / WG;  // invocation lid holds the contiguous logits [lid * per, (lid + 1) * per)
  let i0 = lid * per;
  for (var j = 0u; j < per; j = j + 1u) {
    if (i0 + j < len) { keys[i0 + j] = key(logit(begin + i0 + j)); }
  }
  // Radix select of the k-th largest key t, eight bits at a time from the top: the digit's bin
  // where the count from the top reaches the rank still wanted; `need` ends as the ties at t kept.
  var t = 0u;
  var need = k;
  for (var d = 0u; d < 4u; d = d + 1u) {
    let shift = 24u - 8u * d;
    atomicStore(&hist[lid], 0u);
    workgroupBarrier();
    for (var j = 0u; j < per; j = j + 1u) {
      let i = i0 + j;
      if (i < len && (d == 0u || (keys[i] >> (shift + 8u)) == (t >> (shift + 8u)))) {
        atomicAdd(&hist[(keys[i] >> shift) & 255u], 1u);
      }
    }
    workgroupBarrier();
    let upto = scan_u(atomicLoad(&hist[255u - lid]), lid);  // keys in bins 255 - lid .. 255
    let above = upto - atomicLoad(&hist[255u - lid]);
    if (above < need && upto >= need) {
      pick_bin = 255u - lid;
      pick_above = above;
    }
    t = t | (workgroupUniformLoad(&pick_bin) << shift);
    need = need - workgroupUniformLoad(&pick_above);
  }
  // This invocation's kept logits (those above t, and its ties while fewer than `need` come
  // before them), in index order after those of lower invocations.
  var above_t = 0u;
  var ties = 0u;
  for (var j = 0u; j < per; j = j + 1u) {
    if (i0 + j < len && keys[i0 + j] > t) { above_t = above_t + 1u; }
    if (i0 + j < len && keys[i0 + j] == t) { ties = ties + 1u; }
  }
  let tie0 = scan_u(ties, lid) - ties;  // ties at lower indices
  let kept = above_t + min(ties, need - min(need, tie0));
  var at = wid.x * P.top_k + scan_u(kept, lid) - kept;
  var tie = tie0;
  for (var j = 0u; j < per; j = j + 1u) {
    let i = i0 + j;
    if (i < len && in_top(keys[i], t, tie, need)) {
      PART[2u * at] = bitcast<u32>(logit(begin + i));
      PART[2u * at + 1u] = begin + i;
      at = at + 1u;
    }
    if (i < len && keys[i] == t) { tie = tie + 1u; }
  }
  for (var j = k + lid; j < P.top_k; j = j + WG) {  // a short last block: key 0
    PART[2u * (wid.x * P.top_k + j)] = 0xffffffffu;
    PART[2u * (wid.x * P.top_k + j) + 1u] = 0u;
  }
}
#elif MASS_BLOCKS
var<workgroup> keys: array<u32, BLOCK>;

// A logit's mass relative to its block's largest bm: 0 for -inf (masked), also where bm is -inf.
fn mass_of(k: u32, bm: f32) -> f32 {
  if (k <= 0x007fffffu) { return 0.0; }  // key(-inf) and below
  return exp((unkey(k) - bm) * P.inv_temp);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let begin = wid.x * BLOCK;
  let len = min(BLOCK, P.n - begin);
  var mk = 0u;
  for (var i = lid; i < BLOCK; i = i + WG) {
    var k = 0u;  // padding: below every logit's key, sorted last
    if (i < len) { k = key(logit(begin + i)); }
    keys[i] = k;
    mk = max(mk, k);
  }
  let bm = unkey(max_u(mk, lid));
  if (P.top_p >= 1.0 && P.top_k == 0u) {
    var mass = 0.0;
    for (var i = lid; i < len; i = i + WG) { mass = mass + mass_of(keys[i], bm); }
    let total = sum_f(mass, lid);
    if (lid == 0u) {
      PART[2u * wid.x] = bitcast<u32>(bm);
      PART[2u * wid.x + 1u] = bitcast<u32>(total);
    }
    return;
  }
  // Bitonic sort, descending.
  for (var k = 2u; k <= BLOCK; k = k * 2u) {
    for (var j = k / 2u; j > 0u; j = j / 2u) {
      for (var t = lid; t < BLOCK / 2u; t = t + WG) {
        let i = 2u * j * (t / j) + t % j;
        let a = keys[i];
        let b = keys[i + j];
        if ((a < b) == ((i & k) == 0u)) {
          keys[i] = b;
          keys[i + j] = a;
        }
      }
      workgroupBarrier();
    }
  }
  // The running mass down the sorted keys: each invocation's contiguous run, after the runs of
  // lower invocations.
  let per = BLOCK / WG;
  let j0 = lid * per;
  var own = 0.0;
  for (var j = j0; j < j0 + per && j < len; j = j + 1u) { own = own + mass_of(keys[j], bm); }
  var run = scan(own, lid) - own;
  let sk = 2u * P.blocks + wid.x * BLOCK;
  let sp = sk + P.blocks * BLOCK;
  for (var j = j0; j < j0 + per; j = j + 1u) {
    if (j < len) { run = run + mass_of(keys[j], bm); }
    PART[sk + j] = keys[j];
    PART[sp + j] = bitcast<u32>(run);
    if (j + 1u == len) { PART[2u * wid.x + 1u] = bitcast<u32>(run); }
  }
  if (lid == 0u) { PART[2u * wid.x] = bitcast<u32>(bm); }
}
#elif PICK_MASS
// A MASS_BLOCKS pass's results: block b's largest logit, its mass relative to that, its length,
// and (top-p) its c largest keys' mass, from its sorted keys (key j: sorted_key).
fn block_max(b: u32) -> f32 { return bitcast<f32>(PART[2u * b]); }
fn block_total(b: u32) -> f32 { return bitcast<f32>(PART[2u * b + 1u]); }
fn block_len(b: u32) -> u32 { return min(BLOCK, P.n - b * BLOCK); }
fn sorted_key(b: u32, j: u32) -> u32 { return PART[2u * P.blocks + b * BLOCK + j]; }
fn sorted_mass(b: u32, c: u32) -> f32 {
  if (c == 0u) { return 0.0; }
  return bitcast<f32>(PART[2u * P.blocks + (P.blocks + b) * BLOCK + c - 1u]);
}

// The nucleus search's state: per block the count of keys at or above the current threshold
// (cnt_lo) and above its digit's range (cnt_hi); per (digit, block) a candidate's count and
// mass; per digit the mass summed over the blocks.
override MAXB: u32 = 64u;  // blocks the search holds: the vocabulary's
const DIGITS: u32 = 16u;
var<workgroup> cnt_lo: array<u32, MAXB>;
var<workgroup> cnt_hi: array<u32, MAXB>;
var<workgroup> dcnt: array<u32, DIGITS * MAXB>;
var<workgroup> dmass: array<f32, DIGITS * MAXB>;
var<workgroup> dsum: array<f32, DIGITS>;

// dsum[d] = sum over blocks of dmass[d][b], added in the same order for every d, so that counts
// that fall with d give sums that fall with d.
fn sum_digits(lid: u32) {
  workgroupBarrier();
  let d = lid / DIGITS;
  var s = 0.0;
  for (var b = lid % DIGITS; b < P.blocks; b = b + DIGITS) { s = s + dmass[d * MAXB + b]; }
  sf[lid] = s;
  workgroupBarrier();
  if (lid < DIGITS) {
    var t = 0.0;
    for (var q = 0u; q < DIGITS; q = q + 1u) { t = t + sf[lid * DIGITS + q]; }
    dsum[lid] = t;
  }
  workgroupBarrier();
}

// Searches per invocation a round (DIGITS x MAXB pairs over WG invocations), run side by side.
const SEARCHES: u32 = 4u;

// The largest key threshold whose kept amount over the blocks reaches `goal`: the count of keys
// at or above it (by_count), or their mass relative to gm. Four key bits a round from the top;
// each round keeps the largest digit that still reaches the goal (digit 0, the threshold so far,
// does: it was the last round's choice). Each block's keys are searched within
// [cnt_hi[b], cnt_lo[b]], which the rounds narrow: at the end cnt_lo[b] counts its keys at or
// above the threshold and cnt_hi[b] those above it. Leaves the kept amount in red_f.
fn search(lid: u32, by_count: bool, goal: f32, gm: f32) -> u32 {
  var t = 0u;
  let pairs = DIGITS * P.blocks;
  for (var r = 0u; r < 8u; r = r + 1u) {
    let shift = 28u - 4u * r;
    for (var q0 = 0u; q0 < pairs; q0 = q0 + SEARCHES * WG) {
      var lo: array<u32, SEARCHES>;
      var hi: array<u32, SEARCHES>;
      var th: array<u32, SEARCHES>;
      for (var s = 0u; s < SEARCHES; s = s + 1u) {
        let q = min(q0 + s * WG + lid, pairs - 1u);
        lo[s] = cnt_hi[q / DIGITS];
        hi[s] = cnt_lo[q / DIGITS];
        th[s] = t | ((q % DIGITS) << shift);
      }
      // The count of keys at or above th: the first sorted position in [lo, hi] below it. (A loop
      // the compiler cannot unroll: unrolled, this shader took a minute to compile on lavapipe.)
      loop {
        var busy = false;
        for (var s = 0u; s < SEARCHES; s = s + 1u) {
          if (lo[s] < hi[s]) {
            busy = true;
            let q = min(q0 + s * WG + lid, pairs - 1u);
            let mid = (lo[s] + hi[s]) / 2u;
            if (sorted_key(q / DIGITS, mid) >= th[s]) { lo[s] = mid + 1u; } else { hi[s] = mid; }
          }
        }
        if (!busy) { break; }
      }
      for (var s = 0u; s < SEARCHES; s = s + 1u) {
        let q = q0 + s * WG + lid;
        if (q < pairs) {
          let b = q / DIGITS;
          let at = (q % DIGITS) * MAXB + b;
          dcnt[at] = lo[s];
          if (by_count) {
            dmass[at] = f32(lo[s]);  // exact: counts below 2^24
          } else {
            dmass[at] = exp((block_max(b) - gm) * P.inv_temp) * sorted_mass(b, lo[s]);
          }
        }
      }
    }
    sum_digits(lid);
    if (lid == 0u) {
      var best = 0u;
      for (var d = 1u; d < DIGITS; d = d + 1u) {
        if (dsum[d] >= goal) { best = d; }
      }
      red_u = best;
      red_f = dsum[best];
    }
    let best = workgroupUniformLoad(&red_u);
    for (var b = lid; b < P.blocks; b = b + WG) {
      if (best + 1u < DIGITS) { cnt_hi[b] = dcnt[(best + 1u) * MAXB + b]; }
      cnt_lo[b] = dcnt[best * MAXB + b];
    }
    t = t | (best << shift);
    workgroupBarrier();
  }
  return t;
}

// Every block's kept mass (relative to gm) into dmass[b], summed into dsum[0]: its first
// cnt_lo[b] sorted keys (sorted), or all of it.
fn kept_masses(lid: u32, gm: f32, sorted: bool) {
  for (var b = lid; b < P.blocks; b = b + WG) {
    var w = block_total(b);
    if (sorted) { w = sorted_mass(b, cnt_lo[b]); }
    dmass[b] = exp((block_max(b) - gm) * P.inv_temp) * w;
    for (var d = 1u; d < DIGITS; d = d + 1u) { dmass[d * MAXB + b] = 0.0; }
  }
  sum_digits(lid);
}

// The picked block's kept test: at or above the nucleus threshold, and inside the top-k (above tk,
// or one of the block's first s_ties ties at tk; `rank`: the ties at tk before it in the block).
var<private> s_t2: u32;
var<private> s_tk: u32;
var<private> s_ties: u32;
fn kept_in_block(k: u32, rank: u32) -> bool {
  if (k < s_t2) { return false; }
  if (P.top_k == 0u) { return true; }
  return k > s_tk || (k == s_tk && rank < s_ties);
}

// Sampling without top-k, or with a top-k above a TOPK_BLOCKS pass's, over a MASS_BLOCKS pass: top-k's threshold tk
// and its ties kept by index, then the nucleus threshold t2 among those (top-p), then the block
// where the running kept mass crosses u times the kept whole, then the token inside that block.
var<workgroup> ties_kept: array<u32, MAXB>;  // top-k: the ties at tk each block keeps
fn pick_over_blocks(lid: u32) {
  var bk = 0u;
  for (var b = lid; b < P.blocks; b = b + WG) { bk = max(bk, key(block_max(b))); }
  let gm = unkey(max_u(bk, lid));
  let sorted = P.top_p < 1.0 || P.top_k > 0u;
  for (var b = lid; b < P.blocks; b = b + WG) {
    cnt_lo[b] = block_len(b);
    cnt_hi[b] = 0u;
    ties_kept[b] = 0u;
  }
  workgroupBarrier();
  var tk = 0u;
  if (P.top_k > 0u) {
    tk = search(lid, true, f32(P.top_k), gm);
    // Keys above tk are kept; of the ties at tk, the first ones by index up to k in all. Each
    // block's kept keys are then the first cnt_hi + ties_kept of its sorted keys.
    var above = 0u;
    for (var b = lid; b < P.blocks; b = b + WG) { above = above + cnt_hi[b]; }
    let need = P.top_k - sum_u(above, lid);
    if (lid == 0u) {
      var left = need;
      for (var b = 0u; b < P.blocks; b = b + 1u) {
        let keep = min(left, cnt_lo[b] - cnt_hi[b]);
        ties_kept[b] = keep;
        left = left - keep;
      }
    }
    workgroupBarrier();
    for (var b = lid; b < P.blocks; b = b + WG) {
      cnt_lo[b] = cnt_hi[b] + ties_kept[b];
      cnt_hi[b] = 0u;
    }
    workgroupBarrier();
  }
  kept_masses(lid, gm, sorted);
  if (lid == 0u) { red_f = dsum[0]; }
  var kept = workgroupUniformLoad(&red_f);  // the kept mass (all, or top-k's)
  var t2 = 0u;
  if (P.top_p < 1.0) {
    // Over the top-k's keys where there is a top-k: thresholds at or below tk keep all of them,
    // so t2 >= tk.
    t2 = search(lid, false, P.top_p * kept, gm);
    kept = workgroupUniformLoad(&red_f);
    kept_masses(lid, gm, true);  // dmass[b]: each block's mass above t2
  }
  let goal = P.u * kept;
  if (lid == 0u) {
    var acc = 0.0;
    var hit = 0xffffffffu;
    var last = 0u;
    for (var b = 0u; b < P.blocks; b = b + 1u) {
      let w = dmass[b];
      if (w > 0.0) { last = b; }
      if (acc + w > goal) { hit = b; break; }
      acc = acc + w;
    }
    // Rounding can leave the target just above the blocks' summed mass: the last block that keeps any.
    if (hit == 0xffffffffu) {
      hit = last;
      acc = acc - dmass[last];
    }
    red_u = hit;
    red_f = goal - acc;
  }
  let hit = workgroupUniformLoad(&red_u);
  let rest = workgroupUniformLoad(&red_f);
  s_t2 = t2;
  s_tk = tk;
  s_ties = ties_kept[hit];
  // Inside the block, over its kept logits: each invocation holds BLOCK / WG of them (and counts
  // its ties at tk, ranked by index), invocation 0 walks the invocations' sums.
  let per = BLOCK / WG;
  let b0 = hit * BLOCK;
  let b1 = b0 + block_len(hit);
  let i0 = min(b0 + lid * per, b1);
  let i1 = min(i0 + per, b1);
  var ties = 0u;
  for (var i = i0; i < i1; i = i + 1u) { ties = ties + select(0u, 1u, key(f32(L[P.offset + i])) == tk); }
  var rank = scan_u(ties, lid) - ties;  // ties at lower indices
  si[lid] = rank;
  var cs = 0.0;
  for (var i = i0; i < i1; i = i + 1u) {
    let x = f32(L[P.offset + i]);
    if (kept_in_block(key(x), rank)) { cs = cs + exp((x - gm) * P.inv_temp); }
    rank = rank + select(0u, 1u, key(x) == tk);
  }
  sf[lid] = cs;
  workgroupBarrier();
  if (lid == 0u) {
    var acc = 0.0;
    var pick = 0xffffffffu;
    var last = 0xffffffffu;
    for (var c = 0u; c < WG && pick == 0xffffffffu; c = c + 1u) {
      if (acc + sf[c] <= rest) {
        acc = acc + sf[c];
        continue;
      }
      let cb = min(b0 + c * per, b1);
      let ce = min(cb + per, b1);
      var r = si[c];
      for (var i = cb; i < ce; i = i + 1u) {
        let x = f32(L[P.offset + i]);
        let k = key(x);
        let keep = kept_in_block(k, r);
        r = r + select(0u, 1u, k == tk);
        if (!keep) { continue; }
        last = i;
        acc = acc + exp((x - gm) * P.inv_temp);
        if (acc > rest) { pick = i; break; }
      }
    }
    // Rounding can leave the target just above the block's kept mass: its last kept token.
    if (pick == 0xffffffffu) {
      var r = 0u;
      for (var i = b0; i < b1; i = i + 1u) {
        let k = key(f32(L[P.offset + i]));
        if (kept_in_block(k, r)) { pick = i; }
        r = r + select(0u, 1u, k == tk);
      }
    }
    if (pick == 0xffffffffu) { pick = max(last, b0); }
    OUT[0] = pick;
    OUT[1] = 1u;
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) { pick_over_blocks(lid); }
#else
// Kept after top-k: key above the threshold, or equal to it with an index below j_cut.
fn kept_k(i: u32, k: u32, t: u32, j_cut: u32) -> bool { return k > t || (k == t && i < j_cut); }

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  var n = P.n;
  from_cand = P.sample == 1u && P.blocks > 0u;
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
    if (from_cand) { pick = PART[2u * pick + 1u]; }
    OUT[0] = pick;
    OUT[1] = 0u;  // which way it went, for tests: not over a MASS_BLOCKS pass
  }
}
#endif
