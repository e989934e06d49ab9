// Mask-driven indexing: masked_fill, and the ops whose output positions come from a running
// count (masked_scatter, masked_select, nonzero, repeat_interleave). Those run three passes over
// 256-element blocks of the iteration shape P.o: block_count sums each block's weights (a mask
// bit, a non-zero test or a repeat count), block_scan turns the sums into exclusive block offsets
// (COUNTS[1 + b]) and the total (COUNTS[0], read back when the output size depends on it), and
// masked_write scans inside the block in workgroup memory and writes each element's output.
// Each entry point is its own kernel (define MASKED_FILL, BLOCK_COUNT, BLOCK_SCAN or MASKED_WRITE)
// binding only what it reads: SELF, W, O, SRC (typed tensors), COUNTS and P, declared by the
// generated preamble. Elements move as they are (converted to O_T).
//!include tensor_shape
// o: iteration shape; m: strides of the weight source over o; s: strides of self over o.
// cap: output capacity (elements); value: masked_fill's value bits in O's dtype class, or
// masked_scatter's src length.
struct Params { o: Shape, m: Shape, s: Shape, nblocks: u32, cap: u32, value: u32, pad: u32 };

override MODE: u32 = 0u;    // masked_write: 0 masked_scatter, 1 masked_select, 2 nonzero, 3 repeat_interleave
override WEIGHT: u32 = 0u;  // 0: W != 0 (NaN counts, -0 does not), 1: W is an i32 count
const WG: u32 = 256u;

var<workgroup> scratch: array<u32, 256>;
var<workgroup> block_sum: atomic<u32>;
var<workgroup> block_sum_plain: u32;


// Offset of flat index i of P.o in an operand with strides `sh` (0 on broadcast dims).
fn offset_in(sh: Shape, i: u32) -> u32 {
  var rem = i;
  var off = 0u;
  for (var d = i32(P.o.rank) - 1; d >= 0; d = d - 1) {
    let n = dim_of(P.o, u32(d));
    off = off + (rem % n) * stride_of(sh, u32(d));
    rem = rem / n;
  }
  return off;
}

#if BLOCK_COUNT || MASKED_WRITE
fn weight(i: u32) -> u32 {
  if (i >= P.o.numel) { return 0u; }
  let w = load_W(offset_in(P.m, i));
  // `== 0` negated, not `!= 0`: lavapipe makes NaN != 0 false
  if (WEIGHT == 0u) { return select(1u, 0u, w == W_T(0)); }
  // index check: wired to the error buffer after merge (a negative repeat count writes nothing)
  return u32(max(i32(w), 0));
}
#endif

#if MASKED_FILL
// P.value holds the fill value's bits in O's dtype class.
fn fill_value() -> O_T {
#if O_FLOAT
  return O_T(bitcast<f32>(P.value));
#elif O_INT
  return O_T(bitcast<i32>(P.value));
#else
  return O_T(P.value);
#endif
}

@compute @workgroup_size(WG)
fn masked_fill(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.o.numel) { return; }
  if (u32(load_W(offset_in(P.m, i))) != 0u) {
    store_O(i, fill_value());
  } else {
    store_O(i, O_T(load_SELF(offset_in(P.s, i))));
  }
}
#endif

#if MASKED_WRITE
// Inclusive scan of the workgroup's weights in `scratch` (Hillis-Steele); every invocation calls it.
fn scan_block(lid: u32, w: u32) {
  scratch[lid] = w;
  workgroupBarrier();
  for (var k = 1u; k < WG; k = k * 2u) {
    var add = 0u;
    if (lid >= k) { add = scratch[lid - k]; }
    workgroupBarrier();
    scratch[lid] = scratch[lid] + add;
    workgroupBarrier();
  }
}

#endif

#if BLOCK_COUNT
@compute @workgroup_size(WG)
fn block_count(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
  let b = wid.x + wid.y * nwg.x;
  // A sum needs no scan: one workgroup atomic (2 barriers instead of the scan's 16).
  if (lid == 0u) { atomicStore(&block_sum, 0u); }
  workgroupBarrier();
  let w = weight(b * WG + lid);
  if (w != 0u) { atomicAdd(&block_sum, w); }
  workgroupBarrier();
  if (lid == 0u && b < P.nblocks) { COUNTS[1u + b] = atomicLoad(&block_sum); }
}
#endif

#if BLOCK_SCAN
@compute @workgroup_size(1)
fn block_scan() {
  var run = 0u;
  for (var b = 0u; b < P.nblocks; b = b + 1u) {
    let c = COUNTS[1u + b];
    COUNTS[1u + b] = run;
    run = run + c;
  }
  COUNTS[0] = run;
}
#endif

#if MASKED_WRITE
@compute @workgroup_size(WG)
fn masked_write(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
  let b = wid.x + wid.y * nwg.x;
  let i = b * WG + lid;
  // This block's count (next offset - own offset; the last block ends at the total). A block with
  // none skips the scan: masked_scatter copies self, the other modes write nothing.
  if (lid == 0u) {
    var count = 0u;
    if (b < P.nblocks) {
      var end = COUNTS[0];
      if (b + 1u < P.nblocks) { end = COUNTS[2u + b]; }
      count = end - COUNTS[1u + b];
    }
    block_sum_plain = count;
  }
  let block_count = workgroupUniformLoad(&block_sum_plain);
  if (block_count == 0u) {
    if (MODE == 0u && i < P.o.numel) { store_O(i, O_T(load_SELF(offset_in(P.s, i)))); }
    return;
  }
  let w = weight(i);
  scan_block(lid, w);
  if (i >= P.o.numel) { return; }
  let pos = COUNTS[1u + b] + scratch[lid] - w;  // exclusive position of element i
  if (MODE == 0u) {
    var v = O_T(load_SELF(offset_in(P.s, i)));
    // index check: wired to the error buffer after merge (src shorter than the mask's count)
    if (w != 0u && pos < P.value) { v = O_T(load_SRC(pos)); }
    store_O(i, v);
  } else if (MODE == 1u) {
    if (w != 0u && pos < P.cap) { store_O(pos, O_T(load_SELF(offset_in(P.s, i)))); }
  } else if (MODE == 2u) {
    if (w != 0u && (pos + 1u) * P.o.rank <= P.cap) {
      var rem = i;
      for (var d = i32(P.o.rank) - 1; d >= 0; d = d - 1) {
        let n = dim_of(P.o, u32(d));
        store_O(pos * P.o.rank + u32(d), O_T(rem % n));
        rem = rem / n;
      }
    }
  } else {
    for (var k = 0u; k < w && pos + k < P.cap; k = k + 1u) { store_O(pos + k, O_T(i)); }
  }
}
#endif
