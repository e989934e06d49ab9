// Transposed convolution as a gather: each output (b, oc, oh, ow) sums x[b, ic, ih, iw] *
// w[ic, oc % OCg, kh, kw] over its group's input channels and the taps with
// oh = ih*stride - pad + kh*dilation (so ih = (oh + pad - kh*dilation) / stride when divisible).
// Weight is [IC, OC/groups, KH, KW]; output_padding only enlarges OH/OW (host side).
//!include conv_params

override WG: u32 = 256u;


@compute @workgroup_size(WG)
fn conv_transpose(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let ow = i % P.OW;
  let t = i / P.OW;
  let oh = t % P.OH;
  let t2 = t / P.OH;
  let oc = t2 % P.OC;
  let b = t2 / P.OC;
  let g = oc / P.ocg;
  let ocl = oc % P.ocg;
  let ic0 = g * P.icg;
  let hw = P.H * P.W;
  let khw = P.KH * P.KW;
  var acc = 0.0;
  for (var kh = 0u; kh < P.KH; kh = kh + 1u) {
    let nh = i32(oh) + i32(P.ph) - i32(kh * P.dh);
    if (nh < 0 || nh % i32(P.sh) != 0) { continue; }
    let ih = u32(nh) / P.sh;
    if (ih >= P.H) { continue; }
    for (var kw = 0u; kw < P.KW; kw = kw + 1u) {
      let nw = i32(ow) + i32(P.pw) - i32(kw * P.dw);
      if (nw < 0 || nw % i32(P.sw) != 0) { continue; }
      let iw = u32(nw) / P.sw;
      if (iw >= P.W) { continue; }
      let xo = (b * P.IC + ic0) * hw + ih * P.W + iw;
      let wo = (ic0 * P.ocg + ocl) * khw + kh * P.KW + kw;
      for (var c = 0u; c < P.icg; c = c + 1u) {
        acc = fma(f32(X[xo + c * hw]), f32(Wt[wo + c * P.ocg * khw]), acc);
      }
    }
  }
  if (HAS_BIAS == 1u) { acc = acc + f32(BIAS[oc]); }
  O[i] = O_T(epilogue(acc, i));
}
