// PyTorch advanced indexing: index.Tensor (gather) and index_put (scatter), see advanced_index.cpp.
// R is the indexed result shape. Each self dim takes its coordinate either from an R coordinate
// (P.src[d] >= 0) or from index tensor j = -(P.src[d] + 1), read at its broadcast position over R
// (strides P.ix[j], 0 outside the broadcast block). Negative indices wrap once; an index still out
// of range is reported to the graph's index-error record (P.sites[j] names the op and dim) and
// writes nothing; the run then raises. IN, OUT, I0..I3 and P are declared by the generated
// preamble; OUT is typed, or with ATOMIC (accumulating puts) 32-bit atomic words.
// MODE 0 index:     OUT[r] = IN[self offset of r]
// MODE 1 put:       OUT[self offset of r] = IN[values offset of r]  (ACC: += atomically)
// MODE 2 mask put:  over self elements c; where MASK (I0) at c[P.mask_lo..] is true,
//                   OUT[c] = IN[values offset of c]  (ACC: +=); P.v strides are over self dims.
//!include tensor_shape
struct Params { r: Shape, s: Shape, v: Shape, src: array<vec4<i32>, 2>, ix: array<array<vec4<u32>, 2>, 4>,
                mask_lo: u32, mask_rank: u32, pad0: u32, pad1: u32, sites: vec4<u32> };

override MODE: u32 = 0u;
override ACC: u32 = 0u;    // 0 overwrite, 1 float add, 2 int add, 3 bool or
override WG: u32 = 256u;
//!include index_error

fn at(a: array<vec4<u32>, 2>, d: u32) -> u32 { return a[d / 4u][d % 4u]; }

fn read_index(j: u32, p: u32) -> i32 {
  switch j {
    case 0u: { return i32(load_I0(p)); }
    case 1u: { return i32(load_I1(p)); }
    case 2u: { return i32(load_I2(p)); }
    default: { return i32(load_I3(p)); }
  }
}

// Self word offset of result coordinate `rc`, or INDEX_INVALID for an out-of-range index.
fn self_offset(rc: array<u32, 8>) -> u32 {
  var off = 0u;
  for (var d = 0u; d < P.s.rank; d = d + 1u) {
    let s = P.src[d / 4u][d % 4u];
    var c = 0u;
    if (s >= 0) {
      c = rc[u32(s)];
    } else {
      let j = u32(-s - 1);
      var p = 0u;
      for (var k = 0u; k < P.r.rank; k = k + 1u) { p = p + rc[k] * at(P.ix[j], k); }
      c = checked_index(P.sites[j], bitcast<u32>(read_index(j, p)), at(P.s.dims, d), true);
      if (c == INDEX_INVALID) { return INDEX_INVALID; }
    }
    off = off + c * at(P.s.strides, d);
  }
  return off;
}

#if ATOMIC
// Accumulates IN element `v` into output element `o`: float adds by compare-exchange (on the
// 32-bit word holding the f16 pair with OUT_HALF, or the byte of a uint8 with OUT_BYTES), int
// adds and bool ors atomically.
fn store(o: u32, v: IN_T) {
  if (ACC == 1u) {
#if OUT_HALF
    let w = o / 2u;
    loop {
      let old = atomicLoad(&OUT[w]);
      var h = unpack2x16float(old);
      h[o % 2u] = h[o % 2u] + f32(v);
      let r = atomicCompareExchangeWeak(&OUT[w], old, pack2x16float(h));
      if (r.exchanged) { break; }
    }
#else
    loop {
      let old = atomicLoad(&OUT[o]);
      let r = atomicCompareExchangeWeak(&OUT[o], old, bitcast<u32>(bitcast<f32>(old) + f32(v)));
      if (r.exchanged) { break; }
    }
#endif
  } else if (ACC == 2u) {
#if OUT_BYTES
    // uint8 wraps mod 256 inside its byte: a plain add would carry into the next element.
    let sh = (o % 4u) * 8u;
    loop {
      let old = atomicLoad(&OUT[o / 4u]);
      let b = (((old >> sh) & 0xffu) + bitcast<u32>(i32(v))) & 0xffu;
      let r = atomicCompareExchangeWeak(&OUT[o / 4u], old, (old & ~(0xffu << sh)) | (b << sh));
      if (r.exchanged) { break; }
    }
#else
    atomicAdd(&OUT[o], bitcast<u32>(i32(v)));
#endif
  } else {
#if OUT_BYTES
    atomicOr(&OUT[o / 4u], select(0u, 1u, u32(v) != 0u) << ((o % 4u) * 8u));
#else
    atomicOr(&OUT[o], select(0u, 1u, u32(v) != 0u));
#endif
  }
}
#else
fn store(o: u32, v: IN_T) { store_OUT(o, OUT_T(v)); }
#endif

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  var it = P.r;
  if (MODE == 2u) { it = P.s; }
  if (i >= it.numel) { return; }
  var rc: array<u32, 8>;
  var rem = i;
  var voff = 0u;
  for (var d = i32(it.rank) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    let n = at(it.dims, du);
    rc[du] = rem % n;
    rem = rem / n;
    voff = voff + rc[du] * at(P.v.strides, du);
  }
  if (MODE == 0u) {
    let off = self_offset(rc);
    if (off == INDEX_INVALID) { return; }
    store(i, load_IN(off));
  } else if (MODE == 1u) {
    let off = self_offset(rc);
    if (off == INDEX_INVALID) { return; }
    store(off, load_IN(voff));
  } else {
    var m = 0u;
    for (var k = 0u; k < P.mask_rank; k = k + 1u) { m = m + rc[P.mask_lo + k] * at(P.ix[0], k); }
    if (u32(load_I0(m)) != 0u) { store(i, load_IN(voff)); }
  }
}
