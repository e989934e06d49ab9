// Pairwise p-norm distances. `cdist`: out[b, i, j] = ||x1[b, i, :] - x2[b, j, :]||_p with the
// batch dims broadcast (P.batch: output batch shape with x1's / x2's row-block strides in
// P.b1 / P.b2). `pdist`: out[k] = ||x[i, :] - x[j, :]||_p for the k-th pair i < j in row order.
// Computed in f32 whatever the storage (X1_T, X2_T, Y_T).
// MODE: 0 p = 0 (count of differing coordinates), 1 p = 1, 2 p = 2, 3 p = inf, 4 any other p.
//!include tensor_shape
struct Params { b1: Shape, b2: Shape, rows1: u32, rows2: u32, cols: u32, n: u32, p: f32, pad0: u32, pad1: u32, pad2: u32 };

override MODE: u32 = 2u;
override WG: u32 = 256u;

fn offset(idx: u32, s: Shape) -> u32 {
  var rem = idx;
  var off = 0u;
  for (var d = i32(s.rank) - 1; d >= 0; d = d - 1) {
    let n = dim_of(s, u32(d));
    off = off + (rem % n) * stride_of(s, u32(d));
    rem = rem / n;
  }
  return off;
}

// Distance between the rows starting at a (in X1) and b (in X2 when second_in_x2, else in X1).
fn dist(a: u32, b: u32, second_in_x2: bool) -> f32 {
  var acc = 0.0;
  for (var m = 0u; m < P.cols; m = m + 1u) {
    var y = 0.0;
    if (second_in_x2) { y = f32(X2[b + m]); } else { y = f32(X1[b + m]); }
    let d = abs(f32(X1[a + m]) - y);
    switch MODE {
      case 0u: { acc = acc + select(0.0, 1.0, d != 0.0); }
      case 1u: { acc = acc + d; }
      case 2u: { acc = acc + d * d; }
      case 3u: { acc = max(acc, d); }
      default: { if (d != 0.0) { acc = acc + pow(d, P.p); } }
    }
  }
  switch MODE {
    case 2u: { return sqrt(acc); }
    case 4u: { if (acc == 0.0) { return 0.0; } return pow(acc, 1.0 / P.p); }
    default: { return acc; }
  }
}

@compute @workgroup_size(WG)
fn cdist(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  let per_batch = P.rows1 * P.rows2;
  let b = i / per_batch;
  let r = (i % per_batch) / P.rows2;
  let c = i % P.rows2;
  Y[i] = Y_T(dist(offset(b, P.b1) + r * P.cols, offset(b, P.b2) + c * P.cols, true));
}

@compute @workgroup_size(WG)
fn pdist(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
  let k = (wid.x + wid.y * nwg.x) * WG + lid;
  if (k >= P.n) { return; }
  // Row r holds the pairs (r, r+1 .. rows1-1): walk to the row of pair k.
  var r = 0u;
  var first = 0u;
  loop {
    let in_row = P.rows1 - 1u - r;
    if (k < first + in_row) { break; }
    first = first + in_row;
    r = r + 1u;
  }
  let c = r + 1u + (k - first);
  Y[k] = Y_T(dist(r * P.cols, c * P.cols, false));
}
