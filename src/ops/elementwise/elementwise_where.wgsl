// Ternary ops with C, A, B each broadcast to the output shape; contiguous = 1 when no operand
// broadcasts: all offsets are the flat index. Operands are read converted to the output's type
// (an int32/bool operand of a float output is promoted, as in PyTorch).
// `main`: aten.where.self, Y = C ? A : B.
// `clamp_main`: aten.clamp.Tensor, Y = min(max(C, A), B) with A = min and B = max, either absent
// (A_ABSENT / B_ABSENT); DT 0 computes in f32 (any NaN operand gives NaN, as ATen), 1 in i32.
//!include tensor_shape
struct Params { o: Shape, c: Shape, a: Shape, b: Shape, contiguous: u32, pad0: u32, pad1: u32, pad2: u32 };

override DT: u32 = 0u;
override WG: u32 = 256u;

// An absent bound is bound to a dummy that the entry point must still use statically (the
// pipeline's layout has only the bindings it uses), so absence is a constant, not an #if.
#if A_ABSENT
const HAS_A = false;
#else
const HAS_A = true;
#endif
#if B_ABSENT
const HAS_B = false;
#else
const HAS_B = true;
#endif


// Offsets of output element i in C, A and B.
fn offsets(i: u32) -> vec3<u32> {
  if (P.contiguous == 1u) { return vec3<u32>(i, i, i); }
  var o = vec3<u32>(0u, 0u, 0u);
  var rem = i;
  for (var d = i32(P.o.rank) - 1; d >= 0; d = d - 1) {
    let n = dim_of(P.o, u32(d));
    let k = rem % n;
    rem = rem / n;
    o = o + k * vec3<u32>(stride_of(P.c, u32(d)), stride_of(P.a, u32(d)), stride_of(P.b, u32(d)));
  }
  return o;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.o.numel) { return; }
  let off = offsets(i);
  if (u32(load_C(off.x)) != 0u) {
    store_Y(i, Y_T(load_A(off.y)));
  } else {
    store_Y(i, Y_T(load_B(off.z)));
  }
}

//!include float_bits

@compute @workgroup_size(WG)
fn clamp_main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.o.numel) { return; }
  let off = offsets(i);
  if (DT == 1u) {
    var r = i32(load_C(off.x));
    if (HAS_A) { r = max(r, i32(load_A(off.y))); }
    if (HAS_B) { r = min(r, i32(load_B(off.z))); }
    store_Y(i, Y_T(r));
    return;
  }
  var r = f32(load_C(off.x));
  var bad = is_nan(r);
  if (HAS_A) {
    let lo = f32(load_A(off.y));
    bad = bad || is_nan(lo);
    r = select(r, lo, r < lo);
  }
  if (HAS_B) {
    let hi = f32(load_B(off.z));
    bad = bad || is_nan(hi);
    r = select(r, hi, r > hi);
  }
  if (bad) { r = bitcast<f32>(0x7fc00000u | P.pad0); }
  store_Y(i, Y_T(r));
}
