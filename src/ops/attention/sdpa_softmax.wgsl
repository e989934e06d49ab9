// SDPA stage 2: in-place softmax of each attn row (one workgroup per row, 2D-folded grid).
// A row whose entries are all -inf gives NaN, as PyTorch does.
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

@group(0) @binding(0) var<storage, read_write> A: array<f32>;
@group(0) @binding(1) var<uniform> P: Params;

const WG: u32 = 128u;
var<workgroup> red: array<f32, 128>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= P.rows) { return; }
  let base = row * P.skv;
  var m = bitcast<f32>(P.neg_inf_bits);
  for (var c = lid; c < P.skv; c = c + WG) { m = max(m, A[base + c]); }
  red[lid] = m;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k = k / 2u) {
    if (lid < k) { red[lid] = max(red[lid], red[lid + k]); }
    workgroupBarrier();
  }
  m = red[0];
  workgroupBarrier();
  var sum = 0.0;
  for (var c = lid; c < P.skv; c = c + WG) { sum = sum + exp(A[base + c] - m); }
  red[lid] = sum;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k = k / 2u) {
    if (lid < k) { red[lid] = red[lid] + red[lid + k]; }
    workgroupBarrier();
  }
  let inv = 1.0 / red[0];
  for (var c = lid; c < P.skv; c = c + WG) { A[base + c] = exp(A[base + c] - m) * inv; }
}
