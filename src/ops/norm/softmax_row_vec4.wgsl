// Fast softmax / log_softmax over contiguous rows (inner == 1) whose length divides by 4: one
// 256-wide workgroup per row (2D-folded grid), vec4 loads (computed in f32). One read pass keeps a
// running (max, sum) per invocation with online rescaling; a workgroup tree merges the pairs; a
// second pass (an L2 hit for rows of a few KB) writes the result. NaN propagates like torch.max;
// an all -inf row gives NaN as PyTorch does.
//!include norm_row_params


override MODE: u32 = 0u;  // 0 softmax, 1 log_softmax
const WG: u32 = 256u;

var<workgroup> red_m: array<f32, 256>;
var<workgroup> red_s: array<f32, 256>;

//!include float_bits

// Merges running (max, sum) pairs; a pair whose max is -inf holds nothing (sum 0).
fn merge(m: f32, s: f32, m2: f32, s2: f32, neg_inf: f32) -> vec2<f32> {
  if (m2 == neg_inf) { return vec2<f32>(m, s); }
  if (m == neg_inf) { return vec2<f32>(m2, s2); }
  let mn = nmax(m, m2);
  return vec2<f32>(mn, s * exp(m - mn) + s2 * exp(m2 - mn));
}

fn finish(v: vec4<f32>, m: vec4<f32>, inv: f32, ls: vec4<f32>) -> vec4<f32> {
  if (MODE == 0u) { return exp(v - m) * inv; }
  return v - m - ls;
}

// Folds one vec4 into a running (max, sum).
fn accum(ms: vec2<f32>, v: vec4<f32>, neg_inf: f32) -> vec2<f32> {
  let mv = nmax(nmax(v.x, v.y), nmax(v.z, v.w));
  var sv = 0.0;
  if (mv != neg_inf) {
    let e = exp(v - vec4<f32>(mv));
    sv = e.x + e.y + e.z + e.w;
  }
  return merge(ms.x, ms.y, mv, sv, neg_inf);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= P.rows) { return; }  // workgroup-uniform
  var nb = 0xff800000u;
  let neg_inf = bitcast<f32>(nb);
  let n4 = P.len / 4u;
  let base = r * n4;
  var ms = vec2<f32>(neg_inf, 0.0);
  var k = lid;
  // Four vec4 loads in flight per step, then the tail one at a time.
  for (; k + 3u * WG < n4; k = k + 4u * WG) {
    let v0 = vec4<f32>(X[base + k]);
    let v1 = vec4<f32>(X[base + k + WG]);
    let v2 = vec4<f32>(X[base + k + 2u * WG]);
    let v3 = vec4<f32>(X[base + k + 3u * WG]);
    ms = accum(ms, v0, neg_inf);
    ms = accum(ms, v1, neg_inf);
    ms = accum(ms, v2, neg_inf);
    ms = accum(ms, v3, neg_inf);
  }
  for (; k < n4; k = k + WG) { ms = accum(ms, vec4<f32>(X[base + k]), neg_inf); }
  red_m[lid] = ms.x;
  red_s[lid] = ms.y;
  workgroupBarrier();
  for (var h = WG / 2u; h > 0u; h = h / 2u) {
    if (lid < h) {
      let m2 = merge(red_m[lid], red_s[lid], red_m[lid + h], red_s[lid + h], neg_inf);
      red_m[lid] = m2.x;
      red_s[lid] = m2.y;
    }
    workgroupBarrier();
  }
  let m = vec4<f32>(red_m[0]);
  let s = red_s[0];
  // Output pass: four loads before four stores (X and O may alias as far as the compiler knows).
  let inv = 1.0 / s;
  let ls = vec4<f32>(log(s));
  var q = lid;
  for (; q + 3u * WG < n4; q = q + 4u * WG) {
    let v0 = vec4<f32>(X[base + q]);
    let v1 = vec4<f32>(X[base + q + WG]);
    let v2 = vec4<f32>(X[base + q + 2u * WG]);
    let v3 = vec4<f32>(X[base + q + 3u * WG]);
    O[base + q] = vec4<O_T>(finish(v0, m, inv, ls));
    O[base + q + WG] = vec4<O_T>(finish(v1, m, inv, ls));
    O[base + q + 2u * WG] = vec4<O_T>(finish(v2, m, inv, ls));
    O[base + q + 3u * WG] = vec4<O_T>(finish(v3, m, inv, ls));
  }
  for (; q < n4; q = q + WG) { O[base + q] = vec4<O_T>(finish(vec4<f32>(X[base + q]), m, inv, ls)); }
}
