// 2D upsampling, fast route for output widths divisible by 4: one invocation writes 4 adjacent
// outputs of one output row as a vec4 (flat index over vec4s with 2D folding), so the row /
// plane index math and the vertical taps are computed once per 4 outputs. Same f32 formulas as
// upsample2d.wgsl (MODE 0 bilinear, 1 nearest), so both routes give identical numbers.
//!include upsample2d_params


override MODE: u32 = 0u;
override WG: u32 = 256u;

//!include upsample_taps

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let j = (wid.x + wid.y * nwg.x) * WG + lid;
  if (j >= P.total / 4u) { return; }
  let ow4 = P.ow / 4u;
  let ox0 = (j % ow4) * 4u;
  let orow = j / ow4;  // plane * oh + oy
  let oy = orow % P.oh;
  let base = (orow / P.oh) * P.ih * P.iw;
  var o = vec4<f32>(0.0);
  if (MODE == 1u) {
    let r = base + nearest(oy, P.ih, P.oh, P.scale_h) * P.iw;
    for (var t = 0u; t < 4u; t = t + 1u) { o[t] = f32(X[r + nearest(ox0 + t, P.iw, P.ow, P.scale_w)]); }
  } else {
    let th = linear_taps(oy, P.ih, P.oh, P.scale_h);
    let r0 = base + th.i0 * P.iw;
    let r1 = base + th.i1 * P.iw;
    for (var t = 0u; t < 4u; t = t + 1u) {
      let tw = linear_taps(ox0 + t, P.iw, P.ow, P.scale_w);
      let top = (1.0 - tw.l1) * f32(X[r0 + tw.i0]) + tw.l1 * f32(X[r0 + tw.i1]);
      let bot = (1.0 - tw.l1) * f32(X[r1 + tw.i0]) + tw.l1 * f32(X[r1 + tw.i1]);
      o[t] = (1.0 - th.l1) * top + th.l1 * bot;
    }
  }
  O[j] = vec4<O_T>(o);
}
