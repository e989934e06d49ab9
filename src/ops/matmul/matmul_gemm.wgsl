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
// NORM_A (gemm_vec4 only): a layer norm of A's rows runs in the loads, see row_stats.
// Split-K (few output tiles, long K: a ViT's projections at 197 tokens): with SPLITK, workgroup z
// = split * batch + b sums K range [split * kchunk, (split + 1) * kchunk) into PART[split][b][m][n];
// the SPLITK_REDUCE entry then adds the splits, alpha, the bias and the epilogue.
//!include matmul_params

override TRANS_B: u32 = 0u;
override HAS_BIAS: u32 = 0u;

#if !SPLITK
//!include matmul_finish
#endif

#if SPLITK_REDUCE
@compute @workgroup_size(256)
fn gemm_splitk_reduce(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;  // over [b][m][n]
  let total = P.batch * P.cstride;
  if (i >= total) { return; }
  var v = 0.0;
  for (var s = 0u; s < P.splits; s = s + 1u) { v = v + f32(PART[s * total + i]); }
  let mn = i % P.cstride;
  finish(i / P.cstride, mn / P.N, mn % P.N, v);
}
#else

const TK: u32 = 16u;
// Two buffers of [k][m / 4] (A, 64 rows) and [k][n / 4] (B, 64 cols) vec4s; the scalar entry uses
// the first. Nested arrays rather than one flat index: the bounds clamps of Dawn's robustness
// then fall on each index alone, which the compiler folds or hoists out of the k loop (H200:
// 197x576x192 0.0212 -> 0.0193 ms, 1500x1152x384 0.080 -> 0.074, 1500x1536x384 0.094 -> 0.105).
var<workgroup> As: array<array<array<vec4<f32>, 16>, TK>, 2>;
var<workgroup> Bs: array<array<array<vec4<f32>, 16>, TK>, 2>;

//!include matmul_batch

fn store_tile(z: u32, m0: u32, n0: u32, tx: u32, ty: u32, acc: array<vec4<f32>, 4>) {
  for (var i = 0u; i < 4u; i = i + 1u) {
    let m = m0 + ty * 4u + i;
    if (m >= P.M) { break; }
    for (var j = 0u; j < 4u; j = j + 1u) {
      let n = n0 + tx * 4u + j;
#if SPLITK
      if (n < P.N) { PART[z * P.cstride + m * P.N + n] = PART_T(acc[i][j]); }  // z = split * batch + b
#else
      if (n < P.N) { finish(z, m, n, acc[i][j]); }
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
      As[0][ak][am / 4u][am % 4u] = av;
      var bv = 0.0;
      if (TRANS_B == 1u) {
        let bn = e / 16u;
        let bk = e % 16u;
        if (n0 + bn < P.N && k0 + bk < P.K) { bv = f32(B[offs.y + (n0 + bn) * P.K + k0 + bk]); }
        Bs[0][bk][bn / 4u][bn % 4u] = bv;
      } else {
        let bk = e / 64u;
        let bn = e % 64u;
        if (n0 + bn < P.N && k0 + bk < P.K) { bv = f32(B[offs.y + (k0 + bk) * P.N + n0 + bn]); }
        Bs[0][bk][bn / 4u][bn % 4u] = bv;
      }
    }
    workgroupBarrier();
    for (var k = 0u; k < TK; k = k + 1u) {
      let a = As[0][k][l.y];
      let b = Bs[0][k][l.x];
      acc[0] = fma(vec4<f32>(a.x), b, acc[0]);
      acc[1] = fma(vec4<f32>(a.y), b, acc[1]);
      acc[2] = fma(vec4<f32>(a.z), b, acc[2]);
      acc[3] = fma(vec4<f32>(a.w), b, acc[3]);
    }
    workgroupBarrier();
  }
  store_tile(wid.z, m0, n0, l.x, l.y, acc);
}

#else
#if NORM_A
// A layer norm over A's rows fused in front (etwebgpu.layer_norm_linear): A's element (m, k) is
// read as (a - mean_m) * rstd_m * NW[k] + NB[k]. The workgroup takes its rows' statistics over
// the whole row before its k loop (a split-K range too): mean, then the centred sum of squares,
// biased variance as PyTorch computes it; four invocations per row, as the A loads are split.
const LPR: u32 = 4u;
//!include matmul_row_stats
var<private> g_norm: vec2<f32>;  // mean and rstd of this invocation's A row (lid / LPR)
#endif

