// Transposed convolution as a gather: output (b, oc, oh, ow) sums x[b, ic, ih, iw] *
// w[ic, oc % OCg, kh, kw] over its group's input channels and the taps with
// oh = ih*stride - pad + kh*dilation (so ih = (oh + pad - kh*dilation) / stride when divisible).
// Weight is [IC, OC/groups, KH, KW]; output_padding only enlarges OH/OW (host side).
// A slot computes OCT channels of one group at one output pixel, so each x read feeds OCT
// independent FMAs; slot order (fastest first): ow, oh, channel block, group, b. The loop is
// latency-bound, so ICS lanes of a workgroup share a slot, each summing every ICS-th input
// channel, and add their partial sums through workgroup memory. The host dispatches
// P.N * groups * ceil(ocg / OCT) slots (P.N = B*OH*OW), WG / ICS per workgroup.
//!include conv_params

override WG: u32 = 256u;
override ICS: u32 = 1u;
const OCT: u32 = 4u;

var<workgroup> partial: array<vec4<f32>, WG>;

// The OCT weights of input channel row `wo`; `dw` holds each channel's offset from the first.
fn weights4(wo: u32, dw: vec4<u32>) -> vec4<f32> {
  return vec4<f32>(f32(Wt[wo]), f32(Wt[wo + dw.y]), f32(Wt[wo + dw.z]), f32(Wt[wo + dw.w]));
}

@compute @workgroup_size(WG)
fn conv_transpose(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let slots = WG / ICS;
  let s = lid / slots;  // this lane's input-channel slice
  let nblk = (P.ocg + OCT - 1u) / OCT;
  let gblk = P.groups * nblk;
  let i = (wid.x + wid.y * nwg.x) * slots + lid % slots;
  let live = i < P.N * gblk;  // no early return: every lane reaches the barrier
  let ow = i % P.OW;
  let t = i / P.OW;
  let oh = t % P.OH;
  let t2 = t / P.OH;
  let b = t2 / gblk;
  let g = (t2 % gblk) / nblk;
  let ocl = (t2 % nblk) * OCT;
  let hw = P.H * P.W;
  let khw = P.KH * P.KW;
  let xs = ICS * hw;             // x stride between this lane's input channels
  let ws = ICS * P.ocg * khw;    // and the weight's
  // Past the group's last channel (OCg % OCT != 0) a lane reads the last channel's weights and
  // stores nothing, so the loop stays branch-free and in bounds.
  let dw = vec4<u32>(0u, min(ocl + 1u, P.ocg - 1u) - ocl, min(ocl + 2u, P.ocg - 1u) - ocl,
                     min(ocl + 3u, P.ocg - 1u) - ocl) * khw;
  // With dilation 1 only kh = (oh + pad) mod stride, then every stride-th, can divide: start
  // there. Other dilations visit every tap and test divisibility.
  let kh0 = select(0u, (oh + P.ph) % P.sh, P.dh == 1u);
  let khs = select(1u, P.sh, P.dh == 1u);
  let kw0 = select(0u, (ow + P.pw) % P.sw, P.dw == 1u);
  let kws = select(1u, P.sw, P.dw == 1u);
  var acc = vec4<f32>(0.0);
  for (var kh = kh0; live && kh < P.KH; kh = kh + khs) {
    let nh = i32(oh + P.ph) - i32(kh * P.dh);
    if (nh < 0) { break; }  // nh only decreases with kh
    if (nh % i32(P.sh) != 0) { continue; }
    let ih = u32(nh) / P.sh;
    if (ih >= P.H) { continue; }
    for (var kw = kw0; kw < P.KW; kw = kw + kws) {
      let nw = i32(ow + P.pw) - i32(kw * P.dw);
      if (nw < 0) { break; }
      if (nw % i32(P.sw) != 0) { continue; }
      let iw = u32(nw) / P.sw;
      if (iw >= P.W) { continue; }
      let ic0 = g * P.icg + s;
      var xo = (b * P.IC + ic0) * hw + ih * P.W + iw;
      var wo = (ic0 * P.ocg + ocl) * khw + kh * P.KW + kw;
      var c = s;
      // Four channels' loads issued before their FMAs: the compiler does not pipeline this loop.
      for (; c + 3u * ICS < P.icg; c = c + 4u * ICS) {
        let x0 = f32(X[xo]);
        let x1 = f32(X[xo + xs]);
        let x2 = f32(X[xo + 2u * xs]);
        let x3 = f32(X[xo + 3u * xs]);
        let w0 = weights4(wo, dw);
        let w1 = weights4(wo + ws, dw);
        let w2 = weights4(wo + 2u * ws, dw);
        let w3 = weights4(wo + 3u * ws, dw);
        acc = fma(vec4<f32>(x0), w0, acc);
        acc = fma(vec4<f32>(x1), w1, acc);
        acc = fma(vec4<f32>(x2), w2, acc);
        acc = fma(vec4<f32>(x3), w3, acc);
        xo = xo + 4u * xs;
        wo = wo + 4u * ws;
      }
      for (; c < P.icg; c = c + ICS) {
        acc = fma(vec4<f32>(f32(X[xo])), weights4(wo, dw), acc);
        xo = xo + xs;
        wo = wo + ws;
      }
    }
  }
  if (ICS > 1u) {
    partial[lid] = acc;
    workgroupBarrier();
  }
  if (!live) { return; }
  let ohw = P.OH * P.OW;
  let oc0 = g * P.ocg + ocl;
  let o0 = ((b * P.OC + oc0) * P.OH + oh) * P.OW + ow;
  // Slice s finishes channels s, s + ICS, ... of the block.
  for (var j = s; j < OCT; j = j + ICS) {
    if (ocl + j >= P.ocg) { break; }
    var v = acc[j];
    if (ICS > 1u) {
      v = 0.0;
      for (var k = 0u; k < ICS; k = k + 1u) { v = v + partial[lid % slots + k * slots][j]; }
    }
    if (HAS_BIAS == 1u) { v = v + f32(BIAS[oc0 + j]); }
    let o = o0 + j * ohw;
    O[o] = O_T(epilogue(v, o));
  }
}
