// Large-tile GEMM: C[b] = alpha * A[b] @ op(B[b]) + beta * bias, for big problems.
// A is [M, K] row-major; TRANS_B = 1: B is stored [N, K] (linear weight), else [K, N].
// Workgroup of 256 invocations (16 x 16) computes a BM x 128 tile, BM = 16 * TM (TM = 8: 128x128,
// TM = 4: 64x128); each invocation a TM x 8 register block: rows ty*4+i (+64 when TM = 8), columns
// tx*4+j and 64+tx*4+j, so the shared-memory reads are conflict-free consecutive vec4s.
// K is staged BK = 8 at a time through double-buffered workgroup memory, both operands stored
// k-major as vec4 quads ([k][m/4], [k][n/4]); the next tile is prefetched into registers (vec4
// global loads) while the current one is multiplied: one barrier per K step.
// Needs K % 4 == 0 (and N % 4 == 0 for a [K, N] B) so every vec4 load is whole and aligned.
// ALIGNED = 1 (M % BM == 0, N % 128 == 0, K % 8 == 0) drops every bounds check.
// Batch = wid.z over up to 4 collapsed batch dims; a batch stride of 0 broadcasts that operand.
//!include matmul_params

@group(0) @binding(0) var<storage, read> A4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> BIAS: array<f32>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
@group(0) @binding(4) var<uniform> P: Params;

override TRANS_B: u32 = 0u;
override HAS_BIAS: u32 = 0u;
override TM: u32 = 8u;       // rows per invocation: 8 (BM = 128) or 4 (BM = 64)
override ALIGNED: u32 = 0u;

const BK: u32 = 8u;
// Two buffers of [BK][32] quads (128 rows / cols); TM = 4 uses the first 16 quads of each A row.
var<workgroup> As: array<vec4<f32>, 512>;
var<workgroup> Bs: array<vec4<f32>, 512>;

//!include matmul_batch

fn store_c(coff: u32, m: u32, n: u32, v: vec4<f32>) {
  if (ALIGNED == 0u && m >= P.M) { return; }
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (ALIGNED == 1u || n + j < P.N) {
      var r = P.alpha * v[j];
      if (HAS_BIAS == 1u) { r = r + P.beta * BIAS[m * P.bias_sm + (n + j) * P.bias_sn]; }
      C[coff + m * P.N + n + j] = r;
    }
  }
}

