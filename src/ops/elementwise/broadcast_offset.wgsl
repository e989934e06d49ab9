// Broadcast indexing shared by binary.wgsl and fused_elementwise.wgsl (//!include broadcast_offset):
// both have a uniform P whose Shape `o` is the output's.
//!include tensor_shape

// Offset of output element i in an operand whose strides were set for the output shape (0 on
// broadcast dims).
fn operand_offset(i: u32, s: Shape) -> u32 {
  var rem = i;
  var off = 0u;
  for (var d = i32(P.o.rank) - 1; d >= 0; d = d - 1) {
    let n = dim_of(P.o, u32(d));
    off = off + (rem % n) * stride_of(s, u32(d));
    rem = rem / n;
  }
  return off;
}
