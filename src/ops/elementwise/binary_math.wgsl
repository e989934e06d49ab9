// Helpers of the binary float ops, shared by binary.wgsl and the fused elementwise kernels
// (ops/elementwise/fused.cpp) so both compute bit-identical values. The ops themselves,
// fn binary_f32 and the BINARY_ constants, are generated from ops/elementwise/elementwise_ops.h
// (binary_ops_wgsl), which the includer's kernel adds.
// The includer includes float_bits (is_nan, is_inf: bit tests).
fn sign_bit(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }
fn with_sign_of(x: f32, s: f32) -> f32 { return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u)); }
const PI: f32 = 3.14159265358979;

// pow with PyTorch's handling of negative bases with integral exponents and of 0 and 1 bases;
// x^0 is 1 for every x (NaN and -inf included), so that test comes first.
fn pow_f(x: f32, y: f32) -> f32 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (is_nan(x) || is_nan(y)) { return x + y; }
  if (x == 0.0) {
    // (-0)^odd keeps the sign; 0^negative is +inf (-inf for -0 to an odd negative power).
    let odd = y == round(y) && (i32(y) & 1) == 1;
    if (y > 0.0) { return select(0.0, x, odd); }
    return bitcast<f32>(select(0x7f800000u, 0xff800000u, odd && sign_bit(x)));
  }
  if (x < 0.0 && y == round(y)) {
    let r = pow(-x, y);
    return select(r, -r, (i32(y) & 1) == 1);
  }
  return pow(x, y);
}

// C fmod: x - trunc(x / y) * y with the sign of x; the quotient is corrected when x / y rounded
// across an integer.
fn fmod_f(x: f32, y: f32) -> f32 {
  if (is_inf(y) && !is_inf(x) && !is_nan(x)) { return x; }
  let q = trunc(x / y);
  var r = fma(-q, y, x);
  let ay = abs(y);
  if (r != 0.0 && (r < 0.0) != (x < 0.0)) { r = r + select(ay, -ay, x < 0.0); }
  if (abs(r) >= ay) { r = r - select(ay, -ay, x < 0.0); }
  if (r == 0.0) { return with_sign_of(0.0, x); }
  return r;
}

// Python/PyTorch floor division of floats (ATen div_floor_floating).
fn floor_div_f(x: f32, y: f32) -> f32 {
  if (y == 0.0) { return x / y; }
  let m = fmod_f(x, y);
  var d = (x - m) / y;
  if (m != 0.0 && (y < 0.0) != (m < 0.0)) { d = d - 1.0; }
  if (d == 0.0) { return with_sign_of(0.0, x / y); }
  var fd = floor(d);
  if (d - fd > 0.5) { fd = fd + 1.0; }
  return fd;
}

fn atan2_f(y: f32, x: f32) -> f32 {
  if (is_nan(x) || is_nan(y)) { return x + y; }
  if (y == 0.0 && x == 0.0) { return with_sign_of(select(0.0, PI, sign_bit(x)), y); }
  if (is_inf(x) && is_inf(y)) { return with_sign_of(select(0.25 * PI, 0.75 * PI, x < 0.0), y); }
  if (is_inf(x)) { return with_sign_of(select(0.0, PI, x < 0.0), y); }
  return atan2(y, x);
}
