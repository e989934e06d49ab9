// Depthwise convolution (one input and one output channel a group): each invocation computes
// four consecutive outputs of one output row, so each weight is read once for four outputs and
// the row's index arithmetic is shared. The kernel extents are constants (KHC, KWC), so the
// loops unroll. Reads go through x_in (a fused prologue), stores through out_at (channels-last)
// and the epilogue, as in every conv kernel.
//!include conv_params

override KHC: u32 = 3u;
override KWC: u32 = 3u;
override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn conv_depthwise(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let quads = (P.OW + 3u) / 4u;
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.B * P.OC * P.OH * quads) { return; }
  let ow0 = (i % quads) * 4u;
  let t = i / quads;
  let oh = t % P.OH;
  let bc = t / P.OH;  // b * OC + oc: the input plane too (IC == OC)
  let oc = bc % P.OC;
  let xb = bc * P.H * P.W;
  let ih0 = i32(oh * P.sh) - i32(P.ph);
  let iw0 = i32(ow0 * P.sw) - i32(P.pw);
  var acc = vec4<f32>(0.0);
  for (var kh = 0u; kh < KHC; kh = kh + 1u) {
    let ih = ih0 + i32(kh * P.dh);
    if (ih < 0 || ih >= i32(P.H)) { continue; }
    let row = xb + u32(ih) * P.W;
    for (var kw = 0u; kw < KWC; kw = kw + 1u) {
      let w = f32(Wt[(oc * KHC + kh) * KWC + kw]);
      for (var j = 0u; j < 4u; j = j + 1u) {
        let iw = iw0 + i32(j * P.sw + kw * P.dw);
        if (iw >= 0 && iw < i32(P.W)) { acc[j] = fma(x_in(row + u32(iw), oc), w, acc[j]); }
      }
    }
  }
  var bias = 0.0;
  if (HAS_BIAS == 1u) { bias = f32(BIAS[oc]); }
  let o0 = (bc * P.OH + oh) * P.OW + ow0;
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (ow0 + j < P.OW) { store_out(o0 + j, epilogue(acc[j] + bias, o0 + j)); }
  }
}
