// The SwiGLU output of a 4-bit linear on its GEMM routes (q4gsw_gemv_rows.h SwigluOut): the GEMM
// stored the interleaved (gate, up) products into PAIRS [..., 2F]; H[.., j] = silu(gate_j) * up_j
// with the float operations of the elementwise kernels it replaced (unary_math.wgsl's silu, or
// SIGMOID_FORM: the export's gate * sigmoid(gate)). One invocation per output element (flat index,
// 2D folding). Bindings (generated preamble): PAIRS, H and P.
struct Params { n: u32, pad0: u32, pad1: u32, pad2: u32 };

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  let g = f32(PAIRS[2u * i]);
#if SIGMOID_FORM
  let s = g * (1.0 / (1.0 + exp(-g)));
#else
  let s = g / (1.0 + exp(-g));
#endif
  H[i] = H_T(s * f32(PAIRS[2u * i + 1u]));
}
