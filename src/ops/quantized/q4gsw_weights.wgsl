// Shared by the q4gsw linear shaders (//!include q4gsw_weights): the uniform, the bindings and
// the dequantization of one 4-bit weight.
struct Params { m: u32, n: u32, k: u32, gs: u32, wrow: u32, srow: u32, has_bias: u32, pad: u32 };

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> W: array<u32>;   // packed bytes, 4 per word
@group(0) @binding(2) var<storage, read> SC: array<f32>;  // scales [num_groups, srow]
@group(0) @binding(3) var<storage, read> BIAS: array<f32>;
@group(0) @binding(4) var<storage, read_write> O: array<f32>;
@group(0) @binding(5) var<uniform> P: Params;

// Weight row n holds K_pad/2 bytes; byte j = (q[2j+1] + 8) << 4 | (q[2j] + 8).
fn wq(n: u32, k: u32) -> f32 {
  let byte = n * P.wrow + k / 2u;
  let b = (W[byte / 4u] >> ((byte % 4u) * 8u)) & 0xffu;
  let nib = select(b & 15u, b >> 4u, (k & 1u) == 1u);
  return f32(i32(nib) - 8) * SC[(k / P.gs) * P.srow + n];
}
