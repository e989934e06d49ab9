// Elementwise unary ops over a flat index (input and output have the same shape, so the flat
// index is the element index: no stride math). OP picks the op (see unary.cpp), DT how words are
// computed (0 f32, 1 i32, 2 bool 0/1). IN_INT = 1: f32 op whose input words are i32 (or bool 0/1),
// converted first (PyTorch promotes integer inputs of float ops).
struct Params { n: u32, i0: i32, i1: i32, pad: u32, f0: f32, f1: f32, pad2: vec2<u32> };

@group(0) @binding(0) var<storage, read> X: array<u32>;
@group(0) @binding(1) var<storage, read_write> Y: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;

override OP: u32 = 0u;
override DT: u32 = 0u;
override IN_INT: u32 = 0u;
override WG: u32 = 256u;

// NaN/inf built at run time from P.pad (always 0): WGSL constant evaluation rejects them.
fn nan() -> f32 { return bitcast<f32>(0x7fc00000u | P.pad); }
fn inf(neg: bool) -> f32 { return bitcast<f32>(select(0x7f800000u, 0xff800000u, neg) | P.pad); }
// NaN test on the bits: `x != x` may be folded away by shader compilers.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }

// tanh without overflow in exp-based implementations: |x| >= 10 is +-1 in f32 anyway.
fn safe_tanh(x: f32) -> f32 { return tanh(clamp(x, -10.0, 10.0)); }

// erfc(z) for z >= 0, Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7).
fn erfc_pos(z: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.3275911 * z);
  let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return poly * exp(-z * z);
}

// Clamp that keeps NaN and, like torch.clamp, gives `hi` everywhere when lo > hi.
fn clamp_f(x: f32, lo: f32, hi: f32) -> f32 {
  if (is_nan(x)) { return x; }
  var r = select(x, lo, x < lo);
  return select(r, hi, r > hi);
}

fn f_op(x: f32) -> f32 {
  switch OP {
    case 0u: { return abs(x); }
    case 1u: { return -x; }
    case 2u: { return exp(x); }
    case 3u: { if (x < 0.0) { return nan(); } return sqrt(x); }
    case 4u: { if (x < 0.0) { return nan(); } if (x == 0.0) { return inf(false); } return 1.0 / sqrt(x); }
    case 5u: { return sin(x); }
    case 6u: { return cos(x); }
    case 7u: { if (is_nan(x)) { return x; } return safe_tanh(x); }
    case 8u: { return round(x); }  // WGSL round() is round-half-to-even, as torch.round
    case 9u: { return 1.0 / (1.0 + exp(-x)); }
    case 10u: { if (is_nan(x)) { return x; } return select(x, 0.0, x < 0.0); }
    case 11u: {
      // 0.5 x (1 + erf(x / sqrt 2)), written with erfc so negative x keeps relative accuracy.
      let e = erfc_pos(abs(x) * 0.70710678118654752);
      if (x >= 0.0) { return x * (1.0 - 0.5 * e); }
      return 0.5 * x * e;
    }
    case 12u: {
      let k = 0.7978845608028654 * (x + 0.044715 * x * x * x);
      return 0.5 * x * (1.0 + safe_tanh(k));
    }
    case 13u: { return x / (1.0 + exp(-x)); }
    case 14u: { return x * clamp_f(x + 3.0, 0.0, 6.0) / 6.0; }
    case 15u: { return clamp_f(x, P.f0, P.f1); }
    case 16u: { return select(P.f0 * x, x, x >= 0.0); }
    case 17u: { if (x < 0.0) { return nan(); } if (x == 0.0) { return inf(true); } return log(x); }
    case 18u: { return 1.0 / x; }
    case 19u: { return floor(x); }
    case 20u: { return ceil(x); }
    case 21u: { return trunc(x); }
    default: { return nan(); }
  }
}

fn i_op(x: i32) -> i32 {
  switch OP {
    case 0u: { return abs(x); }
    case 1u: { return -x; }
    case 10u: { return max(x, 0); }
    case 15u: {
      var r = select(x, P.i0, x < P.i0);
      return select(r, P.i1, r > P.i1);
    }
    case 30u: { return ~x; }
    default: { return 0; }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  let w = X[i];
  if (OP == 31u) {  // logical_not: bool output from any input
    var z = w == 0u;
    if (DT == 0u) { z = (w & 0x7fffffffu) == 0u; }  // -0.0 is zero too; NaN is not (bit test)
    Y[i] = select(0u, 1u, z);
  } else if (DT == 2u) {  // bool: bitwise_not flips 0/1
    Y[i] = select(1u, 0u, w != 0u);
  } else if (DT == 1u) {
    Y[i] = bitcast<u32>(i_op(bitcast<i32>(w)));
  } else {
    var x = bitcast<f32>(w);
    if (IN_INT == 1u) { x = f32(bitcast<i32>(w)); }
    Y[i] = bitcast<u32>(f_op(x));
  }
}
