// The 8da4w linears that choose their own activation parameters, on several rows (prefill): each
// row's scale and zero point as torchao.choose_qparams_affine chooses them (q8_row_qparams), then
// the row fake-quantized as torchao's quantize_affine / dequantize_affine compute it,
//   XD[m, k] = (clamp(round(x * (1 / scale)) + zp, -128, 127) - zp) * scale,
// for the 4-bit GEMM kernels to multiply. One workgroup of 256 per row (flat index, 2D folding).
// Bindings (generated preamble): X, XD (f32 scratch), P.
struct Params {
  m: u32, k: u32, pad0: u32, pad1: u32,
  mode: u32, sym_zp: i32, qmin: f32, qmax: f32, denom: f32, eps: f32, pad2: u32, pad3: u32,
};
//!include q8_row_qparams

const WG: u32 = 256u;
//!include entry_main
  let m = wid.x + wid.y * nwg.x;
  if (m >= P.m) { return; }  // uniform: depends on the workgroup only
  let row = m * P.k;
  var lo = 0.0;  // the row's extremes, zero included (torchao's min_val_neg / max_val_pos)
  var hi = 0.0;
  for (var j = lid; j < P.k; j = j + 256u) {
    let v = f32(X[row + j]);
    lo = min(lo, v);
    hi = max(hi, v);
  }
  let q = qparams_of(range_reduce(lo, hi, lid, 256u));
  let inv = div_rn(1.0, q.x);
  for (var j = lid; j < P.k; j = j + 256u) {
    XD[row + j] = XD_T((clamp(round(f32(X[row + j]) * inv) + q.y, -128.0, 127.0) - q.y) * q.x);
  }
}
