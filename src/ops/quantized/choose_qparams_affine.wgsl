// torchao.choose_qparams_affine with per-row blocks (block_size [1, ..., 1, K]): one workgroup per
// four rows (their zero points fill one word of an int8 output), each row's parameters from
// q8_row_qparams. Bindings: X, SC, ZP (int8: ZP_words, written whole), P.
struct Params {
  rows: u32, k: u32, groups: u32, mode: u32,
  qmin: f32, qmax: f32, denom: f32, eps: f32,
  sym_zp: i32, pad0: u32, pad1: u32, pad2: u32,
};
//!include q8_int_math
//!include q8_row_qparams

// (scale, zero point) of row r of X; wg: the workgroup's size (a power of two up to 256).
fn row_qparams(r: u32, lid: u32, wg: u32) -> vec2<f32> {
  var lo = 0.0;  // the row's extremes, zero included (torchao's min_val_neg / max_val_pos)
  var hi = 0.0;
  for (var k = lid; k < P.k; k = k + wg) {
    let v = f32(X[r * P.k + k]);
    lo = min(lo, v);
    hi = max(hi, v);
  }
  return qparams_of(range_reduce(lo, hi, lid, wg));
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = wid.x + wid.y * nwg.x;
  if (g >= P.groups) { return; }
  var word = 0u;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let r = g * 4u + j;
    if (r >= P.rows) { break; }  // uniform: r depends on the workgroup only
    let q = row_qparams(r, lid, 64u);
    let zp = i32(q.y);
    if (lid == 0u) {
      SC[r] = SC_T(q.x);
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
