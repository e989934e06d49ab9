// Generic strided element copy for the memory family (permute, slice, select, split, cat, expand,
// repeat, flip, pixel_(un)shuffle, constant_pad_nd, roll, tril, reflection/replication pads). One invocation per element of the iteration
// shape P.it: its coordinate c gives a destination element dst_base + sum(c * dst.strides) and a
// source element chosen by MODE (see mem_util.h). Strides are two's-complement in u32: WGSL u32
// arithmetic wraps, so negative strides (flip) work. SRC, DST and P are declared by the generated
// preamble; elements move as they are, or converted to DST_T when the dtypes differ.
//!include tensor_shape
struct Params { it: Shape, src: Shape, dst: Shape, lo: array<vec4<i32>, 2>,
                src_base: u32, dst_base: u32, fill: u32, pad: u32 };

override MODE: u32 = 0u;
// 1: the destination is bool, written as (source != 0) (NaN true, -0 false); other dtype changes
// are WGSL conversions (float -> int rounds toward zero).
override TO_BOOL: u32 = 0u;
override WG: u32 = 256u;

// P.fill holds the bits of the fill value in the destination's dtype class.
fn fill_value() -> DST_T {
#if DST_FLOAT
  return DST_T(bitcast<f32>(P.fill));
#elif DST_INT
  return DST_T(bitcast<i32>(P.fill));
#else
  return DST_T(P.fill);
#endif
}


@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.it.numel) { return; }
  var rem = i;
  var so = P.src_base;
  var dofs = P.dst_base;
  var inside = true;
  var row = 0;
  var col = 0;
  for (var d = i32(P.it.rank) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    let n = dim_of(P.it, du);
    let c = rem % n;
    rem = rem / n;
    dofs = dofs + c * stride_of(P.dst, du);
    if (MODE == 0u) {
      so = so + c * stride_of(P.src, du);
    } else if (MODE == 1u) {
      so = so + (c % dim_of(P.src, du)) * stride_of(P.src, du);
    } else if (MODE == 2u) {
      let s = i32(c) - P.lo[du / 4u][du % 4u];
      if (s < 0 || s >= i32(dim_of(P.src, du))) {
        inside = false;
      } else {
        so = so + u32(s) * stride_of(P.src, du);
      }
    } else if (MODE == 3u) {
      // roll: lo holds the non-negative source offset (size - shift) mod size
      so = so + ((c + u32(P.lo[du / 4u][du % 4u])) % dim_of(P.src, du)) * stride_of(P.src, du);
    } else if (MODE == 4u || MODE == 5u) {
      let n = i32(dim_of(P.src, du));
      var s = i32(c) - P.lo[du / 4u][du % 4u];
      if (MODE == 4u) {
        // reflection without repeating the edge; the host checks pads < size
        if (s < 0) { s = -s; }
        if (s >= n) { s = 2 * (n - 1) - s; }
      } else {
        s = clamp(s, 0, n - 1);
      }
      so = so + u32(s) * stride_of(P.src, du);
    } else {
      so = so + c * stride_of(P.src, du);
      // tril: zero above diagonal lo[0] (column - row > lo[0]) in the last two dims
      if (du + 1u == P.it.rank) { col = i32(c); }
      if (du + 2u == P.it.rank) { row = i32(c); }
    }
  }
  if (MODE == 6u && col - row > P.lo[0][0]) { inside = false; }
  if (!inside) {
    store_DST(dofs, fill_value());
  } else if (TO_BOOL == 1u) {
    store_DST(dofs, DST_T(select(1u, 0u, f32(load_SRC(so)) == 0.0)));  // not `!= 0.0`: lavapipe makes NaN != 0 false
  } else {
    store_DST(dofs, DST_T(load_SRC(so)));
  }
}
