// Shared by the sdpa shaders (//!include sdpa_params): the uniform written by attention.cpp.
// zero_masked: a query row whose keys are all masked gives 0 (PyTorch's safe softmax, as the
// decomposed attention of ExecuTorch's Llama computes it) instead of NaN. splits / chunk: the
// decode route's key splits and keys per split.
struct Params {
  b: u32, h: u32, sq: u32, skv: u32,
  d: u32, dv: u32, group: u32, causal: u32,
  start: u32, rows: u32, entries: u32, neg_inf_bits: u32,
  q_b: u32, q_h: u32, q_s: u32, scale: f32,
  k_b: u32, k_h: u32, k_s: u32, zero_masked: u32,
  v_b: u32, v_h: u32, v_s: u32, splits: u32,
  o_b: u32, o_h: u32, o_s: u32, chunk: u32,
  m_b: u32, m_h: u32, m_s: u32, m_c: u32,
  q_o: u32, k_o: u32, v_o: u32, o_o: u32,  // element offsets of q, k, v and out in their buffers
  pad: u32, pad1: u32, pad2: u32, pad3: u32,  // pad: 0 (an epilogue's unary_math ORs it into NaN patterns)
#if EPILOGUE
  ep: Epilogue,  // the fused attention's epilogue (ops/epilogue.h): the kernels writing O apply it
#endif
};

// What a query row whose normaliser is `l` and whose unnormalised value sum is `acc` gives:
// acc / l, or for a row with no visible key (l = 0) 0 under zero_masked or when there are no
// keys at all (an empty sum), else NaN as PyTorch's softmax of all -inf does.
fn finish_row(acc: f32, l: f32) -> f32 {
  if (l > 0.0) { return acc / l; }
  let nan = bitcast<f32>(P.neg_inf_bits | 0x00400000u);  // a quiet NaN; -inf - -inf may fold to 0
  return select(nan, 0.0, P.zero_masked == 1u || P.skv == 0u);
}
