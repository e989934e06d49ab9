// Shared by the sdpa shaders (//!include sdpa_params): the uniform written by attention.cpp.
struct Params {
  b: u32, h: u32, sq: u32, skv: u32,
  d: u32, dv: u32, group: u32, causal: u32,
  start: u32, rows: u32, entries: u32, neg_inf_bits: u32,
  q_b: u32, q_h: u32, q_s: u32, scale: f32,
  k_b: u32, k_h: u32, k_s: u32, pad0: u32,
  v_b: u32, v_h: u32, v_s: u32, pad1: u32,
  o_b: u32, o_h: u32, o_s: u32, pad2: u32,
  m_b: u32, m_h: u32, m_s: u32, m_c: u32,
};
