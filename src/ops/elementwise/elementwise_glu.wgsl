// aten.glu.default: the input is split in halves a, b along dim; Y = a * sigmoid(b), in f32. The
// output (shape of a half) is viewed as [outer, half * inner]; a half sits `half * inner` elements
// before b.
struct Params { n: u32, half_inner: u32, pad0: u32, pad1: u32 };

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  let outer = i / P.half_inner;
  let ia = outer * 2u * P.half_inner + i % P.half_inner;
  let b = f32(X[ia + P.half_inner]);
  Y[i] = Y_T(f32(X[ia]) / (1.0 + exp(-b)));
}