@compute @workgroup_size(256)
fn gemm_large(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
  let BM = 16u * TM;
  let tx = lid % 16u;
  let ty = lid / 16u;
  // Grouped tile order for L2 reuse: consecutive workgroups walk 8 row tiles down a column
  // group before moving right, so the A and B panels in flight stay small.
  let lin = wid.y * nwg.x + wid.x;
  let per_group = 8u * nwg.x;
  let first_m = (lin / per_group) * 8u;
  let gsz = min(nwg.y - first_m, 8u);
  let in_group = lin % per_group;
  let m0 = (first_m + in_group % gsz) * BM;
  let n0 = (in_group / gsz) * 128u;
  let offs = batch_offsets(wid.z);
  let K = P.K;

  // A loader: row ar (of BM), k quad aq (of 2); only the first 2 * BM invocations load.
  let ar = lid / 2u;
  let aq = lid % 2u;
  let a_on = ar < BM;
  let a_row_ok = a_on && (ALIGNED == 1u || m0 + ar < P.M);
  let a_base = (offs.x + min(m0 + ar, P.M - 1u) * K) / 4u + aq;
  let a_st = aq * 4u * 32u + ar / 4u;  // As quad index of k = aq*4, row ar
  let a_lane = ar % 4u;
  // B loader: [N, K]: column br = lid / 2 (of 128), k quad lid % 2, stored like A.
  //           [K, N]: k row lid / 32 (of 8), n quad lid % 32.
  var b_base: u32;
  var b_ok: bool;
  if (TRANS_B == 1u) {
    b_ok = ALIGNED == 1u || n0 + ar < P.N;
    b_base = (offs.y + min(n0 + ar, P.N - 1u) * K) / 4u + aq;
  } else {
    let bk = lid / 32u;
    let bq = lid % 32u;
    b_ok = ALIGNED == 1u || n0 + bq * 4u < P.N;
    b_base = (offs.y + bk * P.N + min(n0 + bq * 4u, P.N - 4u)) / 4u;
  }
  let b_kstep = select(P.N / 4u * BK, BK / 4u, TRANS_B == 1u);  // quads per K step

  var acc: array<vec4<f32>, 16>;  // [row i][col half h] = acc[i * 2 + h]
  let nt = (K + BK - 1u) / BK;

  // Prefetch registers.
  var ra = vec4<f32>(0.0);
  var rb = vec4<f32>(0.0);
  // Tile t's loads: A quad k = t*8 + aq*4 (whole since K % 4 == 0).
  {
    let ka = aq * 4u;
    if (a_row_ok && (ALIGNED == 1u || ka < K)) { ra = A4[a_base]; }
    if (TRANS_B == 1u) {
      if (b_ok && (ALIGNED == 1u || ka < K)) { rb = B4[b_base]; }
    } else {
      if (b_ok && (ALIGNED == 1u || lid / 32u < K)) { rb = B4[b_base]; }
    }
  }
  for (var t = 0u; t < nt; t = t + 1u) {
    let buf = (t % 2u) * 256u;
    // Store the registers of tile t.
    if (a_on) {
      As[buf + a_st][a_lane] = ra.x;
      As[buf + a_st + 32u][a_lane] = ra.y;
      As[buf + a_st + 64u][a_lane] = ra.z;
      As[buf + a_st + 96u][a_lane] = ra.w;
    }
    if (TRANS_B == 1u) {
      Bs[buf + a_st][a_lane] = rb.x;
      Bs[buf + a_st + 32u][a_lane] = rb.y;
      Bs[buf + a_st + 64u][a_lane] = rb.z;
      Bs[buf + a_st + 96u][a_lane] = rb.w;
    } else {
      Bs[buf + lid] = rb;
    }
    workgroupBarrier();
    // Prefetch tile t + 1 while multiplying tile t.
    if (t + 1u < nt) {
      let k1 = (t + 1u) * BK;
      let ka = k1 + aq * 4u;
      ra = vec4<f32>(0.0);
      rb = vec4<f32>(0.0);
      if (a_row_ok && (ALIGNED == 1u || ka < K)) { ra = A4[a_base + (t + 1u) * (BK / 4u)]; }
      if (TRANS_B == 1u) {
        if (b_ok && (ALIGNED == 1u || ka < K)) { rb = B4[b_base + (t + 1u) * b_kstep]; }
      } else {
        if (b_ok && (ALIGNED == 1u || k1 + lid / 32u < K)) { rb = B4[b_base + (t + 1u) * b_kstep]; }
      }
    }
    for (var k = 0u; k < BK; k = k + 1u) {
      let a0 = As[buf + k * 32u + ty];
      let b0 = Bs[buf + k * 32u + tx];
      let b1 = Bs[buf + k * 32u + tx + 16u];
      acc[0] = fma(vec4<f32>(a0.x), b0, acc[0]);
      acc[1] = fma(vec4<f32>(a0.x), b1, acc[1]);
      acc[2] = fma(vec4<f32>(a0.y), b0, acc[2]);
      acc[3] = fma(vec4<f32>(a0.y), b1, acc[3]);
      acc[4] = fma(vec4<f32>(a0.z), b0, acc[4]);
      acc[5] = fma(vec4<f32>(a0.z), b1, acc[5]);
      acc[6] = fma(vec4<f32>(a0.w), b0, acc[6]);
      acc[7] = fma(vec4<f32>(a0.w), b1, acc[7]);
      if (TM == 8u) {
        let a1 = As[buf + k * 32u + ty + 16u];
        acc[8] = fma(vec4<f32>(a1.x), b0, acc[8]);
        acc[9] = fma(vec4<f32>(a1.x), b1, acc[9]);
        acc[10] = fma(vec4<f32>(a1.y), b0, acc[10]);
        acc[11] = fma(vec4<f32>(a1.y), b1, acc[11]);
        acc[12] = fma(vec4<f32>(a1.z), b0, acc[12]);
        acc[13] = fma(vec4<f32>(a1.z), b1, acc[13]);
        acc[14] = fma(vec4<f32>(a1.w), b0, acc[14]);
        acc[15] = fma(vec4<f32>(a1.w), b1, acc[15]);
      }
    }
  }
  // Constant acc indices only (a dynamically indexed acc could be moved out of registers).
  let coff = wid.z * P.cstride;
  let r0 = m0 + ty * 4u;
  let c0 = n0 + tx * 4u;
  store_c(coff, r0, c0, acc[0]);
  store_c(coff, r0, c0 + 64u, acc[1]);
  store_c(coff, r0 + 1u, c0, acc[2]);
  store_c(coff, r0 + 1u, c0 + 64u, acc[3]);
  store_c(coff, r0 + 2u, c0, acc[4]);
  store_c(coff, r0 + 2u, c0 + 64u, acc[5]);
  store_c(coff, r0 + 3u, c0, acc[6]);
  store_c(coff, r0 + 3u, c0 + 64u, acc[7]);
  if (TM == 8u) {
    store_c(coff, r0 + 64u, c0, acc[8]);
    store_c(coff, r0 + 64u, c0 + 64u, acc[9]);
    store_c(coff, r0 + 65u, c0, acc[10]);
    store_c(coff, r0 + 65u, c0 + 64u, acc[11]);
    store_c(coff, r0 + 66u, c0, acc[12]);
    store_c(coff, r0 + 66u, c0 + 64u, acc[13]);
    store_c(coff, r0 + 67u, c0, acc[14]);
    store_c(coff, r0 + 67u, c0 + 64u, acc[15]);
  }
}
