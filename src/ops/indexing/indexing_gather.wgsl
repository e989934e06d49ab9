// Index-driven gathers (indexing family). Indices are i32 words, checked as PyTorch does:
// embedding, index_select and gather accept [0, size). A bad index is reported to the graph's index-error record (P.site
// names the op) and its output element is 0; the run then raises instead of returning the output.
// SRC, IDX, OUT and P are declared by the generated preamble; elements move as they are.
// MODE 0 index_select / embedding: out[o, k, r] = SRC[o, IDX[k], r] over (outer, n_idx, inner).
// MODE 1 gather: out[c] = SRC[c with c[dim] = IDX[c]], c over the index shape P.o.
//!include tensor_shape
struct Params { o: Shape, s: Shape, dim: u32, n_idx: u32, inner: u32, src_dim: u32, site: u32, pad0: u32, pad1: u32, pad2: u32 };

override MODE: u32 = 0u;
override WG: u32 = 256u;
//!include index_error


@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.o.numel) { return; }
  if (MODE == 0u) {
    let r = i % P.inner;
    let t = i / P.inner;
    let k = t % P.n_idx;
    let o = t / P.n_idx;
    let v = checked_index(P.site, bitcast<u32>(i32(load_IDX(k))), P.src_dim, false);
    if (v == INDEX_INVALID) { store_OUT(i, OUT_T(0)); return; }
    store_OUT(i, OUT_T(load_SRC((o * P.src_dim + v) * P.inner + r)));
  } else if (MODE == 1u) {
    let v = checked_index(P.site, bitcast<u32>(i32(load_IDX(i))), P.src_dim, false);
    if (v == INDEX_INVALID) { store_OUT(i, OUT_T(0)); return; }
    var rem = i;
    var off = 0u;
    for (var d = i32(P.o.rank) - 1; d >= 0; d = d - 1) {
      let du = u32(d);
      let n = dim_of(P.o, du);
      var c = rem % n;
      rem = rem / n;
      if (du == P.dim) { c = v; }
      off = off + c * stride_of(P.s, du);
    }
    store_OUT(i, OUT_T(load_SRC(off)));
  }
}
