// The register-blocked core of the large-tile GEMMs (//!include gemm_core in matmul_gemm_large and
// conv_gemm_large). 256 invocations (16 x 16) compute a BM x 128 output tile, BM = 16 * TM (TM = 8:
// 128x128, TM = 4: 64x128); each invocation a TM x 8 register block: rows ty*4+i (+64 when TM = 8),
// columns tx*4+j and 64+tx*4+j, so the shared-memory reads are conflict-free consecutive vec4s.
// K is staged BK = 8 at a time through double-buffered workgroup memory, both operands stored
// k-major as vec4 quads ([k][m/4], [k][n/4]); the next K tile is loaded into registers while the
// current one is multiplied: one barrier per K step. Values are f32 whatever the storage.
// The multiply loop and the hand-off to the epilogue are gemm_loop_body.wgsl, a statement block
// included into the entry point after it sets `lid`, `K`, `m0` and `n0`: the accumulators stay a
// local array with constant indices (returning them from a function put them in local memory on
// NVIDIA, 5x slower). The including shader supplies its operands and epilogue:
//   fn load_tile(t: u32) -> Tile       this invocation's registers of K tile t (zero outside)
//   fn stage_tile(buf: u32, r: Tile)   stores them into buffer buf of As / Bs (see stage_a)
//   fn store_row(m: u32, c: u32, v0: vec4<f32>, v1: vec4<f32>)   output row m, columns c..c+3
//                                      (v0) and c+64..c+67 (v1)
override TM: u32 = 8u;       // rows per invocation: 8 (BM = 128) or 4 (BM = 64)
override ALIGNED: u32 = 0u;  // the shader may drop tile-edge checks (M % BM, N % 128, K % 8 all 0)

const BK: u32 = 8u;
// Two buffers of [BK][32] quads (128 rows / cols); TM = 4 uses the first 16 quads of each A row.
// Two layouts, which the including shader picks; `buf` is the buffer's first quad (flat) or its
// index (nested):
#if NESTED_TILES
// [buffer][k][quad], so that the index clamps Dawn's robustness adds fall on each index alone: in
// the multiply loop they fold (k) or leave the loop (quad). H200, GPU ms: gemm 4096^3 4.08 -> 3.94,
// 1024^3 0.118 -> 0.106. The conv's gathers lose 31% with it (and 28% when the flat form is
// reached through accessor functions), so the conv keeps the flat form as it is.
var<workgroup> As: array<array<array<vec4<f32>, 32>, BK>, 2>;
var<workgroup> Bs: array<array<array<vec4<f32>, 32>, BK>, 2>;
#else
var<workgroup> As: array<vec4<f32>, 512>;
var<workgroup> Bs: array<vec4<f32>, 512>;
#endif

struct Tile { a: vec4<f32>, b: vec4<f32> };

// Stores k = q*4 .. q*4+3 of row r (A) / column r (B) k-major.
fn stage_a(buf: u32, r: u32, q: u32, v: vec4<f32>) {
#if NESTED_TILES
  let c = r / 4u;
  let lane = r % 4u;
  As[buf][q * 4u][c][lane] = v.x;
  As[buf][q * 4u + 1u][c][lane] = v.y;
  As[buf][q * 4u + 2u][c][lane] = v.z;
  As[buf][q * 4u + 3u][c][lane] = v.w;
#else
  let i = buf + q * 4u * 32u + r / 4u;
  let lane = r % 4u;
  As[i][lane] = v.x;
  As[i + 32u][lane] = v.y;
  As[i + 64u][lane] = v.z;
  As[i + 96u][lane] = v.w;
#endif
}
fn stage_b(buf: u32, r: u32, q: u32, v: vec4<f32>) {
#if NESTED_TILES
  let c = r / 4u;
  let lane = r % 4u;
  Bs[buf][q * 4u][c][lane] = v.x;
  Bs[buf][q * 4u + 1u][c][lane] = v.y;
  Bs[buf][q * 4u + 2u][c][lane] = v.z;
  Bs[buf][q * 4u + 3u][c][lane] = v.w;
#else
  let i = buf + q * 4u * 32u + r / 4u;
  let lane = r % 4u;
  Bs[i][lane] = v.x;
  Bs[i + 32u][lane] = v.y;
  Bs[i + 64u][lane] = v.z;
  Bs[i + 96u][lane] = v.w;
#endif
}
