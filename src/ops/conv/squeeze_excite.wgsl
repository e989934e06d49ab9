// Squeeze-excite gate (ops/conv/squeeze_excite.cpp) in two kernels, or three. POOL (a workgroup
// per CPW channels of one batch item, G = 256 / CPW threads per channel): POOLED[b, c] = mean over
// H*W of x[b, c]. FC1 (the three-kernel form, for wide gates): HIDDEN[b, j] = act1(W1 @ pooled +
// b1) for 8 rows j a workgroup, 32 threads a row. Otherwise the gate, a workgroup per 64 output
// channels of one batch item: hidden = act1(W1 @ pooled + b1), every workgroup computing it with R
// threads per row of W1 (S rows, C long), or under HIDDEN_IN read from FC1's HIDDEN; then
// out[b, c] = act2(W2 @ hidden + b2) for its 64 channels, 4 threads per channel. The generated
// prefix declares Params (B, C, S, HW, G, R, c1, c2) and act1 / act2 (the convs' fused epilogues,
// or the identity); the term math (epilogue.wgsl) comes before this text. Squeeze width at most
// 1024. Absent biases bind a zero dummy.

override HAS_B1: u32 = 0u;
override HAS_B2: u32 = 0u;

var<workgroup> red: array<f32, 256>;

#if POOL
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = wid.x * (256u / P.G) + lid / P.G;
  let b = wid.y;
  var s = 0.0;
  if (c < P.C) {
    let base = (b * P.C + c) * P.HW;
    var s4 = vec4<f32>(0.0);  // four independent sums: four loads in flight per step
    let g = P.G;
    var k = lid % g;
    for (; k + 3u * g < P.HW; k = k + 4u * g) {
      s4 = s4 + vec4<f32>(f32(X[base + k]), f32(X[base + k + g]), f32(X[base + k + 2u * g]), f32(X[base + k + 3u * g]));
    }
    for (; k < P.HW; k = k + g) { s4.x = s4.x + f32(X[base + k]); }
    s = (s4.x + s4.y) + (s4.z + s4.w);
  }
  red[lid] = s;
  workgroupBarrier();
  for (var h = P.G / 2u; h > 0u; h = h / 2u) {
    if (lid % P.G < h) { red[lid] = red[lid] + red[lid + h]; }
    workgroupBarrier();
  }
  if (lid % P.G == 0u && c < P.C) { POOLED[b * P.C + c] = POOLED_T(red[lid] / f32(P.HW)); }
}
#elif FC1
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let b = wid.y;
  let j = wid.x * 8u + lid / 32u;
  let lane = lid % 32u;
  var a4 = vec4<f32>(0.0);  // four independent sums: four loads in flight per step
  if (j < P.S) {
    let w = j * P.C;
    let pooled = b * P.C;
    var c = lane;
    for (; c + 96u < P.C; c = c + 128u) {
      let wv = vec4<f32>(f32(W1[w + c]), f32(W1[w + c + 32u]), f32(W1[w + c + 64u]), f32(W1[w + c + 96u]));
      let pv = vec4<f32>(f32(POOLED[pooled + c]), f32(POOLED[pooled + c + 32u]), f32(POOLED[pooled + c + 64u]),
                         f32(POOLED[pooled + c + 96u]));
      a4 = fma(wv, pv, a4);
    }
    for (; c < P.C; c = c + 32u) { a4.x = fma(f32(W1[w + c]), f32(POOLED[pooled + c]), a4.x); }
  }
  red[lid] = (a4.x + a4.y) + (a4.z + a4.w);
  workgroupBarrier();
  for (var h = 16u; h > 0u; h = h / 2u) {
    if (lane < h) { red[lid] = red[lid] + red[lid + h]; }
    workgroupBarrier();
  }
  if (lane == 0u && j < P.S) {
    var t = red[lid];
    if (HAS_B1 == 1u) { t = t + f32(B1[j]); }
    HIDDEN[b * P.S + j] = HIDDEN_T(act1(t));
  }
}
#else
var<workgroup> hidden: array<f32, 1024>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let b = wid.y;
#if HIDDEN_IN
  for (var j = lid; j < P.S; j = j + 256u) { hidden[j] = f32(HIDDEN[b * P.S + j]); }
  workgroupBarrier();
#else
  let pooled = b * P.C;
  let rows = 256u / P.R;  // rows of W1 per pass
  for (var base = 0u; base < P.S; base = base + rows) {
    let j = base + lid / P.R;
    var a = 0.0;
    if (j < P.S) {
      // Four independent sums: four loads in flight per step instead of one (the loop is bound by
    // load latency).
    let w = j * P.C;
    let r = P.R;
    var a4 = vec4<f32>(0.0);
    var c = lid % r;
    for (; c + 3u * r < P.C; c = c + 4u * r) {
      let wv = vec4<f32>(f32(W1[w + c]), f32(W1[w + c + r]), f32(W1[w + c + 2u * r]), f32(W1[w + c + 3u * r]));
      let pv = vec4<f32>(f32(POOLED[pooled + c]), f32(POOLED[pooled + c + r]), f32(POOLED[pooled + c + 2u * r]),
                         f32(POOLED[pooled + c + 3u * r]));
      a4 = fma(wv, pv, a4);
    }
    for (; c < P.C; c = c + r) { a4.x = fma(f32(W1[w + c]), f32(POOLED[pooled + c]), a4.x); }
    a = (a4.x + a4.y) + (a4.z + a4.w);
    }
    red[lid] = a;
    workgroupBarrier();
    for (var h = P.R / 2u; h > 0u; h = h / 2u) {
      if (lid % P.R < h) { red[lid] = red[lid] + red[lid + h]; }
      workgroupBarrier();
    }
    if (lid % P.R == 0u && j < P.S) {
      var t = red[lid];
      if (HAS_B1 == 1u) { t = t + f32(B1[j]); }
      hidden[j] = act1(t);
    }
    workgroupBarrier();
  }
#endif
  let c = wid.x * 64u + lid / 4u;
  var a = 0.0;
  if (c < P.C) {
    var a4 = vec4<f32>(0.0);  // four independent sums, as above
    var j = lid % 4u;
    for (; j + 12u < P.S; j = j + 16u) {
      let wv = vec4<f32>(f32(W2[c * P.S + j]), f32(W2[c * P.S + j + 4u]), f32(W2[c * P.S + j + 8u]), f32(W2[c * P.S + j + 12u]));
      a4 = fma(wv, vec4<f32>(hidden[j], hidden[j + 4u], hidden[j + 8u], hidden[j + 12u]), a4);
    }
    for (; j < P.S; j = j + 4u) { a4.x = fma(f32(W2[c * P.S + j]), hidden[j], a4.x); }
    a = (a4.x + a4.y) + (a4.z + a4.w);
  }
  red[lid] = a;
  workgroupBarrier();
  if (lid % 4u == 0u && c < P.C) {
    var t = red[lid] + red[lid + 1u] + red[lid + 2u] + red[lid + 3u];
    if (HAS_B2 == 1u) { t = t + f32(B2[c]); }
    O[b * P.C + c] = O_T(act2(t));
  }
}
#endif
