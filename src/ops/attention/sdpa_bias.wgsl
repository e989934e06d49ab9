// Additive bias of attention entry (b, h, s, c) (//!include sdpa_bias, after sdpa_params; needs
// the mask binding M and `override MASK`): the mask (MASK 1 float, added; 2 bool, keep where
// true) and the causal limit (key c visible to query s iff c <= start + s).
fn bias(b: u32, h: u32, s: u32, c: u32) -> f32 {
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  if (P.causal == 1u && c > P.start + s) { return neg_inf; }
  if (MASK == 0u) { return 0.0; }
  let w = load_M(b * P.m_b + h * P.m_h + s * P.m_s + c * P.m_c);
  if (MASK == 1u) { return f32(w); }
  return select(neg_inf, 0.0, u32(w) != 0u);
}
