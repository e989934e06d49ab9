// Shared by the int8 linear and convolution shaders (//!include q8_int_math): a dot product of four
// signed bytes packed in two words, a correctly rounded f32 division, and four int8 packed in a word.
//
// dot4(a, b) = sum_j int8(byte j of a) * int8(byte j of b). DOT4 (defined only where the adapter
// has the packed_4x8_integer_dot_product language feature): WGSL's dot4I8Packed; otherwise the
// portable route extracts the bytes.
fn dot4(a: u32, b: u32) -> i32 {
#if DOT4
  return dot4I8Packed(a, b);
#else
  let sa = bitcast<i32>(a);
  let sb = bitcast<i32>(b);
  return extractBits(sa, 0u, 8u) * extractBits(sb, 0u, 8u) + extractBits(sa, 8u, 8u) * extractBits(sb, 8u, 8u) +
         extractBits(sa, 16u, 8u) * extractBits(sb, 16u, 8u) + extractBits(sa, 24u, 8u) * extractBits(sb, 24u, 8u);
#endif
}

// a / b rounded to nearest like IEEE division (PyTorch's f32 division on the CPU): WGSL's `/` may be
// off by a few ulp (an approximate reciprocal on some GPUs); one correction with the residual
// a - q * b (exact through fma) brings it back.
fn div_rn(a: f32, b: f32) -> f32 {
  let q = a / b;
  let r = fma(-q, b, a);
  return q + r / b;
}

// Four int8 values (each in [-128, 127]) packed into a word, v.x in the low byte.
fn pack_i8(v: vec4<i32>) -> u32 {
  let u = bitcast<vec4<u32>>(v) & vec4<u32>(255u);
  return u.x | (u.y << 8u) | (u.z << 16u) | (u.w << 24u);
}
