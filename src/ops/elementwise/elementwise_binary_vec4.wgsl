// Fast path of aten.add/sub/mul/div on contiguous same-shape float tensors (or a tensor and a
// scalar) whose element count divides by 4: A, B and Y bound as array<vec4<NAME_T>>, PER vec4 per
// invocation spaced a workgroup apart (coalesced), flat workgroup index with 2D folding. Computes
// exactly what binary.wgsl computes (same f32 expressions), only wider.
struct Params { n4: u32, alpha: f32, scalar: f32, pad: u32 };

override OP: u32 = 0u;        // BINARY_ADD, _SUB, _MUL or _DIV (prelude: elementwise_ops.h)
override B_SCALAR: u32 = 0u;  // 1: the right operand is P.scalar
override WG: u32 = 256u;
override PER: u32 = 4u;  // the full-block path below is written for PER == 4

fn f_op(x: vec4<f32>, y: vec4<f32>) -> vec4<f32> {
  switch OP {
    case BINARY_ADD: { return x + P.alpha * y; }
    case BINARY_SUB: { return x - P.alpha * y; }
    case BINARY_MUL: { return x * y; }
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
    let a0 = vec4<f32>(A[base]);
    let a1 = vec4<f32>(A[base + WG]);
    let a2 = vec4<f32>(A[base + 2u * WG]);
    let a3 = vec4<f32>(A[base + 3u * WG]);
    var b0 = vec4<f32>(P.scalar);
    var b1 = b0;
    var b2 = b0;
    var b3 = b0;
    if (B_SCALAR == 0u) {
      b0 = vec4<f32>(B[base]);
      b1 = vec4<f32>(B[base + WG]);
      b2 = vec4<f32>(B[base + 2u * WG]);
      b3 = vec4<f32>(B[base + 3u * WG]);
    }
    Y[base] = vec4<Y_T>(f_op(a0, b0));
    Y[base + WG] = vec4<Y_T>(f_op(a1, b1));
    Y[base + 2u * WG] = vec4<Y_T>(f_op(a2, b2));
    Y[base + 3u * WG] = vec4<Y_T>(f_op(a3, b3));
    return;
  }
  for (var k = 0u; k < PER; k = k + 1u) {
    let i = base + k * WG;
    if (i < P.n4) {
      var y = vec4<f32>(P.scalar);
      if (B_SCALAR == 0u) { y = vec4<f32>(B[i]); }
      Y[i] = vec4<Y_T>(f_op(vec4<f32>(A[i]), y));
    }
  }
}
