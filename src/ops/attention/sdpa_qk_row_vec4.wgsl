// SDPA stage 1, per-row route with vec4 loads over the head dim (D % 4 == 0; every stride is a
// multiple of D, so offsets divide by 4). One invocation per (b, h, s) query row.
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

@group(0) @binding(0) var<storage, read> Q: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> K: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> M: array<u32>;
@group(0) @binding(3) var<storage, read_write> A: array<f32>;
@group(0) @binding(4) var<uniform> P: Params;

override MASK: u32 = 0u;
override WG: u32 = 64u;

// Additive bias of entry (b, h, s, c): mask (MASK 1 float, 2 bool keep=true) and causal limit
// (key c visible to query s iff c <= start + s).
fn bias(b: u32, h: u32, s: u32, c: u32) -> f32 {
  let neg_inf = bitcast<f32>(P.neg_inf_bits);
  if (P.causal == 1u && c > P.start + s) { return neg_inf; }
  if (MASK == 0u) { return 0.0; }
  let w = M[b * P.m_b + h * P.m_h + s * P.m_s + c * P.m_c];
  if (MASK == 1u) { return bitcast<f32>(w); }
  return select(neg_inf, 0.0, w != 0u);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let r = (wid.x + wid.y * nwg.x) * WG + lid;
  if (r >= P.rows) { return; }
  let s = r % P.sq;
  let h = (r / P.sq) % P.h;
  let b = r / (P.sq * P.h);
  let qo = (b * P.q_b + h * P.q_h + s * P.q_s) / 4u;
  let ko = (b * P.k_b + (h / P.group) * P.k_h) / 4u;
  let d4 = P.d / 4u;
  for (var c = 0u; c < P.skv; c = c + 1u) {
    let kc = ko + c * (P.k_s / 4u);
    var acc = vec4<f32>(0.0);
    for (var d = 0u; d < d4; d = d + 1u) { acc = acc + Q[qo + d] * K[kc + d]; }
    A[r * P.skv + c] = (acc.x + acc.y + acc.z + acc.w) * P.scale + bias(b, h, s, c);
  }
}
