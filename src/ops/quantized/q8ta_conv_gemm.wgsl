// Static-int8 convolution as a tiled implicit GEMM (et_vk.q8ta_conv2d, q8ta_conv2d_pw): per group,
// C[OCg, N = B*OH*OW] = W[OCg, K_pad] @ im2col(X)[K_pad, N] with int8 operands packed four k values
// to a u32 word, summed with dot4I8Packed (DOT4) or a portable shift/multiply dot.
// Workgroup: 256 invocations, tile 16*TM output channels x 64 pixels (16 quads of 4 consecutive
// flat pixels), K staged 16 words (64 k values) at a time in workgroup memory:
// As[kk][row] weight words (read as whole words: rows are K_pad/4 words long), Bs[kk][quad] the
// im2col words of the quad's four pixels, gathered byte by byte (k = (kh*KW + kw)*ICg + ic; taps
// outside the input read izp, k past K reads 0 against zero weights).
// Invocation (tm, tn) owns output channels tm + 16*i (i < TM) of quad tn: TM x 4 int32 sums.
// WORDS (OH*OW % 4 == 0): a quad is one output word of one (image, channel) plane, written whole;
// otherwise each element is stored through store_YQ.
// SPLIT (few output tiles, long K): workgroup z = group * splits + range; each range sums its
// P.steps k-steps and adds its int32 sums atomically into ACC [OC, N] (exact in any order);
// q8ta_conv_finalize then requantizes them and clears ACC for the next run.
//!include q8ta_conv_params
#if SPLIT
#else
//!include q8ta_conv_requant
#endif

override KHC: u32 = 3u;
override KWC: u32 = 3u;
override TM: u32 = 4u;   // 1, 2, 4 or 8

var<workgroup> As: array<u32, 2048>;        // [16 k words][16 * TM rows]
var<workgroup> Bs: array<vec4<u32>, 256>;   // [16 k words][16 quads]

//!include q8_int_math

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let BM = 16u * TM;
#if SPLIT
  let grp = wid.z / P.splits;
  let t_begin = (wid.z - grp * P.splits) * P.steps;
#else
  let grp = wid.z;
  let t_begin = 0u;
#endif
  let m0 = wid.y * BM;
  let q0 = wid.x * 16u;
  let tn = lid % 16u;
  let tm = lid / 16u;
  let ohw = P.oh * P.ow;
  let hw = P.h * P.w;

  // The four pixels of quad tn (the im2col columns this invocation gathers and its outputs).
  var ih0: vec4<i32>;
  var iw0: vec4<i32>;
  var xb: vec4<u32>;
  var ok: vec4<bool>;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let n = (q0 + tn) * 4u + j;
    ok[j] = n < P.n;
    let nc = min(n, P.n - 1u);
    let b = nc / ohw;
    let p = nc - b * ohw;
    let oh = p / P.ow;
    let ow = p - oh * P.ow;
    ih0[j] = i32(oh * P.sh) - i32(P.ph);
    iw0[j] = i32(ow * P.sw) - i32(P.pw);
    xb[j] = (b * P.ic + grp * P.icg) * hw;
  }
  let zp = u32(P.izp) & 0xffu;
  let wrow0 = grp * P.ocg + m0;

  var acc: array<vec4<i32>, 8>;
  var t_end = (P.kw + 15u) / 16u;
#if SPLIT
  t_end = min(t_end, t_begin + P.steps);
#endif
  for (var t = t_begin; t < t_end; t = t + 1u) {
    let kw0 = t * 16u;
    // Weights: rows tm + 16*i, word kw0 + tn.
    for (var i = 0u; i < TM; i = i + 1u) {
      let r = tm + 16u * i;
      var a = 0u;
      if (m0 + r < P.ocg && kw0 + tn < P.kw) { a = WQ_words[(wrow0 + r) * P.kw + kw0 + tn]; }
      As[tn * BM + r] = a;
    }
    // im2col: k word kw0 + tm of the quad's four pixels.
    var bw = vec4<u32>(0u);
    let kb = (kw0 + tm) * 4u;
    for (var i = 0u; i < 4u; i = i + 1u) {
      let k = kb + i;
      if (k < P.k) {
        let ic = k % P.icg;
        let khw = k / P.icg;
        let kh = khw / KWC;
        let kx = khw - kh * KWC;
        let dh = i32(kh * P.dh);
        let dw = i32(kx * P.dw);
        let off = ic * hw;
        for (var j = 0u; j < 4u; j = j + 1u) {
          let ih = ih0[j] + dh;
          let iw = iw0[j] + dw;
          var v = zp;
          if (ok[j] && ih >= 0 && ih < i32(P.h) && iw >= 0 && iw < i32(P.w)) {
            let e = xb[j] + off + u32(ih) * P.w + u32(iw);
            v = (XQ_words[e >> 2u] >> ((e & 3u) * 8u)) & 0xffu;
          }
          bw[j] = bw[j] | (v << (8u * i));
        }
      }
    }
    Bs[tm * 16u + tn] = bw;
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk = kk + 1u) {
      let bv = Bs[kk * 16u + tn];
      for (var i = 0u; i < TM; i = i + 1u) {
        let a = As[kk * BM + tm + 16u * i];
        acc[i] = acc[i] + vec4<i32>(dot4(a, bv.x), dot4(a, bv.y), dot4(a, bv.z), dot4(a, bv.w));
      }
    }
    workgroupBarrier();
  }

  let n0 = (q0 + tn) * 4u;
  if (n0 >= P.n) { return; }
  for (var i = 0u; i < TM; i = i + 1u) {
    let m = m0 + tm + 16u * i;
    if (m >= P.ocg) { continue; }
    let oc = grp * P.ocg + m;
#if SPLIT
    for (var j = 0u; j < 4u; j = j + 1u) {
      if (n0 + j < P.n) { atomicAdd(&ACC[oc * P.n + n0 + j], acc[i][j]); }
    }
#elif WORDS
    let b = n0 / ohw;
    let p0 = n0 - b * ohw;
    var word = 0u;
    for (var j = 0u; j < 4u; j = j + 1u) { word = word | (requant(acc[i][j], oc) << (8u * j)); }
    YQ_words[((b * P.oc + oc) * ohw + p0) >> 2u] = word;
#else
    for (var j = 0u; j < 4u; j = j + 1u) {
      let n = n0 + j;
      if (n < P.n) {
        let b = n / ohw;
        store_YQ((b * P.oc + oc) * ohw + n - b * ohw, bitcast<i32>(requant(acc[i][j], oc) << 24u) >> 24u);
      }
    }
#endif
  }
}
