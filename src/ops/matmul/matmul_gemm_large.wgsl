// Large-tile GEMM: C[b] = alpha * A[b] @ op(B[b]) + beta * bias, for big problems, on the shared
// large-tile core (gemm_core.wgsl: BM x 128 tiles, BM = 16 * TM, K staged 8 at a time), with its
// nested tiles (matmul.cpp defines NESTED_TILES).
// A is [M, K] row-major; TRANS_B = 1: B is stored [N, K] (linear weight), else [K, N]. A and B are
// vec4 arrays: needs K % 4 == 0 (and N % 4 == 0 for a [K, N] B) so every vec4 load is whole.
// ALIGNED = 1 (M % BM == 0, N % 128 == 0, K % 8 == 0) drops every bounds check.
// Batch = wid.z over up to 4 collapsed batch dims; a batch stride of 0 broadcasts that operand.
// A, B, BIAS, C and P come from the generated preamble.
//!include matmul_params
//!include gemm_core

override TRANS_B: u32 = 0u;
override HAS_BIAS: u32 = 0u;

//!include matmul_batch
//!include matmul_finish

// Loader state of this invocation, set once by gemm_large.
// A: row ar (of BM), k quad aq (of 2); only the first 2 * BM invocations load.
// B [N, K]: column ar, k quad aq, staged like A. B [K, N]: k row lid / 32 (of 8), n quad lid % 32.
var<private> g_lid: u32;
var<private> g_ar: u32;
var<private> g_aq: u32;
var<private> g_a_on: bool;
var<private> g_a_row_ok: bool;
var<private> g_a_base: u32;
var<private> g_b_ok: bool;
var<private> g_b_base: u32;
var<private> g_b_kstep: u32;  // quads per K step
var<private> g_z: u32;

fn load_tile(t: u32) -> Tile {
  var r: Tile;
  let ka = t * BK + g_aq * 4u;
  if (g_a_row_ok && (ALIGNED == 1u || ka < P.K)) { r.a = vec4<f32>(A[g_a_base + t * (BK / 4u)]); }
  var k_ok = ka < P.K;
  if (TRANS_B == 0u) { k_ok = t * BK + g_lid / 32u < P.K; }
  if (g_b_ok && (ALIGNED == 1u || k_ok)) { r.b = vec4<f32>(B[g_b_base + t * g_b_kstep]); }
  return r;
}

fn stage_tile(buf: u32, r: Tile) {
  if (g_a_on) { stage_a(buf, g_ar, g_aq, r.a); }
  if (TRANS_B == 1u) {
    stage_b(buf, g_ar, g_aq, r.b);
  } else {
    Bs[buf][g_lid / 32u][g_lid % 32u] = r.b;
  }
}

fn store_c(m: u32, n: u32, v: vec4<f32>) {
  if (ALIGNED == 0u && m >= P.M) { return; }
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (ALIGNED == 1u || n + j < P.N) {
      finish(g_z, m, n + j, v[j]);
    }
  }
}

fn store_row(m: u32, c: u32, v0: vec4<f32>, v1: vec4<f32>) {
  store_c(m, c, v0);
  store_c(m, c + 64u, v1);
}

@compute @workgroup_size(256)
fn gemm_large(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
  let BM = 16u * TM;
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

  g_lid = lid;
  g_ar = lid / 2u;
  g_aq = lid % 2u;
  g_a_on = g_ar < BM;
  g_a_row_ok = g_a_on && (ALIGNED == 1u || m0 + g_ar < P.M);
  g_a_base = (offs.x + min(m0 + g_ar, P.M - 1u) * K) / 4u + g_aq;
  if (TRANS_B == 1u) {
    g_b_ok = ALIGNED == 1u || n0 + g_ar < P.N;
    g_b_base = (offs.y + min(n0 + g_ar, P.N - 1u) * K) / 4u + g_aq;
  } else {
    let bk = lid / 32u;
    let bq = lid % 32u;
    g_b_ok = ALIGNED == 1u || n0 + bq * 4u < P.N;
    g_b_base = (offs.y + bk * P.N + min(n0 + bq * 4u, P.N - 4u)) / 4u;
  }
  g_b_kstep = select(P.N / 4u * BK, BK / 4u, TRANS_B == 1u);
  g_z = wid.z;

//!include gemm_loop_body
}
