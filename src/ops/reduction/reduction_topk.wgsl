// aten.topk.default: one invocation per input element computes its rank in its row (the elements
// ahead of it in the requested order; equal values keep index order, NaN counts as the largest)
// and, when the rank is below k, writes itself to values/indices at that rank. The output is
// therefore always sorted. An element stops counting once k elements are ahead of it, so a row
// costs about k * len * ln(len) reads instead of len^2.
struct Params { n: u32, len: u32, inner: u32, k: u32 };

override LARGEST: u32 = 1u;
override WG: u32 = 256u;

//!include float_bits

// a > b in the value order (NaN above everything). Integers compare as i32 (exact).
#if X_FLOAT
fn greater(a: X_T, b: X_T) -> bool {
  let x = f32(a);
  let y = f32(b);
  return (is_nan(x) && !is_nan(y)) || x > y;
}
fn equal(a: X_T, b: X_T) -> bool {
  let x = f32(a);
  let y = f32(b);
  return (is_nan(x) && is_nan(y)) || x == y;
}
#else
fn greater(a: X_T, b: X_T) -> bool { return i32(a) > i32(b); }
fn equal(a: X_T, b: X_T) -> bool { return a == b; }
#endif

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
  V[dst] = V_T(w);
  I[dst] = I_T(j);
}
