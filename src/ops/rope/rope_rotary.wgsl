// Rotary embeddings. One invocation per rotated pair of x ([..., S, H, D] contiguous).
// HF = 0: interleaved pairs (2i, 2i+1), table [S, D/2] at row s (Llama apply_rotary_emb).
// HF = 1: rotate-half pairs (i, i + D/2), table [max_seq, D] at row start_pos + s (Hugging Face).
struct Params { pairs: u32, d: u32, h: u32, s: u32, start: u32, width: u32, pad0: u32, pad1: u32 };

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> COS: array<f32>;
@group(0) @binding(2) var<storage, read> SIN: array<f32>;
@group(0) @binding(3) var<storage, read_write> O: array<f32>;
@group(0) @binding(4) var<uniform> P: Params;

override HF: u32 = 0u;
override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let p = (wid.x + wid.y * nwg.x) * WG + lid;
  if (p >= P.pairs) { return; }
  let half = P.d / 2u;
  let i = p % half;
  let row = p / half;              // index over [..., S, H]
  let s = (row / P.h) % P.s;
  let base = row * P.d;
  if (HF == 0u) {
    let t = s * P.width + i;
    let c = COS[t];
    let sn = SIN[t];
    let a = X[base + 2u * i];
    let b = X[base + 2u * i + 1u];
    O[base + 2u * i] = a * c - b * sn;
    O[base + 2u * i + 1u] = a * sn + b * c;
  } else {
    let t = (P.start + s) * P.width;
    let a = X[base + i];
    let b = X[base + i + half];
    O[base + i] = a * COS[t + i] - b * SIN[t + i];
    O[base + i + half] = b * COS[t + i + half] + a * SIN[t + i + half];
  }
}
