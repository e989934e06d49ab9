// et_vk.linear_dq8ca_q4gsw, routes "dot4" / "portable" (the shapes q4gsw_gemv_rows does not take:
// K or the group size not a multiple of 8): int8 per-token activations times 4-bit group-wise
// weights, accumulated in integers. Each output (m, n) is reduced by the 64 invocations of a workgroup:
//   out[m, n] = scale_m * sum_g ws[g, n] * sum_{k in g} (x_q[m, k] - zp_m) * q_w[n, k]
// each block of eight (or each product, below) an exact integer before it is scaled, so a row of
// zeros (x_q = zp) gives exactly 0. (weight_sums, the same sums per group, are checked at load.)
// Weight row n: P.wrow bytes (K padded to 8), byte j = (q[2j+1] + 8) << 4 | (q[2j] + 8), so one
// word holds eight weights: its low nibbles q[0, 2, 4, 6] and high nibbles q[1, 3, 5, 7], each
// turned into four signed bytes for dot4 with the two interleaved activation words of the block.
// Group size a multiple of 8 (P.blocks > 0): whole words; otherwise element by element.
// XQ: dq8ca_quantize_rows' packed activations (word 2b holds x_q[8b + 0, 2, 4, 6], 2b + 1 the
// odd), scale SC[m] and zero point ZP[m] from choose_qparams_affine; one workgroup per output
// (flat index with 2D folding).
// Bindings: XQ, the packed bytes W (u32 words), WS ([groups, P.srow]), SC, ZP (int8 or int32), O, P.
struct Params {
  m: u32, n: u32, k: u32, gs: u32,
  wrow: u32, srow: u32, sumrow: u32, kw: u32,
  groups: u32, blocks: u32, pad: u32, pad1: u32,  // pad is 0 (the epilogue math ORs it into NaN patterns)
#if EPILOGUE
  ep: Epilogue,
#endif
};
//!include q8_int_math

//!include epilogue_store

const LANES: u32 = 64u;  // invocations reducing one output
var<workgroup> red: array<f32, 64>;

fn xword(m: u32, j: u32) -> u32 { return XQ[m * P.kw + j]; }

// Four 4-bit values (x + 8, one per byte) as signed bytes x.
fn nib_s8(v: u32) -> u32 {
  return (v ^ 0x08080808u) | (((~v >> 3u) & 0x01010101u) * 0xf0u);
}

fn xq_byte(m: u32, k: u32) -> i32 {
  let j = (k / 8u) * 2u + (k & 1u);
  return extractBits(bitcast<i32>(xword(m, j)), ((k % 8u) / 2u) * 8u, 8u);
}

// Invocation lid's share of output (m, n) before the workgroup sum.
fn partial(m: u32, n: u32, zp: i32, lid: u32) -> f32 {
  var acc = 0.0;
  if (P.blocks > 0u) {
    // Block b = weights k in [8b, 8b + 8): weight word (row n starts word aligned), activation words 2b, 2b + 1.
    let wo = n * (P.wrow / 4u);
    let per_group = P.gs / 8u;
    for (var b = lid; b < P.blocks; b = b + LANES) {
      let wv = W[wo + b];
      let lo = nib_s8(wv & 0x0f0f0f0fu);
      let hi = nib_s8((wv >> 4u) & 0x0f0f0f0fu);
      // sum_k (x_q - zp) * q_w over the block, exact in i32 (the q_w sum by dot4 with ones).
      let d = dot4(xword(m, 2u * b), lo) + dot4(xword(m, 2u * b + 1u), hi) - zp * (dot4(lo, 0x01010101u) + dot4(hi, 0x01010101u));
      acc = acc + f32(d) * f32(WS[(b / per_group) * P.srow + n]);
    }
  } else {
    for (var k = lid; k < P.k; k = k + LANES) {
      let byte = n * P.wrow + k / 2u;
      let bv = (W[byte / 4u] >> ((byte % 4u) * 8u)) & 0xffu;
      let qw = i32(select(bv & 15u, bv >> 4u, (k & 1u) == 1u)) - 8;
      acc = acc + f32((xq_byte(m, k) - zp) * qw) * f32(WS[(k / P.gs) * P.srow + n]);
    }
  }
  return acc;
}

// The sum of v over the workgroup.
fn group_sum(v: f32, lane: u32) -> f32 {
  red[lane] = v;
  workgroupBarrier();
  for (var s = LANES / 2u; s > 0u; s = s / 2u) {
    if (lane < s) { red[lane] = red[lane] + red[lane + s]; }
    workgroupBarrier();
  }
  return red[0];
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gi = wid.x + wid.y * nwg.x;
  if (gi >= P.m * P.n) { return; }
  let m = gi / P.n;
  let n = gi % P.n;
  let s = group_sum(partial(m, n, load_ZP(m), lid), lid);
  if (lid == 0u) { O[m * P.n + n] = O_T(epilogue(f32(SC[m]) * s, m * P.n + n)); }
}
