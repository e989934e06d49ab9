// Fast softmax / log_softmax over contiguous rows (inner == 1) whose length divides by 4: one
// 256-wide workgroup per row (2D-folded grid), array<vec4<f32>> loads. One read pass keeps a
// running (max, sum) per invocation with online rescaling; a workgroup tree merges the pairs; a
// second pass (an L2 hit for rows of a few KB) writes the result. NaN propagates like torch.max;
// an all -inf row gives NaN as PyTorch does. Uniform layout shared with norm_row.wgsl.
struct Params { rows: u32, len: u32, inner: u32, groups: u32, hw: u32, cpg: u32, eps: f32, pad: u32 };

@group(0) @binding(0) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> P: Params;

override MODE: u32 = 0u;  // 0 softmax, 1 log_softmax
const WG: u32 = 256u;

var<workgroup> red_m: array<f32, 256>;
var<workgroup> red_s: array<f32, 256>;

fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn nmax(a: f32, b: f32) -> f32 {
  if (is_nan(a)) { return a; }
  if (is_nan(b)) { return b; }
  return max(a, b);
}

// Merges running (max, sum) pairs; a pair whose max is -inf holds nothing (sum 0).
fn merge(m: f32, s: f32, m2: f32, s2: f32, neg_inf: f32) -> vec2<f32> {
  if (m2 == neg_inf) { return vec2<f32>(m, s); }
  if (m == neg_inf) { return vec2<f32>(m2, s2); }
  let mn = nmax(m, m2);
  return vec2<f32>(mn, s * exp(m - mn) + s2 * exp(m2 - mn));
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
  for (var k = lid; k < n4; k = k + WG) {
    let v = X[base + k];
    let mv = nmax(nmax(v.x, v.y), nmax(v.z, v.w));
    var sv = 0.0;
    if (mv != neg_inf) {
      let e = exp(v - vec4<f32>(mv));
      sv = e.x + e.y + e.z + e.w;
    }
    ms = merge(ms.x, ms.y, mv, sv, neg_inf);
  }
  red_m[lid] = ms.x;
  red_s[lid] = ms.y;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k = k / 2u) {
    if (lid < k) {
      let m2 = merge(red_m[lid], red_s[lid], red_m[lid + k], red_s[lid + k], neg_inf);
      red_m[lid] = m2.x;
      red_s[lid] = m2.y;
    }
    workgroupBarrier();
  }
  let m = vec4<f32>(red_m[0]);
  let s = red_s[0];
  if (MODE == 0u) {
    let inv = 1.0 / s;
    for (var k = lid; k < n4; k = k + WG) { O[base + k] = exp(X[base + k] - m) * inv; }
  } else {
    let ls = vec4<f32>(log(s));
    for (var k = lid; k < n4; k = k + WG) { O[base + k] = X[base + k] - m - ls; }
  }
}
