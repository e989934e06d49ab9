// Batch norm apply step, one invocation per element: channel c = (i / inner) % C. INVSTD = 0: VAR
// holds variances (running stats); 1: it holds 1 / sqrt(var + eps) already (batch statistics).
struct Params { numel: u32, inner: u32, channels: u32, eps: f32 };

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> W: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read> MEAN: array<f32>;
@group(0) @binding(4) var<storage, read> VAR: array<f32>;
@group(0) @binding(5) var<storage, read_write> O: array<f32>;
@group(0) @binding(6) var<uniform> P: Params;

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
  var scale = VAR[c];
  if (INVSTD == 0u) { scale = inverseSqrt(VAR[c] + P.eps); }
  var y = (X[i] - MEAN[c]) * scale;
  if (HAS_W == 1u) { y = y * W[c]; }
  if (HAS_B == 1u) { y = y + B[c]; }
  O[i] = y;
}
