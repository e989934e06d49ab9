// Rotary embeddings. One invocation per rotated pair of x ([..., S, H, D] contiguous).
// HF = 0: interleaved pairs (2i, 2i+1), table [S, D/2] at row s (Llama apply_rotary_emb).
// HF = 1: rotate-half pairs (i, i + D/2), table [max_seq, D] at row start_pos + s (Hugging Face).
// Computed in f32 whatever the storage.
struct Params { pairs: u32, d: u32, h: u32, s: u32, start: u32, width: u32, pad0: u32, pad1: u32 };

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
    let c = f32(COS[t]);
    let sn = f32(SIN[t]);
    let a = f32(X[base + 2u * i]);
    let b = f32(X[base + 2u * i + 1u]);
    Y[base + 2u * i] = Y_T(a * c - b * sn);
    Y[base + 2u * i + 1u] = Y_T(a * sn + b * c);
  } else {
    let t = (P.start + s) * P.width;
    let a = f32(X[base + i]);
    let b = f32(X[base + i + half]);
    Y[base + i] = Y_T(a * f32(COS[t + i]) - b * f32(SIN[t + i]));
    Y[base + i + half] = Y_T(b * f32(COS[t + i + half]) + a * f32(SIN[t + i + half]));
  }
}
