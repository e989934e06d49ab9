// Library of the fused elementwise kernels (ops/elementwise/fused.cpp), which generate `Params`
// (o: the output's Shape, n, pad = 0, s: one Shape per input, c: the terms' arguments) before it,
// and the op switches unary_f32 / binary_f32 (ops/elementwise/elementwise_ops.h) and `main` after
// it. The op math is the unfused kernels' own; the shader compiler may still contract or refold
// operations across terms (x * y + x as one fused multiply-add), so results agree within ulps,
// not always bit for bit (tests/graph/rewrite_differential_test.cpp).
//!include tensor_shape

//!include unary_math
//!include binary_math

//!include broadcast_offset

// pad.x = 1 marks an input read at i itself (its strides are the output's); otherwise pad.y is
// the first element its strides walk from (an input read through a view: format::VkExprView).
fn offset_of(i: u32, s: Shape) -> u32 {
  if (s.pad.x == 1u) { return i; }
  return s.pad.y + operand_offset(i, s);
}

// Coordinate of output element i along dim d: what a cat term selects by.
fn coord_of(i: u32, d: u32) -> u32 { return (i / stride_of(P.o, d)) % dim_of(P.o, d); }

// An input that is a cat part, placed at [lo, hi) along output dim d: its element for i there,
// element 0 elsewhere (a value the cat does not take).
fn part_offset(i: u32, s: Shape, d: u32, lo: u32, hi: u32) -> u32 {
  let c = coord_of(i, d);
  return select(0u, offset_of(i, s), c >= lo && c < hi);
}
