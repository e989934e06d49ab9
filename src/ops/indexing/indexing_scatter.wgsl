// scatter / scatter_add as a gather over the output, so no atomics are needed and the result is
// deterministic: output element c starts from self[c]; then, for k = 0 .. index.dims[dim]-1 in
// order, every index element at c with c[dim] replaced by k whose value equals c[dim] contributes
// src (or the scalar VALUE) at that index coordinate: scatter keeps the last one, scatter_add
// adds them in index order (as PyTorch's CPU loop does). Coordinates outside the index's extent
// (d != dim) get no contribution. Index words are i32; src is read with its own strides. An index
// outside [0, size) is reported to the graph's index-error record (the run raises).
struct Shape { rank: u32, numel: u32, pad: vec2<u32>, dims: array<vec4<u32>, 2>, strides: array<vec4<u32>, 2> };
struct Params { o: Shape, ix: Shape, src: Shape, dim: u32, value: u32, site: u32, pad1: u32 };

@group(0) @binding(0) var<storage, read> SELF: array<u32>;
@group(0) @binding(1) var<storage, read> IDX: array<i32>;
@group(0) @binding(2) var<storage, read> SRC: array<u32>;
@group(0) @binding(3) var<storage, read_write> O: array<u32>;
@group(0) @binding(4) var<uniform> P: Params;

override ADD: u32 = 0u;     // 0: scatter (last write wins), 1: scatter_add
override DT: u32 = 0u;      // scatter_add words: 0 f32, 1 i32, 2 bool (logical or)
override USE_SRC: u32 = 1u; // 0: the scalar P.value (scatter.value)
override WG: u32 = 256u;
//!include index_error

fn dim_of(s: Shape, d: u32) -> u32 { return s.dims[d / 4u][d % 4u]; }
fn stride_of(s: Shape, d: u32) -> u32 { return s.strides[d / 4u][d % 4u]; }

fn combine(acc: u32, v: u32) -> u32 {
  if (ADD == 0u) { return v; }
  if (DT == 0u) { return bitcast<u32>(bitcast<f32>(acc) + bitcast<f32>(v)); }
  if (DT == 1u) { return bitcast<u32>(bitcast<i32>(acc) + bitcast<i32>(v)); }
  return select(0u, 1u, acc != 0u || v != 0u);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.o.numel) { return; }
  var acc = SELF[i];
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
      let w = IDX[ioff + k * istep];
      // Every reader of an out-of-range index reports it (the first report is kept).
      if (w < 0 || u32(w) >= dim_of(P.o, P.dim)) { report_bad_index(P.site, w, dim_of(P.o, P.dim)); }
      if (w == i32(goal)) {
        var v = P.value;
        if (USE_SRC == 1u) { v = SRC[soff + k * sstep]; }
        acc = combine(acc, v);
      }
    }
  }
  O[i] = acc;
}
