// Row-wise normalizations: one workgroup per row, shared-memory tree reductions, so long rows
// (4096+) use all 256 lanes. The tensor is viewed as [outer, len, inner]: row r = (r / inner,
// r % inner) and its element k lives at (r / inner) * len * inner + k * inner + r % inner.
// MODE: 0 softmax, 1 log_softmax, 2 layer_norm, 3 rms_norm, 4 group_norm (weight per channel
// = (r % groups) * cpg + k / hw). STATS: mean/rstd per row into MEAN/RSTD (layer_norm, group_norm).
// Computed in f32 whatever the storage.
//!include norm_row_params


override MODE: u32 = 0u;
override HAS_W: u32 = 0u;
override HAS_B: u32 = 0u;
const WG: u32 = 256u;

//!include wg_reduce

//!include float_bits

// The workgroup's max with NaN propagating (torch.max), where wg_reduce's wg_max may drop a NaN.
fn wg_max_nan(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { red[lid] = nmax(red[lid], red[lid + s]); }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

fn widx(r: u32, k: u32) -> u32 {
  if (MODE == 4u) { return (r % P.groups) * P.cpg + k / P.hw; }
  return k;
}

//!include entry_main
  let r = wid.x + wid.y * nwg.x;
  if (r >= P.rows) { return; }  // workgroup-uniform
  let base = (r / P.inner) * P.len * P.inner + r % P.inner;
  let xb = P.xoff + base;  // X from element P.xoff on (etwebgpu.rms_norm_select)
  let st = P.inner;
  let n = P.len;
  if (MODE <= 1u) {
    var m = from_bits(0xff800000u);
    for (var k = lid; k < n; k = k + WG) { m = nmax(m, f32(X[xb + k * st])); }
    m = wg_max_nan(m, lid);
    var s = 0.0;
    for (var k = lid; k < n; k = k + WG) { s = s + exp(f32(X[xb + k * st]) - m); }
    s = wg_sum(s, lid);
    if (MODE == 0u) {
      let inv = 1.0 / s;
      for (var k = lid; k < n; k = k + WG) { O[base + k * st] = O_T(exp(f32(X[xb + k * st]) - m) * inv); }
    } else {
      let ls = log(s);
      for (var k = lid; k < n; k = k + WG) { O[base + k * st] = O_T(f32(X[xb + k * st]) - m - ls); }
    }
    return;
  }
  var mean = 0.0;
  var rstd = 0.0;
  if (MODE == 3u) {
    var s = 0.0;
    for (var k = lid; k < n; k = k + WG) { let x = f32(X[xb + k * st]); s = s + x * x; }
    s = wg_sum(s, lid);
    rstd = inverseSqrt(s / f32(n) + P.eps);
  } else {
    // Two passes (mean, then centered sum of squares): biased variance as PyTorch computes it.
    var s = 0.0;
    for (var k = lid; k < n; k = k + WG) { s = s + f32(X[xb + k * st]); }
    mean = wg_sum(s, lid) / f32(n);
    var q = 0.0;
    for (var k = lid; k < n; k = k + WG) { let d = f32(X[xb + k * st]) - mean; q = q + d * d; }
    rstd = inverseSqrt(wg_sum(q, lid) / f32(n) + P.eps);
  }
  for (var k = lid; k < n; k = k + WG) {
    var y = (f32(X[xb + k * st]) - mean) * rstd;
    let c = widx(r, k);
    if (HAS_W == 1u) { y = y * f32(W[c]); }
    if (HAS_B == 1u) { y = y + f32(B[c]); }
    O[base + k * st] = O_T(y);
  }
#if STATS
  if (lid == 0u) {
    MEAN[r] = MEAN_T(mean);
    RSTD[r] = RSTD_T(rstd);
  }
#endif
}
