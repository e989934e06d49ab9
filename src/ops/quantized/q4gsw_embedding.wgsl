// et_vk.embedding_q4gsw: out[t, d] = dequant(weight[indices[t], d]); one invocation per output
// element (flat index, 2D folding). LINEAR = 0: byte = (q[2j] + 8) << 4 | (q[2j+1] + 8);
// LINEAR = 1 (is_linear_weight): byte = (q[2j+1] + 8) << 4 | (q[2j] + 8).
// Indices outside [0, V) (negatives included, as in PyTorch's embedding) are reported to the
// graph's index-error record (site P.site) and the run raises; their outputs are 0.
// Bindings (generated preamble): the packed bytes W (u32 words), SC, IDX, O and P.
struct Params { n: u32, d: u32, v: u32, gs: u32, groups: u32, wrow: u32, site: u32, pad1: u32 };

//!include index_error

override LINEAR: u32 = 0u;
override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  let d = i % P.d;
  let r = checked_index(P.site, bitcast<u32>(i32(IDX[i / P.d])), P.v, false);
  if (r == INDEX_INVALID) { O[i] = O_T(0.0); return; }
  let byte = r * P.wrow + d / 2u;
  let b = (W[byte / 4u] >> ((byte % 4u) * 8u)) & 0xffu;
  let odd = (d & 1u) == 1u;
  var nib = 0u;
  if (LINEAR == 1u) { nib = select(b & 15u, b >> 4u, odd); } else { nib = select(b >> 4u, b & 15u, odd); }
  let sc = f32(SC[r * P.groups + select(d / P.gs, 0u, P.groups == 0u)]);
  O[i] = O_T(f32(i32(nib) - 8) * sc);
}
