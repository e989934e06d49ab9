// The store hook of the GEMM-like shaders that host a fused epilogue (ops/epilogue.h; //!include
// epilogue_store after their Params, which end in `ep: Epilogue` under `#if EPILOGUE`).
// v: the value of output element i (flat index).
fn epilogue(v: f32, i: u32) -> f32 {
#if EPILOGUE
  return epilogue_terms(v, i);
#else
  return v;
#endif
}
