// Depthwise static-int8 convolution (et_vk.q8ta_conv2d_dw): one invocation per output word (four
// consecutive NCHW elements, which may lie on different rows, channels or images), each element an
// int32 sum over the KH x KW taps of x_q * w_q (padding taps read x_q = izp), requantized; the word
// is written whole. Weights int8 [KH, KW, OC], element (kh * KW + kw) * OC + oc.
//!include q8ta_conv_params
//!include q8ta_conv_requant

override KHC: u32 = 3u;
override KWC: u32 = 3u;
override WG: u32 = 256u;

fn xbyte(i: u32) -> i32 { return extractBits(bitcast<i32>(XQ_words[i >> 2u]), (i & 3u) * 8u, 8u); }
fn wbyte(i: u32) -> i32 { return extractBits(bitcast<i32>(WQ_words[i >> 2u]), (i & 3u) * 8u, 8u); }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wi = (wid.x + wid.y * nwg.x) * WG + lid;
  if (wi >= P.nq) { return; }
  let ohw = P.oh * P.ow;
  let hw = P.h * P.w;
  let total = P.b * P.oc * ohw;
  var word = 0u;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let e = wi * 4u + j;
    if (e >= total) { break; }
    let bc = e / ohw;          // b * OC + oc
    let p = e - bc * ohw;
    let oc = bc % P.oc;
    let oh = p / P.ow;
    let ow = p - oh * P.ow;
    let xb = bc * hw;          // depthwise: input channel oc of image b
    let ih0 = i32(oh * P.sh) - i32(P.ph);
    let iw0 = i32(ow * P.sw) - i32(P.pw);
    var acc = 0;
    for (var kh = 0u; kh < KHC; kh = kh + 1u) {
      let ih = ih0 + i32(kh * P.dh);
      let row_ok = ih >= 0 && ih < i32(P.h);
      for (var kx = 0u; kx < KWC; kx = kx + 1u) {
        let iw = iw0 + i32(kx * P.dw);
        var xv = P.izp;
        if (row_ok && iw >= 0 && iw < i32(P.w)) { xv = xbyte(xb + u32(ih) * P.w + u32(iw)); }
        acc = acc + xv * wbyte((kh * KWC + kx) * P.oc + oc);
      }
    }
    word = word | (requant(acc, oc) << (8u * j));
  }
  YQ_words[wi] = word;
}
