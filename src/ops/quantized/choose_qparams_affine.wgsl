// torchao.choose_qparams_affine with per-row blocks (block_size [1, ..., 1, K]): one workgroup per
// four rows (their zero points fill one word of an int8 output), the row's min and max reduced
// over the workgroup, then torchao's _choose_qparams_affine in f32:
//   mn = min(min(x), 0), mx = max(max(x), 0)
//   ASYMMETRIC (MODE 0): scale = max((mx - mn) / (qmax - qmin), eps); zp = clamp(qmin - round(mn / scale), qmin, qmax)
//   SYMMETRIC  (MODE 1): scale = max(max(-mn, mx) / ((qmax - qmin) / 2), eps); zp = P.sym_zp
// (round: half to even, as torch.round). Bindings: X, SC, ZP (int8: ZP_words, written whole), P.
struct Params {
  rows: u32, k: u32, groups: u32, mode: u32,
  qmin: f32, qmax: f32, denom: f32, eps: f32,
  sym_zp: i32, pad0: u32, pad1: u32, pad2: u32,
};
//!include q8_int_math

const WG: u32 = 64u;
var<workgroup> rmin: array<f32, 64>;
var<workgroup> rmax: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = wid.x + wid.y * nwg.x;
  if (g >= P.groups) { return; }
  var word = 0u;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let r = g * 4u + j;
    if (r >= P.rows) { break; }  // uniform: r depends on the workgroup only
    var lo = 0.0;  // the row's extremes, zero included (torchao's min_val_neg / max_val_pos)
    var hi = 0.0;
    for (var k = lid; k < P.k; k = k + WG) {
      let v = f32(X[r * P.k + k]);
      lo = min(lo, v);
      hi = max(hi, v);
    }
    rmin[lid] = lo;
    rmax[lid] = hi;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
      if (lid < s) {
        rmin[lid] = min(rmin[lid], rmin[lid + s]);
        rmax[lid] = max(rmax[lid], rmax[lid + s]);
      }
      workgroupBarrier();
    }
    let mn = rmin[0];
    let mx = rmax[0];
    workgroupBarrier();
    var scale = 0.0;
    var zp = P.sym_zp;
    if (P.mode == 0u) {
      scale = max(div_rn(mx - mn, P.denom), P.eps);
      zp = i32(clamp(P.qmin - round(div_rn(mn, scale)), P.qmin, P.qmax));
    } else {
      scale = max(div_rn(max(-mn, mx), P.denom), P.eps);
    }
    if (lid == 0u) {
      SC[r] = SC_T(scale);
#if ZP_I8
#else
      ZP[r] = ZP_T(zp);
#endif
    }
    word = word | ((u32(zp) & 0xffu) << (8u * j));
  }
#if ZP_I8
  if (lid == 0u) { ZP_words[g] = word; }
#endif
}
