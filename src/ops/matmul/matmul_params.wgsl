// Shared by the matmul shaders (//!include matmul_params): the uniform written by matmul.cpp
// and the epilogue every store applies (ops/epilogue.h: a fused chain when EPILOGUE is defined).
// `pad` is 0: the fused math ORs it into NaN bit patterns.
struct Params {
  M: u32, N: u32, K: u32, batch: u32,
  bdims: vec4<u32>, astr: vec4<u32>, bstr: vec4<u32>,
  cstride: u32, bias_sm: u32, bias_sn: u32, pad: u32,
  alpha: f32, beta: f32, splits: u32, kchunk: u32,  // split-K: K ranges of kchunk, P.batch each
  eps: f32, pad1: u32, pad2: u32, pad3: u32,         // NORM_A: the layer norm's epsilon
#if EPILOGUE
  ep: Epilogue,
#endif
};

//!include epilogue_store
