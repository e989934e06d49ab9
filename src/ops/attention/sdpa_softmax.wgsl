// SDPA stage 2: in-place softmax of each attn row, one 256-wide workgroup per row (2D-folded
// grid). One read pass keeps a running (max, sum) per invocation with online rescaling, a
// workgroup tree merges them, and a second pass (an L2 hit) writes exp(x - max) / sum.
// A row whose entries are all -inf gives NaN, as PyTorch does (zeros under P.zero_masked).
// The float scratch A and P come from the generated preamble.
//!include sdpa_params

const WG: u32 = 256u;
var<workgroup> red_m: array<f32, 256>;
var<workgroup> red_s: array<f32, 256>;

// Merges two running (max, sum) pairs; a pair whose max is -inf holds nothing.
fn merge(m: f32, s: f32, m2: f32, s2: f32, neg_inf: f32) -> vec2<f32> {
  if (m2 == neg_inf) { return vec2<f32>(m, s); }
  if (m == neg_inf) { return vec2<f32>(m2, s2); }
  let mn = max(m, m2);
  return vec2<f32>(mn, s * exp(m - mn) + s2 * exp(m2 - mn));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= P.rows) { return; }  // workgroup-uniform
  let base = row * P.skv;
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  var ms = vec2<f32>(neg_inf, 0.0);
  var c = lid;
  for (; c + 3u * WG < P.skv; c = c + 4u * WG) {  // four loads in flight
    let x0 = f32(A[base + c]);
    let x1 = f32(A[base + c + WG]);
    let x2 = f32(A[base + c + 2u * WG]);
    let x3 = f32(A[base + c + 3u * WG]);
    ms = merge(ms.x, ms.y, x0, 1.0, neg_inf);
    ms = merge(ms.x, ms.y, x1, 1.0, neg_inf);
    ms = merge(ms.x, ms.y, x2, 1.0, neg_inf);
    ms = merge(ms.x, ms.y, x3, 1.0, neg_inf);
  }
  for (; c < P.skv; c = c + WG) { ms = merge(ms.x, ms.y, f32(A[base + c]), 1.0, neg_inf); }
  red_m[lid] = ms.x;
  red_s[lid] = ms.y;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k = k / 2u) {
    if (lid < k) {
      let r = merge(red_m[lid], red_s[lid], red_m[lid + k], red_s[lid + k], neg_inf);
      red_m[lid] = r.x;
      red_s[lid] = r.y;
    }
    workgroupBarrier();
  }
  let m = red_m[0];
  if (m == neg_inf && P.zero_masked == 1u) {  // no visible key: a zero row (safe softmax)
    for (var z = lid; z < P.skv; z = z + WG) { A[base + z] = A_T(0.0); }
    return;
  }
  let inv = 1.0 / red_s[0];
  var q = lid;
  for (; q + 3u * WG < P.skv; q = q + 4u * WG) {  // four loads before four stores
    let x0 = f32(A[base + q]);
    let x1 = f32(A[base + q + WG]);
    let x2 = f32(A[base + q + 2u * WG]);
    let x3 = f32(A[base + q + 3u * WG]);
    A[base + q] = A_T(exp(x0 - m) * inv);
    A[base + q + WG] = A_T(exp(x1 - m) * inv);
    A[base + q + 2u * WG] = A_T(exp(x2 - m) * inv);
    A[base + q + 3u * WG] = A_T(exp(x3 - m) * inv);
  }
  for (; q < P.skv; q = q + WG) { A[base + q] = A_T(exp(f32(A[base + q]) - m) * inv); }
}
