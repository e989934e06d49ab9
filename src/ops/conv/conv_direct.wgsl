// Direct convolution (grouped, depthwise, or any groups == 1 conv when forced): one invocation
// per output element, summing its group's input channels over the kernel window. VEC4 = 1
// (channels per group % 4 == 0) accumulates 4 input channels per step as a vec4 dot product.
//!include conv_params

override VEC4: u32 = 0u;
override WG: u32 = 256u;


@compute @workgroup_size(WG)
fn conv_direct(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let ow = i % P.OW;
  let t = i / P.OW;
  let oh = t % P.OH;
  let t2 = t / P.OH;
  let oc = t2 % P.OC;
  let b = t2 / P.OC;
  let ic0 = (oc / P.ocg) * P.icg;
  let hw = P.H * P.W;
  let khw = P.KH * P.KW;
  let ih0 = i32(oh * P.sh) - i32(P.ph);
  let iw0 = i32(ow * P.sw) - i32(P.pw);
  var acc = 0.0;
  for (var kh = 0u; kh < P.KH; kh = kh + 1u) {
    let ih = ih0 + i32(kh * P.dh);
    if (ih < 0 || ih >= i32(P.H)) { continue; }
    for (var kw = 0u; kw < P.KW; kw = kw + 1u) {
      let iw = iw0 + i32(kw * P.dw);
      if (iw < 0 || iw >= i32(P.W)) { continue; }
      let xo = (b * P.IC + ic0) * hw + u32(ih) * P.W + u32(iw);
      let wo = oc * P.icg * khw + kh * P.KW + kw;
      if (VEC4 == 1u) {
        for (var c = 0u; c < P.icg; c = c + 4u) {
          let x = vec4<f32>(x_in(xo + c * hw, ic0 + c), x_in(xo + (c + 1u) * hw, ic0 + c + 1u), x_in(xo + (c + 2u) * hw, ic0 + c + 2u),
                             x_in(xo + (c + 3u) * hw, ic0 + c + 3u));
          let w = vec4<f32>(f32(Wt[wo + c * khw]), f32(Wt[wo + (c + 1u) * khw]), f32(Wt[wo + (c + 2u) * khw]), f32(Wt[wo + (c + 3u) * khw]));
          acc = acc + dot(x, w);
        }
      } else {
        for (var c = 0u; c < P.icg; c = c + 1u) { acc = fma(x_in(xo + c * hw, ic0 + c), f32(Wt[wo + c * khw]), acc); }
      }
    }
  }
  if (HAS_BIAS == 1u) { acc = acc + f32(BIAS[oc]); }
  store_out(i, epilogue(acc, i));
}
