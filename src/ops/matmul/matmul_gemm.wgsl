// Tiled GEMM: C[b] = alpha * A[b] @ op(B[b]) + beta * bias.
// A is [M, K] row-major; TRANS_B = 1: B is stored [N, K] (linear weight), else [K, N].
// Each workgroup of 16x16 invocations computes a 64x64 output tile; each invocation a 4x4 register
// block (rows ty*4.., cols tx*4..). K is staged through workgroup memory 16 at a time, stored
// k-major as vec4s so the inner loop is two vec4 loads and four vec4 FMAs per k.
// Entry `gemm` loads scalars (any shape); `gemm_vec4` loads vec4s along K for A (and along the
// contiguous dim of B), valid when K % 4 == 0 (and N % 4 == 0 for a [K, N] B).
// Batch = wid.z over up to 4 collapsed batch dims; a batch stride of 0 broadcasts that operand.
// A, B, BIAS, C and P come from the generated preamble; A and B are vec4 arrays when VEC4 is
// defined (gemm_vec4), scalar ones otherwise. Any float storage; math in f32.
// Split-K (few output tiles, long K: a ViT's projections at 197 tokens): with SPLITK, workgroup z
// = split * batch + b sums K range [split * kchunk, (split + 1) * kchunk) into PART[split][b][m][n];
// the SPLITK_REDUCE entry then adds the splits, alpha, the bias and the epilogue.
//!include matmul_params

override TRANS_B: u32 = 0u;
override HAS_BIAS: u32 = 0u;

#if !SPLITK
// C element (m, n) of batch item z from its unscaled sum.
fn finish(z: u32, m: u32, n: u32, sum: f32) {
  var v = P.alpha * sum;
  if (HAS_BIAS == 1u) { v = v + P.beta * f32(BIAS[m * P.bias_sm + n * P.bias_sn]); }
  let o = z * P.cstride + m * P.N + n;
  C[o] = C_T(epilogue(v, o));
}
#endif

#if SPLITK_REDUCE
@compute @workgroup_size(256)
fn gemm_splitk_reduce(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;  // over [b][m][n]
  let total = P.batch * P.cstride;
  if (i >= total) { return; }
  var v = 0.0;
  for (var s = 0u; s < P.splits; s = s + 1u) { v = v + PART[s * total + i]; }
  let mn = i % P.cstride;
  finish(i / P.cstride, mn / P.N, mn % P.N, v);
}
#else

const TK: u32 = 16u;
var<workgroup> As: array<vec4<f32>, 256>;  // [k][m / 4] for 64 rows
var<workgroup> Bs: array<vec4<f32>, 256>;  // [k][n / 4] for 64 cols

//!include matmul_batch

fn tile_mma(tx: u32, ty: u32, acc: ptr<function, array<vec4<f32>, 4>>) {
  for (var k = 0u; k < TK; k = k + 1u) {
    let a = As[k * 16u + ty];
    let b = Bs[k * 16u + tx];
    (*acc)[0] = fma(vec4<f32>(a.x), b, (*acc)[0]);
    (*acc)[1] = fma(vec4<f32>(a.y), b, (*acc)[1]);
    (*acc)[2] = fma(vec4<f32>(a.z), b, (*acc)[2]);
    (*acc)[3] = fma(vec4<f32>(a.w), b, (*acc)[3]);
  }
}

fn store_tile(z: u32, m0: u32, n0: u32, tx: u32, ty: u32, acc: ptr<function, array<vec4<f32>, 4>>) {
  for (var i = 0u; i < 4u; i = i + 1u) {
    let m = m0 + ty * 4u + i;
    if (m >= P.M) { break; }
    for (var j = 0u; j < 4u; j = j + 1u) {
      let n = n0 + tx * 4u + j;
#if SPLITK
      if (n < P.N) { PART[z * P.cstride + m * P.N + n] = (*acc)[i][j]; }  // z = split * batch + b
#else
      if (n < P.N) { finish(z, m, n, (*acc)[i][j]); }
#endif
    }
  }
}

