// etwebgpu.depthwise_pointwise (depthwise_pointwise.h): a depthwise conv and the 1x1 conv reading
// its output in one dispatch. A workgroup owns TOC output channels of TP output pixels. For each KC
// channels it computes the depthwise outputs at its pixels once into workgroup memory (bias,
// clamp, then the prologue) and stages the pointwise weights of its rows there; then each
// invocation adds their products with four rows of weights to its four outputs (one pixel). Each
// depthwise output is computed once per TOC output channels, never stored. P is the pointwise
// conv's (IC = K = the channels, H = OH, W = OW: the depthwise output's extents); xh, xw are the
// depthwise input's; the depthwise geometry is constants. Stores go through epilogue and
// store_out as in every conv kernel.
//!include conv_params

override DKH: u32 = 3u;
override DKW: u32 = 3u;
override DSH: u32 = 1u;
override DSW: u32 = 1u;
override DPH: u32 = 1u;
override DPW: u32 = 1u;
override DDH: u32 = 1u;
override DDW: u32 = 1u;
override HAS_DW_BIAS: u32 = 0u;
override HAS_DW_MIN: u32 = 0u;
override HAS_DW_MAX: u32 = 0u;
// The depthwise clamp's bounds as float32 bits (an override constant cannot be infinite), read at
// run time (| P.pad, always 0).
override DW_MIN_BITS: u32 = 0u;
override DW_MAX_BITS: u32 = 0u;

const TP: u32 = 16u;   // output pixels a workgroup
const TOC: u32 = 64u;  // output channels a workgroup: 256 / TP invocations of four each
const KC: u32 = 32u;   // channels staged a round: 256 / TP per pass, two passes

var<workgroup> staged: array<array<f32, TP>, KC>;  // [channel of the round][pixel]
// The round's pointwise weights: [channel of the round][four rows of the workgroup's TOC], a
// vec4 of padding a channel so that the 32 channels a warp stores fall in 8 banks, not 1.
var<workgroup> wts: array<array<vec4<f32>, TOC / 4u + 1u>, KC>;

// The depthwise output of channel c at the pixel whose top-left tap is (ih0, iw0) of batch offset
// xb: taps, bias, clamp (NaN stays NaN), then the prologue.
fn depthwise_at(c: u32, xb: u32, ih0: i32, iw0: i32) -> f32 {
  let plane = xb + c * P.xh * P.xw;
  var v = 0.0;
  for (var kh = 0u; kh < DKH; kh = kh + 1u) {
    let ih = ih0 + i32(kh * DDH);
    if (ih < 0 || ih >= i32(P.xh)) { continue; }
    let row = plane + u32(ih) * P.xw;
    for (var kw = 0u; kw < DKW; kw = kw + 1u) {
      let iw = iw0 + i32(kw * DDW);
      if (iw >= 0 && iw < i32(P.xw)) { v = fma(f32(X[row + u32(iw)]), f32(DW[(c * DKH + kh) * DKW + kw]), v); }
    }
  }
  if (HAS_DW_BIAS == 1u) { v = v + f32(DB[c]); }
  if (v == v) {
    if (HAS_DW_MIN == 1u) { v = max(v, bitcast<f32>(DW_MIN_BITS | P.pad)); }
    if (HAS_DW_MAX == 1u) { v = min(v, bitcast<f32>(DW_MAX_BITS | P.pad)); }
  }
#if PROLOGUE
  v = prologue_terms(v, c);
#endif
  return v;
}

@compute @workgroup_size(256)
fn depthwise_pointwise(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let col = lid % TP;
  let n = wid.x * TP + col;
  let nc = min(n, P.N - 1u);  // a column past the problem computes its last one, not stored
  let ohw = P.OH * P.OW;
  let b = nc / ohw;
  let sp = nc % ohw;
  let xb = b * P.IC * P.xh * P.xw;
  let ih0 = i32((sp / P.OW) * DSH) - i32(DPH);
  let iw0 = i32((sp % P.OW) * DSW) - i32(DPW);
  let blk = lid / TP;  // this invocation's four output channels: r0 .. r0 + 3
  let r0 = wid.y * TOC + blk * 4u;
  var acc = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < P.K; k0 = k0 + KC) {
    for (var h = 0u; h < KC; h = h + 256u / TP) {
      let j = blk + h;
      var v = 0.0;
      if (k0 + j < P.K) { v = depthwise_at(k0 + j, xb, ih0, iw0); }
      staged[j][col] = v;
    }
    // The weights: TOC rows of KC channels, neighbouring invocations along a row (rows past OC
    // repeat the last; channels past K are 0).
    for (var e = lid; e < TOC * KC; e = e + 256u) {
      let row = e / KC;
      let j = e % KC;
      var w = 0.0;
      if (k0 + j < P.K) { w = f32(Wt[min(wid.y * TOC + row, P.OC - 1u) * P.K + k0 + j]); }
      wts[j][row / 4u][row % 4u] = w;
    }
    workgroupBarrier();
    let kn = min(KC, P.K - k0);
    for (var j = 0u; j < kn; j = j + 1u) { acc = fma(wts[j][blk], vec4<f32>(staged[j][col]), acc); }
    workgroupBarrier();
  }
  if (n >= P.N) { return; }
  for (var i = 0u; i < 4u; i = i + 1u) {
    let oc = r0 + i;
    if (oc < P.OC) {
      var v = acc[i];
      if (HAS_BIAS == 1u) { v = v + f32(BIAS[oc]); }
      let o = (b * P.OC + oc) * ohw + sp;
      store_out(o, epilogue(v, o));
    }
  }
}
