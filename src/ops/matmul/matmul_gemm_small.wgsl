// Small GEMM: C[b] = alpha * A[b] @ op(B[b]) + beta * bias for problems whose 64x64 tiles are too
// few to fill the GPU (a ViT's projections at 197 tokens, BERT's and GPT-2's at 64-128): TS x TS
// output tiles, and K split S ways inside the workgroup (256 invocations = S slices x the tile's
// 4x4 blocks), the slices' sums added in workgroup memory, each invocation then storing its share
// of its block. Where the 64x64 kernel split K across workgroups it wrote partials and took a
// second dispatch to add them; here there is neither. TILE16: 16x16 tiles over 16 slices, four
// times the workgroups of 32x32 tiles over 4 slices, for problems whose 32x32 tiles leave the GPU
// idle (an MLP's down-projection to 192 features).
// Operands are read straight from memory, no staging and no barrier in the k loop (a tile's rows
// are read by the invocations of a row or column, which L1 serves): invocation lid keeps the 4x4
// block lid / S (rows ty * 4.., columns tx * 4..) over slice s = lid % S, the k quads s, s + S,
// ...: neighbouring invocations read a row's contiguous bytes.
// A is [M, K] row-major, vec4 along K (K % 4 == 0); TRANS_B = 1: B is [N, K], vec4 along K; else
// [K, N], vec4 along N (N % 4 == 0). Rows and columns past the problem read its last ones (in
// bounds, dropped at the store).
// NORM_A (etwebgpu.layer_norm_linear): A's rows layer-normalised as they are loaded; LPR
// invocations a row take their statistics (matmul_row_stats.wgsl) before the k loop.
// A, B, BIAS, C, NW, NB and P come from the generated preamble.
//!include matmul_params

override TRANS_B: u32 = 0u;
override HAS_BIAS: u32 = 0u;
#if TILE16
const TS: u32 = 16u;  // output tile side
const S: u32 = 16u;   // K slices
#else
const TS: u32 = 32u;
const S: u32 = 4u;
#endif
const BPR: u32 = TS / 4u;  // 4x4 blocks per tile row
const LPR: u32 = 256u / TS;  // NORM_A: invocations a row
const OPI: u32 = 16u / S;  // outputs each invocation stores

//!include matmul_batch
//!include matmul_finish

const NBLK: u32 = BPR * BPR;  // 4x4 blocks of a tile
//!include slice_sum

#if NORM_A
//!include matmul_row_stats
var<workgroup> stats: array<vec2<f32>, TS>;  // mean and rstd of the tile's rows

// Row lid / LPR's statistics into stats (its last row for rows past M).
fn norm_stats(ao: u32, m0: u32, lid: u32) {
  let st = row_stats(ao, min(m0 + lid / LPR, P.M - 1u), lid);
  if (lid % LPR == 0u) { stats[lid / LPR] = st; }
  workgroupBarrier();
}
#endif

// A's rows (vec4 indices ab) at k quad q; mu, rs: the rows' means and rstds (NORM_A).
fn load_a(ab: vec4<u32>, mu: vec4<f32>, rs: vec4<f32>, q: u32) -> array<vec4<f32>, 4> {
  var a: array<vec4<f32>, 4>;
#if NORM_A
  var w = vec4<f32>(1.0);
  var b = vec4<f32>(0.0);
  if (HAS_NW == 1u) { w = vec4<f32>(NW[q]); }
  if (HAS_NB == 1u) { b = vec4<f32>(NB[q]); }
#endif
  for (var i = 0u; i < 4u; i = i + 1u) {
    a[i] = vec4<f32>(A[ab[i] + q]);
#if NORM_A
    a[i] = (a[i] - mu[i]) * rs[i];
    if (HAS_NW == 1u) { a[i] = a[i] * w; }
    if (HAS_NB == 1u) { a[i] = a[i] + b; }
#endif
  }
  return a;
}

