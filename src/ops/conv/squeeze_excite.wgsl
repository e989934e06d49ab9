// Squeeze-excite gate in one kernel (ops/conv/squeeze_excite.cpp), one workgroup per batch item:
// pooled[c] = mean over H*W of x[b, c]; hidden = act1(W1 @ pooled + b1); out[b, :] =
// act2(W2 @ hidden + b2). The generated prefix declares Params (B, C, S, HW, G, pad, c1, c2) and
// act1 / act2 (the convs' fused epilogues, or the identity). G threads (a power of two) share
// one channel's sum when C < 256. Channels and squeeze width at most 1024. The term math
// (epilogue.wgsl) is put before this text by the builder. Absent biases bind a zero dummy.

override HAS_B1: u32 = 0u;
override HAS_B2: u32 = 0u;

var<workgroup> pooled: array<f32, 1024>;
var<workgroup> hidden: array<f32, 1024>;
var<workgroup> red: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  let per = 256u / P.G;  // channels per pass
  let xb = b * P.C * P.HW;
  for (var base = 0u; base < P.C; base = base + per) {
    let c = base + lid / P.G;
    var s = 0.0;
    if (c < P.C) {
      for (var k = lid % P.G; k < P.HW; k = k + P.G) { s = s + f32(X[xb + c * P.HW + k]); }
    }
    red[lid] = s;
    workgroupBarrier();
    if (lid % P.G == 0u && c < P.C) {
      var t = 0.0;
      for (var k = 0u; k < P.G; k = k + 1u) { t = t + red[lid + k]; }
      pooled[c] = t / f32(P.HW);
    }
    workgroupBarrier();
  }
  for (var j = lid; j < P.S; j = j + 256u) {
    var a = 0.0;
    if (HAS_B1 == 1u) { a = f32(B1[j]); }
    for (var c = 0u; c < P.C; c = c + 1u) { a = fma(f32(W1[j * P.C + c]), pooled[c], a); }
    hidden[j] = act1(a);
  }
  workgroupBarrier();
  for (var c = lid; c < P.C; c = c + 256u) {
    var a = 0.0;
    if (HAS_B2 == 1u) { a = f32(B2[c]); }
    for (var j = 0u; j < P.S; j = j + 1u) { a = fma(f32(W2[c * P.S + j]), hidden[j], a); }
    O[b * P.C + c] = O_T(act2(a));
  }
}