#if !VEC4
@compute @workgroup_size(16, 16)
fn gemm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let m0 = wid.y * 64u;
  let n0 = wid.x * 64u;
  let offs = batch_offsets(wid.z);
  var acc: array<vec4<f32>, 4>;
  for (var k0 = 0u; k0 < P.K; k0 = k0 + TK) {
    for (var r = 0u; r < 4u; r = r + 1u) {
      let e = lid + r * 256u;
      // A tile: 64 rows x 16 k, consecutive invocations read consecutive k.
      let am = e / 16u;
      let ak = e % 16u;
      var av = 0.0;
      if (m0 + am < P.M && k0 + ak < P.K) { av = f32(A[offs.x + (m0 + am) * P.K + k0 + ak]); }
      As[ak * 16u + am / 4u][am % 4u] = av;
      var bv = 0.0;
      if (TRANS_B == 1u) {
        let bn = e / 16u;
        let bk = e % 16u;
        if (n0 + bn < P.N && k0 + bk < P.K) { bv = f32(B[offs.y + (n0 + bn) * P.K + k0 + bk]); }
        Bs[bk * 16u + bn / 4u][bn % 4u] = bv;
      } else {
        let bk = e / 64u;
        let bn = e % 64u;
        if (n0 + bn < P.N && k0 + bk < P.K) { bv = f32(B[offs.y + (k0 + bk) * P.N + n0 + bn]); }
        Bs[bk * 16u + bn / 4u][bn % 4u] = bv;
      }
    }
    workgroupBarrier();
    tile_mma(l.x, l.y, &acc);
    workgroupBarrier();
  }
  store_tile(wid.z, m0, n0, l.x, l.y, &acc);
}

#else
@compute @workgroup_size(16, 16)
fn gemm_vec4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
  let m0 = wid.y * 64u;
  let n0 = wid.x * 64u;
#if SPLITK
  let offs = batch_offsets(wid.z % P.batch);
  let k_begin = (wid.z / P.batch) * P.kchunk;
  let k_end = min(P.K, k_begin + P.kchunk);
#else
  let offs = batch_offsets(wid.z);
  let k_begin = 0u;
  let k_end = P.K;
#endif
  var acc: array<vec4<f32>, 4>;
  // One vec4 of A per invocation per k tile: row lid / 4, k quad lid % 4.
  let am = lid / 4u;
  let aq = lid % 4u;
  for (var k0 = k_begin; k0 < k_end; k0 = k0 + TK) {
    var av = vec4<f32>(0.0);
    let ak = k0 + aq * 4u;
    if (m0 + am < P.M && ak < k_end) { av = vec4<f32>(A[(offs.x + (m0 + am) * P.K + ak) / 4u]); }
    let ka = aq * 4u * 16u + am / 4u;
    As[ka][am % 4u] = av.x;
    As[ka + 16u][am % 4u] = av.y;
    As[ka + 32u][am % 4u] = av.z;
    As[ka + 48u][am % 4u] = av.w;
    if (TRANS_B == 1u) {
      var bv = vec4<f32>(0.0);
      if (n0 + am < P.N && ak < k_end) { bv = vec4<f32>(B[(offs.y + (n0 + am) * P.K + ak) / 4u]); }
      Bs[ka][am % 4u] = bv.x;
      Bs[ka + 16u][am % 4u] = bv.y;
      Bs[ka + 32u][am % 4u] = bv.z;
      Bs[ka + 48u][am % 4u] = bv.w;
    } else {
      // One vec4 along N: k row lid / 16, n quad lid % 16 (N % 4 == 0 keeps quads whole).
      let bk = lid / 16u;
      let bq = lid % 16u;
      var bv = vec4<f32>(0.0);
      if (n0 + bq * 4u < P.N && k0 + bk < k_end) { bv = vec4<f32>(B[(offs.y + (k0 + bk) * P.N + n0 + bq * 4u) / 4u]); }
      Bs[bk * 16u + bq] = bv;
    }
    workgroupBarrier();
    tile_mma(l.x, l.y, &acc);
    workgroupBarrier();
  }
  store_tile(wid.z, m0, n0, l.x, l.y, &acc);
}
#endif
#endif
