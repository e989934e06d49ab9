// Rotary embeddings. One invocation per rotated pair of x ([..., S, H, D] contiguous).
// HF = 0: interleaved pairs (2i, 2i+1), table [S, D/2] at row start + s (Llama apply_rotary_emb:
// start 0; the 4-bit q/k/v linears' rope_rows: the row of their tables' slice).
// HF = 1: rotate-half pairs (i, i + D/2), table [max_seq, D] at row start_pos + s (Hugging Face).
// PAIR (apply_rotary_emb's two tensors in one dispatch): pairs [0, P.pairs) rotate X into Y,
// pairs [P.pairs, P.pairs + P.pairs2) rotate X2 into Y2 (P.h2 heads). Computed in f32 whatever
// the storage.
struct Params { pairs: u32, d: u32, h: u32, s: u32, start: u32, width: u32, pairs2: u32, h2: u32 };

override HF: u32 = 0u;
override WG: u32 = 256u;

// Pair p of a tensor with h heads: its two element offsets and their (cos, sin) table entries.
struct Pair { i0: u32, i1: u32, c0: f32, s0: f32, c1: f32, s1: f32 };

fn pair(p: u32, h: u32) -> Pair {
  let half = P.d / 2u;
  let i = p % half;
  let row = p / half;              // index over [..., S, H]
  let s = (row / h) % P.s;
  let base = row * P.d;
  if (HF == 0u) {
    let t = (P.start + s) * P.width + i;
    let c = f32(COS[t]);
    let sn = f32(SIN[t]);
    return Pair(base + 2u * i, base + 2u * i + 1u, c, sn, c, sn);
  }
  let t = (P.start + s) * P.width;
  return Pair(base + i, base + i + half, f32(COS[t + i]), f32(SIN[t + i]), f32(COS[t + i + half]), f32(SIN[t + i + half]));
}

// (a, b) rotated: interleaved (a c - b s, a s + b c); rotate-half (a c0 - b s0, b c1 + a s1).
fn rotate(a: f32, b: f32, q: Pair) -> vec2<f32> {
  if (HF == 0u) { return vec2<f32>(a * q.c0 - b * q.s0, a * q.s0 + b * q.c0); }
  return vec2<f32>(a * q.c0 - b * q.s0, b * q.c1 + a * q.s1);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let p = (wid.x + wid.y * nwg.x) * WG + lid;
  if (p < P.pairs) {
    let q = pair(p, P.h);
    let r = rotate(f32(X[q.i0]), f32(X[q.i1]), q);
    Y[q.i0] = Y_T(r.x);
    Y[q.i1] = Y_T(r.y);
    return;
  }
#if PAIR
  if (p < P.pairs + P.pairs2) {
    let q = pair(p - P.pairs, P.h2);
    let r = rotate(f32(X2[q.i0]), f32(X2[q.i1]), q);
    Y2[q.i0] = Y2_T(r.x);
    Y2[q.i1] = Y2_T(r.y);
  }
#endif
}
