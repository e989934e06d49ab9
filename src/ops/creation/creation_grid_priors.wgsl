// et_vk.grid_priors: the anchor centre of every cell of an H x W feature map, row-major:
// Y[i] = ((i % W + offset) * stride, (i / W + offset) * stride), in f32 as PyTorch computes it
// (arange + offset, then times stride).
struct Params { n: u32, w: u32, stride: f32, offset: f32 };

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  Y[2u * i] = Y_T((f32(i % P.w) + P.offset) * P.stride);
  Y[2u * i + 1u] = Y_T((f32(i / P.w) + P.offset) * P.stride);
}
