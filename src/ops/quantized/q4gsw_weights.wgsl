// Shared by the 4-bit linear shaders (//!include q4gsw_weights): the uniform and the
// dequantization of one weight. Bindings (generated preamble): X, the packed bytes W (u32 words,
// 4 bytes each), the scales SC, BIAS (absent: a zero dummy), O and P.
// `pad` is 0 (the fused epilogue math ORs it into NaN patterns); EPILOGUE: a fused elementwise
// chain (ops/epilogue.h, linear_q4gsw only) that every store applies.
struct Params {
  m: u32, n: u32, k: u32, gs: u32, wrow: u32, srow: u32, has_bias: u32, pad: u32,
  n0: u32, n1: u32,  // MULTI: the outputs' widths (the last is n - n0 - n1)
  hd: u32,           // ROPE_OUT (q4gsw_gemv_rows.wgsl): the head dim
  norm_eps: f32,     // NORM_IN (q4gsw_gemv_rows.wgsl): the input norm's eps
  rope_row0: u32, lp1: u32, lp2: u32, lp3: u32,  // ROPE_OUT: the tables' row of input row 0
#if DQ8CA
  // 8da4w (q4gsw_gemv_rows.wgsl): q8_row_qparams' arguments
  mode: u32, sym_zp: i32, qmin: f32, qmax: f32, denom: f32, eps: f32, dq_pad0: u32, dq_pad1: u32,
#endif
#if EPILOGUE
  ep: Epilogue,
#endif
};

//!include epilogue_store

// Output (m, n) of the [M, P.n] product. MULTI (etwebgpu.linear_q4gsw_multi: projections of one
// input with their weights stacked): columns [0, n0) go to O, [n0, n0 + n1) to O1 and, MULTI3, the
// rest to O2, each [M, its width].
fn store_out(m: u32, n: u32, v: f32) {
#if MULTI
  if (n < P.n0) {
    O[m * P.n0 + n] = O_T(v);
    return;
  }
#if MULTI3
  if (n >= P.n0 + P.n1) {
    let w2 = P.n - P.n0 - P.n1;
    O2[m * w2 + n - P.n0 - P.n1] = O2_T(v);
    return;
  }
#endif
  O1[m * P.n1 + n - P.n0] = O1_T(v);
#else
  O[m * P.n + n] = O_T(epilogue(v, m * P.n + n));
#endif
}

// Four 4-bit weights (the low nibbles of v) minus 8 as exact floats, without int-to-float
// conversions (a fraction-rate instruction on GPUs; the 4-bit GEMVs were bound by them): a nibble
// q ORed into the mantissa of 2^23 is the float 2^23 + q, and subtracting 2^23 + 8 leaves q - 8.
fn nib4(v: vec4<u32>) -> vec4<f32> {
  return bitcast<vec4<f32>>((v & vec4<u32>(15u)) | vec4<u32>(0x4b000000u)) - vec4<f32>(8388616.0);
}

// The same without shifts, for the four nibbles of the low 16 bits of h: nibble j stays in place
// (q * 16^j < 2^16 still fits the mantissa), giving (q_j - 8) * 16^j exactly; the activations it
// multiplies are scaled by NIB_SCALE (16^-j) beforehand, so each product is a_j * (q_j - 8)
// exactly (powers of two), the same bits as nib4's.
const NIB_SCALE = vec4<f32>(1.0, 0.0625, 0.00390625, 0.000244140625);
fn nib4_in_place(h: u32) -> vec4<f32> {
  return bitcast<vec4<f32>>((vec4<u32>(h) & vec4<u32>(0xfu, 0xf0u, 0xf00u, 0xf000u)) | vec4<u32>(0x4b000000u)) -
         vec4<f32>(8388616.0, 8388736.0, 8390656.0, 8421376.0);
}

#if !WORD4
// Weight row n holds wrow bytes (W as u32 words; q4gsw_gemv_rows reads it as vec4s under WORD4).
// q4gsw: byte j = (q[2j+1] + 8) << 4 | (q[2j] + 8); scales [num_groups, srow], group k / gs.
// QCS (linear_qcs4w): byte j = (q[2j] + 8) << 4 | (q[2j+1] + 8); one scale per output, SC[n].
fn wq(n: u32, k: u32) -> f32 {
  let byte = n * P.wrow + k / 2u;
  let b = (W[byte / 4u] >> ((byte % 4u) * 8u)) & 0xffu;
  let odd = (k & 1u) == 1u;
#if QCS
  return f32(i32(select(b >> 4u, b & 15u, odd)) - 8) * f32(SC[n]);
#else
  return f32(i32(select(b & 15u, b >> 4u, odd)) - 8) * f32(SC[(k / P.gs) * P.srow + n]);
#endif
}
#endif
