// Shared by torchao.choose_qparams_affine and the 8da4w linear that chooses its own activation
// parameters (//!include q8_row_qparams): a row's min and max reduced over the workgroup's first
// wg invocations (64 or 256, range_reduce), then torchao's _choose_qparams_affine in f32 (qparams_of):
//   mn = min(min(x), 0), mx = max(max(x), 0)
//   ASYMMETRIC (P.mode 0): scale = max((mx - mn) / (qmax - qmin), eps); zp = clamp(qmin - round(mn / scale), qmin, qmax)
//   SYMMETRIC  (P.mode 1): scale = max(max(-mn, mx) / ((qmax - qmin) / 2), eps); zp = P.sym_zp
// (round: half to even, as torch.round). Needs P.k, P.mode, P.qmin, P.qmax, P.denom, P.eps,
// P.sym_zp. Call in workgroup-uniform control flow (barriers).
//!include q8_int_math

var<workgroup> rmin: array<f32, 256>;
var<workgroup> rmax: array<f32, 256>;

// The workgroup's min and max of (lo, hi) over its first wg invocations (a power of two up to 256).
#if SUBGROUPS
// By subgroup (subgroup k: invocations [k * sgs, (k + 1) * sgs) of a one-dimensional workgroup,
// wg a multiple of sgs): one barrier instead of eight. The includer declares sg_lane and sg_size
// (private) and main sets them.
fn range_reduce(lo: f32, hi: f32, lid: u32, wg: u32) -> vec2<f32> {
  let a = subgroupMin(lo);
  let b = subgroupMax(hi);
  if (sg_lane == 0u) {
    rmin[lid / sg_size] = a;
    rmax[lid / sg_size] = b;
  }
  workgroupBarrier();
  var r = vec2<f32>(rmin[0], rmax[0]);
  for (var i = 1u; i < wg / sg_size; i = i + 1u) { r = vec2<f32>(min(r.x, rmin[i]), max(r.y, rmax[i])); }
  workgroupBarrier();
  return r;
}
#else
fn range_reduce(lo: f32, hi: f32, lid: u32, wg: u32) -> vec2<f32> {
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
  let r = vec2<f32>(rmin[0], rmax[0]);
  workgroupBarrier();
  return r;
}
#endif

// (scale, zero point) of a row whose extremes, zero included, are range = (mn, mx).
fn qparams_of(range: vec2<f32>) -> vec2<f32> {
  let mn = range.x;
  let mx = range.y;
  if (P.mode == 0u) {
    let scale = max(div_rn(mx - mn, P.denom), P.eps);
    return vec2<f32>(scale, clamp(P.qmin - round(div_rn(mn, scale)), P.qmin, P.qmax));
  }
  return vec2<f32>(max(div_rn(max(-mn, mx), P.denom), P.eps), f32(P.sym_zp));
}
