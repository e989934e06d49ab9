// Elementwise unary ops over a flat index (input and output have the same shape, so the flat
// index is the element index: no stride math). OP picks the op: a UNARY_ constant of the
// generated prelude (unary.cpp adds ops/elementwise/elementwise_ops.h's unary_ops_wgsl, which
// also defines unary_f32). DT picks how values are computed (0 f32, 1 i32, 2 bool 0/1). Float ops
// of integer inputs read them converted to f32 (PyTorch promotes them); values are computed in f32
// whatever the storage (X_T, Y_T).
struct Params { n: u32, i0: i32, i1: i32, pad: u32, f0: f32, f1: f32, f2: f32, pad2: u32 };

override OP: u32 = 0u;
override DT: u32 = 0u;
override WG: u32 = 256u;

//!include unary_math

fn f_op(x: f32) -> f32 { return unary_f32(OP, x, P.f0, P.f1, P.f2, P.i0); }

fn i_op(x: i32) -> i32 {
  switch OP {
    case UNARY_ABS: { return abs(x); }
    case UNARY_NEG: { return -x; }
    case UNARY_RELU: { return max(x, 0); }
    case UNARY_CLAMP: {
      var r = select(x, P.i0, x < P.i0);
      return select(r, P.i1, r > P.i1);
    }
    case UNARY_BITWISE_NOT: { return ~x; }
    case UNARY_SIGN: { return select(0, 1, x > 0) - select(0, 1, x < 0); }
    default: { return 0; }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  if (OP == UNARY_IDENTITY) {  // identity (input and output of one dtype class)
    store_Y(i, Y_T(load_X(i)));
  } else if (OP == UNARY_ISINF || OP == UNARY_ISNAN) {  // isinf / isnan: bool output; integers are never either
    var r = false;
#if X_FLOAT
    let x = f32(load_X(i));
    r = select(is_inf(x), is_nan(x), OP == UNARY_ISNAN);
#endif
    store_Y(i, Y_T(select(0u, 1u, r)));
  } else if (OP == UNARY_LOGICAL_NOT) {  // logical_not: bool output from any input (-0.0 is zero, NaN is not)
    store_Y(i, Y_T(select(0u, 1u, f32(load_X(i)) == 0.0)));
  } else if (DT == 2u) {  // bool: bitwise_not flips 0/1, sign keeps it
    let w = u32(load_X(i));
    store_Y(i, Y_T(select(select(1u, 0u, w != 0u), w, OP == UNARY_SIGN)));
  } else if (DT == 1u) {
    store_Y(i, Y_T(i_op(i32(load_X(i)))));
  } else {
    store_Y(i, Y_T(f_op(f32(load_X(i)))));
  }
}
