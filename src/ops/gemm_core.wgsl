// The register-blocked core of the large-tile GEMMs (//!include gemm_core in matmul_gemm_large and
// conv_gemm_large). 256 invocations (16 x 16) compute a BM x 128 output tile, BM = 16 * TM (TM = 8:
// 128x128, TM = 4: 64x128); each invocation a TM x 8 register block: rows ty*4+i (+64 when TM = 8),
// columns tx*4+j and 64+tx*4+j, so the shared-memory reads are conflict-free consecutive vec4s.
// K is staged BK = 8 at a time through double-buffered workgroup memory, both operands stored
// k-major as vec4 quads ([k][m/4], [k][n/4]); the next K tile is loaded into registers while the
// current one is multiplied: one barrier per K step. Values are f32 whatever the storage.
// The including shader supplies its operands and epilogue:
//   fn load_tile(t: u32) -> Tile       this invocation's registers of K tile t (zero outside)
//   fn stage_tile(buf: u32, r: Tile)   stores them at quad offset buf of As / Bs (see stage_a)
//   fn store_row(m: u32, c: u32, v0: vec4<f32>, v1: vec4<f32>)   output row m, columns c..c+3
//                                      (v0) and c+64..c+67 (v1)
override TM: u32 = 8u;       // rows per invocation: 8 (BM = 128) or 4 (BM = 64)
override ALIGNED: u32 = 0u;  // the shader may drop tile-edge checks (M % BM, N % 128, K % 8 all 0)

const BK: u32 = 8u;
// Two buffers of [BK][32] quads (128 rows / cols); TM = 4 uses the first 16 quads of each A row.
var<workgroup> As: array<vec4<f32>, 512>;
var<workgroup> Bs: array<vec4<f32>, 512>;

struct Tile { a: vec4<f32>, b: vec4<f32> };

// Stores k = q*4 .. q*4+3 of row r (A) / column r (B) k-major.
fn stage_a(buf: u32, r: u32, q: u32, v: vec4<f32>) {
  let i = buf + q * 4u * 32u + r / 4u;
  let lane = r % 4u;
  As[i][lane] = v.x;
  As[i + 32u][lane] = v.y;
  As[i + 64u][lane] = v.z;
  As[i + 96u][lane] = v.w;
}
fn stage_b(buf: u32, r: u32, q: u32, v: vec4<f32>) {
  let i = buf + q * 4u * 32u + r / 4u;
  let lane = r % 4u;
  Bs[i][lane] = v.x;
  Bs[i + 32u][lane] = v.y;
  Bs[i + 64u][lane] = v.z;
  Bs[i + 96u][lane] = v.w;
}

// The TM x 8 block of invocation lid over K (workgroup-uniform control flow: every invocation
// calls it and reaches every barrier).
fn gemm_core(lid: u32, K: u32) -> array<vec4<f32>, 16> {
  let tx = lid % 16u;
  let ty = lid / 16u;
  var acc: array<vec4<f32>, 16>;  // [row i][col half h] = acc[i * 2 + h]
  let nt = (K + BK - 1u) / BK;
  var r: Tile;
  if (nt > 0u) { r = load_tile(0u); }
  for (var t = 0u; t < nt; t = t + 1u) {
    let buf = (t % 2u) * 256u;
    stage_tile(buf, r);
    workgroupBarrier();
    if (t + 1u < nt) { r = load_tile(t + 1u); }
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
  return acc;
}

// Hands the block of invocation lid in the tile at (m0, n0) to store_row. Constant acc indices
// only (a dynamically indexed acc could be moved out of registers).
fn gemm_core_store(m0: u32, n0: u32, lid: u32, acc: array<vec4<f32>, 16>) {
  let r0 = m0 + (lid / 16u) * 4u;
  let c0 = n0 + (lid % 16u) * 4u;
  store_row(r0, c0, acc[0], acc[1]);
  store_row(r0 + 1u, c0, acc[2], acc[3]);
  store_row(r0 + 2u, c0, acc[4], acc[5]);
  store_row(r0 + 3u, c0, acc[6], acc[7]);
  if (TM == 8u) {
    store_row(r0 + 64u, c0, acc[8], acc[9]);
    store_row(r0 + 65u, c0, acc[10], acc[11]);
    store_row(r0 + 66u, c0, acc[12], acc[13]);
    store_row(r0 + 67u, c0, acc[14], acc[15]);
  }
}
