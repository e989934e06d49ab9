// Uniform and shared helpers of the static-int8 convolutions (q8ta_conv.cpp): shapes, geometry,
// zero points, 1 / output_scale, the activation and the split-K ranges.
struct Params {
  b: u32, ic: u32, h: u32, w: u32,
  oc: u32, oh: u32, ow: u32, g: u32,
  icg: u32, ocg: u32, k: u32, kw: u32,
  sh: u32, sw: u32, ph: u32, pw: u32,
  dh: u32, dw: u32, nq: u32, n: u32,
  izp: i32, ozp: i32, inv: f32, relu: u32,
  splits: u32, steps: u32, pad0: u32, pad1: u32,   // split-K: ranges of K, k-steps per range
  // a fused etwebgpu.q8ta_clamp after the requantization (q8_requant_fusion.cpp)
  post: u32, post_zp_in: i32, post_scale: f32, post_lo: f32,
  post_hi: f32, post_inv: f32, post_zp: i32, post_qmin: f32,
  post_qmax: f32, pad2: u32, pad3: u32, pad4: u32,
};
