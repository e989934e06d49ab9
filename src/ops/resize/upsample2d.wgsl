// 2D upsampling over NCHW planes, one invocation per output element, in f32 like PyTorch's CPU
// kernels. MODE 0: bilinear (area_pixel_compute_source_index + guard_index_and_lambda),
// 1: nearest (floor(dst * scale) clamped; same size and exact x2 are special-cased like PyTorch).
//!include upsample2d_params


override MODE: u32 = 0u;
override WG: u32 = 256u;

//!include upsample_taps

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let ox = i % P.ow;
  let oy = (i / P.ow) % P.oh;
  let base = (i / (P.ow * P.oh)) * P.ih * P.iw;
  if (MODE == 1u) {
    O[i] = O_T(X[base + nearest(oy, P.ih, P.oh, P.scale_h) * P.iw + nearest(ox, P.iw, P.ow, P.scale_w)]);
    return;
  }
  let th = linear_taps(oy, P.ih, P.oh, P.scale_h);
  let tw = linear_taps(ox, P.iw, P.ow, P.scale_w);
  let r0 = base + th.i0 * P.iw;
  let r1 = base + th.i1 * P.iw;
  let top = (1.0 - tw.l1) * f32(X[r0 + tw.i0]) + tw.l1 * f32(X[r0 + tw.i1]);
  let bot = (1.0 - tw.l1) * f32(X[r1 + tw.i0]) + tw.l1 * f32(X[r1 + tw.i1]);
  O[i] = O_T((1.0 - th.l1) * top + th.l1 * bot);
}
