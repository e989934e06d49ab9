// aten.topk.default: one invocation per input element computes its rank in its row (the elements
// ahead of it in the requested order; equal values keep index order, NaN counts as the largest)
// and, when the rank is below k, writes itself to values/indices at that rank. The output is
// therefore always sorted. An element stops counting once k elements are ahead of it, so a row
// costs about k * len * ln(len) reads instead of len^2.
struct Params { n: u32, len: u32, inner: u32, k: u32 };

@group(0) @binding(0) var<storage, read> X: array<u32>;
@group(0) @binding(1) var<storage, read_write> V: array<u32>;
@group(0) @binding(2) var<storage, read_write> I: array<u32>;
@group(0) @binding(3) var<uniform> P: Params;

override LARGEST: u32 = 1u;
override IS_INT: u32 = 0u;
override WG: u32 = 256u;

fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }

// a > b in the value order (NaN above everything).
fn greater(a: u32, b: u32) -> bool {
  if (IS_INT == 1u) { return bitcast<i32>(a) > bitcast<i32>(b); }
  let x = bitcast<f32>(a);
  let y = bitcast<f32>(b);
  return (is_nan(x) && !is_nan(y)) || x > y;
}
fn equal(a: u32, b: u32) -> bool {
  if (IS_INT == 1u) { return a == b; }
  let x = bitcast<f32>(a);
  let y = bitcast<f32>(b);
  return (is_nan(x) && is_nan(y)) || x == y;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  let row_len = P.len * P.inner;
  let outer = i / row_len;
  let j = (i / P.inner) % P.len;
  let base = outer * row_len + i % P.inner;
  let w = X[i];
  var rank = 0u;
  for (var m = 0u; m < P.len; m = m + 1u) {
    let o = X[base + m * P.inner];
    var ahead = select(greater(w, o), greater(o, w), LARGEST == 1u);
    ahead = ahead || (m < j && equal(o, w));
    rank = rank + select(0u, 1u, ahead);
    if (rank >= P.k) { return; }
  }
  // Here rank < k (k = 0 never dispatches).
  let dst = outer * P.k * P.inner + rank * P.inner + i % P.inner;
  V[dst] = w;
  I[dst] = j;
}