// B at k quad q: TRANS_B, the columns' quads (rows bb of [N, K]); else rows 4q .. 4q + 3 of the
// column quad bb.x.
fn load_b(bb: vec4<u32>, q: u32) -> array<vec4<f32>, 4> {
  var b: array<vec4<f32>, 4>;
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (TRANS_B == 1u) {
      b[j] = vec4<f32>(B[bb[j] + q]);
    } else {
      b[j] = vec4<f32>(B[bb.x + (4u * q + j) * (P.N / 4u)]);
    }
  }
  return b;
}

fn mul_add(acc: ptr<function, array<vec4<f32>, 4>>, a: array<vec4<f32>, 4>, b: array<vec4<f32>, 4>) {
  for (var i = 0u; i < 4u; i = i + 1u) {
    if (TRANS_B == 1u) {
      (*acc)[i] = (*acc)[i] + vec4<f32>(dot(a[i], b[0]), dot(a[i], b[1]), dot(a[i], b[2]), dot(a[i], b[3]));
    } else {
      (*acc)[i] = fma(vec4<f32>(a[i].w), b[3], fma(vec4<f32>(a[i].z), b[2],
                  fma(vec4<f32>(a[i].y), b[1], fma(vec4<f32>(a[i].x), b[0], (*acc)[i]))));
    }
  }
}

@compute @workgroup_size(256)
fn gemm_small(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m0 = wid.y * TS;
  let n0 = wid.x * TS;
  let offs = batch_offsets(wid.z);
  let s = lid % S;
  let blk = lid / S;
  let tx = blk % BPR;
  let ty = blk / BPR;
#if NORM_A
  norm_stats(offs.x, m0, lid);
#endif
  let r0 = m0 + ty * 4u;
  let ab = (offs.x + min(vec4<u32>(r0, r0 + 1u, r0 + 2u, r0 + 3u), vec4<u32>(P.M - 1u)) * P.K) / 4u;
  let c0 = n0 + tx * 4u;
  var bb: vec4<u32>;
  if (TRANS_B == 1u) {
    bb = (offs.y + min(vec4<u32>(c0, c0 + 1u, c0 + 2u, c0 + 3u), vec4<u32>(P.N - 1u)) * P.K) / 4u;
  } else {
    bb = vec4<u32>((offs.y + min(c0, P.N - 4u)) / 4u);
  }
  let nq = P.K / 4u;
  var mu = vec4<f32>(0.0);
  var rs = vec4<f32>(1.0);
#if NORM_A
  for (var i = 0u; i < 4u; i = i + 1u) {
    mu[i] = stats[ty * 4u + i].x;
    rs[i] = stats[ty * 4u + i].y;
  }
#endif
  var acc: array<vec4<f32>, 4>;
  // Two quads of loads in flight before their products.
  var q = s;
  for (; q + S < nq; q = q + 2u * S) {
    let a0 = load_a(ab, mu, rs, q);
    let b0 = load_b(bb, q);
    let a1 = load_a(ab, mu, rs, q + S);
    let b1 = load_b(bb, q + S);
    mul_add(&acc, a0, b0);
    mul_add(&acc, a1, b1);
  }
  if (q < nq) { mul_add(&acc, load_a(ab, mu, rs, q), load_b(bb, q)); }
  slice_sum(acc, s, blk);
  // Every invocation stores OPI outputs of its block (a row with 4 slices, one with 16), not
  // sixteen for one of them (an epilogue's loads, such as a residual add's, follow its stores one
  // by one).
  let e0 = s * OPI;
  let m = r0 + e0 / 4u;
  if (m < P.M) {
    let row = red[blk][e0 / 4u];
    for (var j = e0 % 4u; j < e0 % 4u + OPI; j = j + 1u) {
      let n = c0 + j;
      if (n < P.N) { finish(wid.z, m, n, row[j]); }
    }
  }
}
