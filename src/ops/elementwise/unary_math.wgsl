// Helpers of the unary float ops, shared by elementwise_unary.wgsl and the fused elementwise
// kernels (ops/elementwise/fused.cpp) so both compute bit-identical values. The ops themselves,
// fn unary_f32 and the UNARY_ constants, are generated from ops/elementwise/elementwise_ops.h
// (unary_ops_wgsl), which the includer's kernel adds.
// The includer declares the uniform `P` with a u32 field `pad` that is always 0 (nan/inf below).
// NaN/inf built at run time from P.pad (always 0): WGSL constant evaluation rejects them.
fn nan() -> f32 { return bitcast<f32>(0x7fc00000u | P.pad); }
fn inf(neg: bool) -> f32 { return bitcast<f32>(select(0x7f800000u, 0xff800000u, neg) | P.pad); }
//!include float_bits

// tanh without overflow in exp-based implementations: |x| >= 10 is +-1 in f32 anyway.
fn safe_tanh(x: f32) -> f32 { return tanh(clamp(x, -10.0, 10.0)); }

// erfc(z) for z >= 0, Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7).
fn erfc_pos(z: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.3275911 * z);
  let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return poly * exp(-z * z);
}


// log with IEEE edge cases spelled out (the WGSL builtin is undefined outside (0, inf)).
fn log_ieee(x: f32) -> f32 {
  if (x < 0.0) { return nan(); }
  if (x == 0.0) { return inf(true); }
  if (is_inf(x)) { return x; }
  return log(x);
}
fn log2_ieee(x: f32) -> f32 {
  if (x < 0.0) { return nan(); }
  if (x == 0.0) { return inf(true); }
  if (is_inf(x)) { return x; }
  return log2(x);
}

// log(1 + x) accurate for small x. GPU log is only absolutely accurate near 1, so |x| < 0.5
// uses log1p(x) = 2 atanh(s), s = x / (2 + x), as an odd series in s (|s| <= 1/3).
fn log1p_f(x: f32) -> f32 {
  if (x < -1.0) { return nan(); }
  if (x == -1.0) { return inf(true); }
  if (is_inf(x)) { return x; }
  if (abs(x) < 0.5) {
    let s = x / (2.0 + x);
    let z = s * s;
    var t = 1.0 / 19.0;
    for (var k = 17; k >= 1; k = k - 2) { t = 1.0 / f32(k) + z * t; }
    return 2.0 * s * t;
  }
  return log(1.0 + x);
}

// exp(x) - 1 accurate for small x: Taylor series (degree 10) for |x| < 0.5, where exp(x) - 1
// would cancel.
fn expm1_f(x: f32) -> f32 {
  if (x > 88.8) { return inf(false); }
  if (abs(x) < 0.5) {
    var t = 1.0 / 3628800.0;
    var f = 3628800.0;
    for (var k = 10; k >= 2; k = k - 1) {
      f = f / f32(k);
      t = 1.0 / f + x * t;
    }
    return x * t;
  }
  return exp(x) - 1.0;
}

const LN2: f32 = 0.693147180559945;

// sinh/cosh: exp(|x| - ln 2) past |x| = 10 so that sinh(89) stays finite like in f32 PyTorch.
fn sinh_f(x: f32) -> f32 {
  let a = abs(x);
  var r = 0.0;
  if (a > 10.0) { r = exp(a - LN2); } else { r = 0.5 * (expm1_f(a) - expm1_f(-a)); }
  return select(r, -r, x < 0.0);
}
fn cosh_f(x: f32) -> f32 {
  let a = abs(x);
  if (a > 10.0) { return exp(a - LN2); }
  let e = exp(a);
  return 0.5 * (e + 1.0 / e);
}

fn asinh_f(x: f32) -> f32 {
  let a = abs(x);
  var r = 0.0;
  if (a > 1e18) { r = log_ieee(a) + LN2; } else { r = log1p_f(a + a * a / (1.0 + sqrt(1.0 + a * a))); }
  return select(r, -r, x < 0.0);
}
fn acosh_f(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (x < 1.0) { return nan(); }
  if (x > 1e18) { return log_ieee(x) + LN2; }
  let t = x - 1.0;
  return log1p_f(t + sqrt(t * (x + 1.0)));
}
fn atanh_f(x: f32) -> f32 {
  let a = abs(x);
  if (a > 1.0) { return nan(); }
  var r = 0.0;
  if (a == 1.0) { r = inf(false); } else { r = 0.5 * log1p_f(2.0 * a / (1.0 - a)); }
  return select(r, -r, x < 0.0);
}
// asin/acos through atan2 of exact-ish factors ((1-x)(1+x) keeps precision near |x| = 1).
fn asin_f(x: f32) -> f32 {
  if (abs(x) > 1.0) { return nan(); }
  return atan2(x, sqrt((1.0 - x) * (1.0 + x)));
}
fn acos_f(x: f32) -> f32 {
  if (abs(x) > 1.0) { return nan(); }
  return 2.0 * atan2(sqrt(1.0 - x), sqrt(1.0 + x));
}

// erf: Taylor series near 0 (relative accuracy where erf is small), 1 - erfc beyond.
fn erf_f(x: f32) -> f32 {
  let a = abs(x);
  if (a < 0.5) {
    let z = x * x;
    return 1.1283791670955126 * x * (1.0 + z * (-1.0 / 3.0 + z * (0.1 + z * (-1.0 / 42.0 + z * (1.0 / 216.0 + z * (-1.0 / 1320.0))))));
  }
  let r = 1.0 - erfc_pos(a);
  return select(r, -r, x < 0.0);
}

// logit: log(z / (1 - z)) after the optional [lo, hi] clamp when `on` is 1 (NaN stays NaN).
fn logit_f(x: f32, on: i32, lo: f32, hi: f32) -> f32 {
  var z = x;
  if (on == 1 && !is_nan(x)) { z = select(select(x, hi, x > hi), lo, x < lo); }
  if (z == 1.0) { return inf(false); }
  return log_ieee(z / (1.0 - z));
}

// Clamp that keeps NaN and, like torch.clamp, gives `hi` everywhere when lo > hi.
fn clamp_f(x: f32, lo: f32, hi: f32) -> f32 {
  if (is_nan(x)) { return x; }
  var r = select(x, lo, x < lo);
  return select(r, hi, r > hi);
}
