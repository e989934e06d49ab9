// et_vk.linear_dq8ca_q4gsw, pre-pass: quantizes each row (token) of the float input with its own
// scale and zero point, as torchao's quantize_affine does:
//   x_q = clamp(round(x * (1 / scale)) + zp, -128, 127)          (round: half to even)
// into XQ (u32 words), K padded to 8 with zeros and each block of eight interleaved to match the
// 4-bit weight bytes: word 2b holds x_q[8b + 0, 2, 4, 6], word 2b + 1 holds x_q[8b + 1, 3, 5, 7].
// One invocation per word (flat index, 2D folding). Bindings: X, SC, ZP (int8 or int32), XQ, P.
struct Params { m: u32, k: u32, kw: u32, total: u32 };
//!include q8_int_math

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let w = (wid.x + wid.y * nwg.x) * WG + lid;
  if (w >= P.total) { return; }
  let row = w / P.kw;
  let j = w % P.kw;
  let inv = div_rn(1.0, f32(SC[row]));
  let zp = f32(load_ZP(row));
  let k0 = (j / 2u) * 8u + (j & 1u);
  var word = 0u;
  for (var t = 0u; t < 4u; t = t + 1u) {
    let k = k0 + 2u * t;
    if (k < P.k) {
      let q = i32(clamp(round(f32(X[row * P.k + k]) * inv) + zp, -128.0, 127.0));
      word = word | ((u32(q) & 0xffu) << (8u * t));
    }
  }
  XQ[w] = word;
}