// This invocation's loads of one k tile: a vec4 of A (row lid / 4, k quad lid % 4) and one of B
// (TRANS_B: column lid / 4, k quad lid % 4; else k row lid / 16, n quad lid % 16; N % 4 == 0
// keeps quads whole). Zero outside the problem or past k_end.
struct TileRegs { a: vec4<f32>, b: vec4<f32> };

fn load_regs(ao: u32, bo: u32, m0: u32, n0: u32, k0: u32, k_end: u32, lid: u32) -> TileRegs {
  var r: TileRegs;
  let am = lid / 4u;
  let ak = k0 + (lid % 4u) * 4u;
  if (m0 + am < P.M && ak < k_end) {
    r.a = vec4<f32>(A[(ao + (m0 + am) * P.K + ak) / 4u]);
#if NORM_A
    r.a = (r.a - g_norm.x) * g_norm.y;
    if (HAS_NW == 1u) { r.a = r.a * vec4<f32>(NW[ak / 4u]); }
    if (HAS_NB == 1u) { r.a = r.a + vec4<f32>(NB[ak / 4u]); }
#endif
  }
  if (TRANS_B == 1u) {
    if (n0 + am < P.N && ak < k_end) { r.b = vec4<f32>(B[(bo + (n0 + am) * P.K + ak) / 4u]); }
  } else {
    let bk = k0 + lid / 16u;
    let bn = n0 + (lid % 16u) * 4u;
    if (bn < P.N && bk < k_end) { r.b = vec4<f32>(B[(bo + bk * P.N + bn) / 4u]); }
  }
  return r;
}

// Stores them k-major into buffer `buf` (0 or 1; A and a [N, K] B transposed lane by lane).
fn stage_regs(buf: u32, r: TileRegs, lid: u32) {
  let c = (lid / 4u) / 4u;
  let lane = (lid / 4u) % 4u;
  let k = (lid % 4u) * 4u;
  As[buf][k][c][lane] = r.a.x;
  As[buf][k + 1u][c][lane] = r.a.y;
  As[buf][k + 2u][c][lane] = r.a.z;
  As[buf][k + 3u][c][lane] = r.a.w;
  if (TRANS_B == 1u) {
    Bs[buf][k][c][lane] = r.b.x;
    Bs[buf][k + 1u][c][lane] = r.b.y;
    Bs[buf][k + 2u][c][lane] = r.b.z;
    Bs[buf][k + 3u][c][lane] = r.b.w;
  } else {
    Bs[buf][lid / 16u][lid % 16u] = r.b;
  }
}

// Two shared buffers, so one barrier per k tile: the next tile is staged into the other buffer
// while slower invocations still read this one. Plain loads of the next tile are issued after the
// multiply: issued before it, to overlap, they were 7-9% slower at 1500 rows on the H200 and level
// at 197. The normalising loads of NORM_A cost more and are issued before it (ViT-tiny's 24 fused
// norms: 1.75 -> 1.62 ms of GPU time for the model).
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
#if NORM_A
  g_norm = row_stats(offs.x, min(m0 + lid / LPR, P.M - 1u), lid);
#endif
  var r = load_regs(offs.x, offs.y, m0, n0, k_begin, k_end, lid);
  var buf = 0u;
  for (var k0 = k_begin; k0 < k_end; k0 = k0 + TK) {
    stage_regs(buf, r, lid);
    workgroupBarrier();
#if NORM_A
    if (k0 + TK < k_end) { r = load_regs(offs.x, offs.y, m0, n0, k0 + TK, k_end, lid); }
#endif
    for (var k = 0u; k < TK; k = k + 1u) {
      let a = As[buf][k][l.y];
      let b = Bs[buf][k][l.x];
      acc[0] = fma(vec4<f32>(a.x), b, acc[0]);
      acc[1] = fma(vec4<f32>(a.y), b, acc[1]);
      acc[2] = fma(vec4<f32>(a.z), b, acc[2]);
      acc[3] = fma(vec4<f32>(a.w), b, acc[3]);
    }
#if !NORM_A
    if (k0 + TK < k_end) { r = load_regs(offs.x, offs.y, m0, n0, k0 + TK, k_end, lid); }
#endif
    buf = 1u - buf;
  }
  store_tile(wid.z, m0, n0, l.x, l.y, acc);
}
#endif
#endif
