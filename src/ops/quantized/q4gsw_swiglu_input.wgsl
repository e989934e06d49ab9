// The input of a 4-bit linear with a folded SwiGLU (q4gsw_gemv_rows.h FoldedInput::Swiglu),
// materialized for its GEMM routes: Y = silu(G) * U, one invocation per element (flat index, 2D
// folding), with the float operations of the elementwise kernels it replaced (unary_math.wgsl's
// silu, or SIGMOID_FORM: the export's gate * sigmoid(gate)). Bindings (generated preamble): G, U,
// Y and P.
struct Params { n: u32, pad0: u32, pad1: u32, pad2: u32 };

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  let g = f32(G[i]);
#if SIGMOID_FORM
  let s = g * (1.0 / (1.0 + exp(-g)));
#else
  let s = g / (1.0 + exp(-g));
#endif
  Y[i] = Y_T(s * f32(U[i]));
}
