// Elementwise binary ops with full broadcasting. DT picks how values are computed (0 f32, 1 i32);
// operands are read converted to it whatever their storage (A_T, B_T: an int operand of a float op
// is promoted, as in PyTorch) and the result is converted to Y_T. OP picks the operation: a
// BINARY_ constant of the generated prelude (binary.cpp adds ops/elementwise/elementwise_ops.h's
// binary_ops_wgsl, which also defines binary_f32). B_SCALAR = 1 reads the right operand from
// P.scalar / P.iscalar instead of B.
//!include tensor_shape
struct Params { o: Shape, a: Shape, b: Shape, alpha: f32, scalar: f32, contiguous: u32, iscalar: i32 };

override OP: u32 = 0u;
override DT: u32 = 0u;
override B_SCALAR: u32 = 0u;
override WG: u32 = 256u;

//!include broadcast_offset

//!include float_bits
// Truth value of a float operand of a logical op: nonzero, NaN included (PyTorch).
fn truthy(x: f32) -> bool { return x != 0.0 || is_nan(x); }
//!include binary_math

fn f_op(x: f32, y: f32) -> f32 { return binary_f32(OP, x, y, P.alpha); }

fn floor_div_i(x: i32, y: i32) -> i32 {
  let q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) { return q - 1; }
  return q;
}

fn i_op(x: i32, y: i32) -> i32 {
  let al = i32(P.alpha);
  switch OP {
    case BINARY_ADD: { return x + al * y; }
    case BINARY_SUB: { return x - al * y; }
    case BINARY_MUL: { return x * y; }
    case BINARY_DIV_TRUNC: { if (y == 0) { return 0; } return x / y; }
    case BINARY_DIV_FLOOR: { if (y == 0) { return 0; } return floor_div_i(x, y); }
    case BINARY_MIN: { return min(x, y); }
    case BINARY_MAX: { return max(x, y); }
    case BINARY_BIT_AND: { return x & y; }
    case BINARY_BIT_OR: { return x | y; }
    case BINARY_BIT_XOR: { return x ^ y; }
    // Integer division by zero raises in PyTorch; a GPU kernel cannot, it gives 0 (docs/OPS.md).
    case BINARY_FMOD: { if (y == 0) { return 0; } return x % y; }
    case BINARY_REMAINDER: {
      if (y == 0) { return 0; }
      let m = x % y;
      if (m != 0 && (m < 0) != (y < 0)) { return m + y; }
      return m;
    }
    case BINARY_RSUB: { return y - al * x; }
    default: { return 0; }
  }
}

fn cmp_f(x: f32, y: f32) -> bool {
  switch OP {
    case BINARY_EQ: { return x == y && !is_nan(x); }
    case BINARY_NE: { return x != y || is_nan(x) || is_nan(y); }
    case BINARY_LT: { return x < y; }
    case BINARY_LE: { return x <= y; }
    case BINARY_GT: { return x > y; }
    case BINARY_GE: { return x >= y; }
    case BINARY_LOGICAL_XOR: { return truthy(x) != truthy(y); }
    case BINARY_LOGICAL_AND: { return truthy(x) && truthy(y); }
    case BINARY_LOGICAL_OR: { return truthy(x) || truthy(y); }
    default: { return false; }
  }
}
fn cmp_i(x: i32, y: i32) -> bool {
  switch OP {
    case BINARY_EQ: { return x == y; }
    case BINARY_NE: { return x != y; }
    case BINARY_LT: { return x < y; }
    case BINARY_LE: { return x <= y; }
    case BINARY_GT: { return x > y; }
    case BINARY_GE: { return x >= y; }
    case BINARY_LOGICAL_XOR: { return (x != 0) != (y != 0); }
    case BINARY_LOGICAL_AND: { return x != 0 && y != 0; }
    case BINARY_LOGICAL_OR: { return x != 0 || y != 0; }
    default: { return false; }
  }
}

fn b_f(i: u32) -> f32 {
  if (B_SCALAR == 1u) { return P.scalar; }
  return f32(load_B(i));
}
fn b_i(i: u32) -> i32 {
  if (B_SCALAR == 1u) { return P.iscalar; }
  return i32(load_B(i));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.o.numel) { return; }
  var ia = i;
  var ib = i;
  if (P.contiguous == 0u) {
    ia = operand_offset(i, P.a);
    ib = operand_offset(i, P.b);
  }
  if (OP >= BINARY_EQ && OP <= BINARY_LOGICAL_OR) {  // comparisons (elementwise_ops.h)
    var r = false;
    if (DT == 0u) { r = cmp_f(f32(load_A(ia)), b_f(ib)); } else { r = cmp_i(i32(load_A(ia)), b_i(ib)); }
    store_Y(i, Y_T(select(0u, 1u, r)));
  } else if (DT == 0u) {
    store_Y(i, Y_T(f_op(f32(load_A(ia)), b_f(ib))));
  } else {
    store_Y(i, Y_T(i_op(i32(load_A(ia)), b_i(ib))));
  }
}
