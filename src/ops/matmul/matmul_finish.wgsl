// Shared by the matmul shaders (//!include matmul_finish): C element (m, n) of batch item z from
// its unscaled sum: alpha, the bias, the epilogue. Needs P, BIAS, C and HAS_BIAS.
fn finish(z: u32, m: u32, n: u32, sum: f32) {
  var v = P.alpha * sum;
  if (HAS_BIAS == 1u) { v = v + P.beta * f32(BIAS[m * P.bias_sm + n * P.bias_sn]); }
  let o = z * P.cstride + m * P.N + n;
  C[o] = C_T(epilogue(v, o));
}
