// Convolution (groups == 1, not transposed) as an implicit-im2col GEMM for problems whose 64x64
// tiles are too few to fill the GPU (a SqueezeNet's or a YOLO neck's convs at 13x13 to 27x27):
// C[M = OC, N = B*OH*OW] = W[OC, K = IC*KH*KW] @ im2col(X)[K, N], 16x16 output tiles and K split
// 16 ways inside the workgroup (256 invocations = 16 slices x the tile's 4x4 blocks), the slices'
// sums added as a tree in workgroup memory, then bias, clamp, epilogue and the NCHW store. Where
// the 64x64 kernel split K across workgroups it wrote partials and took a second dispatch to add
// them; here there is neither (as matmul_gemm_small.wgsl for the matmuls).
// Operands are read straight from memory, no staging and no barrier in the k loop: invocation lid
// keeps the 4x4 block lid / 16 (output channels ty * 4.., columns tx * 4..) over slice s = lid %
// 16, the k indices s, s + 16, ...: neighbouring invocations read a weight row's contiguous
// elements. The im2col operand is sampled per element (out-of-range taps read 0 = zero padding);
// KHC / KWC are the kernel's extents as constants so the k index splits by constant divisions.
// Rows and columns past the problem read its last ones (in bounds, dropped at the store).
//!include conv_params

override KHC: u32 = 1u;
override KWC: u32 = 1u;
const S: u32 = 16u;  // K slices

const NBLK: u32 = 16u;  // 4x4 blocks of a tile
//!include slice_sum

// im2col row k at the four columns (xb: input batch offsets, ih0 / iw0: top-left input positions).
fn column(k: u32, xb: vec4<u32>, ih0: vec4<i32>, iw0: vec4<i32>) -> vec4<f32> {
  let ic = k / (KHC * KWC);
  let kr = k % (KHC * KWC);
  let dy = i32((kr / KWC) * P.dh);
  let dx = i32((kr % KWC) * P.dw);
  var b = vec4<f32>(0.0);
  for (var j = 0u; j < 4u; j = j + 1u) {
    let ih = ih0[j] + dy;
    let iw = iw0[j] + dx;
    if (ih >= 0 && ih < i32(P.H) && iw >= 0 && iw < i32(P.W)) {
      b[j] = x_in(xb[j] + (ic * P.H + u32(ih)) * P.W + u32(iw), ic);
    }
  }
  return b;
}

// The weights of the four output channels (row offsets wrow) at k.
fn weights(wrow: vec4<u32>, k: u32) -> vec4<f32> {
  return vec4<f32>(f32(Wt[wrow.x + k]), f32(Wt[wrow.y + k]), f32(Wt[wrow.z + k]), f32(Wt[wrow.w + k]));
}

@compute @workgroup_size(256)
fn conv_gemm_small(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m0 = wid.y * 16u;
  let n0 = wid.x * 16u;
  let s = lid % S;
  let blk = lid / S;
  let tx = blk % 4u;
  let ty = blk / 4u;
  let ohw = P.OH * P.OW;
  let r0 = m0 + ty * 4u;
  let wrow = min(vec4<u32>(r0, r0 + 1u, r0 + 2u, r0 + 3u), vec4<u32>(P.OC - 1u)) * P.K;
  // The four im2col columns of this invocation, decomposed once: input batch offset and the
  // top-left input position of each output pixel.
  var xb: vec4<u32>;
  var ih0: vec4<i32>;
  var iw0: vec4<i32>;
  let c0 = n0 + tx * 4u;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let n = min(c0 + j, P.N - 1u);
    let sp = n % ohw;
    xb[j] = (n / ohw) * P.IC * P.H * P.W;
    ih0[j] = i32((sp / P.OW) * P.sh) - i32(P.ph);
    iw0[j] = i32((sp % P.OW) * P.sw) - i32(P.pw);
  }
  var acc: array<vec4<f32>, 4>;
  // Two k of loads in flight before their products.
  var k = s;
  for (; k + S < P.K; k = k + 2u * S) {
    let b0 = column(k, xb, ih0, iw0);
    let w0 = weights(wrow, k);
    let b1 = column(k + S, xb, ih0, iw0);
    let w1 = weights(wrow, k + S);
    for (var i = 0u; i < 4u; i = i + 1u) { acc[i] = fma(vec4<f32>(w1[i]), b1, fma(vec4<f32>(w0[i]), b0, acc[i])); }
  }
  if (k < P.K) {
    let b0 = column(k, xb, ih0, iw0);
    let w0 = weights(wrow, k);
    for (var i = 0u; i < 4u; i = i + 1u) { acc[i] = fma(vec4<f32>(w0[i]), b0, acc[i]); }
  }
  slice_sum(acc, s, blk);
  // Every invocation stores one output of its block: output channel r0 + s / 4, column c0 + s % 4.
  let oc = r0 + s / 4u;
  let n = c0 + s % 4u;
  if (oc < P.OC && n < P.N) {
    var v = red[blk][s / 4u][s % 4u];
    if (HAS_BIAS == 1u) { v = v + f32(BIAS[oc]); }
    let o = ((n / ohw) * P.OC + oc) * ohw + n % ohw;
    store_out(o, epilogue(v, o));
  }
}
