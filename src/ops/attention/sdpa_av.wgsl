// SDPA stage 3: out[b, h, s, d] = sum_c attn[b, h, s, c] * v[b, h / group, c, d]; one invocation
// per output element (flat index with 2D folding), written through the output strides.
struct Params {
  b: u32, h: u32, sq: u32, skv: u32,
  d: u32, dv: u32, group: u32, causal: u32,
  start: u32, rows: u32, entries: u32, neg_inf_bits: u32,
  q_b: u32, q_h: u32, q_s: u32, scale: f32,
  k_b: u32, k_h: u32, k_s: u32, pad0: u32,
  v_b: u32, v_h: u32, v_s: u32, pad1: u32,
  o_b: u32, o_h: u32, o_s: u32, pad2: u32,
  m_b: u32, m_h: u32, m_s: u32, m_c: u32,
};

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> V: array<f32>;
@group(0) @binding(2) var<storage, read_write> O: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.rows * P.dv) { return; }
  let d = i % P.dv;
  let r = i / P.dv;
  let s = r % P.sq;
  let h = (r / P.sq) % P.h;
  let b = r / (P.sq * P.h);
  let vo = b * P.v_b + (h / P.group) * P.v_h + d;
  let ao = r * P.skv;
  var acc = 0.0;
  for (var c = 0u; c < P.skv; c = c + 1u) { acc = acc + A[ao + c] * V[vo + c * P.v_s]; }
  O[b * P.o_b + h * P.o_h + s * P.o_s + d] = acc;
}
