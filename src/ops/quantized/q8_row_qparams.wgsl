// Shared by torchao.choose_qparams_affine and the 8da4w linear that chooses its own activation
// parameters (//!include q8_row_qparams): row r of X's min and max reduced over
// the workgroup's first wg invocations (64 or 256), then torchao's _choose_qparams_affine in f32:
//   mn = min(min(x), 0), mx = max(max(x), 0)
//   ASYMMETRIC (P.mode 0): scale = max((mx - mn) / (qmax - qmin), eps); zp = clamp(qmin - round(mn / scale), qmin, qmax)
//   SYMMETRIC  (P.mode 1): scale = max(max(-mn, mx) / ((qmax - qmin) / 2), eps); zp = P.sym_zp
// (round: half to even, as torch.round). Needs P.k, P.mode, P.qmin, P.qmax, P.denom, P.eps,
// P.sym_zp. Call in workgroup-uniform control flow (barriers).
//!include q8_int_math

var<workgroup> rmin: array<f32, 256>;
var<workgroup> rmax: array<f32, 256>;

// (scale, zero point) of row r; wg: the workgroup's size (a power of two up to 256).
fn row_qparams(r: u32, lid: u32, wg: u32) -> vec2<f32> {
  var lo = 0.0;  // the row's extremes, zero included (torchao's min_val_neg / max_val_pos)
  var hi = 0.0;
  for (var k = lid; k < P.k; k = k + wg) {
    let v = f32(X[r * P.k + k]);
    lo = min(lo, v);
    hi = max(hi, v);
  }
  rmin[lid] = lo;
  rmax[lid] = hi;
  workgroupBarrier();
  for (var s = wg / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      rmin[lid] = min(rmin[lid], rmin[lid + s]);
      rmax[lid] = max(rmax[lid], rmax[lid + s]);
    }
    workgroupBarrier();
  }
  let mn = rmin[0];
  let mx = rmax[0];
  workgroupBarrier();
  if (P.mode == 0u) {
    let scale = max(div_rn(mx - mn, P.denom), P.eps);
    return vec2<f32>(scale, clamp(P.qmin - round(div_rn(mn, scale)), P.qmin, P.qmax));
  }
  return vec2<f32>(max(div_rn(max(-mn, mx), P.denom), P.eps), f32(P.sym_zp));
}
