// Convolution (groups == 1, not transposed) as an implicit-im2col tiled GEMM:
// C[M = OC, N = B*OH*OW] = W[OC, K = IC*KH*KW] @ im2col(X)[K, N]; the im2col operand is sampled on
// the fly (out-of-range taps read 0 = zero padding), then bias, optional clamp, NCHW store.
// 64x64 output tile per 16x16 workgroup, 4x4 register block per invocation, K staged 16 at a time.
// 1-D convolutions arrive with H = KH = 1.
// Split-K (few output tiles, long K: the late layers of a ResNet): with SPLITK, workgroup z sums
// K range [z * kchunk, (z + 1) * kchunk) into PART[z][oc][n]; the SPLITK_REDUCE kernel then adds
// the splits, the bias and the epilogue and stores NCHW.
//!include conv_params

#if SPLITK_REDUCE
@compute @workgroup_size(256)
fn conv_splitk_reduce(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;  // over [oc][n]
  if (i >= P.OC * P.N) { return; }
  let oc = i / P.N;
  let n = i % P.N;
  var v = 0.0;
  for (var z = 0u; z < P.splits; z = z + 1u) { v = v + f32(PART[z * P.OC * P.N + i]); }
  if (HAS_BIAS == 1u) { v = v + f32(BIAS[oc]); }
  let ohw = P.OH * P.OW;
  let o = ((n / ohw) * P.OC + oc) * ohw + n % ohw;
  store_out(o, epilogue(v, o));
}
#else


var<workgroup> As: array<vec4<f32>, 256>;  // [k][oc / 4]
var<workgroup> Bs: array<vec4<f32>, 256>;  // [k][n / 4]


@compute @workgroup_size(16, 16)
fn conv_gemm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
  let m0 = wid.y * 64u;
  let n0 = wid.x * 64u;
  let ohw = P.OH * P.OW;
  let khw = P.KH * P.KW;
  // The im2col column this invocation loads is the same for every k tile: decompose it once.
  let bn = lid % 64u;
  let gn = n0 + bn;
  let n_ok = gn < P.N;
  let bi = gn / ohw;
  let sp = gn % ohw;
  let ih0 = i32((sp / P.OW) * P.sh) - i32(P.ph);
  let iw0 = i32((sp % P.OW) * P.sw) - i32(P.pw);
  let xb = bi * P.IC * P.H * P.W;
  var acc: array<vec4<f32>, 4>;
#if SPLITK
  let k_begin = wid.z * P.kchunk;
  let k_end = min(P.K, k_begin + P.kchunk);
#else
  let k_begin = 0u;
  let k_end = P.K;
#endif
  for (var k0 = k_begin; k0 < k_end; k0 = k0 + 16u) {
    for (var r = 0u; r < 4u; r = r + 1u) {
      let e = lid + r * 256u;
      let am = e / 16u;
      let ak = e % 16u;
      var av = 0.0;
      if (m0 + am < P.OC && k0 + ak < k_end) { av = f32(Wt[(m0 + am) * P.K + k0 + ak]); }
      As[ak * 16u + am / 4u][am % 4u] = av;
      let bk = e / 64u;
      let gk = k0 + bk;
      var bv = 0.0;
      if (n_ok && gk < k_end) {
        let ic = gk / khw;
        let kr = gk % khw;
        let ih = ih0 + i32((kr / P.KW) * P.dh);
        let iw = iw0 + i32((kr % P.KW) * P.dw);
        if (ih >= 0 && ih < i32(P.H) && iw >= 0 && iw < i32(P.W)) {
          bv = x_in(xb + (ic * P.H + u32(ih)) * P.W + u32(iw), ic);
        }
      }
      Bs[bk * 16u + bn / 4u][bn % 4u] = bv;
    }
    workgroupBarrier();
    for (var k = 0u; k < 16u; k = k + 1u) {
      let a = As[k * 16u + l.y];
      let b = Bs[k * 16u + l.x];
      acc[0] = fma(vec4<f32>(a.x), b, acc[0]);
      acc[1] = fma(vec4<f32>(a.y), b, acc[1]);
      acc[2] = fma(vec4<f32>(a.z), b, acc[2]);
      acc[3] = fma(vec4<f32>(a.w), b, acc[3]);
    }
    workgroupBarrier();
  }
#if SPLITK
  let part = wid.z * P.OC * P.N;
  for (var i = 0u; i < 4u; i = i + 1u) {
    let oc = m0 + l.y * 4u + i;
    if (oc >= P.OC) { break; }
    for (var j = 0u; j < 4u; j = j + 1u) {
      let n = n0 + l.x * 4u + j;
      if (n < P.N) { PART[part + oc * P.N + n] = PART_T(acc[i][j]); }
    }
  }
#else
  for (var i = 0u; i < 4u; i = i + 1u) {
    let oc = m0 + l.y * 4u + i;
    if (oc >= P.OC) { break; }
    var bias = 0.0;
    if (HAS_BIAS == 1u) { bias = f32(BIAS[oc]); }
    for (var j = 0u; j < 4u; j = j + 1u) {
      let n = n0 + l.x * 4u + j;
      if (n < P.N) {
        let b = n / ohw;
        let o = (b * P.OC + oc) * ohw + n % ohw;
        store_out(o, epilogue(acc[i][j] + bias, o));
      }
    }
  }
#endif
}
#endif
