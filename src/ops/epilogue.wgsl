// Library of the fused conv / GEMM epilogues (ops/epilogue.cpp), which generate after it the op
// switches unary_f32 / binary_f32 (ops/elementwise/elementwise_ops.h), `struct Epilogue` (s: one
// Shape per extra input, c: the terms' arguments) and `epilogue_terms`. The host kernel's Params
// holds `ep: Epilogue` and a `pad` of 0 (unary_math ORs it into NaN patterns).
//!include tensor_shape

//!include unary_math
//!include binary_math

// Offset of output element i in an extra input: s holds the output's dims and the input's
// strides for them (0 on broadcast dims); pad.x = 1 marks an input of the output's shape.
fn epilogue_offset(i: u32, s: Shape) -> u32 {
  if (s.pad.x == 1u) { return i; }
  var rem = i;
  var off = 0u;
  for (var d = i32(s.rank) - 1; d >= 0; d = d - 1) {
    let n = s.dims[d / 4][d % 4];
    off = off + (rem % n) * s.strides[d / 4][d % 4];
    rem = rem / n;
  }
  return off;
}
