// Batch norm apply step, one invocation per element: channel c = (i / inner) % C. INVSTD = 0: VAR
// holds variances (running stats); 1: it holds 1 / sqrt(var + eps) already (batch statistics).
struct Params { numel: u32, inner: u32, channels: u32, eps: f32 };


override HAS_W: u32 = 0u;
override HAS_B: u32 = 0u;
override INVSTD: u32 = 0u;
override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.numel) { return; }
  let c = (i / P.inner) % P.channels;
  var scale = f32(VAR[c]);
  if (INVSTD == 0u) { scale = inverseSqrt(scale + P.eps); }
  var y = (f32(X[i]) - f32(MEAN[c])) * scale;
  if (HAS_W == 1u) { y = y * f32(W[c]); }
  if (HAS_B == 1u) { y = y + f32(B[c]); }
  O[i] = O_T(y);
}
