// et_vk.linear_dq8ca_q4gsw: int8 per-token activations times 4-bit group-wise weights,
// accumulated in integers. Each output (m, n) is reduced by the 64 invocations of a workgroup:
//   out[m, n] = scale_m * sum_g ws[g, n] * sum_{k in g} (x_q[m, k] - zp_m) * q_w[n, k]
// each block of eight (or each product, below) an exact integer before it is scaled, so a row of
// zeros (x_q = zp) gives exactly 0. (weight_sums, the same sums per group, are checked at load.)
// Weight row n: P.wrow bytes (K padded to 8), byte j = (q[2j+1] + 8) << 4 | (q[2j] + 8), so one
// word holds eight weights: its low nibbles q[0, 2, 4, 6] and high nibbles q[1, 3, 5, 7], each
// turned into four signed bytes for dot4 with the two interleaved activation words of the block.
// Group size a multiple of 8 (P.blocks > 0): whole words; otherwise element by element.
// Activation words (dq8ca_quantize_rows' layout: word 2b holds x_q[8b + 0, 2, 4, 6], 2b + 1 the odd):
// - default: XQ from the dq8ca_quantize_rows pre-pass, scale SC[m] and zero point ZP[m] from
//   choose_qparams_affine; one workgroup per output (flat index with 2D folding).
// - SELF_QPARAMS (etwebgpu.linear_dq8ca_q4gsw_qparams): a 256-wide workgroup chooses row m's
//   parameters itself (q8_row_qparams), quantizes the row into workgroup memory XS with the
//   pre-pass's operations, then its four groups of 64 lanes reduce NB outputs of that row, four at
//   a time, each exactly as above: bit-identical to the three-kernel path, in one dispatch.
// Bindings: XQ | X, the packed bytes W (u32 words), WS ([groups, P.srow]), SC, ZP (int8 or int32), O, P.
struct Params {
  m: u32, n: u32, k: u32, gs: u32,
  wrow: u32, srow: u32, sumrow: u32, kw: u32,
  groups: u32, blocks: u32, mode: u32, sym_zp: i32,
  qmin: f32, qmax: f32, denom: f32, eps: f32,
  pad: u32, pad1: u32, pad2: u32, pad3: u32,  // pad is 0 (the epilogue math ORs it into NaN patterns)
#if EPILOGUE
  ep: Epilogue,
#endif
};
//!include q8_int_math

//!include epilogue_store

const LANES: u32 = 64u;  // invocations reducing one output
var<workgroup> red: array<f32, 256>;

#if SELF_QPARAMS
//!include q8_row_qparams
override NB: u32 = 8u;        // outputs per workgroup
override XS_WORDS: u32 = 4u;  // >= P.kw
var<workgroup> XS: array<u32, XS_WORDS>;
fn xword(m: u32, j: u32) -> u32 { return XS[j]; }
#else
fn xword(m: u32, j: u32) -> u32 { return XQ[m * P.kw + j]; }
#endif

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

// The sum of v over lanes 0..63 of lane group g (red[64 g ..]), the same tree for every group.
fn group_sum(v: f32, g: u32, lane: u32) -> f32 {
  let o = g * LANES;
  red[o + lane] = v;
  workgroupBarrier();
  for (var s = LANES / 2u; s > 0u; s = s / 2u) {
    if (lane < s) { red[o + lane] = red[o + lane] + red[o + lane + s]; }
    workgroupBarrier();
  }
  let r = red[o];
  workgroupBarrier();
  return r;
}

#if SELF_QPARAMS
// 256 invocations: four lane groups of 64 reduce four outputs at a time.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gi = wid.x + wid.y * nwg.x;
  let nblocks = (P.n + NB - 1u) / NB;
  if (gi >= P.m * nblocks) { return; }  // uniform: depends on the workgroup only
  let m = gi / nblocks;
  let n0 = (gi % nblocks) * NB;
  let q = row_qparams(m, lid, 256u);
  let inv = div_rn(1.0, q.x);
  // dq8ca_quantize_rows' operations for row m.
  for (var j = lid; j < P.kw; j = j + 256u) {
    let k0 = (j / 2u) * 8u + (j & 1u);
    var word = 0u;
    for (var t = 0u; t < 4u; t = t + 1u) {
      let k = k0 + 2u * t;
      if (k < P.k) {
        let v = i32(clamp(round(f32(X[m * P.k + k]) * inv) + q.y, -128.0, 127.0));
        word = word | ((u32(v) & 0xffu) << (8u * t));
      }
    }
    XS[j] = word;
  }
  workgroupBarrier();
  let zp = i32(q.y);
  let g = lid / LANES;
  let lane = lid % LANES;
  for (var t = 0u; t < NB; t = t + 4u) {
    let n = n0 + t + g;
    var v = 0.0;
    if (n < P.n) { v = partial(m, n, zp, lane); }
    let s = group_sum(v, g, lane);
    if (lane == 0u && n < P.n) { O[m * P.n + n] = O_T(epilogue(q.x * s, m * P.n + n)); }
  }
}
#else
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gi = wid.x + wid.y * nwg.x;
  if (gi >= P.m * P.n) { return; }
  let m = gi / P.n;
  let n = gi % P.n;
  let s = group_sum(partial(m, n, load_ZP(m), lid), 0u, lid);
  if (lid == 0u) { O[m * P.n + n] = O_T(epilogue(f32(SC[m]) * s, m * P.n + n)); }
}
#endif
