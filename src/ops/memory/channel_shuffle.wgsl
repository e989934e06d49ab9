// etwebgpu.channel_shuffle (graph/cat_folding.h): element (n, k, p) of the interleave [N, 2C, R]
// of A and B ([N, C, R] each) is A's (k even) or B's (k odd) element (n, k / 2, p); one invocation
// per element stores it into its piece. A, B, O (O1) and P come from the generated preamble.
//!include channel_shuffle_store
struct Params { C: u32, R: u32, total: u32, pad: u32 };

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let p = i % P.R;
  let t = i / P.R;
  let k = t % (2u * P.C);
  let n = t / (2u * P.C);
  let j = (n * P.C + k / 2u) * P.R + p;
  var v = f32(B[j]);
  if (k % 2u == 0u) { v = f32(A[j]); }
  shuffle_store(n, k, p, P.R, v);
}
