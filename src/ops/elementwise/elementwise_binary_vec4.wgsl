// Fast path of aten.add/sub/mul/div on contiguous same-shape float tensors (or a tensor and a
// scalar) whose element count divides by 4: array<vec4<f32>>, PER vec4 per invocation spaced a
// workgroup apart (coalesced), flat workgroup index with 2D folding. Computes exactly what
// binary.wgsl computes (same f32 expressions), only wider.
struct Params { n4: u32, alpha: f32, scalar: f32, pad: u32 };

@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> O: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> P: Params;

override OP: u32 = 0u;        // 0 add, 1 sub, 2 mul, 3 div (binary.cpp's BinOp)
override B_SCALAR: u32 = 0u;  // 1: the right operand is P.scalar
override WG: u32 = 256u;
override PER: u32 = 4u;  // the full-block path below is written for PER == 4

fn f_op(x: vec4<f32>, y: vec4<f32>) -> vec4<f32> {
  switch OP {
    case 0u: { return x + P.alpha * y; }
    case 1u: { return x - P.alpha * y; }
    case 2u: { return x * y; }
    default: { return x / y; }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let base = (wid.x + wid.y * nwg.x) * (WG * PER) + lid;
  if (PER == 4u && base + 3u * WG < P.n4) {
    // Full block: every load is issued before any store (buffers may alias as far as the
    // compiler knows, so interleaving would serialize them).
    let a0 = A[base];
    let a1 = A[base + WG];
    let a2 = A[base + 2u * WG];
    let a3 = A[base + 3u * WG];
    var b0 = vec4<f32>(P.scalar);
    var b1 = b0;
    var b2 = b0;
    var b3 = b0;
    if (B_SCALAR == 0u) {
      b0 = B[base];
      b1 = B[base + WG];
      b2 = B[base + 2u * WG];
      b3 = B[base + 3u * WG];
    }
    O[base] = f_op(a0, b0);
    O[base + WG] = f_op(a1, b1);
    O[base + 2u * WG] = f_op(a2, b2);
    O[base + 3u * WG] = f_op(a3, b3);
    return;
  }
  for (var k = 0u; k < PER; k = k + 1u) {
    let i = base + k * WG;
    if (i < P.n4) {
      var y = vec4<f32>(P.scalar);
      if (B_SCALAR == 0u) { y = B[i]; }
      O[i] = f_op(A[i], y);
    }
  }
}
