// A tensor's shape in a uniform (//!include tensor_shape): ops/op_common.h's ShapeU, written by
// make_shape. rank <= 8; dims and strides in elements, two vec4s each; pad.x is free for the
// includer (the epilogue marks an input of the output's shape with it).
struct Shape { rank: u32, numel: u32, pad: vec2<u32>, dims: array<vec4<u32>, 2>, strides: array<vec4<u32>, 2> };
fn dim_of(s: Shape, d: u32) -> u32 { return s.dims[d / 4u][d % 4u]; }
fn stride_of(s: Shape, d: u32) -> u32 { return s.strides[d / 4u][d % 4u]; }
