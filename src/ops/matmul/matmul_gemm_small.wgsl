// Small GEMM: C[b] = alpha * A[b] @ op(B[b]) + beta * bias for problems whose 64x64 tiles are too
// few to fill the GPU (a ViT's projections at 197 tokens, BERT's and GPT-2's at 64-128): 32x32
// output tiles, and K split four ways inside the workgroup (256 invocations = 4 slices x 64), the
// slices' sums added in workgroup memory in slice order, each invocation then storing a row of its
// block. Where the 64x64 kernel split K across
// workgroups it wrote partials and took a second dispatch to add them; here there is neither.
// Operands are read straight from memory, no staging and no barrier in the k loop (a tile's rows
// are read by its 8 invocations of a row or column, which L1 serves): invocation lid keeps the 4x4
// block lid / 4 (rows ty * 4.., columns tx * 4..) over slice s = lid % 4, the k quads s, s + 4,
// ...: four neighbouring invocations read a row's 64 contiguous bytes.
// A is [M, K] row-major, vec4 along K (K % 4 == 0); TRANS_B = 1: B is [N, K], vec4 along K; else
// [K, N], vec4 along N (N % 4 == 0). Rows and columns past the problem read its last ones (in
// bounds, dropped at the store).
// NORM_A (etwebgpu.layer_norm_linear): A's rows layer-normalised as they are loaded; eight
// invocations a row take the mean, then the centred sum of squares, before the k loop.
// A, B, BIAS, C, NW, NB and P come from the generated preamble.
//!include matmul_params

override TRANS_B: u32 = 0u;
override HAS_BIAS: u32 = 0u;
const S: u32 = 4u;  // K slices

//!include matmul_batch
//!include matmul_finish

var<workgroup> red: array<array<vec4<f32>, 4>, 192>;  // slices 1..3's blocks: [block][slice - 1]

#if NORM_A
override HAS_NW: u32 = 0u;
override HAS_NB: u32 = 0u;
var<workgroup> nsum: array<f32, 256>;
var<workgroup> stats: array<vec2<f32>, 32>;  // mean and rstd of the tile's rows

fn eight_sum(v: f32, lid: u32) -> f32 {
  nsum[lid] = v;
  workgroupBarrier();
  let g = lid & ~7u;
  let r = ((nsum[g] + nsum[g + 1u]) + (nsum[g + 2u] + nsum[g + 3u])) +
          ((nsum[g + 4u] + nsum[g + 5u]) + (nsum[g + 6u] + nsum[g + 7u]));
  workgroupBarrier();
  return r;
}

// Row lid / 8's statistics into stats (its last row for rows past M), two passes over the row.
fn norm_stats(ao: u32, m0: u32, lid: u32) {
  let base = (ao + min(m0 + lid / 8u, P.M - 1u) * P.K) / 4u;
  let nq = P.K / 4u;
  var s = vec4<f32>(0.0);
  var q = lid % 8u;
  for (; q + 24u < nq; q = q + 32u) {
    s = s + ((vec4<f32>(A[base + q]) + vec4<f32>(A[base + q + 8u])) +
             (vec4<f32>(A[base + q + 16u]) + vec4<f32>(A[base + q + 24u])));
  }
  for (; q < nq; q = q + 8u) { s = s + vec4<f32>(A[base + q]); }
  let mean = eight_sum(s.x + s.y + s.z + s.w, lid) / f32(P.K);
  var v = vec4<f32>(0.0);
  for (q = lid % 8u; q < nq; q = q + 8u) {
    let d = vec4<f32>(A[base + q]) - mean;
    v = fma(d, d, v);
  }
  let var_ = eight_sum(v.x + v.y + v.z + v.w, lid) / f32(P.K);
  if (lid % 8u == 0u) { stats[lid / 8u] = vec2<f32>(mean, inverseSqrt(var_ + P.eps)); }
  workgroupBarrier();
}
#endif

// A's rows (vec4 indices ab) at k quad q; ty: the block's row group.
fn load_a(ab: vec4<u32>, ty: u32, q: u32) -> array<vec4<f32>, 4> {
  var a: array<vec4<f32>, 4>;
  for (var i = 0u; i < 4u; i = i + 1u) {
    a[i] = vec4<f32>(A[ab[i] + q]);
#if NORM_A
    let st = stats[ty * 4u + i];
    a[i] = (a[i] - st.x) * st.y;
    if (HAS_NW == 1u) { a[i] = a[i] * vec4<f32>(NW[q]); }
    if (HAS_NB == 1u) { a[i] = a[i] + vec4<f32>(NB[q]); }
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
  let m0 = wid.y * 32u;
  let n0 = wid.x * 32u;
  let offs = batch_offsets(wid.z);
  let s = lid % S;
  let blk = lid / S;
  let tx = blk % 8u;
  let ty = blk / 8u;
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
  var acc: array<vec4<f32>, 4>;
  // Two quads of loads in flight before their products.
  var q = s;
  for (; q + S < nq; q = q + 2u * S) {
    let a0 = load_a(ab, ty, q);
    let b0 = load_b(bb, q);
    let a1 = load_a(ab, ty, q + S);
    let b1 = load_b(bb, q + S);
    mul_add(&acc, a0, b0);
    mul_add(&acc, a1, b1);
  }
  if (q < nq) { mul_add(&acc, load_a(ab, ty, q), load_b(bb, q)); }
  if (s > 0u) { red[blk * (S - 1u) + s - 1u] = acc; }
  workgroupBarrier();
  if (s == 0u) {
    for (var r = 0u; r < S - 1u; r = r + 1u) {
      let o = red[blk * (S - 1u) + r];
      for (var i = 0u; i < 4u; i = i + 1u) { acc[i] = acc[i] + o[i]; }
    }
  }
  workgroupBarrier();
  if (s == 0u) { red[blk] = acc; }
  workgroupBarrier();
  // Every invocation stores a row of its block: four outputs each, not sixteen for a quarter of
  // them (an epilogue's loads, such as a residual add's, follow its stores one by one).
  let m = r0 + s;
  if (m < P.M) {
    let row = red[blk][s];
    for (var j = 0u; j < 4u; j = j + 1u) {
      let n = c0 + j;
      if (n < P.N) { finish(wid.z, m, n, row[j]); }
    }
  }
}
