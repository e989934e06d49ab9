// scatter / scatter_add as a gather over the output, so no atomics are needed and the result is
// deterministic: output element c starts from self[c]; then, for k = 0 .. index.dims[dim]-1 in
// order, every index element at c with c[dim] replaced by k whose value equals c[dim] contributes
// src (or the scalar VALUE) at that index coordinate: scatter keeps the last one, scatter_add
// adds them in index order (as PyTorch's CPU loop does). Coordinates outside the index's extent
// (d != dim) get no contribution. src is read with its own strides. An index outside [0, size) is
// reported to the graph's index-error record (the run raises). SELF, IDX, SRC, O and P are
// declared by the generated preamble; values are combined as f32 (float output), i32 (int) or
// u32 (bool, logical or).
//!include tensor_shape
struct Params { o: Shape, ix: Shape, src: Shape, dim: u32, value: u32, site: u32, pad1: u32 };

override ADD: u32 = 0u;     // 0: scatter (last write wins), 1: scatter_add
override USE_SRC: u32 = 1u; // 0: the scalar P.value (scatter.value; SRC is a dummy)
override WG: u32 = 256u;
//!include index_error


// A_T: what values are combined in; `scalar` reads P.value's bits as one.
#if O_FLOAT
alias A_T = f32;
fn scalar() -> A_T { return bitcast<f32>(P.value); }
fn combine(acc: A_T, v: A_T) -> A_T { return select(v, acc + v, ADD == 1u); }
#elif O_INT
alias A_T = i32;
fn scalar() -> A_T { return bitcast<i32>(P.value); }
fn combine(acc: A_T, v: A_T) -> A_T { return select(v, acc + v, ADD == 1u); }
#else
alias A_T = u32;
fn scalar() -> A_T { return P.value; }
fn combine(acc: A_T, v: A_T) -> A_T { return select(v, select(0u, 1u, acc != 0u || v != 0u), ADD == 1u); }
#endif

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.o.numel) { return; }
  var acc = A_T(load_SELF(i));
  // Offsets of (c with c[dim] = 0) in the index and src tensors; c[dim] is the target position.
  var rem = i;
  var ioff = 0u;
  var soff = 0u;
  var goal = 0u;
  var inside = true;
  for (var d = i32(P.o.rank) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    let c = rem % dim_of(P.o, du);
    rem = rem / dim_of(P.o, du);
    if (du == P.dim) {
      goal = c;
    } else {
      if (c >= dim_of(P.ix, du)) { inside = false; }
      ioff = ioff + c * stride_of(P.ix, du);
      soff = soff + c * stride_of(P.src, du);
    }
  }
  if (inside && P.ix.numel > 0u) {
    let n = dim_of(P.ix, P.dim);
    let istep = stride_of(P.ix, P.dim);
    let sstep = stride_of(P.src, P.dim);
    for (var k = 0u; k < n; k = k + 1u) {
      let w = i32(load_IDX(ioff + k * istep));
      // Every reader of an out-of-range index reports it (the first report is kept).
      if (w < 0 || u32(w) >= dim_of(P.o, P.dim)) { report_bad_index(P.site, w, dim_of(P.o, P.dim)); }
      if (w == i32(goal)) {
        var v = scalar();
        if (USE_SRC == 1u) { v = A_T(load_SRC(soff + k * sstep)); }
        acc = combine(acc, v);
      }
    }
  }
  store_O(i, O_T(acc));
}
