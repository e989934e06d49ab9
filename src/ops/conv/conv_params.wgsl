// Shared by the conv shaders (included with //!include conv_params): the uniform written by
// conv.cpp (struct Params there) and the bindings every conv kernel uses.
struct Params {
  B: u32, IC: u32, H: u32, W: u32,
  OC: u32, OH: u32, OW: u32, KH: u32,
  KW: u32, sh: u32, sw: u32, ph: u32,
  pw: u32, dh: u32, dw: u32, groups: u32,
  icg: u32, ocg: u32, K: u32, N: u32,
  out_min: f32, out_max: f32, total: u32, pad: u32,
};

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> Wt: array<f32>;
@group(0) @binding(2) var<storage, read> BIAS: array<f32>;
@group(0) @binding(3) var<storage, read_write> O: array<f32>;
@group(0) @binding(4) var<uniform> P: Params;
