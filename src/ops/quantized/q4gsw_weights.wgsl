// Shared by the 4-bit linear shaders (//!include q4gsw_weights): the uniform and the
// dequantization of one weight. Bindings (generated preamble): X, the packed bytes W (u32 words,
// 4 bytes each), the scales SC, BIAS (absent: a zero dummy), O and P.
// `pad` is 0 (the fused epilogue math ORs it into NaN patterns); EPILOGUE: a fused elementwise
// chain (ops/epilogue.h, linear_q4gsw only) that every store applies.
struct Params {
  m: u32, n: u32, k: u32, gs: u32, wrow: u32, srow: u32, has_bias: u32, pad: u32,
#if EPILOGUE
  ep: Epilogue,
#endif
};

// v: the value of O's element i (flat index).
fn epilogue(v: f32, i: u32) -> f32 {
#if EPILOGUE
  return epilogue_terms(v, i);
#else
  return v;
#endif
}

// Weight row n holds wrow bytes.
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
