// Float helpers shared across op families (//!include float_bits). NaN tests on the bits:
// compilers may fold `x != x` to false (WGSL lets them assume no NaNs). Infinities from a runtime
// word: a constant bitcast to inf is rejected by the WGSL compiler.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_inf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }

fn from_bits(b: u32) -> f32 {
  var w = b;
  return bitcast<f32>(w);
}

// max that propagates NaN like torch.max.
fn nmax(a: f32, b: f32) -> f32 {
  if (is_nan(a)) { return a; }
  if (is_nan(b)) { return b; }
  return max(a, b);
}
