// Shared by the matmul shaders (//!include matmul_params): the uniform written by matmul.cpp.
struct Params {
  M: u32, N: u32, K: u32, batch: u32,
  bdims: vec4<u32>, astr: vec4<u32>, bstr: vec4<u32>,
  cstride: u32, bias_sm: u32, bias_sn: u32, pad0: u32,
  alpha: f32, beta: f32, pad1: u32, pad2: u32,
};
