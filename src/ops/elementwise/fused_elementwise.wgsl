// Library of the fused elementwise kernels (ops/elementwise/fused.cpp), which generate `Params`
// (o: the output's Shape, n, pad = 0, s: one Shape per input, c: the terms' arguments) and `main`
// around it. The op math is the unfused kernels' own, so results match them bit for bit in f32.
struct Shape { rank: u32, numel: u32, pad: vec2<u32>, dims: array<vec4<u32>, 2>, strides: array<vec4<u32>, 2> };

//!include unary_math
//!include binary_math

fn dim_of(s: Shape, d: u32) -> u32 { return s.dims[d / 4u][d % 4u]; }
fn stride_of(s: Shape, d: u32) -> u32 { return s.strides[d / 4u][d % 4u]; }

// Offset of output element i in an input viewed at the output's shape (stride 0 on broadcast
// dims); pad.x = 1 marks an input whose live shape is the output's, read at i itself.
fn offset_of(i: u32, s: Shape) -> u32 {
  if (s.pad.x == 1u) { return i; }
  var rem = i;
  var off = 0u;
  for (var d = i32(P.o.rank) - 1; d >= 0; d = d - 1) {
    let n = dim_of(P.o, u32(d));
    off = off + (rem % n) * stride_of(s, u32(d));
    rem = rem / n;
  }
  return off;
}
